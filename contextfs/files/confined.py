"""Every byte contextfs reads or writes inside a context root goes through this module.

Paths have already passed the lexical gate (:func:`contextfs.files.paths.check`); this module
makes the *filesystem* side of confinement hold even while someone swaps a folder for a
symlink during a call. Each operation opens the root, then every folder on the way with
``O_NOFOLLOW | O_DIRECTORY`` relative to the previous folder's descriptor, and does its
final step (``open``, ``rename``, ``unlink``, ``mkdir``) relative to the last one. A
symlink anywhere on the way fails that very step with a typed error, so there is no gap
between checking a path and using it.

Writes are atomic (a temporary file in the same folder, ``fsync``, ``rename``, ``fsync``
of the folder): a reader sees the old or the new version, never a torn one. A write never
replaces a folder and a removal never removes one that still holds files.

Names are compared in NFC: a file someone saved under its decomposed (NFD) name is found
by its composed spelling, and writes to it keep its on-disk name, so git sees one file.
Where the platform lacks ``dir_fd`` support (Windows), the same checks run on joined paths.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from ..errors import ContentError, ContextFSError, InvalidPathError, NotFoundError
from . import swapping
from .durability import fsync_fd, write_all
from .fileerrors import io_error, symlink_error
from .opening import FD_OPS, NOFOLLOW, NONBLOCK, ConfinedFolders
from .staged import ReplaceHook
from .walking import FileStat, walk_fd, walk_paths

__all__ = [
    "MAX_READ_BYTES",
    "TMP_SUFFIX",
    "FileStat",
    "RootFiles",
]

TMP_SUFFIX = ".cfs-tmp"
#: Files larger than this are refused on read (the write limit is far lower); a planted
#: multi-gigabyte file must not exhaust memory.
MAX_READ_BYTES = 64 * 1024 * 1024


class RootFiles(ConfinedFolders):
    """Confined file operations on one context root (paths are root-relative POSIX)."""

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = root
        #: fsync written files and their folders (off only for benchmarks and scratch roots).
        self.durable = durable
        super().__init__()

    # ------------------------------------------------------------ looking
    def lstat(self, rel: str) -> os.stat_result | None:
        """The entry's own status (a link is reported as a link), None when missing."""
        if not rel:
            return os.stat(self.root)
        self._observe(rel)
        try:
            with self._parent(rel) as (fd, name, _disk):
                return os.stat(name, follow_symlinks=False, **self._at(fd, name))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise io_error(rel, exc) from None

    def kind(self, rel: str) -> str | None:
        """'file', 'dir', 'link', 'other' or None (missing); links are never followed."""
        try:
            st = self.lstat(rel)
        except InvalidPathError:
            return "link"
        if st is None:
            return None
        if stat.S_ISREG(st.st_mode):
            return "file"
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        if stat.S_ISLNK(st.st_mode):
            return "link"
        return "other"

    def disk_rel(self, rel: str) -> str:
        """``rel`` as spelled on disk (NFC/NFD differences resolved), for git."""
        # Staged writes are not published first: a staged file is kept under the spelling it
        # will have on disk, and its temporary file never matches another spelling, so the
        # answer is the same before and after it is put in place.
        if not rel or rel.isascii():
            return rel
        try:
            with self._parent(rel) as (_fd, _name, disk):
                return disk
        except (FileNotFoundError, NotADirectoryError):
            return rel

    def listdir(self, rel: str) -> list[str]:
        """Names in a folder ([] when it is missing); a link is refused."""
        self._observe(rel, tree=True)
        try:
            if not rel:
                fd = self._open_root()
                try:
                    return os.listdir(fd) if FD_OPS else os.listdir(self.root)
                finally:
                    os.close(fd)
            with self._parent(rel) as (pfd, name, _disk):
                if not FD_OPS:
                    return os.listdir(name)
                fd, _real = self._step(pfd, name, rel, create=False)
                try:
                    return os.listdir(fd)
                finally:
                    os.close(fd)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except InvalidPathError:
            raise
        except OSError as exc:
            raise io_error(rel, exc) from None

    def read(self, rel: str) -> bytes | None:
        """The bytes of a regular file, or None when no file is there (a folder is no file).

        A symlink, device, pipe or socket at ``rel`` is refused with InvalidPathError.
        """
        return self.read_stat(rel)[0]

    def read_stat(
        self, rel: str, *, staged: bool = True
    ) -> tuple[bytes | None, os.stat_result | None]:
        """Like :meth:`read`, with the status of the very file that was read (None, None when missing).

        A write staged by this thread's change is read from its temporary file, unless
        ``staged`` is False (what is on disk: a save somebody made meanwhile).
        """
        entry = self._staged.get(rel) if staged else None
        staged_name = entry[0] if entry is not None else None
        try:
            with self._parent(rel) as (fd, name, _disk):
                if staged_name is not None:
                    name = staged_name
                try:
                    handle = os.open(
                        name,
                        os.O_RDONLY | NOFOLLOW | NONBLOCK,
                        **self._at(fd, name),
                    )
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.EMLINK):
                        raise symlink_error(rel) from None
                    if exc.errno == errno.ENXIO:  # a socket, or a device without its driver
                        raise _not_plain(rel) from None
                    raise
                try:
                    st = os.fstat(handle)
                    if stat.S_ISDIR(st.st_mode):  # a folder opens read-only: no file is there
                        return None, None
                    if not stat.S_ISREG(st.st_mode):
                        raise _not_plain(rel)
                    if st.st_size > MAX_READ_BYTES:
                        raise ContentError(
                            f"{rel} is {st.st_size} bytes, too large to read; split it into smaller files"
                        )
                    chunks = []
                    while True:
                        chunk = os.read(handle, 1 << 20)
                        if not chunk:
                            break
                        chunks.append(chunk)
                    # Taken after the read: a write during it shows in this status (its ctime).
                    return b"".join(chunks), os.fstat(handle)
                finally:
                    os.close(handle)
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        except ContextFSError:
            raise
        except OSError as exc:
            raise io_error(rel, exc) from None

    def walk(self, rel: str = "", *, skip_top: frozenset[str] = frozenset()) -> Iterator[FileStat]:
        """Every regular file under ``rel`` (sorted per folder); links and their targets are skipped.

        ``skip_top`` names folders of the root that are not walked (``.git`` always is).
        """
        skip = skip_top  # both walks leave out .git at every level
        self._observe(rel, tree=True)
        try:
            if rel:
                with self._parent(rel) as (pfd, name, disk):
                    if not FD_OPS:
                        yield from walk_paths(self.root, disk, skip)
                        return
                    try:
                        fd, _real = self._step(pfd, name, rel, create=False)
                    except FileNotFoundError:
                        return
                    yield from walk_fd(fd, disk + "/", skip, top=False)
            else:
                fd = self._open_root()
                if not FD_OPS:
                    os.close(fd)
                    yield from walk_paths(self.root, "", skip)
                    return
                yield from walk_fd(fd, "", skip, top=True)
        except (FileNotFoundError, NotADirectoryError):
            return

    # ------------------------------------------------------------ writing
    def write(
        self,
        rel: str,
        data: bytes,
        *,
        max_bytes: int | None = None,
        before_replace: ReplaceHook | None = None,
    ) -> None:
        """Replace (or create) the file ``rel`` with ``data`` atomically and durably.

        Parents are created as needed. An existing folder at ``rel`` is refused before
        anything is written, and an existing file keeps its permission bits.
        ``before_replace`` runs when the new bytes are on disk, just before they replace
        the old ones (the commit cycle looks there for a save made in the meantime); inside
        a change that is when the staged write is put in place (see
        :data:`contextfs.files.staged.ReplaceHook`).
        """
        if max_bytes is not None and len(data) > max_bytes:
            raise ContentError(
                f"content is {len(data)} bytes, over the {max_bytes}-byte limit; split it into several files"
            )
        try:
            with self._parent(rel, create=True) as (fd, name, disk):
                at = self._at(fd, name)
                mode = 0o644
                try:
                    old = os.stat(name, follow_symlinks=False, **at)
                except FileNotFoundError:
                    old = None
                if old is not None:
                    if stat.S_ISDIR(old.st_mode):
                        raise InvalidPathError(
                            f"{rel} is a folder; write to a file inside it or pick another name"
                        )
                    if stat.S_ISREG(old.st_mode):
                        mode = stat.S_IMODE(old.st_mode)
                tmp = _temporary(name)
                tmp_name = os.path.basename(tmp)
                handle = os.open(
                    tmp,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW,
                    0o600,
                    **at,
                )
                pending = self.unflushed
                try:
                    try:
                        write_all(handle, data)
                        os.fchmod(handle, mode)
                        if self.durable and (pending is None or not FD_OPS):
                            fsync_fd(handle)
                        staged_at = os.fstat(handle).st_ctime_ns
                    finally:
                        os.close(handle)
                    if pending is not None and FD_OPS:
                        # Staged: renamed into place by publish(), after one flush for all,
                        # where ``before_replace`` runs just before the rename.
                        pending.add(self.root / disk.rpartition("/")[0] / tmp_name)
                        previous = self._staged.pop(disk, None)
                        if previous is not None:
                            with contextlib.suppress(OSError):
                                os.unlink(previous[0], dir_fd=fd)
                        self._staged[disk] = (tmp_name, before_replace, staged_at)
                        return
                    if pending is not None:
                        pending.flush()  # the journal lines saying how to undo this, before it is in place
                    self._put_in_place(
                        fd, tmp_name if FD_OPS else tmp, name, disk, before_replace, None
                    )
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp, **at)
                    raise
                self._dirty_dir(fd, disk)
        except ContextFSError:
            raise
        except IsADirectoryError:
            raise InvalidPathError(
                f"{rel} is a folder; write to a file inside it or pick another name"
            ) from None
        except OSError as exc:
            raise io_error(rel, exc) from None

    def chmod(self, rel: str, mode: int) -> None:
        """Set the permission bits of the file or folder ``rel``; a link is refused, never followed."""
        self._observe(rel, tree=True)
        try:
            with self._parent(rel) as (fd, name, _disk):
                handle = os.open(
                    name,
                    os.O_RDONLY | NOFOLLOW | NONBLOCK,
                    **self._at(fd, name),
                )
                try:
                    os.fchmod(handle, mode)
                finally:
                    os.close(handle)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(f"{rel} does not exist", path=rel) from None
        except ContextFSError:
            raise
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):
                raise symlink_error(rel) from None
            raise io_error(rel, exc) from None

    def mkdir(self, rel: str) -> None:
        """Create the folder ``rel`` and its parents (an existing folder is fine)."""
        try:
            with self._parent(rel + "/.", create=True) as (_fd, _name, _disk):
                pass
        except ContextFSError:
            raise
        except OSError as exc:
            raise io_error(rel, exc) from None

    def remove(self, rel: str) -> tuple[bytes | None, os.stat_result | None]:
        """Remove one file (not a folder) and prune the folders it leaves empty.

        Returns what the file held when it was taken away (as :meth:`read_stat`; None, None
        when nothing was there): it is first renamed aside, then read, then unlinked, so a
        caller can tell whether somebody saved it in the moment since it last looked.
        """
        self._before_destroy()
        taken: tuple[bytes | None, os.stat_result | None] = (None, None)
        try:
            with self._parent(rel) as (fd, name, disk):
                at = self._at(fd, name)
                st = os.stat(name, follow_symlinks=False, **at)
                if stat.S_ISDIR(st.st_mode):
                    raise InvalidPathError(f"{rel} is a folder; remove the files in it instead")
                aside = _temporary(name)
                os.rename(name, aside, **swapping.folders(at))
                try:
                    st = os.stat(aside, follow_symlinks=False, **at)
                    if stat.S_ISREG(st.st_mode):
                        taken = (swapping.read(fd, aside), st)
                finally:
                    os.unlink(aside, **at)
                self._dirty_dir(fd, disk)
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        except ContextFSError:
            raise
        except OSError as exc:
            raise io_error(rel, exc) from None
        self.prune(rel.rpartition("/")[0])
        return taken

    def prune(self, folder: str) -> None:
        """Remove ``folder`` and its parents while they are empty (never the root)."""
        while folder:
            try:
                with self._parent(folder) as (fd, name, disk):
                    os.rmdir(name, **self._at(fd, name))
                    self._dirty_dir(fd, disk)
            except (OSError, ContextFSError):
                return
            folder = folder.rpartition("/")[0]

    def rename(self, src: str, dst: str) -> None:
        """Move a file or folder to ``dst`` (which must not exist), creating its parents.

        Nothing at ``dst`` is ever replaced, even a file somebody saves there in the very
        moment of the move (``renameat2`` without replacing; where that is unsupported, a
        look just before a plain rename)."""
        self._before_destroy()
        taken = InvalidPathError(f"{dst} already exists; move it away first")
        try:
            with (
                self._parent(src) as (sfd, sname, sdisk),
                self._parent(dst, create=True) as (dfd, dname, ddisk),
            ):
                moved = swapping.place_new(sfd, sname, dname, into=dfd)
                if moved is False:
                    raise taken
                if moved is None:  # no renameat2 here: a look, then a rename (the moment's gap)
                    if _exists(dname, self._at(dfd, dname)):
                        raise taken
                    os.rename(sname, dname, **_two_folders(sfd, dfd))
                if FD_OPS:
                    self._dirty_dir(dfd, ddisk)
                    self._dirty_dir(sfd, sdisk)
        except FileNotFoundError:
            raise NotFoundError(f"{src} does not exist", path=src) from None
        except ContextFSError:
            raise
        except OSError as exc:
            raise io_error(src, exc) from None


def _exists(name: str, at: dict[str, int]) -> bool:
    try:
        os.stat(name, follow_symlinks=False, **at)
    except FileNotFoundError:
        return False
    return True


def _two_folders(src_fd: int, dst_fd: int) -> dict[str, int]:
    """``os.rename``'s folder arguments (none where names are whole paths)."""
    return {"src_dir_fd": src_fd, "dst_dir_fd": dst_fd} if FD_OPS else {}


def _not_plain(rel: str) -> InvalidPathError:
    """The refusal to read a device, pipe or socket (opening one may block or fail)."""
    return InvalidPathError(f"{rel} is not a regular file; contextfs reads plain files only")


def _temporary(name: str) -> str:
    """A fresh temporary name beside ``name`` (a bare name where ``dir_fd`` is used)."""
    # It must fit wherever the name does (255 bytes): at most 200 bytes of the name, cut
    # on a character boundary, leave room for the rest.
    base = os.fsencode(os.path.basename(name))[:200].decode("utf-8", "ignore")
    return os.path.join(os.path.dirname(name), f".{base}.{secrets.token_hex(4)}{TMP_SUFFIX}")
