"""Sharing a root through any git remote: ``ctx.remote``.

``ctx.sync()`` commits edits made in an editor; ``ctx.remote.sync()`` exchanges commits
with the remote (fetch, merge with contextfs's rules, push). The concerns:

- :mod:`.transport`: which remote and branch, fetch and push with nothing run on the way;
- :mod:`.syncing`: one sync, its retries, and the merge written through one journaled change;
- :mod:`.incoming`: the gate for what a fetch brings;
- :mod:`.conflicts`: conflict copies, listed and resolved;
- :mod:`.gitmerge`: the context part of a merge a person started with git.

The merge rules themselves are :mod:`contextfs.merging`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conflicts import ConflictCopy, list_conflicts, resolve
from .result import SyncResult
from .syncing import sync
from .transport import Target, resolve_target

if TYPE_CHECKING:
    from ..parts import RootParts

__all__ = ["ConflictCopy", "Remote", "SyncResult", "Target"]


class Remote:
    """The root's remote side (``ctx.remote``): sync, and the conflict copies merges leave."""

    def __init__(self, parts: RootParts) -> None:
        self.parts = parts

    def target(self, remote: str | None = None, branch: str | None = None) -> Target:
        """The remote and branch a sync would use (from the repository's configuration)."""
        return resolve_target(self.parts.git, remote, branch, remember=False)

    def sync(
        self,
        *,
        remote: str | None = None,
        branch: str | None = None,
        push: bool = True,
        attempts: int = 8,
        push_application_commits: bool = False,
    ) -> SyncResult:
        """Fetch, merge with contextfs's rules, update the files and the index, push.

        ``remote``/``branch`` override the repository's configuration (the current branch's
        upstream, else its only remote and the branch the remote's HEAD names). A push the
        remote rejects because it moved is retried after fetching and merging again, up to
        ``attempts`` times with a random pause.
        """
        return sync(
            self.parts,
            remote=remote,
            branch=branch,
            push_=push,
            attempts=attempts,
            push_application_commits=push_application_commits,
        )

    def conflicts(self) -> list[ConflictCopy]:
        """The conflict copies merges left in the root."""
        return list_conflicts(self.parts)

    def resolve(self, path: str, *, keep: str = "current") -> str:
        """End a conflict: drop the copy, keeping the file as it is now or taking the copy's text."""
        return resolve(self.parts, path, keep=keep)
