"""Outside versions: telling bytes someone else saved from what contextfs last committed.

A path holds an *outside version* when its bytes differ from its blob in HEAD: a person
saved it in an editor, a script rewrote it, a pull brought it, and nobody has committed
it yet. The commit cycle (:mod:`contextfs.changes.transaction`) asks :meth:`Seen.blob` for the
blob id of what is on disk before a change first touches a path, compares it with HEAD's,
and commits an outside version first, as its own commit (:func:`message`), before the
change applies on top of it.

The comparison has to be cheap, since every write pays for it. HEAD's blob comes from
trees kept in memory; the file's blob id is a SHA-1 of bytes the change reads anyway for
its snapshot, and :class:`Seen` skips even that when the file's status (device, inode,
size, modification and change times) is the one it had when its blob id was last
computed. A status is only trusted once the file's last change (``st_ctime``, which no
program can set) is older than :data:`SETTLED_NS`: within a timestamp's granularity, a
second write could leave the status exactly as it was (git calls such entries "racily
clean" and re-hashes them for the same reason).
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..document import blob_version
from ..errors import ConflictError
from ..provenance import email_of

if TYPE_CHECKING:
    from ..versioning import GitStore, Prepared

__all__ = [
    "DEFAULT_OP",
    "SETTLED_NS",
    "Seen",
    "StaleRead",
    "SyncReport",
    "blobs",
    "message",
    "prepare",
]


@dataclass
class SyncReport:
    """What one sync committed and what it held back (path -> reason)."""

    committed: list[str] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)


#: A file whose last change is at least this old cannot change again without its status changing.
SETTLED_NS = 2_000_000_000
#: The operation name (``Contextfs-Op``) of a commit of outside versions.
DEFAULT_OP = "sync"

_Signature = tuple[int, int, int, int, int]


class StaleRead(ConflictError):
    """A file changed between a change reading it and writing what it computed from it.

    ``retryable`` says whether the caller may simply make the call again (a call on its
    own; inside a transaction, the whole transaction is undone instead).
    """

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable

    @classmethod
    def saved_meanwhile(cls, rel: str, *, retryable: bool) -> StaleRead:
        """Somebody saved ``rel`` while the change was working on what it read there."""
        return cls(
            f"{rel} was saved by somebody else while this change was working on it; nothing "
            "was written; retry with what it holds now",
            retryable=retryable,
        )


def _signature(st: os.stat_result) -> _Signature:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Seen:
    """Blob ids of files by their status: stat first, hash only when the status differs."""

    def __init__(self, limit: int = 4096) -> None:
        self._known: dict[str, tuple[_Signature, str]] = {}
        self._limit = limit
        #: How many look-ups were answered from the status alone, and how many hashed (for the benchmark).
        self.hits = 0
        self.hashed = 0

    def blob(self, rel: str, data: bytes | None, st: os.stat_result | None) -> str | None:
        """git's blob id of ``data``, read from ``rel`` with status ``st`` (None for no file)."""
        if data is None or st is None:
            self._known.pop(rel, None)
            return None
        signature = _signature(st)
        known = self._known.get(rel)
        if known is not None and known[0] == signature:
            self.hits += 1
            return known[1]
        self.hashed += 1
        blob = blob_version(data)
        if st.st_ctime_ns < time.time_ns() - SETTLED_NS:
            if len(self._known) >= self._limit:
                self._known.clear()
            self._known[rel] = (signature, blob)
        else:
            self._known.pop(rel, None)
        return blob


def message(
    paths: Collection[str],
    op: str = DEFAULT_OP,
    subject: str | None = None,
    machine: str | None = None,
) -> str:
    """The commit message of outside versions: no session or turn, they belong to nobody's."""
    subject = subject or f"{len(paths)} file(s) edited outside contextfs"
    body = "\n".join(f"- {op}: {rel}" for rel in sorted(paths)[:50])
    where = f"Contextfs-Machine: {machine}\n" if machine else ""
    return f"{op}: {subject}\n\n{body}\n\nContextfs-Op: {op}\n{where}"


def prepare(
    git: GitStore,
    layers: list[dict[str, bytes | None]],
    author: str,
    op: str,
    subject: str | None,
    *,
    when: float,
    executable: Collection[str],
) -> tuple[list[tuple[Prepared, dict[str, Any]]], str | None]:
    """The commits of outside versions, one per layer, oldest first, on HEAD.

    Returns each prepared commit with what the journal records of it (its id, blob ids,
    message and author), and the id of the last one (None when no layer changes the tree).
    """
    done: list[tuple[Prepared, dict[str, Any]]] = []
    parent: str | None = None
    for layer in layers:
        if not layer:
            continue
        text = message(layer, op, subject, git.machine)
        prepared = git.prepare(
            layer,
            text,
            author,
            email_of(author),
            when=when,
            executable=set(executable) & set(layer),
            parent=parent if parent is not None else False,
        )
        if prepared is not None:
            parent = prepared.sha
            done.append(
                (
                    prepared,
                    {
                        "sha": prepared.sha,
                        "changes": blobs(git, layer),
                        "message": text,
                        "author": author,
                    },
                )
            )
    return done, parent


def blobs(git: GitStore, layer: Mapping[str, bytes | None]) -> dict[str, str | None]:
    """The blob ids of a layer's bytes (stored in git where missing)."""
    return {rel: (None if data is None else git.store_blob(data)) for rel, data in layer.items()}
