"""Writing files: the store's mutating calls, each one change through the write gate.

The :class:`~contextfs.manager.ContextManager` methods of the same names delegate here.
Each call gates its paths, joins the open transaction or makes its own commit
(:meth:`ContextManager.change`), and writes through :func:`put`, which renders the bytes
with :mod:`contextfs.changes.rendering` (frontmatter, the write gate) — or does nothing at all
when nothing would change, so a no-op is no commit.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ..document import (
    LIBRARY_KEYS,
    Document,
    Written,
    blob_version,
    is_markdown,
    load,
    split_written,
    unparsed,
)
from ..errors import (
    AlreadyExistsError,
    ConflictError,
    ContentError,
    FrontmatterError,
    InvalidPathError,
    NotFoundError,
)
from ..files import paths
from ..files.confined import TMP_SUFFIX
from ..fixes import Fix
from ..gate.guard import is_agent, is_library_log
from ..gate.poisoning import name_flags
from ..text.replacing import replace_once
from . import rendering
from .adoption import StaleRead
from .rendering import check_text

if TYPE_CHECKING:
    from ..parts import RootParts
    from .transaction import Change

P = ParamSpec("P")
R = TypeVar("R")
#: How often a call is made again when the file keeps changing under it.
_ATTEMPTS = 5


def settled(func: Callable[P, R]) -> Callable[P, R]:
    """Make a read-modify-write call again when somebody saved the file while it ran.

    The change commits their version first and stops before writing (:class:`StaleRead`);
    made again, the call works on what they saved. Inside a transaction the error goes to
    the caller instead, with the transaction undone.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                return func(*args, **kwargs)
            except StaleRead as exc:
                if not exc.retryable or attempt == _ATTEMPTS:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    return wrapper


__all__ = [
    "append",
    "as_written",
    "check_version",
    "create",
    "edit",
    "files_under",
    "loaded",
    "merged_keys",
    "move",
    "put",
    "rejudge",
    "settled",
    "update_metadata",
    "write",
]


def check_version(rel: str, old: Document | None, expected: str | None) -> None:
    """Refuse when the file is not at the version the caller read (ConflictError)."""
    if expected is None:
        return
    current = old.version if old is not None else None
    if current != expected:
        raise ConflictError(
            f"{rel} changed since version {str(expected)[:12]} (now {str(current)[:12]}); read it again and retry"
        )


def put(
    parts: RootParts,
    change: Change,
    rel: str,
    body: str,
    meta: Mapping[str, Any] | None,
    old: Document | None,
    new_part: str | None = None,
    written: str | None = None,
    body_line: int = 1,
) -> Document:
    """Render ``body`` through the write gate and write it as part of ``change``.

    ``written`` is the caller's own text when it came with a frontmatter block: its keys
    keep their text as the caller wrote them. ``body_line`` is the line of that text the
    body starts on (messages count lines as the caller wrote them).
    """
    if rendering.unchanged(old, body, meta):
        # The body is the file's own text, decoded from what it holds: no NULs, valid UTF-8.
        return old  # nothing changes: no write, no commit
    if new_part is not None and (old is None or old.version != parts.git.head_blob(rel)):
        new_part = None  # what is there was never scanned as committed: scan all of it
    data = rendering.render(
        rel,
        body,
        meta,
        old,
        prov=parts.current_provenance,
        guard=parts.guard(),
        library=parts.in_library_write,
        max_bytes=parts.max_file_bytes,
        new_part=new_part,
        previous=(
            written.encode("utf-8")
            if written is not None
            else change.read(rel)
            if old is not None
            else None
        ),
        body_line=body_line,
    )
    change.write(rel, data, max_bytes=parts.max_file_bytes)
    change.vetted.add(blob_version(data))
    return load(data, rel)


def refuse_folder(parts: RootParts, rel: str) -> None:
    if parts.files.kind(rel) == "dir":
        raise InvalidPathError(f"{rel} is a folder; write to a file inside it or pick another name")


def loaded(change: Change, rel: str) -> Document | None:
    """The document at ``rel`` as ``change`` sees it (an outside version there is committed first)."""
    data = change.read(rel)
    return None if data is None else load(data, rel)


def load_or_broken(change: Change, rel: str) -> tuple[Document | None, Document | None]:
    """(the document, None), or (None, the raw text as a body-only document) when its
    frontmatter cannot be read: a broken file can still be replaced or repaired."""
    data = change.read(rel)
    if data is None:
        return None, None
    try:
        return load(data, rel), None
    except FrontmatterError:
        return None, unparsed(data, rel)


