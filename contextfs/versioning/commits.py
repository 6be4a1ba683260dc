"""What a commit is to contextfs: who it is attributed to, one read back from the log, and
one whose objects are written but which no branch points at yet (no GitPython needed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Author", "Commit", "Prepared"]


@dataclass(frozen=True)
class Author:
    """Who a commit is attributed to; never the machine's global git identity."""

    name: str
    email: str

    def signature(self, when: float) -> bytes:
        return f"{self.name} <{self.email}> {int(when)} +0000".encode()


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
