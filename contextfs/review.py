"""Review mode: an agent's writes wait on a branch of their own until a person approves them.

A session in review mode writes to the branch ``contextfs/review/<root key>/<session>``,
checked out in a linked work tree under the git directory
(``<git dir>/contextfs/review/<root key>/<session>/``; ``git worktree`` keeps its
bookkeeping), never in the person's work tree. The session's own
:class:`~contextfs.ContextManager` is opened on that work tree, so the agent reads its own
writes, searches them and is offered them in its views, with every mechanism of the store
(the write gate, the journal, one commit per change) working as on the main branch.
Everybody else — the person, other processes, other agents and their review sessions —
reads the main branch, which does not have them.

A person then, from Python, the CLI or the web page:

* **approves**: the branch is merged into the main branch as one merge commit authored by
  the person (:mod:`contextfs.review_merge`: a three-way merge per path, no conflict
  marker, what cannot be merged kept as a conflict copy and reported); the agent's own
  commits, with their authors and trailers, are the merge's second parent, so
  ``git log`` and ``git blame`` name the agent;
* **discards**: the work tree is removed and the branch moved to
  ``refs/contextfs/discarded/...``, where its commits stay reachable, and ``recover``
  brings them back, for ``[review] keep_days`` (14 by default); then they expire.

Which writes need review is said in ``.contextfs/config.toml``::

    [review]
    agents = ["agent:researcher", "agent:*"]   # actors whose writes wait for a person
    keep_days = 14

or per session with ``ContextManager(root, actor=..., review=True)`` (``contextfs
--review``). A handle that is not in review mode refuses a write by an actor the config
lists, so an agent cannot skip review by writing through someone else's handle; and
approving, discarding and recovering refuse agents: an agent can list what waits for
review, never approve it.
"""

from __future__ import annotations

import contextlib
import fnmatch
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import clock
from .config import CONFIG_PATH, check_keys, load_config
from .errors import ConfigError, ReviewError, VersioningError
from .files import RootFiles
from .review_merge import MergeFile, plan_merge, text_merge
from .state import StateDir, find_repository, locate_root, root_key
from .versioning.refs import Refs

if TYPE_CHECKING:
    from .manager import ContextManager
    from .versioning import GitStore
    from .versioning.branches import RefInfo

__all__ = [
    "DEFAULT_KEEP_DAYS",
    "ApproveReport",
    "Discarded",
    "Review",
    "ReviewBranch",
    "ReviewHandle",
    "decode_session",
    "encode_session",
    "check_write",
    "enter",
    "open_review",
    "review_actors",
]

REVIEW_NS = "refs/heads/contextfs/review"
DISCARDED_NS = "refs/contextfs/discarded"
DEFAULT_KEEP_DAYS = 14.0
_PLAIN = re.compile(r"[A-Za-z0-9-]")


# ---------------------------------------------------------------- names
def encode_session(session: str) -> str:
    """A session id as one ref-name and folder component (``[A-Za-z0-9_-]``, reversible)."""
    return "".join(ch if _PLAIN.match(ch) else f"_{ord(ch):02x}" for ch in session)


def decode_session(part: str) -> str | None:
    """The session id :func:`encode_session` made ``part`` from, or None."""
    out, i = [], 0
    while i < len(part):
        if part[i] == "_":
            try:
                out.append(chr(int(part[i + 1:i + 3], 16)))
            except ValueError:
                return None
            i += 3
        else:
            out.append(part[i])
            i += 1
    return "".join(out) or None


@dataclass(frozen=True)
class _Space:
    """Where the review branches of one root live in its repository."""

    common_dir: Path
    prefix: str

    @property
    def key(self) -> str:
        return root_key(self.prefix)

    def ref(self, session: str) -> str:
        return f"{REVIEW_NS}/{self.key}/{encode_session(session)}"

    def folder(self, session: str) -> Path:
        return self.common_dir / "contextfs" / "review" / self.key / encode_session(session)

    def root(self, session: str) -> Path:
        return self.folder(session) / self.prefix if self.prefix else self.folder(session)

    def discarded_ref(self, session: str, when: int) -> str:
        return f"{DISCARDED_NS}/{self.key}/{encode_session(session)}/{when}"


def _space(git: GitStore) -> _Space:
    return _Space(git.common_dir, git.prefix)


