"""The agent's side of review mode: where a session's review branch lives, and opening it.

A session in review mode writes to the branch ``contextfs/review/<root key>/<session>``,
checked out in a linked work tree under the git directory
(``<git dir>/contextfs/review/<root key>/<session>/``; ``git worktree`` keeps its
bookkeeping), never in the person's work tree. The session's own
:class:`~contextfs.ContextManager` is opened on that work tree (:func:`enter`), so the
agent reads its own writes, searches them and is offered them in its views, with every
mechanism of the store (the write gate, the journal, one commit per change) working as on
the main branch. Everybody else reads the main branch. The person's side — approve,
discard, recover — is :mod:`contextfs.review`.

Which writes need review is said in ``.contextfs/config.toml``::

    [review]
    agents = ["agent:researcher", "agent:*"]   # actors whose writes wait for a person
    keep_days = 14

or per session with ``ContextManager(root, actor=..., review=True)`` (``contextfs
--review``). A handle that is not in review mode refuses a write by an actor the config
lists (:func:`check_write`), so an agent cannot skip review by writing through someone
else's handle.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import CONFIG_PATH, check_keys, load_config
from .errors import ConfigError, ReviewError
from .files import RootFiles
from .state import locate_root, root_key
from .versioning.refs import Refs

if TYPE_CHECKING:
    from .manager import ContextManager
    from .versioning import GitStore

__all__ = [
    "DEFAULT_KEEP_DAYS",
    "DISCARDED_NS",
    "REVIEW_NS",
    "ReviewHandle",
    "ReviewSpace",
    "check_write",
    "config_of",
    "decode_session",
    "encode_session",
    "enter",
    "keep_days",
    "needs_review",
    "open_review",
    "review_actors",
    "space_of",
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
                out.append(chr(int(part[i + 1 : i + 3], 16)))
            except ValueError:
                return None
            i += 3
        else:
            out.append(part[i])
            i += 1
    return "".join(out) or None


@dataclass(frozen=True)
class ReviewSpace:
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


def space_of(git: GitStore) -> ReviewSpace:
    return ReviewSpace(git.common_dir, git.prefix)


# ---------------------------------------------------------------- settings
def _settings(config: Mapping[str, Any]) -> Mapping[str, Any]:
    section = config.get("review", {})
    check_keys("review", section, ("agents", "keep_days"))
    return section


def review_actors(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The actor patterns whose writes need review (``[review] agents``)."""
    agents = _settings(config).get("agents", [])
    if not isinstance(agents, list) or not all(isinstance(a, str) and a for a in agents):
        raise ConfigError(
            '[review] agents must be a list of actor patterns, e.g. ["agent:researcher", "agent:*"]'
        )
    return tuple(agents)


def keep_days(config: Mapping[str, Any]) -> float:
    value = _settings(config).get("keep_days", DEFAULT_KEEP_DAYS)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3650:
        raise ConfigError(
            f"[review] keep_days must be a number of days from 0 to 3650, not {value!r}"
        )
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
            raise ReviewError(
                f"review session {self.session} was discarded or closed, so its branch is gone; "
                "open the root again to start a new session (a person can recover the discarded "
                f"one with `contextfs sessions recover {self.session}`)"
            )


def open_review(main: ContextManager, session: str) -> ReviewHandle:
    """The work tree of ``session``'s review branch, made from the main branch if new.

    ``main`` is the handle of the main root (opened for writing: it holds the lock that
    keeps two processes from creating the same work tree at once).
    """
    git = main.git
    # The session id names the branch (encoded) before any commit on it could be gated.
    main.guard().check_names([session], what="the review session id (it names a branch)")
    space = space_of(git)
    ref, folder = space.ref(session), space.folder(session)
    with main.write_lock():
        tip = git.branches.read(ref)
        if not (folder / ".git").is_file():
            # A folder removed by hand leaves git's record of it behind.
            git.git("worktree", "prune")
            folder.parent.mkdir(parents=True, exist_ok=True)
            head = git.head()
            if head is None:
                raise ReviewError(
                    f"{main.root} has no commit yet; open it once without review mode first"
                )
            git.branches.add_worktree(folder, ref, tip or head, git.prefix, create=tip is None)
    return ReviewHandle(
        session=session, main_root=main.root, worktree=folder, root=space.root(session), branch=ref
    )


def enter(
    ctx: ContextManager, root: Path, review: bool | None, own_repository: bool
) -> tuple[ReviewHandle | None, Path, bool]:
    """Where ``ctx`` (a ContextManager being opened with ``review=``) works: (its review
    handle, the root to open, own_repository), or (None, root, own_repository) for the
    main root.

    ``review=True`` puts the session in review mode: its writes wait on a branch of their
    own until a person approves them; ``None`` follows ``[review] agents`` for the actor.
    """
    prov = ctx.current_provenance
    handle = _enter(
        root,
        actor=prov.actor,
        session=prov.session or "",
        review=review,
        read_only=ctx.read_only,
        own_repository=own_repository,
        durable=ctx.durable,
    )
    return (handle, handle.root, False) if handle is not None else (None, root, own_repository)


def _enter(
    root: Path,
    *,
    actor: str,
    session: str,
    review: bool | None,
    read_only: bool,
    own_repository: bool,
    durable: bool,
) -> ReviewHandle | None:
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
        space = ReviewSpace(Refs.of(git_dir).common_dir, prefix)
        folder = space.folder(session)
        if not (folder / ".git").is_file():
            return None
        return ReviewHandle(
            session, root.resolve(), folder, space.root(session), space.ref(session)
        )
    from .manager import ContextManager  # a cycle: the manager imports this module lazily

    main = ContextManager(
        root,
        actor=actor,
        session=session,
        index=False,
        own_repository=own_repository,
        durable=durable,
        review=False,
    )
    return open_review(main, session)


#: root -> (the config file's lstat key, its ``[review] agents``): an agent's every write
#: asks, and re-reading the settings each time cost more than the check itself.
_LISTED: dict[Path, tuple[tuple[int, int] | None, tuple[str, ...]]] = {}


def _listed(files: RootFiles) -> tuple[str, ...]:
    st = files.lstat(CONFIG_PATH) if files.kind(".contextfs") == "dir" else None
    key = (st.st_mtime_ns, st.st_size) if st is not None else None
    cached = _LISTED.get(files.root)
    if cached is None or cached[0] != key:
        cached = _LISTED[files.root] = (key, review_actors(config_of(files)))
    return cached[1]


def check_write(ctx: ContextManager, op: str) -> None:
    """Before a write: a review session must still be open, and through a main-root handle
    an actor whose writes need review is refused."""
    if ctx.review is not None:
        ctx.review.check_open()
        return
    actor = ctx.current_provenance.actor
    if op in ("init", "sync") or not actor.startswith("agent"):
        return  # the managed files and a person's outside edits are not an agent's writes
    if needs_review(actor, _listed(ctx.files)):
        raise ReviewError(
            f"{actor}'s writes wait for a person's review ([review] agents in {CONFIG_PATH}); "
            f"open the root in review mode: ContextManager(root, actor={actor!r}, review=True) "
            f"or `contextfs --actor {actor} --review ...`"
        )
