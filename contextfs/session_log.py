"""Every commit of a root with its trailers and line counts, read once and kept.

Sessions are a view over the whole history (which commits carry a session's trailer, how
many lines each added and removed), so listing them must not re-read a long history
every time. :class:`CommitLog` asks git once for the commits it has not seen
(``git log --numstat`` from the tips it is given, minus the tips it already read), and
keeps one record per commit in the root's state folder. Commits never change, so a
record is never stale; the cache is signed with this machine's key like the search
index's stamp, and anything that does not verify is read again from git.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .versioning import check_rev

if TYPE_CHECKING:
    from .state import StateDir
    from .versioning import GitStore

__all__ = ["CommitLog", "CommitRecord", "FileStat", "reachable", "read_commits"]

log = logging.getLogger(__name__)

_CACHE = "session-log.json"
_VERSION = 1
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
#: Past this many records the cache is not written (it would cost more to load than to read).
_MAX_CACHED = 200_000


@dataclass(frozen=True)
class FileStat:
    """Lines one commit added to and removed from one file (0 and 0 for a binary file)."""

    path: str
    added: int
    removed: int


@dataclass(frozen=True)
class CommitRecord:
    """One commit as sessions need it."""

    sha: str
    parents: tuple[str, ...]
    author: str
    #: Author time, seconds since the epoch (UTC).
    time: int
    subject: str
    trailers: Mapping[str, str]
    files: tuple[FileStat, ...]

    @property
    def session(self) -> str | None:
        return self.trailers.get("Contextfs-Session")

    @property
    def op(self) -> str:
        return self.trailers.get("Contextfs-Op", "")

    def to_json(self) -> list[Any]:
        return [list(self.parents), self.author, self.time, self.subject, dict(self.trailers),
                [[f.path, f.added, f.removed] for f in self.files]]

    @classmethod
    def from_json(cls, sha: str, raw: Any) -> CommitRecord:
        parents, author, when, subject, trailers, files = raw
        if not (_HEX40.match(sha) and isinstance(parents, list) and all(_HEX40.match(str(p)) for p in parents)
                and isinstance(author, str) and isinstance(when, int) and isinstance(subject, str)
                and isinstance(trailers, dict) and isinstance(files, list)):
            raise ValueError("malformed commit record")
        stats = tuple(FileStat(str(p), int(a), int(r)) for p, a, r in files)
        return cls(sha, tuple(parents), author, when, subject,
                   {str(k): str(v) for k, v in trailers.items()}, stats)


def _parse_trailers(text: str) -> dict[str, str]:
    trailers: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.startswith("Contextfs-"):
            trailers[key.strip()] = value.strip()
    return trailers


def _count(text: str) -> int:
    return int(text) if text.isdigit() else 0  # '-' for a binary file


def _pathspec(git: GitStore) -> list[str]:
    return ["--", git.prefix.rstrip("/")] if git.prefix else []


def reachable(git: GitStore, tips: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    """Ids of the commits reachable from ``tips`` but not ``exclude`` that touch the root,
    newest first.

    Merges are always listed (``--full-history``), so an approval is never hidden by
    git's history simplification.
    """
    wanted = [check_rev(t) for t in tips]
    if not wanted:
        return []
    out = git.git("rev-list", "--full-history", *wanted, *("^" + check_rev(t) for t in exclude), *_pathspec(git))
    return [line for line in out.split() if _HEX40.match(line)]


def read_commits(git: GitStore, shas: Iterable[str]) -> list[CommitRecord]:
    """The records of the given commits (paths root-relative), in the order given.

    The separators carry a random nonce, so a path or a message made to look like a
    record boundary cannot forge one.
    """
    wanted = [check_rev(s) for s in shas]
    if not wanted:
        return []
    nonce = secrets.token_hex(8)
    rec, sep = f"\x1e{nonce}\x1e", f"\x1f{nonce}\x1f"
    fmt = rec + sep.join(["%H", "%P", "%an", "%at", "%s", "%(trailers:only,unfold)"]) + sep
    out = git.git("log", "--no-walk=unsorted", "--stdin", "--no-renames", "--numstat", "-z", "--no-color",
                  f"--format={fmt}", *_pathspec(git), input="\n".join(wanted).encode() + b"\n")
    cut = len(git.prefix)
    records = []
    for chunk in out.split(rec)[1:]:
        fields = chunk.split(sep)
        if len(fields) != 7 or not _HEX40.match(fields[0]):
            log.warning("skipping an unreadable entry of git log")
            continue
        sha, parents, author, when, subject, trailer_text, stats = fields
        files = []
        for entry in stats.strip("\0\n").split("\0"):
            parts = entry.strip("\n").split("\t", 2)
            if len(parts) == 3 and parts[2].startswith(git.prefix):
                files.append(FileStat(parts[2][cut:], _count(parts[0]), _count(parts[1])))
        records.append(CommitRecord(sha, tuple(parents.split()), author, int(when) if when.isdigit() else 0,
                                    subject, _parse_trailers(trailer_text), tuple(files)))
    return records


class CommitLog:
    """The records of every commit reachable from some tips, cached in the state folder."""

    def __init__(self, git: GitStore, state: StateDir) -> None:
        self.git = git
        self.state = state

    def _load(self) -> dict[str, CommitRecord]:
        raw = self.state.read_json(_CACHE)
        try:
            if not isinstance(raw, dict) or raw.get("version") != _VERSION:
                raise ValueError("no cache")
            body = raw["body"]
            if not self.state.verify(body.encode("utf-8"), raw.get("mac")):
                raise ValueError("the cache was not written on this machine")
            data = json.loads(body)
            return {sha: CommitRecord.from_json(sha, value) for sha, value in data.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            return {}

    def _save(self, records: Mapping[str, CommitRecord]) -> None:
        if len(records) > _MAX_CACHED:
            return
        body = json.dumps({s: r.to_json() for s, r in records.items()}, separators=(",", ":"), ensure_ascii=False)
        self.state.write_json(_CACHE, {"version": _VERSION, "body": body, "mac": self.state.sign(body.encode("utf-8"))})

    def records(self, tips: Iterable[str]) -> list[CommitRecord]:
        """Every commit reachable from ``tips`` that touches the root, newest first."""
        order = reachable(self.git, tips)
        cached = self._load()
        missing = [sha for sha in order if sha not in cached]
        if missing:
            for record in read_commits(self.git, missing):
                cached[record.sha] = record
            # Only what is reachable now is kept: an expired branch's commits drop out.
            self._save({sha: cached[sha] for sha in order if sha in cached})
        return [cached[sha] for sha in order if sha in cached]
