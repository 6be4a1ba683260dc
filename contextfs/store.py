"""The file-write gate: every byte contextfs puts on disk goes through this module.

Writes are atomic (a temp file in the same folder, fsync, ``os.replace``, fsync of
the folder) so a reader sees either the old or the new version, never a torn one,
and an acknowledged write survives a crash. The cross-process lock that serialises
mutations of one root lives here too.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from .errors import ContentError, ContextFSError, NotFoundError, VersioningError

__all__ = [
    "TMP_SUFFIX",
    "RootLock",
    "atomic_write",
    "fsync_dir",
    "io_errors",
    "read_bytes",
    "remove_file",
    "rename",
]

TMP_SUFFIX = ".cfs-tmp"
MAX_FILE_BYTES = 4 * 1024 * 1024


@contextlib.contextmanager
def io_errors(what: str) -> Iterator[None]:
    """Turn OSError into a typed ContextFSError whose message says what to do."""
    try:
        yield
    except ContextFSError:
        raise
    except FileNotFoundError as exc:
        raise NotFoundError(f"{what}: {exc.strerror}; check the path with list()", path=what) from None
    except OSError as exc:
        raise ContentError(f"{what}: {exc.strerror or exc}; check permissions and free disk space") from None


def fsync_dir(folder: Path) -> None:
    """Make a rename or unlink in ``folder`` durable (no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(target: Path, data: bytes, *, max_bytes: int = MAX_FILE_BYTES) -> None:
    """Replace ``target`` with ``data`` so that readers only ever see a whole version."""
    if len(data) > max_bytes:
        raise ContentError(
            f"content is {len(data)} bytes, over the {max_bytes}-byte limit; split it into several files"
        )
    with io_errors(str(target)):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}{TMP_SUFFIX}")
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        fsync_dir(target.parent)


def read_bytes(target: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist (or is a folder)."""
    try:
        return target.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ContentError(f"{target}: cannot read ({exc.strerror}); check permissions") from None


def remove_file(target: Path, stop_at: Path) -> None:
    """Unlink a file and prune folders it leaves empty, up to ``stop_at``."""
    with io_errors(str(target)):
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
        parent = target.parent
        while parent != stop_at and parent.is_relative_to(stop_at):
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent
        fsync_dir(target.parent if target.parent.exists() else stop_at)


def rename(src: Path, dst: Path) -> None:
    """Move a file or folder inside the root, creating the destination's parents."""
    with io_errors(str(src)):
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)
        fsync_dir(dst.parent)
        fsync_dir(src.parent)


class RootLock:
    """A reentrant lock shared by every process and thread working on one root.

    Mutations take it for their whole read-modify-write-commit cycle, so two agents
    writing the same root are serialised instead of racing on git's index and refs.
    """

    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(path), timeout=timeout, thread_local=True)
        self._timeout = timeout
        self._path = path

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        try:
            self._lock.acquire()
        except Timeout:
            raise VersioningError(
                f"another process held the contextfs lock {self._path} for over {self._timeout:.0f}s; "
                "wait for it to finish or remove the lock file if that process is gone"
            ) from None
        try:
            yield
        finally:
            self._lock.release()

    @property
    def is_held(self) -> bool:
        return self._lock.is_locked
