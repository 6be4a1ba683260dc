"""The person's side of review mode: approve, discard, recover and expire review branches.

An agent in review mode writes to a branch of its own (:mod:`contextfs.review.branch`).
A person then, from Python, the CLI or the web page:

* **approves**: the branch is merged into the main branch as one merge commit authored by
  the person, by the merge engine a sync between machines uses
  (:mod:`contextfs.review.merge`: no conflict marker, what cannot be merged kept as a
  conflict copy and reported); the agent's own commits, with their authors and trailers,
  are the merge's second parent, so ``git log`` and ``git blame`` name the agent;
* **discards**: the work tree is removed and the branch moved to
  ``refs/contextfs/discarded/...``, where its commits stay reachable, and ``recover``
  brings them back, for ``[review] keep_days`` (14 by default); then they expire.

Approving, discarding and recovering refuse agents: an agent can list what waits for
review, never decide on it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from .. import clock
from ..changes import outside
from ..errors import ReviewError, VersioningError
from ..files.state import StateDir, find_repository
from ..parts import HasParts, parts_of
from ..versioning.graph import merge_base
from ..versioning.refs import Refs
from .branch import DISCARDED_NS, REVIEW_NS, decode_session, keep_days, space_of
from .merge import ApproveReport, merge_branch

if TYPE_CHECKING:
    from ..parts import RootParts
    from ..versioning.branches import RefInfo

__all__ = ["ApproveReport", "Discarded", "Review", "ReviewBranch"]


# ---------------------------------------------------------------- the person's side
@dataclass(frozen=True)
class ReviewBranch:
    """A session's review branch and what it holds beyond the main branch."""

    session: str
    ref: str
    tip: str
    #: The last main-branch commit the branch contains (the base of the next approval).
    base: str | None
    #: How many of its commits the main branch does not have (0: nothing pending).
    pending: int


@dataclass(frozen=True)
class Discarded:
    """A discarded session's commits, recoverable until ``expires``."""

    session: str
    ref: str
    tip: str
    discarded_at: str
    expires: str


