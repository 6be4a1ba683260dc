"""git lock files: the ones contextfs takes carry a marker; anyone else's are waited for.

git's lock-file protocol: whoever creates ``<file>.lock`` exclusively owns ``<file>`` until it
renames the lock over it or removes it, and git refuses to touch ``<file>`` while the lock
exists. A process killed while holding one leaves it behind. Nothing about a lock file says
whether its creator is alive: a person's ``git commit -a`` holds ``index.lock`` for as long
as their editor is open, so a lock is never judged by its age.

contextfs removes a lock only when it can prove it made it. :class:`MarkedLock` writes the
lock's content to a private file first and notes that file's identity — device, inode and
a digest of the content — in a :class:`LockMark`, which the caller journals *before* the
file is linked into place as the lock (a hard link is an exclusive create that needs no
second step, so there is no moment when the lock exists unrecorded). A killed process's
journal names its marks; :func:`release_if_ours` removes a lock only while it is still that
very file with that very content, which no other program's lock can be.

Any other lock is somebody else's: :func:`wait_for` waits for it to go away, for a bounded
time, then raises a :class:`~contextfs.errors.VersioningError` that names it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import VersioningError
from ..files.durability import fsync_fd, write_all

__all__ = [
    "LockMark",
    "MarkedLock",
    "boot_time",
    "release_if_ours",
    "remove_dead_writers_files",
    "remove_leftover_scratch",
    "stale_lock",
    "wait_for",
]

log = logging.getLogger(__name__)

_SCRATCH = "cfs-lock-"
_SCRATCH_NAME = re.compile(r"^cfs-lock-(\d+)-[0-9a-f]+\Z")
#: The largest lock file whose content is compared with a mark (git's index, for a big tree).
_MAX_MARKED = 1 << 30
#: How often a wait looks at a lock again.
_POLL = 0.02


@dataclass(frozen=True)
class LockMark:
    """What proves a lock file is contextfs's own: where it is, which file, what it holds."""

    path: str
    dev: int
    ino: int
    digest: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "dev": self.dev, "ino": self.ino, "digest": self.digest}

    @classmethod
    def from_json(cls, data: object) -> LockMark | None:
        """A mark read back from a journal, or None when it is not one."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(str(data["path"]), int(data["dev"]), int(data["ino"]), str(data["digest"]))
        except (KeyError, TypeError, ValueError):
            return None


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


class MarkedLock:
    """One lock file contextfs is about to take: prepared, then taken, then released or renamed.

    ``scratch`` is a folder on the lock's file system where the private file is made (the
    repository's git folder), so linking it into place never crosses file systems.
    ``mtime_ns`` dates the file (git's index: its date decides which entries are racily clean).
    """

    def __init__(
        self,
        path: Path,
        content: bytes,
        scratch: Path,
        *,
        durable: bool = False,
        mtime_ns: int | None = None,
    ) -> None:
        self.path = path
        self.taken = False
        self._scratch: Path | None = scratch / f"{_SCRATCH}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            fd = os.open(self._scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                write_all(fd, content)
                if mtime_ns is not None:  # the date the lock's content is valid from (git's index)
                    os.utime(fd, ns=(mtime_ns, mtime_ns))
                if durable:
                    fsync_fd(fd)
                st = os.fstat(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            self.discard()
            raise VersioningError(
                f"cannot prepare {path.name} ({exc.strerror}); check .git permissions and "
                "free disk space"
            ) from None
        self.mark = LockMark(str(path), st.st_dev, st.st_ino, _digest(content))

    def take(self) -> bool:
        """Put the lock in place; False when a lock is there already (someone else's)."""
        assert self._scratch is not None, "a MarkedLock is taken once"
        try:
            os.link(self._scratch, self.path)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in (
                errno.EPERM,
                errno.ENOTSUP,
                errno.EOPNOTSUPP,
                errno.EXDEV,
                errno.EMLINK,
            ):
                raise VersioningError(
                    f"cannot lock {self.path.name} ({exc.strerror}); check .git "
                    "permissions and free disk space"
                ) from None
            # A file system without hard links: the lock is the private file, renamed into
            # place only if nothing is there (checked, then renamed: the gap is this call).
            if os.path.lexists(self.path):
                return False
            os.replace(self._scratch, self.path)
            self._scratch = None
            self.taken = True
            return True
        self.discard()
        self.taken = True
        return True

    def release(self) -> None:
        """Remove the lock, if it is still this one."""
        if self.taken:
            release_if_ours(self.mark)
            self.taken = False
        self.discard()

    def discard(self) -> None:
        """Remove the private file (the lock itself, once taken, is another name for it)."""
        if self._scratch is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._scratch)
            self._scratch = None


def is_ours(mark: LockMark) -> bool:
    """True while ``mark.path`` is the very file contextfs made, still holding what it wrote."""
    try:
        st = os.lstat(mark.path)
        if (st.st_dev, st.st_ino) != (mark.dev, mark.ino) or st.st_size > _MAX_MARKED:
            return False
        digest = hashlib.sha1()
        with open(mark.path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        return digest.hexdigest() == mark.digest
    except OSError:
        return False


def release_if_ours(mark: LockMark) -> bool:
    """Remove the lock ``mark`` names if it is provably contextfs's; True when removed."""
    if not is_ours(mark):
        return False
    try:
        os.unlink(mark.path)
    except OSError:
        return False
    return True


def boot_time() -> float | None:
    """When the machine booted (Linux: ``btime`` in /proc/stat), or None when unknown."""
    try:
        with open("/proc/stat", "rb") as fh:
            for line in fh:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def stale_lock(path: Path) -> bool:
    """Remove ``path`` if it was made before the machine booted (no live process owns it)."""
    booted = boot_time()
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if booted is None or st.st_mtime >= booted - 1:
        return False
    log.warning(
        "removing %s: it was left before the machine last started, so no process holds it", path
    )
    with contextlib.suppress(OSError):
        os.unlink(path)
    return True


def wait_for(path: Path, seconds: float, what: str) -> None:
    """Return once no lock is at ``path``; after ``seconds`` raise VersioningError naming it.

    ``what`` says what the lock guards ("git's index", "the branch") for the message.
    """
    if not os.path.lexists(path):
        return
    log.info("waiting for %s: %s exists (another git command is running)", what, path)
    deadline = time.monotonic() + max(0.0, seconds)
    while os.path.lexists(path):
        if time.monotonic() >= deadline:
            raise VersioningError(
                f"{path} exists: another git command holds {what} (a commit waiting for its message, say); "
                f"contextfs waited {seconds:g}s and changed nothing; retry when that command has finished, "
                "or delete the file if no git process is running"
            )
        time.sleep(_POLL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_dead_writers_files(folder: str | os.PathLike[str], name: re.Pattern[str]) -> int:
    """Delete the files in ``folder`` whose ``name`` (group 1: the writer's process id) says
    they belong to a process that is no longer running; the count removed. A live writer's
    files, this process's included, are never touched."""
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for entry in names:
        match = name.match(entry)
        if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, entry))
                removed += 1
    return removed


def remove_leftover_scratch(folder: Path) -> int:
    """Delete private lock files of processes that are no longer running."""
    return remove_dead_writers_files(folder, _SCRATCH_NAME)
