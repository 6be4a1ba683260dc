"""HEAD, the branch it names, and moving it safely.

The branch is moved with git's own lock-file protocol: the new id is written into
``<ref>.lock`` (created exclusively, with a marker that proves it is contextfs's own: see
:mod:`.locks`), which is renamed over the ref. The old value is compared under the lock
(compare-and-swap), so a commit made meanwhile by anyone else is never overwritten. A commit
takes the lock as a :class:`RefUpdate` before its one flush (which then covers the lock's bytes
with everything else) and renames it after. Refs are read straight from their files: GitPython's reference objects
cost about half a millisecond per look-up, paid several times per commit.

A repository in the middle of a merge, rebase, cherry-pick, revert or bisect is reported
by :func:`operation_in_progress`; contextfs refuses to write until a person finishes it,
because a commit made then is lost by ``git rebase --abort`` (or records a half-resolved
conflict).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path

from .. import faults
from ..errors import VersioningError
from ..files.durability import Unflushed, fsync_path
from .locks import LockMark, MarkedLock, stale_lock, wait_for

__all__ = ["BranchMoved", "RefUpdate", "Refs", "operation_in_progress"]

_HEX40 = re.compile(r"^[0-9a-f]{40}\Z")
#: Marker files of operations in progress, and how a person finishes each.
_IN_PROGRESS = (
    ("rebase-merge", "a rebase", "git rebase --continue or git rebase --abort"),
    ("rebase-apply", "a rebase or git am", "git rebase --continue / git am --continue, or --abort"),
    ("MERGE_HEAD", "a merge", "resolve the conflicts and commit, or git merge --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue or git cherry-pick --abort"),
    ("REVERT_HEAD", "a revert", "git revert --continue or git revert --abort"),
    ("BISECT_LOG", "a bisect", "git bisect reset"),
)


class BranchMoved(VersioningError):
    """The branch is not where a commit was built: someone committed meanwhile."""


def operation_in_progress(git_dir: Path) -> tuple[str, str] | None:
    """(what, how to finish it) when git is in the middle of an operation, else None."""
    for marker, what, finish in _IN_PROGRESS:
        if os.path.lexists(git_dir / marker):
            return what, finish
    return None


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fsync_path(folder)


class Refs:
    """The refs of one repository (``git_dir`` per worktree, ``common_dir`` shared)."""

    def __init__(self, git_dir: Path, common_dir: Path, *, durable: bool = True) -> None:
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.durable = durable

    @classmethod
    def of(cls, git_dir: Path, *, durable: bool = True) -> Refs:
        """The refs of the repository whose git folder is ``git_dir``, found without GitPython.

        A linked worktree's git folder holds a ``commondir`` file naming the folder its
        branches and packed refs live in; any other git folder is its own common folder.
        """
        try:
            named = (git_dir / "commondir").read_text("utf-8").strip()
        except FileNotFoundError:
            return cls(git_dir, git_dir, durable=durable)
        except (OSError, UnicodeDecodeError) as exc:
            raise VersioningError(
                f"cannot read {git_dir / 'commondir'} ({exc}); check the repository"
            ) from None
        common = Path(named)
        return cls(
            git_dir,
            (common if common.is_absolute() else git_dir / common).resolve(),
            durable=durable,
        )

    def branch(self) -> str | None:
        """The ref HEAD points at ('refs/heads/main'), or None when HEAD is detached."""
        try:
            text = (self.git_dir / "HEAD").read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise VersioningError(f"cannot read HEAD ({exc}); check the repository") from None
        if text.startswith("ref:"):
            ref = text[4:].strip()
            if not ref.startswith("refs/") or ".." in ref.split("/"):
                raise VersioningError(
                    f"HEAD points at {ref!r}, which is not a branch; check out a branch"
                )
            return ref
        return None

    def _parse(self, text: str, where: str) -> str:
        value = text.strip()
        if not _HEX40.match(value):
            raise VersioningError(
                f"{where} does not hold a commit id ({value[:20]!r}); repair it with git (e.g. git update-ref)"
            )
        return value

    def head(self) -> str | None:
        """The hex id of HEAD, or None before the first commit."""
        ref = self.branch()
        if ref is None:
            return self._parse((self.git_dir / "HEAD").read_text("utf-8"), "HEAD")
        for base in (self.git_dir, self.common_dir):
            try:
                return self._parse(Path(base, ref).read_text("utf-8"), ref)
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                continue
            except (OSError, UnicodeDecodeError) as exc:
                raise VersioningError(f"cannot read {ref} ({exc}); check the repository") from None
        try:
            packed = (self.common_dir / "packed-refs").read_text("utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise VersioningError(
                f"cannot read packed-refs ({exc}); check the repository"
            ) from None
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref:
                return self._parse(sha, "packed-refs")
        return None

    def ref_path(self) -> Path:
        """The file of the ref a commit moves (the branch, or HEAD itself when detached)."""
        ref = self.branch() or "HEAD"
        return Path(self.git_dir if ref == "HEAD" else self.common_dir, ref)

    def lock_for(self, new: str, *, durable: bool | None = None) -> MarkedLock:
        """The branch's lock file holding ``new``, prepared (its mark ready to journal), not taken."""
        path = self.ref_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise VersioningError(
                f"cannot lock {path.name} ({exc.strerror}); check .git permissions and disk space"
            ) from None
        # The private file is made in the git folder itself: one under refs/ would be listed as a ref.
        scratch = (
            self.git_dir if path.name == "HEAD" and path.parent == self.git_dir else self.common_dir
        )
        return MarkedLock(
            path.with_name(path.name + ".lock"),
            new.encode() + b"\n",
            scratch,
            durable=self.durable if durable is None else durable,
        )

    def move(
        self,
        old: str | None,
        new: str,
        reflog_line: bytes,
        *,
        journal: Callable[[list[LockMark]], None] | None = None,
        wait: float = 0.0,
    ) -> None:
        """Point the branch at ``new`` if it still points at ``old`` (flushed here).

        ``journal`` receives the lock's mark before it is taken; a lock somebody else holds is
        waited for, up to ``wait`` seconds.
        """
        RefUpdate(self, old, new, reflog_line, journal=journal, wait=wait).commit()

    def append_reflog(self, ref_path: Path, line: bytes) -> None:
        ref = ref_path.relative_to(
            self.git_dir if ref_path.name == "HEAD" else self.common_dir
        ).as_posix()
        targets = {
            (self.common_dir if ref != "HEAD" else self.git_dir) / "logs" / ref,
            self.git_dir / "logs" / "HEAD",
        }
        for log_path in targets:
            try:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                # One write with O_APPEND: a kill cannot leave half a line.
                fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, line)
                finally:
                    os.close(fd)
            except OSError:
                pass  # the reflog is a convenience; the commit itself is what must not be lost


