"""The agent's side of review mode: where a session's review branch lives, and opening it.

A session in review mode writes to the branch ``contextfs/review/<root key>/<session>``,
checked out in a linked work tree under the git directory
(``<git dir>/contextfs/review/<root key>/<session>/``; ``git worktree`` keeps its
bookkeeping), never in the person's work tree. The session's own
:class:`~contextfs.ContextManager` is opened on that work tree
(:func:`contextfs.review.opening.enter`), so the
agent reads its own writes, searches them and is offered them in its views, with every
mechanism of the store (the write gate, the journal, one commit per change) working as on
the main branch. Everybody else reads the main branch. The person's side — approve,
discard, recover — is :mod:`contextfs.review.decisions`.

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

from ..config import CONFIG_PATH, check_keys, load_config
from ..errors import ConfigError, ReviewError
from ..files.confined import RootFiles
from ..files.state import root_key

if TYPE_CHECKING:
    from ..versioning import GitStore

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
    "keep_days",
    "needs_review",
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


def check_write(handle: ReviewHandle | None, files: RootFiles, actor: str, op: str) -> None:
    """Before a write of ``op`` by ``actor``: a review session (``handle``) must still be
    open, and through a main-root handle an actor whose writes need review is refused."""
    if handle is not None:
        handle.check_open()
        return
    if op in ("init", "sync") or not actor.startswith("agent"):
        return  # the managed files and a person's outside edits are not an agent's writes
    if needs_review(actor, _listed(files)):
        raise ReviewError(
            f"{actor}'s writes wait for a person's review ([review] agents in {CONFIG_PATH}); "
            f"open the root in review mode: ContextManager(root, actor={actor!r}, review=True) "
            f"or `contextfs --actor {actor} --review ...`"
        )
