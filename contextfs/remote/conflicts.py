"""Conflict copies: listing them and resolving one with a single call.

When both sides changed the same lines of a file, the merge keeps ours at the path and
theirs beside it as ``<stem>.conflict-<8 hex><ext>`` (:mod:`contextfs.merging.report`).
Both are committed, so both are in history on every machine. :func:`list_conflicts`
finds every copy in the root; :func:`resolve` ends one: the file keeps what it holds now
(``keep="current"``, after a person or an agent combined the two by hand) or takes the
copy's text (``keep="copy"``), and the copy goes — one commit, the copy still in history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InvalidArgumentError, NotFoundError
from ..fixes import Fix
from ..merging import original_of

if TYPE_CHECKING:
    from ..parts import RootParts

__all__ = ["ConflictCopy", "list_conflicts", "resolve"]

KEEP = ("current", "copy")


@dataclass(frozen=True)
class ConflictCopy:
    """One conflict copy: where it is, and the file it belongs to."""

    path: str
    original: str
    original_exists: bool


def list_conflicts(parts: RootParts) -> list[ConflictCopy]:
    """Every conflict copy in the root, sorted by path."""
    out = []
    for rel in parts.list_files():
        original = original_of(rel)
        if original is not None:
            out.append(ConflictCopy(rel, original, parts.files.kind(original) == "file"))
    return out


def resolve(parts: RootParts, path: str, *, keep: str = "current") -> str:
    """End a conflict: ``path`` is a copy (or the file, when it has exactly one copy). Returns the file."""
    if keep not in KEEP:
        raise InvalidArgumentError(
            f"keep must be 'current' or 'copy', not {keep!r}; pass keep='current' to keep "
            "the file as it is now, or keep='copy' to take the copy's text"
        )
    rel = parts.gate(path, write=True)
    original = original_of(rel)
    if original is None:
        copies = [c.path for c in list_conflicts(parts) if c.original == rel]
        if len(copies) != 1:
            raise NotFoundError(
                f"{rel} has {len(copies) or 'no'} conflict copies; name the copy to resolve "
                "(contextfs conflicts lists them)",
                path=rel,
                fix=Fix("list", rel.rpartition("/")[0]),
            )
        original, rel = rel, copies[0]
    if parts.files.kind(rel) != "file":
        raise NotFoundError(
            f"{rel} is not a conflict copy here", path=rel, fix=Fix("list", rel.rpartition("/")[0])
        )
    with parts.change("resolve", original, trailers={"Contextfs-Resolved": rel}) as change:
        if keep == "copy":
            data = parts.files.read(rel)
            assert data is not None
            change.write(original, data)
        change.remove(rel)
    return original
