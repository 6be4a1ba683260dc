"""What a commit is to contextfs: who it is attributed to, one read back from the log, one
whose objects are written but which no branch points at yet, and its publication (git's index
and the branch in their locks); no GitPython needed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .refs import RefUpdate
    from .staging import PendingIndex

__all__ = ["Author", "Commit", "Prepared", "Publication", "commit_text"]


@dataclass(frozen=True)
class Author:
    """Who a commit is attributed to; never the machine's global git identity."""

    name: str
    email: str

    def signature(self, when: float) -> bytes:
        return f"{self.name} <{self.email}> {int(when)} +0000".encode()


def commit_text(tree: bytes, parents: Iterable[str], signature: bytes, message: str) -> bytes:
    """The body of a git commit object: its tree, parents, author and committer (the same
    signature: contextfs never commits on someone's behalf later) and the message, ending in
    a newline as git writes it."""
    raw = b"tree " + tree.hex().encode() + b"\n"
    for parent in parents:
        raw += b"parent " + parent.encode() + b"\n"
    raw += b"author " + signature + b"\ncommitter " + signature + b"\n\n"
    raw += message.encode("utf-8", "surrogateescape")
    return raw if raw.endswith(b"\n") else raw + b"\n"


@dataclass(frozen=True)
class Commit:
    """One commit as read back from the log, with the contextfs trailers parsed."""

    commit: str
    author: str
    date: str
    subject: str
    trailers: Mapping[str, str]


@dataclass(frozen=True)
class Prepared:
    """A commit whose objects are written but which no branch points at yet."""

    parent: str | None
    sha: str
    paths: tuple[str, ...]
    subject: str
    signature: bytes


@dataclass
class Publication:
    """git's index and the branch written into their locks, not yet in place."""

    index: PendingIndex | None = None
    branch: RefUpdate | None = None

    def commit(self) -> None:
        """Move the branch (compare-and-swap: :class:`~.refs.BranchMoved` when it moved), then
        put the index in place."""
        try:
            if self.branch is not None:
                self.branch.commit()
        except BaseException:
            self.abort()
            raise
        if self.index is not None:
            self.index.commit()

    def abort(self) -> None:
        """Release both locks; the branch and the index stay as they were."""
        for lock in (self.branch, self.index):
            if lock is not None:
                lock.abort()
