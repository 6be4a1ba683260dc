"""Keeping the Whoosh index right: always current, self-healing, and off the write path.

Files are the truth; the index is derived from them, lives in the root's state folder
under ``.git/`` (see :mod:`contextfs.files.state`; git never transfers it) and may be thrown
away at any time. Three rules keep it right:

* **Writes only queue.** Every commit calls :meth:`SearchIndex.notify` with the changed
  paths; that just records them. The queue is applied in one Whoosh commit (de-duplicated,
  one document per path) when the next search needs it, so a stream of writes never pays
  Whoosh's per-commit cost.
* **The stamp names the git commit the index reflects.** ``stamp.json`` beside the segment
  files records the HEAD the index was last brought up to. Before a search the current HEAD
  is read (microseconds); if it moved, in this process or any other sharing the root, the
  paths ``git diff-tree`` reports are re-read from disk and re-indexed. That is what makes a
  search see every write that returned before it, across processes.
* **Anything odd means rebuild.** A missing folder, a missing or foreign stamp (Whoosh
  stores pickles, so a folder whose stamp this user's machine key did not sign is never
  opened: the stamp's HMAC covers the checksum of every index file), a format change
  (index format, schema, codec or Whoosh version), or any exception from Whoosh triggers
  a rebuild from the files into a fresh folder that is swapped in, with a log line and no
  exception. Files edited while no process ran are found by their (mtime, size).

Index writes across processes are serialised by a lock file in the state folder (Whoosh's
``LockError`` never escapes); an index that already matches every file is opened without
the lock and without reconciling (:func:`.stamp.current`).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import shutil
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from whoosh import index as windex
from whoosh.index import LockError

from .. import faults
from ..errors import ContextFSError, VersioningError
from ..files.fileerrors import typed_io
from . import compat, segments
from .planning import weighting
from .running import Queries
from .schema import extract, indexable, make_schema, walk_indexable
from .stamp import check_sums, current, disk_digest, read_stamp, record_disk, valid, write_stamp

if TYPE_CHECKING:
    from ..files.confined import RootFiles
    from ..files.state import StateDir
    from ..versioning import GitStore

__all__ = ["INDEX_DIR", "BrokenIndex", "IndexSource", "IndexUpkeep"]

log = logging.getLogger(__name__)

#: The index's folder inside the root's state folder.
INDEX_DIR = "index"
_LOCK_TIMEOUT = 60.0


class BrokenIndex(Exception):
    """The index on disk cannot be used as it is; rebuild it."""


class IndexSource(Protocol):
    """What the index needs of a root (:class:`~contextfs.parts.RootParts` provides it)."""

    root: Path
    files: RootFiles
    state: StateDir

    @property
    def git(self) -> GitStore: ...

    def head(self) -> str | None: ...


class IndexUpkeep:
    """Keeping one root's index current (see the module docstring); :class:`~.index.SearchIndex`
    adds the questions asked of it."""

    def __init__(self, manager: IndexSource) -> None:
        self.manager = manager
        self.root: Path = manager.root
        self.files = manager.files
        self.state = manager.state
        self.dir = self.state.file(INDEX_DIR)
        self.schema = make_schema()
        self._file_lock = self.state.lock("index.lock", timeout=_LOCK_TIMEOUT)
        self._mutex = threading.RLock()
        self._pending: set[str] = set()
        self._ix: Any = None
        #: The Whoosh searcher queries run on (kept current by ``_catch_up``).
        self.searcher: Any = None
        self.queries = Queries(self)
        self._build: str | None = None
        self._head: str | None = None
        self.rebuilds = 0

    # ------------------------------------------------------------ lifecycle
    def open(self) -> None:
        """Open the index, rebuilding or reconciling it as needed; never raises for a bad index.

        When the index cannot be written at all (a full disk), opening still succeeds:
        the next search tries again and reports the typed error then.
        """
        with self._mutex:
            if self._open_if_current():
                return
            with self._locked():
                self._cleanup_leftovers()
                try:
                    try:
                        stamp = self._open_existing()
                    except BrokenIndex as why:
                        if self.dir.exists():
                            log.warning(
                                "search index at %s %s; rebuilding it from the files", self.dir, why
                            )
                        else:
                            log.info("creating the search index at %s", self.dir)
                        self._rebuild_locked()
                        return
                    try:
                        self._reconcile_locked(stamp)
                    except OSError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - any whoosh failure means rebuild
                        log.warning(
                            "search index at %s failed while reconciling (%s); rebuilding it",
                            self.dir,
                            exc,
                        )
                        self._rebuild_locked()
                except OSError as exc:
                    self._drop()
                    log.warning(
                        "search index at %s cannot be written (%s); searches will retry",
                        self.dir,
                        exc.strerror,
                    )

    def _open_if_current(self) -> bool:
        """Open the index without the lock or any write when it matches every file; else False."""
        try:
            if any(
                self.state.path.glob("index.*-*")
            ):  # a killed rebuild's folder: the locked open removes it
                return False
            stamp = self._open_existing()
            if not self._pending and current(
                stamp, self.manager.head(), lambda: walk_indexable(self.files)
            ):
                return True
        except (BrokenIndex, ContextFSError, OSError):
            pass
        self._drop()  # the locked open checks again and fixes what needs fixing
        return False

    def close(self) -> None:
        with self._mutex:
            self._drop()

    @property
    def pending(self) -> frozenset[str]:
        """Paths written since the last update, waiting for the next search to index them."""
        with self._mutex:
            return frozenset(self._pending)

    def notify(self, paths_: list[str]) -> None:
        """Record changed paths; applied (in one Whoosh commit) before the next search."""
        with self._mutex:
            self._pending.update(p for p in paths_ if indexable(p))

    def rebuild(self) -> int:
        """Throw the index away and build it again from the files; returns the document count."""
        with self._mutex, self._locked(), typed_io("the search index"):
            return self._rebuild_locked()

    # ------------------------------------------------------------ locking
    def _locked(self) -> Any:
        """The index lock shared by every process of this root (the OS releases a dead one's)."""
        return self._file_lock.held()

    # ------------------------------------------------------------ open / build
    def _drop(self) -> None:
        if self.searcher is not None:
            with contextlib.suppress(Exception):  # closing a broken searcher
                self.searcher.close()
        self.searcher = None
        self._ix = None
        self._build = None

    def _open_existing(self, *, full: bool = False) -> dict[str, Any]:
        """Open the stamped index in ``self.dir`` or raise BrokenIndex (``full``: hash every file)."""
        self._drop()
        if not self.dir.is_dir():
            raise BrokenIndex("is missing")
        stamp = read_stamp(self.dir, self.state)
        if stamp is None:
            raise BrokenIndex("has no valid contextfs stamp (not created by contextfs, or damaged)")
        if not valid(stamp):
            raise BrokenIndex(
                f"was built by another index format "
                f"({stamp.get('format')}/{stamp.get('schema')}/{stamp.get('codec')})"
            )
        damaged = check_sums(self.dir, stamp.get("files"), full=full)
        if damaged:
            raise BrokenIndex(f"has damaged or unexpected files ({damaged})")
        try:
            ix = windex.open_dir(str(self.dir), schema=self.schema)
            searcher = ix.searcher(weighting=weighting())
            # Touch every segment: a truncated or scrambled file fails here, not mid-search.
            searcher.doc_count_all()
            for fieldname in ("rel", "body"):
                list(itertools.islice(searcher.lexicon(fieldname), 3))
            list(itertools.islice(searcher.all_stored_fields(), 3))
        except Exception as exc:  # noqa: BLE001 - whoosh raises many types on damage
            raise BrokenIndex(f"cannot be read ({type(exc).__name__}: {exc})") from None
        self._ix, self.searcher = ix, searcher
        self._build = stamp.get("build")
        self._head = stamp.get("head")
        return stamp

    def _rebuild_locked(self) -> int:
        self._drop()
        self.rebuilds += 1
        started = time.perf_counter()
        head = self.manager.head()
        fresh = self.state.file(f"index.new-{secrets.token_hex(4)}")
        fresh.mkdir(parents=True)
        try:
            ix = windex.create_in(str(fresh), self.schema)
            files = sorted(walk_indexable(self.files))
            count = self._fill(ix, files)
            faults.point("index.filling")
            build = secrets.token_hex(8)
            write_stamp(fresh, self.state, build, head)
            ix.close()
            old = None
            if self.dir.exists() or self.dir.is_symlink():
                old = self.state.file(f"index.old-{secrets.token_hex(4)}")
                os.replace(self.dir, old)
            os.replace(fresh, self.dir)
        finally:
            if fresh.exists():
                shutil.rmtree(fresh, ignore_errors=True)
        if old is not None:
            if old.is_symlink():
                old.unlink()
            else:
                shutil.rmtree(old, ignore_errors=True)
        self._cleanup_leftovers()
        with self._mutex:
            self._pending.clear()
        self._open_existing()
        log.info(
            "search index rebuilt: %d documents in %.2fs", count, time.perf_counter() - started
        )
        return count

    def _fill(self, ix: Any, files: list[str]) -> int:
        return segments.fill(ix, self.schema, files, lambda rel: extract(self.files, rel) or ())

    def _cleanup_leftovers(self) -> None:
        """Remove half-built or swapped-out folders a killed process left (under the index lock)."""
        for entry in self.state.path.glob("index.*-*"):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)

    # ------------------------------------------------------------ keeping current
    def _reconcile_locked(self, stamp: dict[str, Any]) -> None:
        """Bring the index up to the files: HEAD movement plus (mtime, size) drift."""
        on_disk = walk_indexable(self.files)
        indexed, twice = segments.indexed_stats(self.searcher.reader())
        changed = {
            rel
            for rel, st in on_disk.items()
            if rel not in indexed or segments.stored_stat(indexed[rel][0]) != st
        }
        changed |= {rel for rel in indexed if rel not in on_disk}
        changed |= twice
        head = self.manager.head()
        if changed:
            log.info(
                "search index: %d file(s) changed since it was last updated; re-indexing them",
                len(changed),
            )
        self._apply(changed, head, force_commit=stamp.get("head") != head)
        # The files' digest lets the next process skip this; a file that failed to index is retried.
        if all(("rel", rel) in self.searcher.reader() for rel in changed if rel in on_disk):
            record_disk(self.dir, self.state, disk_digest(on_disk), stamp)

    def _catch_up(self) -> None:
        """Apply queued paths and whatever HEAD moved past since the stamp (any process)."""
        head = self.manager.head()
        stamp = read_stamp(self.dir, self.state)
        if (
            self._ix is not None
            and stamp is not None
            and stamp.get("build") == self._build
            and stamp.get("head") == head
            and not self._pending
        ):
            self._refresh()
            return
        with self._locked():
            stamp = read_stamp(self.dir, self.state)
            if self._ix is None or stamp is None or stamp.get("build") != self._build:
                try:
                    stamp = self._open_existing()
                except BrokenIndex as why:
                    log.warning(
                        "search index at %s %s; rebuilding it from the files", self.dir, why
                    )
                    self._rebuild_locked()
                    return
            head = self.manager.head()
            todo = set(self._pending)
            old = stamp.get("head")
            if old != head and head is not None:
                try:
                    todo |= {p for p in self.manager.git.changed(old, head) if indexable(p)}
                except (VersioningError, ContextFSError) as exc:
                    log.info(
                        "search index: cannot diff %s..%s (%s); reconciling every file",
                        old,
                        head,
                        exc,
                    )
                    self._reconcile_locked(stamp)
                    return
            self._apply(todo, head, force_commit=old != head)

    def _apply(self, todo: Iterable[str], head: str | None, *, force_commit: bool) -> None:
        """Re-index ``todo`` (one document per path, or none if the file is gone) in one commit."""
        todo = sorted(set(todo))
        with self._mutex:
            taken = set(self._pending)
        if todo:
            writer = self._writer()
            try:
                segments.delete_paths(writer, todo, self._open_segment_readers())
                for rel in todo:
                    for doc in extract(self.files, rel) or ():
                        writer.add_document(**doc)
            except BaseException:
                writer.cancel()
                raise
            writer.commit(mergetype=segments.merge_policy)
        if todo or force_commit:
            write_stamp(
                self.dir,
                self.state,
                self._build or secrets.token_hex(8),
                head,
                read_stamp(self.dir, self.state),
            )
            self._head = head
        with self._mutex:
            self._pending -= taken
        self._refresh()

    def _open_segment_readers(self) -> dict[str, Any]:
        return segments.open_readers(self.searcher)

    def _writer(self) -> Any:
        for attempt in range(40):
            try:
                return self._ix.writer(codec=compat.codec())
            except LockError:
                # Our file lock is held, so a whoosh lock now is stale (a crashed process).
                if attempt == 20:
                    stale = self.dir / "WRITELOCK"
                    log.warning("search index: removing a stale Whoosh lock %s", stale)
                    stale.unlink(missing_ok=True)
                time.sleep(0.05)
        raise BrokenIndex("stays locked by Whoosh")

    def _refresh(self) -> None:
        """Point the searcher at the latest commit, reopening only segments that changed."""
        if self.searcher is not None and not self.searcher.up_to_date():
            self.searcher = segments.refreshed(self._ix, self.searcher, self.schema)

    # ------------------------------------------------------------ searching
