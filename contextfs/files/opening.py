"""Opening the folders of a context root one step at a time, never following a link.

Each folder on the way is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to the previous
folder's descriptor, so a symlink swapped in during a call fails that very step with a typed
error. A name saved in its decomposed (NFD) form is found by its composed (NFC) spelling.
Where the platform lacks ``dir_fd`` support (Windows), the same checks run on joined paths.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import unicodedata
from collections.abc import Iterator

from ..errors import InvalidPathError, NotFoundError
from .durability import fsync_path
from .fileerrors import io_error, symlink_error
from .staged import StagedWrites

__all__ = ["DIR_FLAGS", "FD_OPS", "NOFOLLOW", "NONBLOCK", "ConfinedFolders"]

# No O_CLOEXEC here or in any open of the file layer: os.open makes every descriptor
# non-inheritable itself, atomically with O_CLOEXEC where the platform has it (PEP 446), so
# a git process started while one is open never inherits it.
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
FD_OPS = bool(NOFOLLOW) and os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd


class ConfinedFolders(StagedWrites):
    """The folder steps of :class:`contextfs.files.confined.RootFiles`."""

    # ------------------------------------------------------------ folders
    def _open_root(self) -> int:
        try:
            return os.open(self.root, DIR_FLAGS)
        except FileNotFoundError:
            raise NotFoundError(
                f"the context root {self.root} does not exist; create it first", path=""
            ) from None
        except OSError as exc:
            raise io_error(str(self.root), exc) from None

    @staticmethod
    def _match_nfc(fd: int, name: str) -> str | None:
        """The on-disk spelling of ``name`` when only its Unicode normal form differs."""
        if name.isascii():
            return None
        try:
            entries = os.listdir(fd)
        except OSError:
            return None
        found = [e for e in entries if e != name and unicodedata.normalize("NFC", e) == name]
        return found[0] if len(found) == 1 else None

    def _step(self, fd: int, name: str, rel: str, *, create: bool, at: str = "") -> tuple[int, str]:
        """Open the folder ``name`` under ``fd`` without following links; (fd, on-disk name)."""
        for _ in range(3):
            try:
                return os.open(name, DIR_FLAGS | NOFOLLOW, dir_fd=fd), name
            except FileNotFoundError:
                other = self._match_nfc(fd, name)
                if other is not None:
                    name = other
                    continue
                if not create:
                    raise
                # Made by someone else in between: open it (or fail on a link).
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    continue
                # The new folder is an entry of its parent: flushed with the change (or now),
                # or a power cut can take it with every file inside.
                self._dirty_dir(fd, f"{at}/{name}" if at else name)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise symlink_error(rel) from None
                if exc.errno == errno.ENOTDIR:
                    try:
                        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        st = None
                    if st is not None and stat.S_ISLNK(st.st_mode):
                        raise symlink_error(rel) from None
                    raise InvalidPathError(
                        f"invalid path {rel!r}: {name!r} is a file, not a folder; pick a path under a folder"
                    ) from None
                raise io_error(rel, exc) from None
        raise InvalidPathError(
            f"invalid path {rel!r}: the folder keeps changing under contextfs; retry"
        )

    @contextlib.contextmanager
    def _parent(self, rel: str, *, create: bool = False) -> Iterator[tuple[int, str, str]]:
        """Yield (descriptor of the parent folder, final name, on-disk rel) for ``rel``."""
        if not FD_OPS:
            yield from self._parent_by_path(rel, create=create)
            return
        parts = rel.split("/")
        fd = self._open_root()
        disk: list[str] = []
        try:
            for name in parts[:-1]:
                new, real = self._step(fd, name, rel, create=create, at="/".join(disk))
                os.close(fd)
                fd = new
                disk.append(real)
            final = parts[-1]
            try:
                os.stat(final, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                final = self._match_nfc(fd, final) or final
            except OSError:
                pass
            disk.append(final)
            yield fd, final, "/".join(disk)
        finally:
            os.close(fd)

    def _parent_by_path(self, rel: str, *, create: bool) -> Iterator[tuple[int, str, str]]:
        # Without dir_fd the best available: refuse links on every component just before use.
        current = self.root
        for name in rel.split("/")[:-1]:
            current = current / name
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                if not create:
                    raise
                current.mkdir(exist_ok=True)
                if self.durable:
                    fsync_path(current.parent)  # the new folder's entry (see _step)
                st = os.lstat(current)
            if stat.S_ISLNK(st.st_mode):
                raise symlink_error(rel)
            if not stat.S_ISDIR(st.st_mode):
                raise InvalidPathError(
                    f"invalid path {rel!r}: {current.name!r} is a file, not a folder"
                )
        yield -1, str(current / rel.split("/")[-1]), rel

    @staticmethod
    def _at(fd: int, name: str) -> dict[str, int]:
        return {"dir_fd": fd} if FD_OPS else {}
