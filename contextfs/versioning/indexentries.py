"""Index entries: what a path is to hold (a :class:`Record`), the entry git stores for it,
a shared index's names, and a plain index's entries with changes merged in git's order.

A record is read from the file as it is now (:func:`record_of`)."""

from __future__ import annotations

import bisect
import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import VersioningError
from .indexfile import Entry, parse
from .objects import EXEC_MODE, FILE_MODE

__all__ = [
    "Record",
    "blob_id",
    "Shared",
    "conflicts",
    "make_entry",
    "merge",
    "positions",
    "record_of",
    "unmatched",
    "same",
]


@dataclass(frozen=True)
class Record:
    """What a path is to hold in the index: its blob id, mode and the file's stat data."""

    sha: bytes
    mode: int
    st: os.stat_result


def same(seen: os.stat_result | None, path: Path) -> bool:
    """Whether the file at ``path`` is still the one ``seen`` describes (None: no file)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return seen is None
    return seen is not None and (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (
        seen.st_ino,
        seen.st_size,
        seen.st_mtime_ns,
        seen.st_ctime_ns,
    )


def make_entry(name: bytes, record: Record) -> Entry:
    st = record.st
    return Entry(
        (st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9),
        (st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9),
        st.st_dev,
        st.st_ino,
        record.mode,
        st.st_uid,
        st.st_gid,
        st.st_size,
        record.sha,
        0,
        0,
        name,
    )


@dataclass
class Shared:
    """A shared index, read once per process (its name is its checksum: it never changes).

    Only the names are decoded up front; the entries when a fold or a racy entry needs them.
    """

    data: bytes
    names: list[bytes]
    newest: int  # the latest mtime (seconds) of any entry
    _entries: list[Entry] | None = None

    @property
    def entries(self) -> list[Entry]:
        if self._entries is None:
            self._entries = parse(self.data).entries
        return self._entries


def conflicts(existing: bytes, name: bytes) -> bool:
    """A file entry and a folder of the same name cannot both be in the index."""
    return existing.startswith(name + b"/") or name.startswith(existing + b"/")


def positions(shared: Shared, name: bytes) -> list[int]:
    """Positions of the shared entries named ``name`` (any stage), under it, or on its way."""
    names = shared.names
    found = []
    start = bisect.bisect_left(names, name)
    pos = start
    while pos < len(names) and (names[pos] == name or names[pos].startswith(name + b"/")):
        found.append(pos)
        pos += 1
    parts = name.split(b"/")
    for depth in range(1, len(parts)):
        prefix = b"/".join(parts[:depth])
        at = bisect.bisect_left(names, prefix)
        while at < len(names) and names[at] == prefix:
            found.append(at)
            at += 1
    return found


def merge(entries: list[Entry], changes: Mapping[bytes, Record | None]) -> list[Entry]:
    """A plain index's entries with ``changes`` applied, in git's order (a file replacing a
    folder of the same name drops the folder's entries, and the other way round)."""
    names = set(changes)
    ancestors = {b"/".join(n.split(b"/")[:d]) for n in names for d in range(1, n.count(b"/") + 1)}

    def kept(entry: Entry) -> bool:
        if entry.name in names or entry.name in ancestors:
            return False
        parts = entry.name.split(b"/")
        return not any(b"/".join(parts[:d]) in names for d in range(1, len(parts)))

    out = [e for e in entries if kept(e)]
    out.extend(make_entry(name, record) for name, record in changes.items() if record is not None)
    out.sort(key=Entry.key)
    return out


def record_of(path: Path) -> Record | None:
    """The index record of the file at ``path`` as it is now (None: no file there).

    The bytes are hashed from the same open file whose status is recorded; a save racing
    with this is caught by git itself (an entry as new as the index is re-read).
    """
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            target = os.fsencode(os.readlink(path))
            return Record(blob_id(target), 0o120000, st)
        if not stat.S_ISREG(st.st_mode):
            return None
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise VersioningError(
            f"cannot read {path} to record it in git's index ({exc.strerror})"
        ) from None
    return Record(blob_id(data), EXEC_MODE if st.st_mode & 0o100 else FILE_MODE, st)


#: Stat data no file on disk has (size and times zero): an entry carrying it is always read again.
_NO_FILE = os.stat_result((0,) * 10, {"st_atime_ns": 0, "st_mtime_ns": 0, "st_ctime_ns": 0})


def unmatched(sha: bytes, mode: int) -> Record:
    """An index record of the blob ``sha`` that git compares with the file by its bytes, never
    by its stat data (the file holds something else)."""
    return Record(sha, mode, _NO_FILE)


def blob_id(data: bytes) -> bytes:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).digest()
