"""Undoing a change's files: renames reversed, old bytes put back, nobody's later save touched.

Used when a change fails (:meth:`contextfs.changes.transaction.Change.rollback`) and when
recovery rolls back what a killed writer left (:mod:`contextfs.changes.recovery`). A path is
given its old bytes back only while it holds what the undo looked at, and the look and the
replacement are one step in the file layer (the write's hook, see
:data:`contextfs.files.staged.ReplaceHook`): a person's save made in the moment between them
stays, as a save made a moment before the look would.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping

from ..document import blob_version
from ..errors import ContextFSError, InvalidPathError
from ..files.confined import RootFiles
from ..files.staged import replacing_only

__all__ = ["undo"]

log = logging.getLogger(__name__)


def undo(
    files: RootFiles,
    renames: list[tuple[str, str]],
    before: Mapping[str, bytes | None],
    left: Mapping[str, Collection[str | None]] | None = None,
) -> set[str]:
    """Reverse renames (newest first), then give paths their bytes from ``before``.

    Renames go first so that undoing a delete moves the file back instead of writing it
    again, which would need free space on a full disk. ``left`` names, per path, the blob
    ids (None: no file) the change may have left there; a path holding anything else was
    changed by somebody after it and keeps what it holds. A rename that cannot be reversed
    (somebody made a file at its source since) leaves its destination alone too. Returns the
    paths left as they are; inside a change, a staged write that finds a save when it is put
    in place adds its path to that set then.
    """
    kept: list[str] = []
    untouched: set[str] = set()
    # What the change may have left under a destination comes back with the file moved
    # back: a file moved and then edited holds the edit at its source again, which is ours.
    allowed = None if left is None else {rel: set(blobs) for rel, blobs in left.items()}
    for src, dst in reversed(renames):
        try:
            if files.kind(dst) is not None and files.kind(src) is None:
                files.rename(dst, src)
                if allowed is not None:
                    for rel in [r for r in allowed if r == dst or r.startswith(dst + "/")]:
                        allowed.setdefault(src + rel[len(dst) :], set()).update(allowed[rel])
            elif files.kind(dst) is not None:
                kept.append(dst)
        except ContextFSError as exc:
            log.warning("could not move %s back to %s: %s", dst, src, exc)
            kept.append(dst)
    for rel, data in before.items():
        if any(rel == k or rel.startswith(k + "/") for k in kept):
            log.warning("leaving %s as it is: it could not be moved back", rel)
            untouched.add(rel)
            continue
        try:
            current = files.read(rel)
        except InvalidPathError:
            continue  # a folder is there now: never removed wholesale
        except ContextFSError as exc:
            log.warning("could not read %s while undoing a change: %s", rel, exc)
            continue
        if current == data:
            continue
        if allowed is not None and rel in allowed:
            now = blob_version(current) if current is not None else None
            if now not in allowed[rel]:
                log.warning(
                    "leaving %s as it is: it was changed after the change being undone", rel
                )
                untouched.add(rel)
                continue
        try:
            if data is not None:
                files.write(
                    rel, data, before_replace=replacing_only(current, _theirs(rel, untouched))
                )
                continue
            taken = files.remove(rel)[0]
            if taken is not None and taken != current:  # saved in the moment: theirs goes back
                files.write(
                    rel, taken, before_replace=replacing_only(None, _theirs(rel, untouched))
                )
                untouched.add(rel)
        except ContextFSError as exc:
            log.error("could not restore %s while undoing a change: %s", rel, exc)
    for rel in before:
        files.prune(rel.rpartition("/")[0])
    return untouched


def _theirs(rel: str, untouched: set[str]) -> Callable[[], None]:
    """What an undo does when it finds a save made since it looked: it leaves the path."""

    def leave() -> None:
        log.warning("leaving %s as it is: somebody saved it while the change was undone", rel)
        untouched.add(rel)

    return leave