def as_written(rel: str, content: str) -> Written:
    """The content of a write read as a document: a markdown file's content may start with
    its frontmatter block (see :func:`contextfs.document.split_written`)."""
    check_text(rel, content)
    return split_written(content, rel) if is_markdown(rel) else Written(None, content)


def merged_keys(
    written: Written,
    old: Document | None,
    metadata: Mapping[str, Any] | None,
) -> Mapping[str, Any] | None:
    """The user keys a write leaves: ``metadata`` replaces the file's keys (None keeps them),
    and the keys of the content's own block are merged in under ``metadata``'s."""
    if not written.metadata:
        return metadata
    base = metadata if metadata is not None else (old.metadata if old is not None else {})
    keys = {k: v for k, v in base.items() if k not in LIBRARY_KEYS}
    own = {k: v for k, v in written.metadata.items() if k not in LIBRARY_KEYS}
    return {**keys, **own, **(metadata or {})}


@settled
def write(
    parts: RootParts,
    path: str,
    content: str,
    metadata: Mapping[str, Any] | None = None,
    *,
    expected_version: str | None = None,
    trailers: Mapping[str, str] | None = None,
) -> Document:
    """Create or replace a file. ``metadata`` replaces the user keys; omitted, they are kept.

    Content that starts with a frontmatter block brings its keys (merged under
    ``metadata``'s, see :func:`merged_keys`). A file whose frontmatter cannot be read is
    replaced whole (its old keys cannot be kept).
    """
    rel = parts.gate(path, write=True)
    written = as_written(rel, content)
    with parts.change("write", rel, trailers=trailers) as change:
        refuse_folder(parts, rel)
        old, broken = load_or_broken(change, rel)
        check_version(rel, old or broken, expected_version)
        return put(
            parts,
            change,
            rel,
            written.body,
            merged_keys(written, old, metadata),
            old,
            written=content if written.metadata is not None else None,
            body_line=written.body_line,
        )


def create(
    parts: RootParts, path: str, content: str, metadata: Mapping[str, Any] | None = None
) -> Document:
    """Like ``write`` but refuses to overwrite (AlreadyExistsError)."""
    rel = parts.gate(path, write=True)
    written = as_written(rel, content)
    with parts.change("create", rel) as change:
        if parts.files.kind(rel) is not None:
            raise AlreadyExistsError(f"{rel} already exists", fix=Fix("replace", rel))
        return put(
            parts,
            change,
            rel,
            written.body,
            merged_keys(written, None, metadata),
            None,
            written=content if written.metadata is not None else None,
            body_line=written.body_line,
        )


@settled
def append(
    parts: RootParts, path: str, text: str, *, trailers: Mapping[str, str] | None = None
) -> Document:
    """Add text at the end of a file's body (creating the file when missing)."""
    rel = parts.gate(path, write=True)
    check_text(rel, text, "text")
    with parts.change("append", rel, trailers=trailers) as change:
        refuse_folder(parts, rel)
        old = loaded(change, rel)
        body = old.body if old is not None else ""
        if not text and old is not None:
            return old
        if body and not body.endswith("\n"):
            body += "\n"
        return put(parts, change, rel, body + text, None, old, new_part=text)


@settled
def edit(
    parts: RootParts,
    path: str,
    old_text: str,
    new_text: str,
    *,
    expected_version: str | None = None,
) -> Document:
    """Replace ``old_text`` with ``new_text`` in the body; it must occur exactly once."""
    rel = parts.gate(path, write=True)
    if not isinstance(old_text, str) or not isinstance(new_text, str) or not old_text:
        raise ContentError(
            "edit needs a non-empty old text and a new text, both strings; pass the exact text to replace"
        )
    check_text(rel, new_text, "the new text")
    with parts.change("edit", rel) as change:
        old, broken = load_or_broken(change, rel)
        target = old or broken
        if target is None:
            raise NotFoundError(f"{rel} does not exist", path=rel, fix=Fix("write", rel))
        check_version(rel, target, expected_version)
        new_body = replace_once(target.body, old_text, new_text, where=rel, path=rel)
        if broken is not None:
            # Broken frontmatter: the edit works on the raw text (that is how it gets
            # repaired), and the result is stored as written, through the write gate.
            rendering.check_text(rel, new_body)
            parts.guard().check(
                rel,
                new_body,
                actor=parts.current_provenance.actor,
                markdown=False,
                library=parts.in_library_write,
            )
            data = new_body.encode("utf-8")
            change.write(rel, data, max_bytes=parts.max_file_bytes)
            change.vetted.add(blob_version(data))
            try:
                return load(data, rel)
            except FrontmatterError:
                return Document(path=rel, metadata={}, body=new_body, version=blob_version(data))
        return put(parts, change, rel, new_body, None, old)