def _iso(when: int) -> str:
    return datetime.fromtimestamp(when, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Review:
    """The review branches of one root, and a person's decisions on them."""

    def __init__(self, root: RootParts | HasParts) -> None:
        """``root``: a :class:`~contextfs.ContextManager` (or its ``parts``)."""
        self.ctx = parts_of(root)
        self.git = self.ctx.git
        self.space = space_of(self.git)

    def main_head(self) -> str | None:
        """The main branch's commit (what people read), from any handle of the root."""
        if self.ctx.review is None:
            return self.git.head()
        found = find_repository(self.ctx.review.main_root)
        return Refs.of(found[1]).head() if found else None

    # ------------------------------------------------------------ reading
    def branch_refs(self) -> list[tuple[str, RefInfo]]:
        """(session, ref) of every review branch, in name order (one git call, no ancestry)."""
        out = []
        for info in self.git.branches.list(f"{REVIEW_NS}/{self.space.key}"):
            session = decode_session(info.name.rsplit("/", 1)[1])
            if session is not None:
                out.append((session, info))
        return out

    def branches(self) -> list[ReviewBranch]:
        """Every session with a review branch, pending or not, in name order."""
        head = self.main_head()
        out = []
        for session, info in self.branch_refs():
            base = merge_base(self.git, head, info.sha) if head else None
            pending = self.git.branches.ahead(base, info.sha) if base else 1
            out.append(ReviewBranch(session, info.name, info.sha, base, pending))
        return out

    def branch(self, session: str) -> ReviewBranch:
        for found in self.branches():
            if found.session == session:
                return found
        raise ReviewError(
            f"session {session!r} has no review branch; see the pending sessions with "
            "`contextfs sessions --pending`"
        )

    def discarded(self) -> list[Discarded]:
        """Discarded sessions whose commits can still be recovered, oldest first."""
        keep = keep_days(self.ctx.config)
        out = []
        for info in self.git.branches.list(f"{DISCARDED_NS}/{self.space.key}"):
            parts = info.name.rsplit("/", 2)
            session = decode_session(parts[1])
            if session is None or not parts[2].isdigit():
                continue
            when = int(parts[2])
            out.append(
                Discarded(session, info.name, info.sha, _iso(when), _iso(int(when + keep * 86400)))
            )
        return sorted(out, key=lambda d: d.discarded_at)

    # ------------------------------------------------------------ decisions
    def _person(self, what: str) -> None:
        actor = self.ctx.current_provenance.actor
        if actor.startswith("agent"):
            raise ReviewError(
                f"{actor} cannot {what} a review session: an agent never approves or discards "
                "changes; a person does, with `contextfs sessions` or `contextfs ui --write`"
            )
        if self.ctx.review is not None:
            raise ReviewError(
                f"this handle is review session {self.ctx.review.session}'s; {what} from a handle "
                "of the main root (ContextManager(root) or the contextfs command)"
            )

    def approve(self, session: str) -> ApproveReport:
        """Merge a session's review branch into the main branch (see the module docstring)."""
        self._person("approve")
        found = self.branch(session)
        with self._branch_lock(session):  # the agent cannot commit while its tip is read
            tip = self.git.branches.read(found.ref) or found.tip
        ctx = self.ctx
        with ctx.write_lock():
            # A person's unsaved edit on the main branch is committed first, never overwritten.
            outside.sync(ctx)
            head = self.main_head()
            if head is None or self.git.branches.is_ancestor(tip, head):
                raise ReviewError(
                    f"session {session} has nothing waiting for approval; its changes are "
                    "already on the main branch"
                )
            report = merge_branch(ctx, session, head, tip)
        self.expire()
        return report

    def discard(self, session: str) -> Discarded:
        """Drop a session's review branch; its commits stay recoverable for ``keep_days``."""
        self._person("discard")
        found = self.branch(session)
        when = int(clock.now().timestamp())
        ref = self.space.discarded_ref(session, when)
        folder = self.space.folder(session)
        with self.ctx.write_lock(), self._branch_lock(session):
            tip = self.git.branches.read(found.ref) or found.tip
            self.git.branches.update(ref, tip, None, f"contextfs: discard review session {session}")
            if (folder / ".git").is_file():
                self.git.branches.remove_worktree(folder)
            self.git.branches.delete(found.ref, tip)
        keep = keep_days(self.ctx.config)
        self.expire()
        return Discarded(session, ref, tip, _iso(when), _iso(int(when + keep * 86400)))

    def recover(self, session: str) -> ReviewBranch:
        """Bring a discarded session back as a pending review branch (its latest discard)."""
        self._person("recover")
        matches = [d for d in self.discarded() if d.session == session]
        if not matches:
            raise ReviewError(
                f"no discarded session {session!r} can be recovered (it expired, or was never "
                "discarded); see `contextfs sessions --all`"
            )
        latest = matches[-1]
        ref = self.space.ref(session)
        with self.ctx.write_lock():
            if self.git.branches.read(ref) is not None:
                raise ReviewError(
                    f"session {session} has a review branch already; approve or discard it first"
                )
            self.git.branches.update(
                ref, latest.tip, None, f"contextfs: recover review session {session}"
            )
            self.git.branches.delete(latest.ref, latest.tip)
        return self.branch(session)

    def expire(self) -> list[str]:
        """Forget discarded sessions older than ``keep_days``, and remove the work trees of
        approved sessions that have waited that long with nothing pending; returns them."""
        keep = timedelta(days=keep_days(self.ctx.config))
        now = clock.now()
        gone = []
        with self.ctx.write_lock():
            for found in self.discarded():
                when = datetime.fromisoformat(found.discarded_at.replace("Z", "+00:00"))
                if now - when >= keep:
                    self.git.branches.delete(found.ref, found.tip)
                    gone.append(found.session)
            for branch in self.branches():
                if branch.pending or not self._idle(branch, now, keep):
                    continue
                with self._branch_lock(branch.session):
                    folder = self.space.folder(branch.session)
                    if (folder / ".git").is_file():
                        self.git.branches.remove_worktree(folder)
                    self.git.branches.delete(branch.ref, branch.tip)
                gone.append(branch.session)
        return gone

    def _idle(self, branch: ReviewBranch, now: datetime, keep: timedelta) -> bool:
        out = self.git.git("log", "-1", "--format=%ct", branch.tip).strip()
        return out.isdigit() and now - datetime.fromtimestamp(int(out), tz=timezone.utc) >= keep

    @contextlib.contextmanager
    def _branch_lock(self, session: str) -> Iterator[None]:
        """The write lock of the session's own work tree (the lock its writers take)."""
        folder = self.space.folder(session)
        try:
            git_dir = (
                self.git.branches.worktree_git_dir(folder) if (folder / ".git").is_file() else None
            )
        except VersioningError:
            git_dir = None
        if git_dir is None:  # no work tree: no writer to wait for
            yield
            return
        with StateDir(git_dir, self.space.prefix).lock("lock").held():
            yield
