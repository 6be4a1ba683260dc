"""Making writes durable: flushing files and folders, one at a time or a whole batch at once.

An acknowledged write must survive a power cut, so what it wrote is ``fsync``-ed before it
counts: a file by its descriptor, a folder after a rename into it. A batch of many new
files (the git objects of a large transaction) is flushed with one ``syncfs`` where Linux
offers it, instead of one ``fsync`` each.
"""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["fsync_path", "sync_filesystem"]


def _load_syncfs() -> Callable[[int], int] | None:
    try:
        # ctypes only where syncfs is looked up (once): nothing else needs it
        import ctypes
        import ctypes.util  # noqa: I001

        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return getattr(libc, "syncfs", None)
    except (OSError, AttributeError):  # no C library to load (some sandboxes), or no syncfs
        return None


_SYNCFS = _load_syncfs() if os.name == "posix" and hasattr(os, "O_DIRECTORY") else None


def sync_filesystem(path: str | os.PathLike[str]) -> bool:
    """Flush every dirty file of the filesystem holding ``path`` in one call (Linux ``syncfs``).

    For a batch of new files this is one flush instead of one ``fsync`` each; False when
    the platform has no such call, and the caller then syncs file by file.
    """
    if _SYNCFS is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return _SYNCFS(fd) == 0
    finally:
        os.close(fd)


def fsync_path(path: str | os.PathLike[str]) -> None:
    """fsync a file or folder by name (a read-only descriptor flushes its data too)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