# ---------------------------------------------------------------- settings
def _settings(config: Mapping[str, Any]) -> Mapping[str, Any]:
    section = config.get("review", {})
    check_keys("review", section, ("agents", "keep_days"))
    return section


def review_actors(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The actor patterns whose writes need review (``[review] agents``)."""
    agents = _settings(config).get("agents", [])
    if not isinstance(agents, list) or not all(isinstance(a, str) and a for a in agents):
        raise ConfigError('[review] agents must be a list of actor patterns, e.g. ["agent:researcher", "agent:*"]')
    return tuple(agents)


def keep_days(config: Mapping[str, Any]) -> float:
    value = _settings(config).get("keep_days", DEFAULT_KEEP_DAYS)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3650:
        raise ConfigError(f"[review] keep_days must be a number of days from 0 to 3650, not {value!r}")
    return float(value)


def config_of(files: RootFiles) -> Mapping[str, Any]:
    """The root's settings as review mode reads them: none from behind a symlink (a clone
    can plant one; the write gate ignores such settings too)."""
    folder = files.kind(".contextfs")
    if folder == "link" or (folder == "dir" and files.kind(CONFIG_PATH) == "link"):
        return {}
    return load_config(files)


def needs_review(actor: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(actor, p) for p in patterns)


# ---------------------------------------------------------------- the agent's side
@dataclass(frozen=True)
class ReviewHandle:
    """What a ContextManager in review mode knows about its branch."""

    session: str
    #: The root everybody else reads (the main branch's work tree).
    main_root: Path
    #: The linked work tree the session writes in, and the root inside it.
    worktree: Path
    root: Path
    branch: str

    def check_open(self) -> None:
        """Refuse to write once a person discarded (or expired) the session."""
        if not (self.worktree / ".git").is_file():
            raise ReviewError(f"review session {self.session} was discarded or closed, so its branch is gone; "
                              "open the root again to start a new session (a person can recover the discarded "
                              f"one with `contextfs sessions recover {self.session}`)")


def open_review(main: ContextManager, session: str) -> ReviewHandle:
    """The work tree of ``session``'s review branch, made from the main branch if new.

    ``main`` is the handle of the main root (opened for writing: it holds the lock that
    keeps two processes from creating the same work tree at once).
    """
    git = main.git
    space = _space(git)
    ref, folder = space.ref(session), space.folder(session)
    with main.write_lock():
        tip = git.branches.read(ref)
        if not (folder / ".git").is_file():
            git.git("worktree", "prune")  # a folder removed by hand leaves git's record of it behind
            folder.parent.mkdir(parents=True, exist_ok=True)
            head = git.head()
            if head is None:
                raise ReviewError(f"{main.root} has no commit yet; open it once without review mode first")
            git.branches.add_worktree(folder, ref, tip or head, git.prefix, create=tip is None)
    return ReviewHandle(session=session, main_root=main.root, worktree=folder, root=space.root(session), branch=ref)


def enter(root: Path, *, actor: str, session: str, review: bool | None, read_only: bool,
          own_repository: bool, durable: bool) -> ReviewHandle | None:
    """Where a ContextManager opened with ``review=`` works: a review handle, or None for
    the main root. ``review=None`` follows ``[review] agents`` for ``actor``."""
    if review is None:
        if not root.is_dir():
            return None
        try:
            listed = review_actors(config_of(RootFiles(root.resolve())))
        except ConfigError:
            return None  # reading still works; the first write raises the error (check_write)
        if not needs_review(actor, listed):
            return None
    if read_only:
        # Reading never creates the work tree: a session that wrote nothing yet sees main.
        git_dir, prefix = locate_root(root)[1:]
        space = _Space(Refs.of(git_dir).common_dir, prefix)
        folder = space.folder(session)
        if not (folder / ".git").is_file():
            return None
        return ReviewHandle(session, root.resolve(), folder, space.root(session), space.ref(session))
    from .manager import ContextManager  # a cycle: the manager imports this module lazily

    main = ContextManager(root, actor=actor, session=session, index=False, own_repository=own_repository,
                          durable=durable, review=False)
    return open_review(main, session)


def check_write(ctx: ContextManager, op: str) -> None:
    """Before a write: a review session must still be open, and through a main-root handle
    an actor whose writes need review is refused."""
    if ctx.review is not None:
        ctx.review.check_open()
        return
    actor = ctx.current_provenance.actor
    if op in ("init", "sync") or not actor.startswith("agent"):
        return  # the managed files and a person's outside edits are not an agent's writes
    if needs_review(actor, review_actors(config_of(ctx.files))):
        raise ReviewError(f"{actor}'s writes wait for a person's review ([review] agents in {CONFIG_PATH}); "
                          f"open the root in review mode: ContextManager(root, actor={actor!r}, review=True) "
                          f"or `contextfs --actor {actor} --review ...`")


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


@dataclass(frozen=True)
class ApproveReport:
    """What an approval merged."""

    session: str
    #: The merge commit on the main branch.
    commit: str | None
    merged: list[str] = field(default_factory=list)
    #: Conflict copies made beside files both sides changed: copy path -> the file.
    conflict_copies: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _iso(when: int) -> str:
    return datetime.fromtimestamp(when, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Review:
    """The review branches of one root, and a person's decisions on them."""

    def __init__(self, ctx: ContextManager) -> None:
        self.ctx = ctx
        self.git = ctx.git
        self.space = _space(self.git)

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
            base = self.git.branches.merge_base(head, info.sha) if head else None
            pending = self.git.branches.ahead(base, info.sha) if base else 1
            out.append(ReviewBranch(session, info.name, info.sha, base, pending))
        return out

    def branch(self, session: str) -> ReviewBranch:
        for found in self.branches():
            if found.session == session:
                return found
        raise ReviewError(f"session {session!r} has no review branch; see the pending sessions with "
                          "`contextfs sessions --pending`")

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
            out.append(Discarded(session, info.name, info.sha, _iso(when), _iso(int(when + keep * 86400))))
        return sorted(out, key=lambda d: d.discarded_at)

    # ------------------------------------------------------------ decisions
    def _person(self, what: str) -> None:
        actor = self.ctx.current_provenance.actor
        if actor.startswith("agent"):
            raise ReviewError(f"{actor} cannot {what} a review session: an agent never approves or discards "
                              "changes; a person does, with `contextfs sessions` or `contextfs ui --write`")
        if self.ctx.review is not None:
            raise ReviewError(f"this handle is review session {self.ctx.review.session}'s; {what} from a handle "
                              "of the main root (ContextManager(root) or the contextfs command)")

    def approve(self, session: str, *, merge: MergeFile = text_merge) -> ApproveReport:
        """Merge a session's review branch into the main branch (see the module docstring)."""
        self._person("approve")
        found = self.branch(session)
        with self._branch_lock(session):  # the agent cannot commit while its tip is read
            tip = self.git.branches.read(found.ref) or found.tip
        ctx = self.ctx
        with ctx.write_lock():
            ctx.sync()  # a person's unsaved edit on the main branch is committed first, never overwritten
            head = self.main_head()
            if head is None or self.git.branches.is_ancestor(tip, head):
                raise ReviewError(f"session {session} has nothing waiting for approval; its changes are "
                                  "already on the main branch")
            base = self.git.branches.merge_base(head, tip)
            plan = plan_merge(self.git, ctx.root, base, head, tip, merge)
            with ctx.change("approve", f"session {session}", trailers={"Contextfs-Approves": session}) as change:
                change.merge_parents = (tip,)
                for rel, data in sorted(plan.writes.items()):
                    if data is None:
                        change.remove(rel)
                    else:
                        change.write(rel, data)
            commit = ctx.git.head()
        self.expire()
        return ApproveReport(session, commit, sorted(r for r in plan.writes if r not in plan.copies),
                             dict(plan.copies), plan.notes)

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
            raise ReviewError(f"no discarded session {session!r} can be recovered (it expired, or was never "
                              "discarded); see `contextfs sessions --all`")
        latest = matches[-1]
        ref = self.space.ref(session)
        with self.ctx.write_lock():
            if self.git.branches.read(ref) is not None:
                raise ReviewError(f"session {session} has a review branch already; approve or discard it first")
            self.git.branches.update(ref, latest.tip, None, f"contextfs: recover review session {session}")
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
            git_dir = self.git.branches.worktree_git_dir(folder) if (folder / ".git").is_file() else None
        except VersioningError:
            git_dir = None
        if git_dir is None:  # no work tree: no writer to wait for
            yield
            return
        with StateDir(git_dir, self.space.prefix).lock("lock").held():
            yield
