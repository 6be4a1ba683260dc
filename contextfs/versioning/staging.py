"""Recording paths in git's index in-process, in a form git reads as its own.

A commit moves the branch; git's index must then hold the same blobs for the changed
paths, or a person's ``git status`` shows the commit undone. :class:`IndexWriter` does
what ``git update-index --add --remove`` did, without a process:

* it reads the index, sets the entries of exactly the given paths (blob id, mode, the
  file's stat data) or removes them, and puts the result in place as ``index.lock``, a
  marked lock (:mod:`.locks`, git's lock-file protocol; its mark journaled first), checking
  under the lock that the index did not change since it was read (else it starts again);
  :meth:`PendingIndex.commit` renames the lock over the index. A live git's lock is waited
  for. Nothing is flushed here: the caller's barrier covers the lock's
  bytes before the rename (see :mod:`contextfs.files.durability`);
* a **split index** (``core.splitIndex``: most entries in ``sharedindex.<id>``, the index
  file holding the changes against it as EWAH bitmaps of deleted and replaced shared
  entries plus the added entries) stays split, so recording one path rewrites a few
  hundred bytes, not every entry. When the split part grows past a bound, or the caller
  asks (a large batch), the entries are folded into a new shared index, as git does;
* what git would do alongside is done too: the cache tree (``TREE``) is invalidated on the
  changed folders, entries that are *racily clean* (modified in the second the old index
  was written, with unchanged stat data) and whose bytes changed get their size smudged to
  0 so git re-reads them (the new index is dated to the start of its second, so entries
  modified in that second stay racily clean without being read),
  and the extensions that describe the work tree as a whole (``UNTR``, ``FSMN``, ``EOIE``,
  ``IEOT`` and unknown optional ones) are dropped, which git accepts and rebuilds.
  ``REUC`` is kept. A sparse index or an extension git marks required that is not
  understood here is refused (:class:`UnsupportedIndex`) before anything is written.

A lock left by a process that ran before the machine last booted cannot belong to a live
process: it is removed (:func:`.locks.stale_lock`; a power cut can leave one whose owner's
journal line was lost).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import secrets
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import VersioningError
from ..files.durability import write_all
from . import ewah
from .indexentries import Record, Shared, conflicts, make_entry, merge, positions, same
from .indexfile import Entry, IndexData, IndexFormatError, invalidate_tree, names, parse, serialize
from .locks import LockMark, MarkedLock, stale_lock, wait_for

__all__ = ["IndexWriter", "PendingIndex", "UnsupportedIndex"]

log = logging.getLogger(__name__)

#: Extensions kept as they are; every other optional one is dropped (git rebuilds them).
_KEEP = (b"REUC",)
#: Split-part size (entries) above which it is folded into a new shared index.
_FOLD_MIN, _FOLD_MAX = 50, 500
_SHARED_EXPIRE = 14 * 86400
#: Racily clean files up to this size are hashed to see whether they changed; larger ones
#: are smudged unread (git re-reads them at its next look).
_RACY_READ_MAX = 4 * 1024 * 1024


class UnsupportedIndex(VersioningError):
    """The index uses a feature the in-process writer does not handle."""


_SHARED: dict[tuple[str, bytes], Shared] = {}


@dataclass
class PendingIndex:
    """A new index written into ``index.lock``, not yet in place."""

    index: Path
    written: list[Path] = field(default_factory=list)
    lock: MarkedLock | None = None
    done: bool = False

    def commit(self) -> None:
        """Rename the lock over the index (git's commit of a lock file)."""
        assert self.lock is not None, "a PendingIndex is committed once its lock is taken"
        try:
            os.replace(self.lock.path, self.index)
        except OSError as exc:
            self.abort()
            raise VersioningError(
                f"cannot update git's index ({exc.strerror}); check .git permissions"
            ) from None
        self.lock.taken = False  # it is the index now
        self.done = True

    def abort(self) -> None:
        """Release the lock (if it is still ours); the index stays as it was."""
        if not self.done and self.lock is not None:
            self.lock.release()
        self.done = True


class IndexWriter:
    """git's index of one repository, updated in-process."""

    def __init__(self, git_dir: Path, work_tree: Path, *, split: bool = False) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        #: Turn a plain index into a split one (the repository is contextfs's own).
        self.split = split

    @property
    def path(self) -> Path:
        return self.git_dir / "index"

    def readable(self) -> bool:
        """Whether the index (and its shared index) can be read; no index at all is fine."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        try:
            index = parse(data)
            link = index.extension(b"link")
            if link is not None and link[:20] != bytes(20):
                self._shared(link[:20])
        except IndexFormatError:
            return False
        return True

    def prepare(
        self,
        changes: Mapping[bytes, Record | None],
        *,
        fold: bool = False,
        journal: Callable[[list[LockMark]], None] | None = None,
        wait: float = 0.0,
    ) -> PendingIndex:
        """Write the index with ``changes`` applied into ``index.lock``, taken as a marked lock.

        ``changes`` maps work-tree paths (bytes, ``/``-separated) to their new record, or
        None to remove them. ``fold`` folds every change into a new shared index.
        ``journal`` receives the lock's mark before the lock is taken; a live git's lock is
        waited for up to ``wait`` seconds.
        """
        lock = self.git_dir / "index.lock"
        for _attempt in range(3):
            try:
                with open(self.path, "rb") as fh:
                    data = fh.read()
                    seen = os.fstat(fh.fileno())
                    stamp = seen.st_mtime_ns // 10**9
            except FileNotFoundError:
                data, seen, stamp = b"", None, 0
            except OSError as exc:
                raise VersioningError(
                    f"cannot read git's index ({exc.strerror}); check .git permissions"
                ) from None
            pending = PendingIndex(self.path)
            # The new index is dated to the start of this second (see _smudge): an entry
            # modified from then on is racily clean in it, and git re-reads it by itself.
            window = (stamp, time.time_ns() // 10**9)
            try:
                index = parse(data) if data else IndexData(2, [])
                out = self._apply(index, changes, window, fold, pending)
            except IndexFormatError as exc:
                raise VersioningError(
                    f"git's index cannot be read ({exc}); rebuild it with 'git read-tree HEAD' "
                    "(staged changes are lost)"
                ) from None
            pending.lock = MarkedLock(lock, out, self.git_dir, mtime_ns=window[1] * 10**9)
            try:
                if journal is not None:
                    journal([pending.lock.mark])
                self._take(pending.lock, wait)
            except BaseException:
                pending.lock.discard()
                raise
            pending.written.append(lock)
            if same(seen, self.path):
                return pending
            pending.abort()  # a git command changed the index between the read and the lock
        raise VersioningError(
            "git's index kept changing while contextfs recorded its paths; retry the call"
        )

    @staticmethod
    def _take(lock: MarkedLock, wait: float) -> None:
        if lock.take():
            return
        if not stale_lock(lock.path):
            wait_for(lock.path, wait, "git's index")
        if not lock.take():
            raise VersioningError(
                f"another git process holds the index ({lock.path} exists); retry when it has "
                "finished, or delete the lock if no git is running"
            )

    # ---------------------------------------------------------------- applying
    def _apply(
        self,
        index: IndexData,
        changes: Mapping[bytes, Record | None],
        window: tuple[int, int],
        fold: bool,
        pending: PendingIndex,
    ) -> bytes:
        for sig, _payload in index.extensions:
            if sig == b"sdir":
                raise UnsupportedIndex(
                    "the repository uses a sparse index, which contextfs cannot update; "
                    "turn it off with 'git sparse-checkout init --no-sparse-index'"
                )
            if not (65 <= sig[0] <= 90) and sig != b"link":
                raise UnsupportedIndex(
                    f"git's index has a required extension {sig.decode('latin-1')!r} that "
                    "contextfs does not know; update contextfs or rewrite the index with git"
                )
        extensions = []
        for sig, payload in index.extensions:
            if sig == b"TREE":
                extensions.append((sig, invalidate_tree(payload, sorted(changes))))
            elif sig in _KEEP:
                extensions.append((sig, payload))
        link = index.extension(b"link")
        if link is not None and link[:20] != bytes(20):
            return self._apply_split(index, link, extensions, changes, window, fold, pending)
        entries = merge(index.entries, changes)
        self._smudge(entries, window, set(changes))
        if self.split and (fold or len(entries) >= _FOLD_MIN):
            return self._write_shared(index.version, entries, extensions, pending)
        return serialize(IndexData(index.version, entries, extensions))

    def _apply_split(
        self,
        index: IndexData,
        link: bytes,
        extensions: list[tuple[bytes, bytes]],
        changes: Mapping[bytes, Record | None],
        window: tuple[int, int],
        fold: bool,
        pending: PendingIndex,
    ) -> bytes:
        shared = self._shared(link[:20])
        try:
            deleted, offset = ewah.decode(link, 20)
            replaced, offset = ewah.decode(link, offset)
        except ValueError as exc:
            raise IndexFormatError(f"bad split-index bitmaps: {exc}") from None
        size = len(shared.names)
        if (
            offset != len(link)
            or (replaced and replaced[-1] >= size)
            or (deleted and deleted[-1] >= size)
            or len(replaced) > len(index.entries)
        ):
            raise IndexFormatError("the split index does not match its shared index")
        replacements: dict[int, Entry] = {}
        for pos, entry in zip(replaced, index.entries, strict=False):
            entry.name = shared.names[pos]
            replacements[pos] = entry
        gone = set(deleted)
        added: dict[tuple[bytes, int], Entry] = {e.key(): e for e in index.entries[len(replaced) :]}
        for name, record in changes.items():
            for key in [k for k in added if k[0] == name or conflicts(k[0], name)]:
                del added[key]
            at = positions(shared, name)
            exact = [p for p in at if shared.names[p] == name]
            for pos in at:
                # A name appears once per stage; a single one is stage 0 (a conflict has 2-3).
                if pos in exact and len(exact) == 1 and record is not None:
                    replacements[pos] = make_entry(name, record)
                    gone.discard(pos)
                else:
                    replacements.pop(pos, None)
                    gone.add(pos)
            if record is not None and not any(p not in gone for p in exact):
                added[(name, 0)] = make_entry(name, record)
        ours = set(changes)
        live = list(replacements.values()) + list(added.values())
        self._smudge(live, window, ours)
        if shared.newest >= window[0]:  # an entry only in the shared index may be racily clean
            for pos, entry in enumerate(shared.entries):
                if (
                    window[0] <= entry.mtime[0] < window[1]
                    and pos not in replacements
                    and pos not in gone
                ):
                    copy = dataclasses.replace(entry)
                    if self._smudge([copy], window, ours):
                        replacements[pos] = copy
        limit = min(_FOLD_MAX, max(_FOLD_MIN, size // 5))
        if fold or len(replacements) + len(added) > limit:
            merged = [
                replacements.get(pos, e) for pos, e in enumerate(shared.entries) if pos not in gone
            ]
            merged.extend(added.values())
            merged.sort(key=Entry.key)
            return self._write_shared(index.version, merged, extensions, pending)
        order = sorted(replacements)
        entries = [replacements[pos] for pos in order] + sorted(added.values(), key=Entry.key)
        bitmaps = link[:20] + ewah.encode(gone) + ewah.encode(order)
        self._freshen(self.git_dir / f"sharedindex.{link[:20].hex()}")
        return serialize(
            IndexData(index.version, entries, [(b"link", bitmaps), *extensions]),
            strip=frozenset(range(len(order))),
        )

    def _shared(self, sha: bytes) -> Shared:
        key = (str(self.git_dir), sha)
        cached = _SHARED.get(key)
        if cached is None:
            path = self.git_dir / f"sharedindex.{sha.hex()}"
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise IndexFormatError(
                    f"the shared index {path.name} cannot be read ({exc.strerror})"
                ) from None
            if data[-20:] != sha:
                raise IndexFormatError(
                    f"the shared index {path.name} does not hold what its name says"
                )
            entry_names, newest = names(data)
            cached = Shared(data, entry_names, newest)
            if len(_SHARED) > 8:
                _SHARED.clear()
            _SHARED[key] = cached
        return cached

    def _write_shared(
        self,
        version: int,
        entries: list[Entry],
        extensions: list[tuple[bytes, bytes]],
        pending: PendingIndex,
    ) -> bytes:
        data = serialize(IndexData(version, entries))
        sha = data[-20:]
        final = self.git_dir / f"sharedindex.{sha.hex()}"
        tmp = self.git_dir / f"sharedindex_{secrets.token_hex(6)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                write_all(fd, data)
            finally:
                os.close(fd)
            os.replace(tmp, final)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise VersioningError(
                f"cannot write git's shared index ({exc.strerror}); check free disk space"
            ) from None
        pending.written.append(final)
        _SHARED[(str(self.git_dir), sha)] = Shared(
            data, [e.name for e in entries], max((e.mtime[0] for e in entries), default=0), entries
        )
        self._expire(final.name)
        link = sha + ewah.encode(()) + ewah.encode(())
        return serialize(IndexData(version, [], [(b"link", link), *extensions]))

    def _expire(self, current: str) -> None:
        """Delete shared indexes nothing has used for two weeks (git's splitIndex.sharedIndexExpire)."""
        cutoff = time.time() - _SHARED_EXPIRE
        with contextlib.suppress(OSError):
            for name in os.listdir(self.git_dir):
                if name.startswith("sharedindex.") and name != current:
                    path = self.git_dir / name
                    with contextlib.suppress(OSError):
                        if os.stat(path).st_mtime < cutoff:
                            os.unlink(path)

    @staticmethod
    def _freshen(path: Path) -> None:
        """Mark the shared index as in use, as git does on every split-index write."""
        with contextlib.suppress(OSError):
            if os.stat(path).st_mtime < time.time() - 3600:
                os.utime(path)

    def _smudge(self, entries: list[Entry], window: tuple[int, int], ours: set[bytes]) -> bool:
        """Set the size of racily clean entries whose file changed to 0, so git re-reads them,
        as git does when it writes an index. True if any.

        An entry is racily clean when its file was modified in or after the second the old
        index was written (``window[0]``) with its stat data still matching: git cannot tell
        a later edit of the same size from the stat data. Those modified from ``window[1]``
        on need nothing: the new index is dated ``window[1]``, so they stay racily clean in
        it. The others are read and hashed, and smudged only if their bytes changed:
        smudging a clean entry would make the next ``git status`` rewrite the index.
        Anything but a small regular file is smudged without being read.
        """
        smudged = False
        for entry in entries:
            if (
                not window[0] <= entry.mtime[0] < window[1]
                or entry.name in ours
                or entry.size == 0
                or entry.stage
            ):
                continue
            path = self.work_tree / os.fsdecode(entry.name)
            try:
                st = os.lstat(path)
                if (st.st_mtime_ns // 10**9, st.st_size & 0xFFFFFFFF, st.st_ino & 0xFFFFFFFF) != (
                    entry.mtime[0],
                    entry.size,
                    entry.ino,
                ):
                    continue  # git sees the change from the stat data alone
                if (
                    stat.S_ISREG(st.st_mode)
                    and st.st_size <= _RACY_READ_MAX
                    and _blob_id(path) == entry.sha
                ):
                    continue
            except OSError:
                pass  # unreadable or gone: git looks again anyway
            entry.size = 0
            smudged = True
        return smudged


def _blob_id(path: Path) -> bytes:
    """git's blob id of the file's bytes as they are (no filters: a filtered file is smudged)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(_RACY_READ_MAX + 1)
    return hashlib.sha1(b"blob %d\0" % len(data) + data).digest()
