"""Walking a folder of the root without following links: depth first, sorted per folder.

Used by :meth:`contextfs.files.confined.RootFiles.walk`. Each folder is listed through a descriptor
opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's, so a folder swapped for
a symlink while the walk runs is skipped, never entered; symlinks, sockets and devices are
not files. Where ``dir_fd`` is missing (Windows) the same rules run on joined paths.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FileStat", "walk_fd", "walk_paths"]

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class FileStat:
    """What a listing needs to know about one regular file."""

    rel: str
    mtime_ns: int
    size: int
    executable: bool


def walk_fd(fd: int, prefix: str, skip: frozenset[str], *, top: bool) -> Iterator[FileStat]:
    """Walk the folder open at ``fd`` (closing it), depth first, without following links."""
    try:
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        os.close(fd)
        return
    folders = []
    try:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not (top and entry.name in skip) and entry.name != ".git":
                        folders.append(entry.name)
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue  # symlinks, sockets, devices
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield FileStat(
                prefix + entry.name, st.st_mtime_ns, st.st_size, bool(st.st_mode & 0o100)
            )
        for name in folders:
            try:
                child = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except OSError:
                continue  # vanished or swapped for a link since the listing: skip it
            yield from walk_fd(child, prefix + name + "/", skip, top=False)
    finally:
        os.close(fd)


def walk_paths(root: Path, rel: str, skip: frozenset[str]) -> Iterator[FileStat]:
    """The same walk on joined paths, for platforms without ``dir_fd``."""
    base = root / rel if rel else root
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not (here / d).is_symlink() and d != ".git" and not (here == root and d in skip)
        )
        for name in sorted(filenames):
            full = here / name
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield FileStat(
                    full.relative_to(root).as_posix(),
                    st.st_mtime_ns,
                    st.st_size,
                    bool(st.st_mode & 0o100),
                )
