"""Commits beyond one per change: a merge's commit, a fast-forward, ancestry, commit times.

``contextfs sync`` (:mod:`contextfs.remote`) publishes these through the same journaled
change as every other commit (:attr:`contextfs.changes.transaction.Change.prepared`), so a merge
or a fast-forward interrupted by a kill is finished or undone like any write.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import VersioningError
from .commits import Author, Prepared, commit_text
from .gitcmd import check_rev

if TYPE_CHECKING:
    from .repository import GitStore

__all__ = ["commit_time", "existing", "merge_base", "write_commit"]


def write_commit(
    git: GitStore,
    tree: bytes,
    parents: Sequence[str],
    message: str,
    author: str,
    email: str,
    *,
    head: str | None,
    when: float | None = None,
) -> Prepared:
    """Write a commit of an already built ``tree`` with these ``parents`` (a merge, say).

    ``head`` is what the branch must still point at when the commit is published.
    """
    sig = Author(author, email).signature(time.time() if when is None else when)
    commit = git.objects.store(b"commit", commit_text(tree, parents, sig, message)).hex()
    git.objects.flush()
    return Prepared(
        parent=head, sha=commit, paths=(), subject=message.splitlines()[0][:200], signature=sig
    )


def existing(sha: str, *, head: str | None) -> Prepared:
    """An existing commit to move the branch to from ``head`` (a fast-forward)."""
    return Prepared(
        parent=head,
        sha=sha,
        paths=(),
        subject=f"fast-forward to {sha[:12]}",
        signature=Author("remote", "remote@contextfs.invalid").signature(time.time()),
    )


def merge_base(git: GitStore, a: str, b: str) -> str | None:
    """The best common ancestor of two commits, or None when their histories are unrelated."""
    proc = git.cmd.attempt("merge-base", check_rev(a), check_rev(b))
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and out else None


def commit_time(git: GitStore, sha: str) -> float:
    """The committer time of a commit (0 when it cannot be read)."""
    try:
        _kind, data = git.objects.read(bytes.fromhex(sha))
    except (VersioningError, ValueError):
        return 0.0
    for line in data.split(b"\n\n", 1)[0].split(b"\n"):
        if line.startswith(b"committer "):
            try:
                return float(line.rsplit(b" ", 2)[-2])
            except ValueError:
                return 0.0
    return 0.0
