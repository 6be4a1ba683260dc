"""Making writes durable: flushing files and folders, one at a time or a whole batch at once.

An acknowledged write must survive a power cut, so what it wrote is flushed before it
counts. A flush is what costs (0.2-1 ms each on a quiet disk, far more on a busy one),
not the bytes: a commit orders its work so that a few flushes cover everything.
:class:`Unflushed` collects the files and folders written since the last flush;
:meth:`Unflushed.flush` makes all of them durable with one ``syncfs`` where Linux offers it
(an ``fsync`` of each otherwise). Every flush contextfs issues goes through this module and
is counted in :data:`FLUSHES`, which the commit benchmark reports.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FLUSHES",
    "Counter",
    "Unflushed",
    "fsync_fd",
    "fsync_path",
    "sync_filesystem",
    "syncfs_available",
    "write_all",
]


@dataclass
class Counter:
    """Flush calls issued by this process (``fsync``, ``fdatasync`` and ``syncfs``)."""

    calls: int = 0


FLUSHES = Counter()


def _load_syncfs() -> Callable[[int], int] | None:
    if os.name != "posix" or not hasattr(os, "O_DIRECTORY"):
        return None
    try:
        # ctypes only where syncfs is first needed (a reading process never loads it); the
        # process's own symbols include the C library, so no library search (which would
        # start ldconfig) is needed.
        import ctypes

        return getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
    except (OSError, AttributeError):  # no C library to load (some sandboxes), or no syncfs
        return None


_UNSET: Any = object()
#: The C library's syncfs, looked up on first use (None: the platform has none).
_SYNCFS: Any = _UNSET


def _syncfs() -> Callable[[int], int] | None:
    global _SYNCFS
    if _SYNCFS is _UNSET:
        _SYNCFS = _load_syncfs()
    loaded: Callable[[int], int] | None = _SYNCFS
    return loaded


def syncfs_available() -> bool:
    """Whether one call flushes a whole file system here (Linux ``syncfs``)."""
    return _syncfs() is not None


def sync_filesystem(path: str | os.PathLike[str]) -> bool:
    """Flush every dirty file of the filesystem holding ``path`` in one call (Linux ``syncfs``).

    False when the platform has no such call (the caller then syncs file by file); a write
    error the call reports is raised as OSError (a later ``fsync`` on a new descriptor would
    not see it).
    """
    syncfs = _syncfs()
    if syncfs is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        FLUSHES.calls += 1
        if syncfs(fd) == 0:
            return True
        err = ctypes_errno()
        if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            return False
        raise OSError(err, os.strerror(err))
    finally:
        os.close(fd)


def ctypes_errno() -> int:
    # ctypes is loaded whenever syncfs is
    import ctypes

    return ctypes.get_errno()


def fsync_fd(fd: int) -> None:
    """fsync an open descriptor (counted)."""
    FLUSHES.calls += 1
    os.fsync(fd)


def fsync_path(path: str | os.PathLike[str]) -> None:
    """fsync a file or folder by name (a read-only descriptor flushes its data too)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fsync_fd(fd)
    finally:
        os.close(fd)


class Unflushed:
    """Files and folders written but not yet flushed, on the filesystems holding ``anchors``.

    Writers add what they wrote instead of flushing it; whoever needs it durable calls
    :meth:`flush`. With ``durable=False`` nothing is ever flushed.
    """

    def __init__(self, *anchors: str | os.PathLike[str], durable: bool = True) -> None:
        # One anchor per filesystem (a git folder may live on another one than the files).
        self.anchors: list[str] = []
        devices = set()
        for anchor in anchors:
            try:
                device = os.stat(anchor).st_dev
            except OSError:
                continue
            if device not in devices:
                devices.add(device)
                self.anchors.append(os.fspath(anchor))
        self.durable = durable
        self._paths: dict[str, None] = {}  # an ordered set: each path once, as first added

    def add(self, *paths: str | os.PathLike[str]) -> None:
        if self.durable:
            self._paths.update(dict.fromkeys(os.fspath(path) for path in paths))

    def flush(self) -> None:
        """Make everything added since the last flush durable: one ``syncfs`` (Linux), else an
        ``fsync`` of each path (a path gone since, renamed or removed, is skipped: its folder
        is in the set and carries the change)."""
        if not self._paths:
            return
        paths, self._paths = list(self._paths), {}
        if self.anchors and all(sync_filesystem(anchor) for anchor in self.anchors):
            return
        for path in paths:
            try:
                fsync_path(path)
            except FileNotFoundError:
                continue


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``: ``os.write`` may take fewer than it was given
    (a signal, a full pipe, a quota), and a short write must not end a file early."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
