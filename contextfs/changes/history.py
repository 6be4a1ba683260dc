"""Reading and undoing history: log, old versions, diffs, revert, revert a whole session.

Every commit contextfs makes carries ``Contextfs-*`` trailers (op, session, turn, ...), so
"what did session X write" is a query over the log, and undoing it is a series of new
commits that put each path back, newest first. A path somebody changed after the session
is left alone and reported. A file the session created is moved to the trash, as any
delete is, so ``restore`` brings it back.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..document import Document, decode, load
from ..errors import ContentError, InvalidArgumentError, NotFoundError
from ..files import paths
from ..fixes import Fix
from ..provenance import check_token
from . import trash
from .trash import TRASH_DIR

if TYPE_CHECKING:
    from ..parts import RootParts
    from .transaction import Change

__all__ = ["HistoryEntry", "RevertReport", "check_limit"]

MAX_LIMIT = 10_000


@dataclass(frozen=True)
class HistoryEntry:
    """One commit that touched the root (or one path)."""

    commit: str
    author: str
    date: str
    op: str
    message: str
    path: str | None
    session: str | None = None
    turn: str | None = None
    trailers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RevertReport:
    """What ``revert_session`` undid, and what it left alone because others changed it."""

    session: str
    reverted: list[str]
    commits: list[str]
    conflicts: list[str]


def check_limit(limit: object, *, name: str = "limit", low: int = 0, high: int = MAX_LIMIT) -> int:
    """A whole number in [low, high]; anything else is InvalidArgumentError."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidArgumentError(
            f"{name} must be a whole number from {low} to {high}, not {limit!r}"
        )
    if not low <= limit <= high:
        raise InvalidArgumentError(
            f"{name} must be from {low} to {high}, not {limit}; pass e.g. {name}=50"
        )
    return limit


def _entry(c: Any) -> HistoryEntry:
    op, _, target = c.subject.partition(": ")
    return HistoryEntry(
        commit=c.commit,
        author=c.author,
        date=c.date,
        op=c.trailers.get("Contextfs-Op", op),
        message=c.subject,
        path=target or None,
        session=c.trailers.get("Contextfs-Session"),
        turn=c.trailers.get("Contextfs-Turn"),
        trailers=dict(c.trailers),
    )


def history(parts: RootParts, path: str | None, limit: object) -> list[HistoryEntry]:
    count = check_limit(limit)
    rel = parts.gate(path) if path else None
    follow = rel is not None and parts.files.kind(rel) != "dir" and not rel.endswith("/")
    return [_entry(c) for c in parts.git.log(rel, limit=count, follow=follow)]


def read_at(parts: RootParts, path: str, rev: str) -> str | None:
    rel = parts.gate(path)
    data = parts.git.blob_at(rel, rev)
    return None if data is None else load(data, rel).body


def show_at(parts: RootParts, path: str, rev: str) -> str | None:
    rel = parts.gate(path)
    data = parts.git.blob_at(rel, rev)
    return None if data is None else decode(data, rel)


def diff(parts: RootParts, path: str, rev_a: str, rev_b: str | None) -> str:
    rel = parts.gate(path)
    a = parts.git.blob_at(rel, rev_a)
    b = parts.git.blob_at(rel, rev_b) if rev_b is not None else parts.files.read(rel)
    try:
        text_a = decode(a, rel) if a is not None else ""
        text_b = decode(b, rel) if b is not None else ""
    except ContentError:  # a file that is not text is compared as bytes, as git does
        if a == b:
            return ""
        return f"Binary files a/{rel}@{rev_a} and b/{rel}@{rev_b or 'working'} differ\n"
    return "".join(
        difflib.unified_diff(
            text_a.splitlines(keepends=True),
            text_b.splitlines(keepends=True),
            fromfile=f"a/{rel}@{rev_a}",
            tofile=f"b/{rel}@{rev_b or 'working'}",
        )
    )


def revert(parts: RootParts, path: str, rev: str) -> Document | None:
    rel = parts.gate(path, write=True)
    data = parts.git.blob_at(rel, rev)
    if data is None:
        if parts.files.kind(rel) is not None:
            trash.delete_path(parts, rel)
        return None
    with parts.change(
        "revert", rel, trailers={"Contextfs-Reverts": parts.git.resolve(rev).hexsha}
    ) as change:
        change.write(rel, data)
    return parts.load(rel)


def revert_session(parts: RootParts, session_id: str) -> RevertReport:
    sid = check_token("session", session_id)
    if sid is None:
        raise InvalidArgumentError(
            "revert_session needs the id of the session to undo, not None; "
            "pass a session id from context history"
        )
    commits = parts.git.log(None, limit=0, grep_trailer=("Contextfs-Session", sid))
    # A merge a session's sync made brought other machines' work: undoing the session never undoes that.
    commits = [
        c
        for c in commits
        if c.trailers.get("Contextfs-Op") not in ("revert-session", "init", "merge")
    ]
    if not commits:
        raise NotFoundError(
            f"no commit of session {sid!r} is in the history", path=None, fix=Fix("sessions")
        )
    reverted: list[str] = []
    made: list[str] = []
    conflicts: list[str] = []
    for c in commits:
        parent = parts.git.parent_of(c.commit)
        undone = []
        with parts.change(
            "revert-session", f"{sid} {c.commit[:12]}", trailers={"Contextfs-Reverts": c.commit}
        ) as txn:
            changed = [
                rel
                for rel in parts.git.commit_paths(c.commit)
                if rel.split("/")[-1] not in paths.MANAGED_FILES
            ]
            entries: list[str] = []
            for rel in changed:
                after = parts.git.blob_at(rel, c.commit)
                before = parts.git.blob_at(rel, parent) if parent else None
                if before is None and rel.startswith(TRASH_DIR + "/"):
                    entries.append(rel)  # a deletion's entry: dropped below once its file is back
                    continue
                if parts.files.read(rel) != after:
                    conflicts.append(f"{rel} (changed after {c.commit[:12]})")
                    continue
                if before is None:
                    trash.delete(txn, rel, parts.current_provenance)  # never a hard delete
                else:
                    txn.write(rel, before)
                undone.append(rel)
            undone += _drop_restored_entries(parts, txn, entries, c.commit, set(undone))
        if undone:
            reverted.append(c.commit)
            head = parts.git.head()
            if head:
                made.append(head)
    return RevertReport(
        session=sid, reverted=reverted, commits=made, conflicts=sorted(set(conflicts))
    )


def _drop_restored_entries(
    parts: RootParts, txn: Change, rels: list[str], commit: str, restored: set[str]
) -> list[str]:
    """Remove the trash entries a reverted commit made whose files this revert put back.

    An entry whose file was not put back (someone changed the path since) stays in the
    trash, so what it holds can still be restored.
    """
    dropped = []
    for rel in rels:
        entry_id = rel.split("/")[1] if rel.count("/") >= 2 else ""
        try:
            entry = trash.load_entry(parts.files, entry_id)
        except NotFoundError:
            continue
        gone = entry.original_path in restored or any(
            r.startswith(entry.original_path + "/") for r in restored
        )
        if gone and parts.files.read(rel) == parts.git.blob_at(rel, commit):
            txn.remove(rel)
            dropped.append(rel)
    return dropped
