"""Commit edits made outside contextfs as they happen (the only module importing watchdog).

People edit context files in their editor; scripts rewrite them. ``ctx.sync()`` already
knows how to commit such edits as ``human``; this module only decides *when* to call it:
after the file system has been quiet for ``debounce`` seconds, so an editor's save (write
a temp file, rename, touch) becomes one commit instead of three.

What is not worth a sync:

* anything under ``.git/`` and ``.contextfs/`` (git's own bookkeeping, the index, locks),
  and contextfs's temp files ``*.cfs-tmp``;
* editor and OS scratch files (``contextfs.files.scratch``: vim's swap and backup files, emacs's
  ``#name#``, JetBrains' ``___jb_tmp___``, ``.DS_Store``, ...). ``sync()`` skips them too, so
  a save that goes through them (vim renames the file to ``name~``, writes the new one,
  deletes the backup) is one commit of the final content once the burst settles;
* contextfs's own writes. They are committed before the watcher hears of them. A change
  listener on the manager remembers the blob each commit left at each path, and an event
  whose file still holds exactly that blob is dropped. A sync commits only into ``.git/``,
  so a sync never wakes the watcher again: there is no busy loop.

>>> with watch(ctx, debounce=0.5):      # doctest: +SKIP
...     input("edit files, then press Enter")
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from .document import blob_version
from .errors import ConfigError, ContextFSError
from .files import paths
from .files.confined import TMP_SUFFIX
from .files.scratch import is_scratch

if TYPE_CHECKING:
    from .manager import ContextManager

__all__ = ["Watcher", "is_ignored", "watch"]

log = logging.getLogger(__name__)

_IGNORED_DIRS = (".git", ".contextfs")
# Events that can change what a file holds; 'opened' and 'closed_no_write' cannot.
_CHANGING = frozenset({"created", "modified", "moved", "deleted", "closed"})
_MAX_BACKOFF = 30.0


def is_ignored(rel: str) -> bool:
    """True for root-relative paths the watcher never syncs for (git, internal state, temp and scratch files)."""
    if not rel or rel == "." or rel.startswith("../") or rel == "..":
        return True
    first = rel.split("/", 1)[0]
    return first in _IGNORED_DIRS or rel.endswith(TMP_SUFFIX) or is_scratch(rel)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGING:
            return
        if event.is_directory and event.event_type in ("modified", "created"):
            return  # the files inside report themselves; an empty folder is not content
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self._watcher.saw(os.fsdecode(raw))


class Watcher:
    """A running watch on one root; ``stop()`` it (or use ``with``) when done.

    ``on_sync(paths)`` is called from the watcher's thread after each sync that committed
    something, ``on_held(held)`` after each sync that held something back (path ->
    reason, as in :attr:`~contextfs.changes.adoption.SyncReport.held`). ``max_delay`` bounds how long a stream of edits that never settles can
    postpone its commit (default: 20 x ``debounce``, at least 5 s).
    """

    def __init__(
        self,
        ctx: ContextManager,
        *,
        debounce: float = 0.5,
        max_delay: float | None = None,
        on_sync: Callable[[list[str]], None] | None = None,
        on_held: Callable[[dict[str, str]], None] | None = None,
    ) -> None:
        if not debounce >= 0 or (max_delay is not None and not max_delay > 0):
            raise ConfigError(
                f"debounce must be >= 0 and max_delay > 0 seconds (got {debounce}, {max_delay}); pass e.g. debounce=0.5"
            )
        self.ctx = ctx
        self.root: Path = ctx.root
        self.debounce = float(debounce)
        self.max_delay = float(max_delay) if max_delay is not None else max(5.0, 20 * self.debounce)
        self.on_sync = on_sync
        self.on_held = on_held
        #: How many syncs committed something, and what the last one committed.
        self.commits = 0
        self.last_synced: list[str] = []
        self._committed: dict[str, str | None] = {}
        self._pending: set[str] = set()
        self._first = 0.0
        self._last = 0.0
        self._backoff = 0.0
        self._cond = threading.Condition()
        self._stopping = False
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None
        ctx.parts.add_listener(self._remember)

    # ------------------------------------------------------------ lifecycle
    def start(self) -> Watcher:
        """Start observing the root and the debounce thread (idempotent)."""
        if self._observer is not None:
            return self
        observer = Observer()
        observer.daemon = True
        try:
            observer.schedule(_Handler(self), str(self.root), recursive=True)
            observer.start()
        except OSError as exc:
            raise ContextFSError(
                f"cannot watch {self.root} ({exc.strerror or exc}); raise the OS limit on watched "
                "folders (fs.inotify.max_user_watches on Linux) or run 'contextfs watch --once' instead"
            ) from None
        self._observer = observer
        self._thread = threading.Thread(target=self._run, name="contextfs-watcher", daemon=True)
        self._thread.start()
        log.info("watching %s (debounce %.2fs)", self.root, self.debounce)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching; edits still waiting for their quiet period are synced first."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.flush()

    @property
    def running(self) -> bool:
        return self._observer is not None

    @property
    def pending(self) -> list[str]:
        """Paths seen changing that are waiting for the quiet period (sorted)."""
        with self._cond:
            return sorted(self._pending)

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def flush(self) -> list[str]:
        """Sync now for whatever is pending, without waiting for the quiet period."""
        with self._cond:
            batch, self._pending = self._pending, set()
        return self._process(batch) if batch else []

    # ------------------------------------------------------------ events
    def _remember(self, changed: list[str]) -> None:
        """Manager listener: the blobs contextfs just committed, to recognise its own events.

        The manager has no way to remove a listener, so a stopped watcher just stops
        recording (a restarted one may then pay for one sync that finds nothing).
        """
        if self._observer is None:
            return
        for rel in changed:
            data = self._read(rel) if not is_ignored(rel) else None
            self._committed[rel] = blob_version(data) if data is not None else None

    def _read(self, rel: str) -> bytes | None:
        """The file's bytes through the confined file layer (a link reads as nothing)."""
        try:
            return self.ctx.parts.files.read(rel)
        except ContextFSError:
            return None

    def saw(self, path: str) -> None:
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        if is_ignored(rel):
            return
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first = now
            self._pending.add(rel)
            self._last = now
            self._cond.notify_all()

    def _is_own(self, rel: str) -> bool:
        full = paths.full_path(self.root, rel)
        if rel not in self._committed:
            # A folder contextfs moved away (delete, move): its files were recorded one by one.
            prefix = rel + "/"
            return not full.exists() and any(k.startswith(prefix) for k in list(self._committed))
        try:
            data = self._read(rel)
        except ContextFSError:
            return False  # unreadable: let sync() decide
        return self._committed[rel] == (blob_version(data) if data is not None else None)

    def _process(self, batch: set[str]) -> list[str]:
        outside = sorted(rel for rel in batch if not self._is_own(rel))
        if not outside:
            return []
        log.debug("changes outside contextfs: %s", outside[:20])
        try:
            synced = self.ctx.sync()
        except ContextFSError as exc:
            self._backoff = min(
                _MAX_BACKOFF, max(self.debounce, 0.5) if not self._backoff else self._backoff * 2
            )
            log.warning(
                "sync after outside edits failed (%s); retrying in %.1fs", exc, self._backoff
            )
            with self._cond:
                now = time.monotonic()
                if not self._pending:
                    self._first = now
                self._pending.update(outside)
                self._last = now + self._backoff - self.debounce
                self._cond.notify_all()
            return []
        self._backoff = 0.0
        held = dict(self.ctx.parts.last_sync.held)
        if held and self.on_held is not None:
            try:
                self.on_held(held)
            except Exception:
                log.exception("the watcher's on_held callback failed")
        if synced:
            self.commits += 1
            self.last_synced = synced
            if self.on_sync is not None:
                try:
                    self.on_sync(synced)
                except Exception:
                    log.exception("the watcher's on_sync callback failed")
        return synced

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and not self._pending:
                    self._cond.wait()
                while not self._stopping:
                    now = time.monotonic()
                    due = min(self._last + self.debounce, self._first + self.max_delay)
                    if now >= due:
                        break
                    self._cond.wait(due - now)
                if self._stopping:
                    return  # stop() flushes what is left
                batch, self._pending = self._pending, set()
            try:
                self._process(batch)
            except Exception:  # keep watching whatever went wrong with one batch
                log.exception("the watcher failed to process %d change(s)", len(batch))


def watch(
    ctx: ContextManager,
    *,
    debounce: float = 0.5,
    max_delay: float | None = None,
    on_sync: Callable[[list[str]], None] | None = None,
    on_held: Callable[[dict[str, str]], None] | None = None,
) -> Watcher:
    """Start watching ``ctx.root``; edits made outside contextfs are committed as ``human``.

    Returns the running :class:`Watcher`; call ``stop()`` or use it as a context manager.
    """
    return Watcher(
        ctx, debounce=debounce, max_delay=max_delay, on_sync=on_sync, on_held=on_held
    ).start()