@settled
def update_metadata(
    parts: RootParts, path: str, changes_: Mapping[str, Any], *, expected_version: str | None = None
) -> Document:
    """Merge keys into the frontmatter (None removes a key); the body stays byte-for-byte."""
    rel = parts.gate(path, write=True)
    if not isinstance(changes_, Mapping):
        raise ContentError("metadata changes must be a mapping; pass a dict")
    with parts.change("meta", rel) as change:
        old = loaded(change, rel)
        if old is None:
            raise NotFoundError(f"{rel} does not exist", path=rel, fix=Fix("write", rel))
        check_version(rel, old, expected_version)
        meta = {k: v for k, v in old.metadata.items() if k not in LIBRARY_KEYS}
        for key, value in changes_.items():
            if key in LIBRARY_KEYS:
                continue
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return put(parts, change, rel, old.body, meta, old)


def files_under(parts: RootParts, rel: str) -> list[str]:
    """Every file at or under an already-gated path (links never followed)."""
    kind = parts.files.kind(rel)
    if kind == "file":
        return [rel]
    if kind != "dir":
        return []
    return sorted(st.rel for st in parts.files.walk(rel))


def move(parts: RootParts, src: str, dst: str) -> str:
    """Rename a file or folder; the destination must be free (a case-only rename is fine)."""
    rel_src = parts.gate(src, write=True)
    case_only = (
        isinstance(dst, str) and rel_src.casefold() == paths.check(parts.root, dst).casefold()
    )
    # A case-only destination skips the gate's case-twin check (its twin is the source); it
    # is no managed name either, since the source passed that check with the same letters.
    rel_dst = parts.gate(dst, write=not case_only)
    if rel_src == rel_dst:
        return rel_dst
    if (
        is_library_log(rel_dst)
        and is_agent(parts.current_provenance.actor)
        and not parts.in_library_write
    ):
        raise ContentError(
            f"{rel_dst} would be a log kept by contextfs; logs are written through their own "
            "operations, so pick a name that does not end in .jsonl"
        )
    with parts.change("move", f"{rel_src} -> {rel_dst}") as change:
        if parts.files.kind(rel_src) not in ("file", "dir"):
            raise NotFoundError(
                f"{rel_src} does not exist",
                path=rel_src,
                fix=Fix("list", rel_src.rpartition("/")[0]),
            )
        if parts.files.kind(rel_dst) is not None and not case_only:
            raise AlreadyExistsError(
                f"{rel_dst} already exists; delete it first or pick another name"
            )
        if rel_dst.startswith(rel_src + "/"):
            raise InvalidPathError(
                f"cannot move {rel_src!r} into itself; pick a destination outside it"
            )
        moved = files_under(parts, rel_src)
        if case_only:
            tmp = f"{rel_src.rpartition('/')[0]}/.{secrets.token_hex(4)}{TMP_SUFFIX}".lstrip("/")
            change.rename(rel_src, tmp, moved)
            change.rename(tmp, rel_dst, [tmp + rel[len(rel_src) :] for rel in moved])
        else:
            change.rename(rel_src, rel_dst, moved)
        if is_agent(parts.current_provenance.actor):
            for rel in moved:
                rejudge(parts, change, rel_dst + rel[len(rel_src) :])
    return rel_dst


def rejudge(parts: RootParts, change: Change, rel: str) -> None:
    """Judge a file again under the name a move gave it, when that name reads as an instruction.

    The file then gets the trust the write gate decides (or the move is refused, under
    ``refuse`` and for files that cannot carry the mark), as if it had been written there.
    """
    if not name_flags(rel):
        return
    old, broken = load_or_broken(change, rel)
    if old is None or not is_markdown(rel):
        target = old or broken
        parts.guard().check(
            rel,
            target.body if target is not None else "",
            actor=parts.current_provenance.actor,
            markdown=False,
            library=parts.in_library_write,
        )
        return
    data = rendering.render(
        rel,
        old.body,
        None,
        old,
        prov=parts.current_provenance,
        guard=parts.guard(),
        library=parts.in_library_write,
        max_bytes=parts.max_file_bytes,
        previous=change.read(rel),
    )
    change.write(rel, data, max_bytes=parts.max_file_bytes)
    change.vetted.add(blob_version(data))