class RefUpdate:
    """Moving the branch in two steps: the lock taken and written now, renamed by :meth:`commit`.

    The lock is a :class:`~.locks.MarkedLock`: its mark goes to ``journal`` before it is
    linked into place, so a killed process's lock is provably its own. A lock somebody else
    holds is waited for (``wait`` seconds); one left from before the machine last started is
    removed (no process can hold it). With ``pending`` the lock's bytes and the renamed ref
    are handed to the change's flush; without, each is flushed here.
    """

    def __init__(
        self,
        refs: Refs,
        old: str | None,
        new: str,
        reflog_line: bytes,
        pending: Unflushed | None = None,
        *,
        journal: Callable[[list[LockMark]], None] | None = None,
        wait: float = 0.0,
    ) -> None:
        self.refs = refs
        self.old = old
        self.new = new
        self.line = reflog_line
        self.pending = pending
        self.path = refs.ref_path()
        self.done = False
        self.lock = refs.lock_for(new, durable=refs.durable and pending is None)
        try:
            if journal is not None:
                journal([self.lock.mark])
            self._take(wait)
        except BaseException:
            self.lock.discard()
            raise
        if refs.durable and pending is not None:
            pending.add(self.lock.path)

    def _take(self, wait: float) -> None:
        if self.lock.take():
            return
        if not stale_lock(self.lock.path):
            wait_for(self.lock.path, wait, "the branch")
        if not self.lock.take():
            raise VersioningError(
                f"{self.lock.path} exists: another git process is updating the branch; "
                "retry when it has finished"
            )

    def commit(self) -> None:
        """Rename the lock over the branch if the branch still points where the commit was built."""
        try:
            faults.point("publish.locked")
            current = self.refs.head()
            if current != self.old:
                raise BranchMoved(
                    f"the branch moved during the commit (now {current}); retry the call"
                )
            os.replace(self.lock.path, self.path)
            self.lock.taken = False  # it is the branch now
            self.done = True
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise VersioningError(
                    f"cannot move the branch ({exc.strerror}); check .git permissions and disk space"
                ) from None
            raise
        if self.refs.durable:
            if self.pending is not None:
                self.pending.add(self.path.parent)
            else:
                _fsync_dir(self.path.parent)
        self.refs.append_reflog(self.path, self.line)

    def abort(self) -> None:
        """Release the lock (if it is still ours) without moving the branch."""
        if not self.done:
            self.lock.release()
            self.done = True
