"""Staged writes: a change's files put in place after one flush for all of them.

Inside a change (:attr:`StagedWrites.unflushed` set, in the thread that runs it),
:meth:`contextfs.files.confined.RootFiles.write` writes the new bytes to a temporary file beside the
target and stages it; :meth:`StagedWrites.publish` flushes once (the staged bytes, the
journal lines saying how to undo them, the snapshots) and renames each into place. A power
cut therefore never finds a file in place whose bytes or undo record were not on the disk,
and a transaction of a thousand writes flushes once instead of a thousand times.

Anything that looks at a staged path (its status, a listing of its folder, a walk) publishes
first, a read is served from the staged file, and a remove or move publishes (or flushes)
once before it destroys bytes that were on disk; so nothing in the change can tell. Other
threads see the root as it is on disk, and outside a change every write is flushed by itself.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .. import faults
from ..errors import ConflictError, ContextFSError, InvalidPathError
from . import swapping
from .durability import Unflushed, fsync_fd
from .fileerrors import io_error

__all__ = ["Found", "ReplaceHook", "Staged", "StagedWrites", "replacing_only"]

#: How often a write looks again at a file that keeps being saved under it before it gives up.
_ATTEMPTS = 8

#: What is at a path when a write is about to replace it: its bytes and the status of the
#: very file read (None, None when missing).
Found = tuple[bytes | None, os.stat_result | None]
#: Runs just before a write replaces the file, with the time its bytes were staged (the
#: temporary file's ctime, ns; None: not staged, the write replaces the file at once) and
#: what is there now. It returns True when something it journaled must be flushed before
#: the rename, and None when the write is superseded (somebody saved the file after it was
#: staged) and must not be put in place. Only the version it was shown is ever replaced:
#: a save made after it looked is put back and shown to it (see ``_put_in_place``).
ReplaceHook = Callable[[int | None, Found], "bool | None"]
#: A staged write: its temporary file's name, its hook, when it was staged.
Staged = tuple[str, ReplaceHook | None, int]


def replacing_only(looked: bytes | None, kept: Callable[[], object]) -> ReplaceHook:
    """The hook of a write that may replace only ``looked`` (None: no file), what its caller
    read before deciding to write. Anything else there is somebody's save since: it stays,
    ``kept`` is called, and the write is dropped."""

    def judge(_staged_at: int | None, found: Found) -> bool | None:
        if found[0] == looked:
            return False
        kept()
        return None

    return judge


class StagedWrites:
    """The staging part of :class:`contextfs.files.confined.RootFiles`."""

    root: Path
    durable: bool

    if TYPE_CHECKING:

        def _parent(
            self, rel: str, *, create: bool = False
        ) -> contextlib.AbstractContextManager[tuple[int, str, str]]: ...

        def read_stat(self, rel: str, *, staged: bool = True) -> Found: ...

        @staticmethod
        def _at(fd: int, name: str) -> dict[str, int]: ...

    def __init__(self) -> None:
        # The change in progress belongs to one thread; another thread (a reader) sees the
        # root as it is on disk, and writes outside a change are flushed one by one.
        self._change = threading.local()

    @property
    def unflushed(self) -> Unflushed | None:
        """While a change runs in this thread: what it writes is added here and flushed with
        the rest of the change (see :meth:`publish`)."""
        return getattr(self._change, "unflushed", None)

    @unflushed.setter
    def unflushed(self, value: Unflushed | None) -> None:
        self._change.unflushed = value

    @property
    def _staged(self) -> dict[str, Staged]:
        """Writes of this thread's change not yet in place: on-disk path -> (temporary name,
        what to run just before it is renamed into place)."""
        staged: dict[str, Staged] | None = getattr(self._change, "staged", None)
        if staged is None:
            staged = self._change.staged = {}
        return staged

    @_staged.setter
    def _staged(self, value: dict[str, Staged]) -> None:
        self._change.staged = value

    def publish(self) -> None:
        """Put every staged write in place: one flush (the new bytes, and the journal lines
        saying how to undo them), then a rename each.

        Inside a change, :meth:`write` stages: the new bytes go to a temporary file beside
        the target and are renamed into place here, so that a thousand writes of a
        transaction need one flush, not one each, and a power cut never finds a file in
        place whose bytes were not yet on the disk. Any call that looks at a staged path
        (or lists a folder holding one) publishes first, so nothing can tell. Each write's
        ``before_replace`` hook runs just before its rename; when it reports a journal line
        (a save somebody made meanwhile), that is flushed before the rename.
        """
        if not self._staged:
            return
        staged, self._staged = self._staged, {}
        if self.unflushed is not None:
            self.unflushed.flush()
        done: list[str] = []
        try:
            for disk, (tmp_name, before_replace, staged_at) in staged.items():
                # Its folder holds the staged file: gone, it is gone too (never made again).
                with self._parent(disk) as (fd, name, _where):
                    placed = self._put_in_place(fd, tmp_name, name, disk, before_replace, staged_at)
                    done.append(disk)
                    if placed:
                        self._dirty_dir(fd, disk)
        except (OSError, ContextFSError) as exc:
            self._staged = {d: t for d, t in staged.items() if d not in done}
            failed = next(iter(self._staged))
            self.discard()
            if isinstance(exc, ContextFSError):
                raise
            raise io_error(failed, exc) from None

    def _put_in_place(
        self,
        fd: int,
        tmp: str,
        name: str,
        disk: str,
        before_replace: ReplaceHook | None,
        staged_at: int | None,
    ) -> bool:
        """Rename the temporary file ``tmp`` over ``name`` (in the folder open as ``fd``; -1:
        both are whole paths), replacing only the version ``before_replace`` was shown.

        The hook judges what is there; the file is then swapped in (``renameat2``) and what
        came out is compared with what the hook saw. A save made in the moment between the
        two goes back in place and is shown to the hook, as if it had come a moment
        earlier, so a person's save is never destroyed unseen. True when the folder's
        entries changed and must be flushed: the write is in place, or a swap put the
        newest save back in its place and the write was dropped; False when the hook
        dropped the write and nothing was moved. Where the swap is unsupported: a plain
        rename, with the moment's gap.
        """
        at = self._at(fd, name)
        if before_replace is None:  # nobody judged what is there: nothing to keep
            os.replace(tmp, name, **swapping.folders(at))
            return True
        try:
            for _attempt in range(_ATTEMPTS):
                found = self.read_stat(disk, staged=False)
                verdict = before_replace(staged_at, found)
                if verdict is None:  # superseded by a later save: never put in place
                    os.unlink(tmp, **at)
                    return False
                if verdict and self.unflushed is not None:
                    self.unflushed.flush()
                faults.point("change.judged")
                if found[0] is None:
                    swapped = swapping.place_new(fd, tmp, name)
                    if swapped is False:  # somebody created the file (or a folder) since the look
                        with contextlib.suppress(FileNotFoundError):
                            if stat.S_ISDIR(os.stat(name, follow_symlinks=False, **at).st_mode):
                                raise InvalidPathError(
                                    f"{disk} is a folder; write to a file inside it or pick another name"
                                )
                        continue
                else:
                    ours = os.stat(tmp, follow_symlinks=False, **at)
                    swapped = swapping.exchange(fd, tmp, name)
                    if swapped is False:  # somebody removed the file since the look
                        continue
                    if swapped and not self._kept(fd, tmp, name, found[0], ours):
                        continue
                if swapped is None:
                    os.replace(tmp, name, **swapping.folders(at))
                elif found[0] is not None:
                    os.unlink(tmp, **at)  # the version the hook was shown (and snapshotted)
                return True
        except _Superseded:  # the newest save went back in place by a swap: flushed too
            return True
        raise ConflictError(
            f"{disk} kept being saved by somebody else while contextfs wrote it; nothing was "
            "written; retry"
        )

    def _kept(self, fd: int, tmp: str, name: str, shown: bytes, ours: os.stat_result) -> bool:
        """After ``tmp`` was swapped with ``name``: True when what came out (now at ``tmp``)
        is what the hook was shown; otherwise it goes back in place (False, to be judged)."""
        at = self._at(fd, name)
        if swapping.read(fd, tmp) == shown:
            return True
        back = swapping.exchange(fd, tmp, name)
        if back and os.path.samestat(os.stat(tmp, follow_symlinks=False, **at), ours):
            return False
        # Our file went in that same moment too (saved over, or removed): the newest save
        # takes the place and the write is dropped, with the earlier save nobody saw.
        if back:
            swapping.exchange(fd, tmp, name)
        else:
            swapping.place_new(fd, tmp, name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, **at)
        raise _Superseded

    def discard(self) -> None:
        """Drop every staged write (the change is being undone): its files were never in place."""
        staged, self._staged = self._staged, {}
        for disk, (tmp_name, _hook, _at) in staged.items():
            with (
                contextlib.suppress(OSError, ContextFSError),
                self._parent(disk) as (fd, _name, _where),
            ):
                os.unlink(tmp_name, dir_fd=fd)

    def unstage(self, rel: str) -> None:
        """Drop the staged write of ``rel`` (somebody saved the file since: theirs supersedes it)."""
        entry = self._staged.pop(rel, None)
        if entry is not None:
            with (
                contextlib.suppress(OSError, ContextFSError),
                self._parent(rel) as (fd, _name, _where),
            ):
                os.unlink(entry[0], dir_fd=fd)

    def _observe(self, rel: str, *, tree: bool = False) -> None:
        """Publish the staged writes before ``rel`` (with ``tree``, anything under it) is looked at."""
        if not self._staged:
            return
        if rel in self._staged or (
            tree and (not rel or any(d.startswith(rel + "/") for d in self._staged))
        ):
            self.publish()

    def _before_destroy(self) -> None:
        """A file is about to be removed or moved: what the change wrote so far (the journal
        naming its old place and bytes, staged files) is flushed first, in one flush."""
        if self._staged:
            self.publish()
        elif self.unflushed is not None:
            self.unflushed.flush()

    def _dirty_dir(self, fd: int, rel: str) -> None:
        """The folder holding ``rel`` (open as ``fd``) changed: flushed now, or with the change."""
        if not self.durable:
            return
        if self.unflushed is not None:
            folder = rel.rpartition("/")[0]
            self.unflushed.add(self.root / folder if folder else self.root)
            return
        if fd < 0:
            return
        with contextlib.suppress(OSError):
            fsync_fd(fd)


class _Superseded(Exception):
    """A staged write whose file somebody saved over before it was in place: dropped."""
