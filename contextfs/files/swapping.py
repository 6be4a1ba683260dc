"""Renames that cannot destroy a file nobody looked at: Linux ``renameat2``.

A plain ``rename`` over a file destroys whatever is there at that instant. Between a
writer's last look at a file and its rename, a person's editor may save (microseconds,
or milliseconds when the writer is descheduled on a busy machine), and that save would
be gone without a trace. ``renameat2`` closes the gap:

* ``RENAME_EXCHANGE`` swaps two names atomically, so what was in place comes back under
  the temporary name, where it can be compared with what the writer looked at;
* ``RENAME_NOREPLACE`` puts a new file in place only while the name is still free.

Both are Linux system calls (3.15+, glibc 2.28+) on most local file systems. Where the
platform or the file system lacks them, each function says so (None) and the caller falls
back to ``os.replace``, with the gap it always had.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import sys
from collections.abc import Callable

__all__ = ["exchange", "folders", "place_new", "read"]

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
#: What a file system without the flag (or a kernel without the call) answers.
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP}


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):  # a C library without it (glibc before 2.28, musl)
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    call.restype = ctypes.c_int
    return call


def _rename2(
    fd: int, src: str, dst: str, flags: int, *, missing: int, into: int | None = None
) -> bool | None:
    """``renameat2`` from the folder ``fd`` to the folder ``into`` (default: ``fd``; -1:
    the names are whole paths).

    True when done; False when it failed with ``missing`` (the race the flag exists for);
    None when the platform or file system cannot do it. Other errors raise ``OSError``.
    """
    call = _renameat2()
    if call is None:
        return None
    where = fd if fd >= 0 else _AT_FDCWD
    there = where if into is None else into if into >= 0 else _AT_FDCWD
    if call(where, os.fsencode(src), there, os.fsencode(dst), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code == missing:
        return False
    if code in _UNSUPPORTED:
        return None
    raise OSError(code, os.strerror(code), dst)


def exchange(fd: int, a: str, b: str) -> bool | None:
    """Swap the files named ``a`` and ``b`` atomically.

    False when either is missing (nothing changed); None when unsupported here.
    """
    return _rename2(fd, a, b, _RENAME_EXCHANGE, missing=errno.ENOENT)


def place_new(fd: int, src: str, dst: str, *, into: int | None = None) -> bool | None:
    """Rename ``src`` to ``dst`` (in the folder ``into``, default ``fd``) only while
    nothing is named ``dst``.

    False when something is (nothing changed); None when unsupported here.
    """
    return _rename2(fd, src, dst, _RENAME_NOREPLACE, missing=errno.EEXIST, into=into)


def read(fd: int, name: str) -> bytes | None:
    """The bytes of the plain file ``name`` in the folder ``fd`` (-1: a whole path): what a
    swap brought out. None when it is gone, a link, a folder or unreadable."""
    at = {"dir_fd": fd} if fd >= 0 else {}
    try:
        handle = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), **at)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(handle, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:  # a folder (EISDIR), or the disk failing: not what was shown
        return None
    finally:
        os.close(handle)


def folders(at: dict[str, int]) -> dict[str, int]:
    """``os.rename``'s folder arguments for two names in the folder ``at`` names (if any)."""
    return {"src_dir_fd": at["dir_fd"], "dst_dir_fd": at["dir_fd"]} if at else {}
