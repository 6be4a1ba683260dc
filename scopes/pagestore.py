"""Page-in's per-file statistics kept across processes, so a new process does not re-read a tree.

Page-in ranks the passages of every eligible file of a commit. What it needs of a file
(:class:`~.pagestats.FileStats`) is a pure function of the file's bytes and of whether its
path is a conversation log, so it is keyed by that kind and the git blob id. A process keeps
them in memory (:mod:`.pagein`); this module keeps them in the root's state folder too
(:class:`~contextfs.files.state.StateDir`, inside ``.git/``: never committed, never synced),
so the first view or archival search of a new process reads one file instead of every note
(at 10,000 notes: reading and splitting each note costs about a millisecond).

The file is a log of lines ``<mac> <json>``, appended to as new blobs are read:

- **Only this machine's lines count.** Each line carries an HMAC made with the user's
  machine key. A line that does not verify (copied in with a tarball of the repository,
  edited, or torn by a crash or a concurrent append) is skipped, so a planted line can
  never, say, mark a quarantined note as rankable.
- **Stale code never reads old statistics.** The file's name carries a fingerprint of the
  source of every module that computes them and of the libraries they call (stemmer, YAML,
  frontmatter), so any change to how passages are cut or words analysed starts a new file
  and old ones are removed.
- **It stays about as large as the tree**: when more than half of its lines are for blobs
  no longer in the tree, it is rewritten with only the current ones (atomically; losing
  the file only costs a re-read).

Everything here is a cache: any error reading or writing it is logged and page-in reads the
files, as it would without it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextfs.document import blob_version
from contextfs.errors import ContextFSError
from contextfs.files.durability import write_all
from contextfs.text.turns import is_log

from .derived import PAGEIN_STATS
from .pagestats import FileStats, passages_of

if TYPE_CHECKING:
    from contextfs.files.state import StateDir
    from contextfs.manager import ContextManager

__all__ = ["SOURCES", "StatsStore", "fingerprint", "stats_key", "stats_of", "store_for"]

log = logging.getLogger(__name__)

#: The modules whose code decides a file's statistics (``tests/scopes/test_pagestore.py``
#: checks this is every module :mod:`.pagestats` imports from the package, directly or not).
SOURCES = (
    "contextfs.document",
    "contextfs.errors",
    "contextfs.fixes",
    "contextfs.frontmatter_formats",
    "contextfs.text.analysis",
    "contextfs.text.periods",
    "contextfs.text.turns",
    "contextfs.scopes.pagestats",
    "contextfs.scopes.passages",
)
#: Libraries whose behaviour does too (word stems, YAML types).
_LIBRARIES = ("PyStemmer", "PyYAML", "python-frontmatter")
_FORMAT = 1
_PREFIX, _SUFFIX = PAGEIN_STATS


def stats_key(is_log: bool, blob: str) -> str:
    """The key of a blob's statistics: the same bytes read as a log and as markdown differ."""
    return ("L" if is_log else "M") + blob


def _fingerprint() -> str:
    digest = hashlib.sha1(f"{_FORMAT}|{sys.version_info[:2]}".encode())
    for name in SOURCES:
        path = getattr(sys.modules.get(name), "__file__", None)
        if path is None:
            __import__(name)
            path = sys.modules[name].__file__
        with open(str(path), "rb") as fh:
            digest.update(name.encode() + b"\0" + fh.read())
    for lib in _LIBRARIES:
        try:
            digest.update(f"{lib}={metadata.version(lib)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{lib}=-".encode())
    return digest.hexdigest()[:16]


_FINGERPRINT: str | None = None


