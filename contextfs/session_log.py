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

import hmac
import json
import logging
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .versioning import check_rev

if TYPE_CHECKING:
    from .state import StateDir
    from .versioning import GitStore

__all__ = ["CommitLog", "CommitRecord", "reachable", "read_commits", "walk"]

log = logging.getLogger(__name__)

_CACHE = "session-log.jsonl"
_HEADER = b"contextfs session log 4\n"
_MAIN = "session-main.json"
_HEX40 = re.compile(r"^[0-9a-f]{40}\Z")
#: Past this many records the cache is not written (it would cost more to load than to read).
_MAX_CACHED = 200_000


class CommitRecord(NamedTuple):
    """One commit as sessions need it (a named tuple: a listing makes one per commit)."""

    sha: str
    parents: tuple[str, ...]
    author: str
    #: Author time, seconds since the epoch (UTC).
    time: int
    subject: str
    trailers: Mapping[str, str]
    #: The root-relative paths it changed.
    paths: tuple[str, ...]
    #: Lines it added and removed, over all its files (a binary file counts 0).
    added: int
    removed: int

    @property
    def session(self) -> str | None:
        return self.trailers.get("Contextfs-Session")

    @property
    def op(self) -> str:
        return self.trailers.get("Contextfs-Op", "")

    def to_json(self) -> list[Any]:
        return [
            list(self.parents),
            self.author,
            self.time,
            self.subject,
            dict(self.trailers),
            list(self.paths),
            self.added,
            self.removed,
        ]

    @classmethod
    def from_json(cls, sha: str, raw: Any) -> CommitRecord:
        """A record read back from the cache (its line's signature vouched for it)."""
        parents, author, when, subject, trailers, paths, added, removed = raw
        if not isinstance(trailers, dict):
            raise ValueError("malformed commit record")
        return cls(
            sha, tuple(parents), author, when, subject, trailers, tuple(paths), added, removed
        )


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
    out = git.git(
        "rev-list",
        "--full-history",
        *wanted,
        *("^" + check_rev(t) for t in exclude),
        *_pathspec(git),
    )
    return [line for line in out.split() if _HEX40.match(line)]


def _log(git: GitStore, args: list[str], input: bytes | None = None) -> list[CommitRecord]:
    """Records parsed from ``git log`` with ``args`` selecting the commits.

    The separators carry a random nonce, so a path or a message made to look like a
    record boundary cannot forge one.
    """
    nonce = secrets.token_hex(8)
    rec, sep = f"\x1e{nonce}\x1e", f"\x1f{nonce}\x1f"
    fmt = rec + sep.join(["%H", "%P", "%an", "%at", "%s", "%(trailers:only,unfold)"]) + sep
    out = git.git(
        "log",
        *args,
        "--no-renames",
        "--numstat",
        "-z",
        "--no-color",
        f"--format={fmt}",
        *_pathspec(git),
        input=input,
    )
    cut = len(git.prefix)
    records = []
    for chunk in out.split(rec)[1:]:
        fields = chunk.split(sep)
        if len(fields) != 7 or not _HEX40.match(fields[0]):
            log.warning("skipping an unreadable entry of git log")
            continue
        sha, parents, author, when, subject, trailer_text, stats = fields
        paths, added, removed = [], 0, 0
        for entry in stats.strip("\0\n").split("\0"):
            parts = entry.strip("\n").split("\t", 2)
            if len(parts) == 3 and parts[2].startswith(git.prefix):
                paths.append(parts[2][cut:])
                added += _count(parts[0])
                removed += _count(parts[1])
        records.append(
            CommitRecord(
                sha,
                tuple(parents.split()),
                author,
                int(when) if when.isdigit() else 0,
                subject,
                _parse_trailers(trailer_text),
                tuple(paths),
                added,
                removed,
            )
        )
    return records


def read_commits(git: GitStore, shas: Iterable[str]) -> list[CommitRecord]:
    """The records of the given commits (paths root-relative), in the order given."""
    wanted = [check_rev(s) for s in shas]
    if not wanted:
        return []
    return _log(git, ["--no-walk=unsorted", "--stdin"], input="\n".join(wanted).encode() + b"\n")


def walk(git: GitStore, tips: Iterable[str]) -> list[CommitRecord]:
    """The records of every commit reachable from ``tips`` that touches the root, newest
    first: :func:`reachable` and :func:`read_commits` in one pass of git."""
    wanted = [check_rev(t) for t in tips]
    return _log(git, ["--full-history", *wanted]) if wanted else []


