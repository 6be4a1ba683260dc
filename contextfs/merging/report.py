"""What a merge reports, and how conflict copies are named.

Every decision a merge takes that a person may want to look at is a :class:`MergeNote`:
a kept value where both sides set a key, an edit that survived a delete, a renumbered
decision, a conflict copy, a path refused at the gate. Nothing is decided silently.

A conflict copy sits beside the file it belongs to: ``memory/notes.md`` and
``memory/notes.conflict-1a2b3c4d.md`` (8 hex digits of the copy's git blob id, so the
name is the same on every machine that makes it and two different copies never share
one). :func:`original_of` reads the name back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..document import blob_version

__all__ = ["NOTE_KINDS", "MergeNote", "conflict_copy_path", "original_of"]

#: What a note can be about.
NOTE_KINDS = (
    "conflict-copy",  # both sides changed the same lines: the other version is a copy beside it
    "key-conflict",  # both sides set a frontmatter key: one value kept, the other reported
    "delete-edit",  # one side deleted what the other edited: the edit survived
    "renumbered",  # ids both sides added were renumbered, references with them
    "union",  # both sides added entries at one place: all of them kept
    "same-note",  # the same note was saved on both sides: one kept
    "refused",  # incoming content the gate refused (a path, a link, a size)
    "secret",  # incoming content holds what looks like a secret
    "trust",  # incoming content's trust marking was recomputed
)

_COPY = re.compile(r"^(?P<stem>.+)\.conflict-(?P<id>[0-9a-f]{8})(?P<ext>\.[A-Za-z0-9]{1,12})?\Z")


@dataclass(frozen=True)
class MergeNote:
    """One thing a merge decided that a person may want to see."""

    path: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


def conflict_copy_path(rel: str, data: bytes) -> str:
    """Where the other version of ``rel`` is kept: ``<stem>.conflict-<8 hex><ext>``."""
    folder, _, name = rel.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    copy = f"{stem}.conflict-{blob_version(data)[:8]}" + (f".{ext}" if ext else "")
    return f"{folder}/{copy}" if folder else copy


def original_of(rel: str) -> str | None:
    """The file a conflict copy belongs to, or None when ``rel`` is not a conflict copy."""
    folder, _, name = rel.rpartition("/")
    match = _COPY.match(name)
    if match is None:
        return None
    original = match.group("stem") + (match.group("ext") or "")
    return f"{folder}/{original}" if folder else original