def fingerprint() -> str:
    """Which code the statistics in a store were computed by (computed once per process)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        _FINGERPRINT = _fingerprint()
    return _FINGERPRINT


def _encode(stats: FileStats) -> dict[str, Any]:
    return {
        "c": [dict(c) for c in stats.counts],
        "s": list(stats.speakers),
        "d": [None if d is None else d.isoformat() for d in stats.days],
        "m": list(stats.moments),
        "a": sorted(stats.aliases),
        "t": list(stats.texts),
        "l": list(stats.labels),
        "h": None if stats.thread is None else list(stats.thread),
        "q": stats.quarantined,
    }


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("not a list of strings")
    return tuple(value)


def _decode(raw: object) -> FileStats:
    """The statistics a line holds; ValueError when it is not exactly what :func:`_encode` made."""
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    counts = raw["c"]
    if not isinstance(counts, list) or not all(
        isinstance(c, dict) and all(isinstance(n, int) for n in c.values()) for c in counts
    ):
        raise ValueError("bad counts")
    moments = raw["m"]
    if not isinstance(moments, list) or not all(isinstance(m, int | float) for m in moments):
        raise ValueError("bad moments")
    days = tuple(None if d is None else date.fromisoformat(d) for d in raw["d"])
    aliases = frozenset((str(a), str(b)) for a, b in raw["a"])
    thread = raw["h"]
    if thread is not None:
        session, turn = thread
        if not isinstance(session, str) or not isinstance(turn, int | float):
            raise ValueError("bad thread")
        thread = (session, float(turn))
    stats = FileStats(
        counts=tuple(Counter(c) for c in counts),
        speakers=_strings(raw["s"]),
        days=days,
        moments=tuple(float(m) for m in moments),
        aliases=aliases,
        texts=_strings(raw["t"]),
        labels=_strings(raw["l"]),
        thread=thread,
        quarantined=raw["q"] is True,
    )
    n = len(stats.counts)
    if any(len(part) != n for part in (stats.speakers, stats.days, stats.moments, stats.texts)):
        raise ValueError("parts of different lengths")
    if stats.labels and len(stats.labels) != n:
        raise ValueError("labels of a different length")
    return stats


class StatsStore:
    """One root's statistics file: :meth:`load` once, :meth:`add` what was read, :meth:`save`."""

    def __init__(self, state: StateDir) -> None:
        self._state = state
        self._lock = threading.Lock()
        self._loaded: dict[str, FileStats] | None = None
        self._lines = 0  # lines in the file, kept or not
        self._clean_end = True  # the file ends with a whole line (not one torn by a crash)
        self._pending: dict[str, FileStats] = {}
        self._sign: Callable[[bytes], str] | None = None

    def _path(self) -> Path:
        return self._state.file(_PREFIX + fingerprint() + _SUFFIX)

    def _signer(self) -> Callable[[bytes], str]:
        if self._sign is None:
            self._sign = self._state.signer()
        return self._sign

    def load(self) -> dict[str, FileStats]:
        """Every statistic this machine wrote for the current code (read once per store)."""
        with self._lock:
            if self._loaded is None:
                self._loaded = self._read()
            return self._loaded

    def _read(self) -> dict[str, FileStats]:
        found: dict[str, FileStats] = {}
        try:
            path = self._path()
            self._remove_others(path)
            data = path.read_bytes()
        except FileNotFoundError:
            return found
        except (OSError, ContextFSError) as exc:  # ContentError: no writable state folder
            log.warning("page-in statistics not read (%s); the files are read instead", exc)
            return found
        sign = self._signer()
        lines = data.split(b"\n")
        for line in lines:
            mac, _, payload = line.partition(b" ")
            if not payload or not hmac.compare_digest(mac, sign(payload).encode()):
                continue
            try:
                key, raw = json.loads(payload)
                found[str(key)] = _decode(raw)
            except (ValueError, TypeError, KeyError):
                continue
        self._lines = len(lines) - 1
        self._clean_end = data.endswith(b"\n") or not data
        return found

    def _remove_others(self, path: Path) -> None:
        """Drop files an earlier version of the code wrote: they are never read again."""
        for other in path.parent.glob(f"{_PREFIX}*{_SUFFIX}"):
            if other.name != path.name:
                other.unlink(missing_ok=True)

    def add(self, key: str, stats: FileStats) -> None:
        """Remember statistics read from a blob, for the next :meth:`save`."""
        with self._lock:
            if self._loaded is not None and key not in self._loaded:
                self._loaded[key] = stats
                self._pending[key] = stats

    def save(self, live: int, keys: Callable[[], Iterable[str]]) -> None:
        """Append what was added since the last save; rewrite the file with only ``keys()``
        (the ``live`` keys of the tree just read) when most of its lines are for others."""
        with self._lock:
            if self._loaded is None:
                return
            if self._lines + len(self._pending) > 2 * live + 64:
                keep = set(keys())
                entries = [(k, v) for k, v in self._loaded.items() if k in keep]
                rewrite = True
            elif self._pending:
                entries, rewrite = list(self._pending.items()), False
            else:
                return
            self._pending = {}
            data = self._lines_of(entries)
            try:
                if rewrite:
                    self._state.write_bytes(self._path().name, data)
                    self._loaded = dict(entries)
                    self._lines, self._clean_end = len(entries), True
                else:
                    self._append(data if self._clean_end else b"\n" + data)
                    self._lines += len(entries)
                    self._clean_end = True
            except (OSError, ContextFSError) as exc:
                log.warning("page-in statistics not kept (%s); they will be read again", exc)

    def _lines_of(self, entries: list[tuple[str, FileStats]]) -> bytes:
        sign = self._signer()
        out = []
        for key, stats in entries:
            payload = json.dumps([key, _encode(stats)], separators=(",", ":")).encode()
            out.append(sign(payload).encode() + b" " + payload + b"\n")
        return b"".join(out)

    def _append(self, data: bytes) -> None:
        # One write of whole lines with O_APPEND: a concurrent writer's lines land before or
        # after these; a line torn by a crash fails its check and is skipped when read.
        fd = os.open(self._path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)


#: (kind, blob id) -> statistics (:func:`stats_key`), for every root of the process.
_BLOB_CACHE: OrderedDict[str, FileStats] = OrderedDict()
_BLOB_CACHE_SIZE = 60_000
_LOCK = threading.Lock()
_STORES: dict[str, StatsStore] = {}


def store_for(ctx: ContextManager) -> StatsStore:
    """The statistics file of ``ctx``'s root (one object per root and process)."""
    state = ctx.parts.state
    key = f"{state.git_dir}\0{state.prefix}"
    with _LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = StatsStore(state)
        return store


def stats_of(
    ctx: ContextManager, rel: str, blob: str, sha: str, at_head: bool, store: StatsStore | None
) -> FileStats:
    """The statistics of blob ``blob`` at ``rel`` in commit ``sha``: remembered by this
    process, kept by an earlier one in ``store``, or read (from the file when ``at_head``
    and it still holds that blob, else from git) and added to both."""
    key = stats_key(is_log(rel), blob)
    with _LOCK:
        hit = _BLOB_CACHE.get(key)
        if hit is not None:
            _BLOB_CACHE.move_to_end(key)
            return hit
    stats = store.load().get(key) if store is not None else None
    if stats is None:
        data = ctx.parts.read_raw(rel) if at_head else None
        if data is None or blob_version(data) != blob:
            data = ctx.parts.git.blob_at(rel, sha) or b""
        stats = passages_of(rel, data)
        if store is not None:
            store.add(key, stats)
    with _LOCK:
        _BLOB_CACHE[key] = stats
        if len(_BLOB_CACHE) > _BLOB_CACHE_SIZE:
            _BLOB_CACHE.popitem(last=False)
    return stats