class CommitLog:
    """The records of every commit reachable from some tips, cached in the state folder.

    The cache is a header line and then one line per batch of records (the first listing,
    then what each later one read), each line signed with this machine's key: a new commit
    costs one appended line, and a line that does not verify (damaged, cut short by a kill,
    or not written here) is read again from git.
    """

    def __init__(self, git: GitStore, state: StateDir) -> None:
        self.git = git
        self.state = state

    def _block(self, records: Iterable[CommitRecord]) -> bytes:
        body = json.dumps(
            [[r.sha, *r.to_json()] for r in records], separators=(",", ":"), ensure_ascii=False
        ).encode()
        return self.state.sign(body).encode() + b" " + body + b"\n"

    def _load(self) -> dict[str, CommitRecord]:
        data = self.state.read_bytes(_CACHE)
        if not data or not data.startswith(_HEADER):
            return {}
        sign = self.state.signer()
        records = {}
        for line in data[len(_HEADER) :].split(b"\n"):
            mac, _, body = line.partition(b" ")
            if not body or not hmac.compare_digest(sign(body).encode(), mac):
                continue
            try:
                rows = json.loads(body)
            except ValueError:
                continue
            for raw in rows if isinstance(rows, list) else ():
                try:
                    record = CommitRecord.from_json(raw[0], raw[1:])
                except (ValueError, KeyError, TypeError, IndexError):
                    continue
                records[record.sha] = record
        return records

    def _rewrite(self, records: list[CommitRecord]) -> None:
        self.state.write_bytes(_CACHE, _HEADER + self._block(records))

    def _append(self, records: list[CommitRecord]) -> None:
        try:
            # One write in append mode: a kill leaves at most a short last line, which
            # then fails its signature and is read again.
            fd = os.open(self.state.file(_CACHE), os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, self._block(records))
            finally:
                os.close(fd)
        except OSError as exc:
            log.warning(
                "could not extend the session log cache (%s); it will be rebuilt", exc.strerror
            )

    def _main(self, head: str) -> list[str]:
        """The commits of the main branch, newest first: the saved list, extended by what
        was committed since when the saved head is an ancestor (a rev-list of only those)."""
        saved = self.state.read_bytes(_MAIN)
        order: list[str] | None = None
        if saved:
            mac, _, body = saved.partition(b" ")
            try:
                if self.state.verify(body, mac.decode("ascii", "replace")):
                    data = json.loads(body)
                    if data["head"] == head:
                        return [str(s) for s in data["order"]]
                    if self.git.branches.is_ancestor(str(data["head"]), head):
                        order = reachable(self.git, [head], [str(data["head"])]) + [
                            str(s) for s in data["order"]
                        ]
            except (ValueError, KeyError, TypeError):
                order = None
        if order is None:
            order = reachable(self.git, [head])
        self._save_main(head, order)
        return order

    def _save_main(self, head: str, order: list[str]) -> None:
        body = json.dumps({"head": head, "order": order}, separators=(",", ":")).encode()
        self.state.write_bytes(_MAIN, self.state.sign(body).encode() + b" " + body)

    def records(
        self, head: str | None, others: Iterable[str] = ()
    ) -> tuple[list[CommitRecord], set[str]]:
        """Every commit reachable from ``head`` or ``others`` that touches the root, newest
        first, and the ids of those on the main branch (reachable from ``head``)."""
        extra = [t for t in others if t]
        cached = self._load()
        if not cached:
            found = walk(self.git, [t for t in [head, *extra] if t])
            if len(found) <= _MAX_CACHED:
                self._rewrite(found)
            if not extra:
                if head:
                    self._save_main(head, [r.sha for r in found])
                return found, {r.sha for r in found}
            cached = {r.sha: r for r in found}
        main = self._main(head) if head else []
        order = main + reachable(self.git, extra, [head] if head else []) if extra else main
        missing = [sha for sha in order if sha not in cached]
        fresh = read_commits(self.git, missing) if missing else []
        for record in fresh:
            cached[record.sha] = record
        kept = [cached[sha] for sha in order if sha in cached]
        if len(cached) - len(kept) > max(100, len(kept) // 4):
            self._rewrite(kept)  # an expired branch's commits drop out of the cache
        elif fresh:
            self._append(fresh)
        return kept, set(main)
