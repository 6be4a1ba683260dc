"""One change to a root: its file operations, its undo, its journal and its commit.

Every mutating call of :class:`~contextfs.manager.ContextManager` (or a whole
``transaction()`` block) runs through one :class:`Change`:

1. before a path is first touched, its current bytes are snapshotted (in memory, and as a
   git blob named in the journal, with the blob id the change is about to leave there),
   so the change can be undone in this process or, after a crash, by the next one;
2. files are written, removed and renamed through :class:`~contextfs.files.confined.RootFiles`;
3. :meth:`Change.commit` writes the commit's objects, marks the journal ``ready``, writes
   git's index and the branch into their lock files, flushes, and only then moves the
   branch and the index into place and flushes again. A failure before the branch moved
   undoes the files (renames are reversed first, so undoing a delete needs no free space)
   and leaves HEAD, git's index and every file as they were.

**Flushes.** Nothing a change writes is flushed on its own
(:class:`~contextfs.files.durability.Unflushed`). Its writes are staged
(:meth:`~contextfs.files.confined.RootFiles.publish`): one flush before they are put in place
(their bytes and the journal lines saying how to undo them), one before the branch moves,
one after. A remove, move or look at a staged file inside a transaction flushes once more
first, and so does a save found over a staged path (its snapshot's line goes first).

**Adoption: a change never erases bytes it has not seen.** When a change first touches a
path, the snapshot is compared with HEAD's blob there (:mod:`contextfs.changes.adoption`).
Bytes that differ — a person's save, a script's edit, a pull — are an *outside version*,
committed first by the outside author (``human`` unless configured) with no session or turn,
then the change's own commit on top. A save made while the change runs is caught again just
before the change's bytes replace the file, and one made in the moment after that look by
the rename itself (:mod:`contextfs.files.swapping`); a delete or move compares what it took
away. Undoing a change puts back only the paths that still hold what the change left.
:meth:`Change.adopt` takes a version as it is on disk without writing anything: that is how
:mod:`contextfs.changes.outside`, the watcher and opening a root commit edits made outside.

:func:`contextfs.changes.recovery.recover` finishes or undoes the changes a killed process left.
:class:`contextfs.changes.cycle.Writes` is the write side of one root: its lock, recovery, and
the Change that each mutating call opens or joins. A root opened read-only never makes one, so
reading processes never import this module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .. import faults
from ..document import blob_version
from ..errors import ContextFSError
from ..files.confined import RootFiles
from ..files.durability import Unflushed
from ..files.fileerrors import io_error
from ..files.staged import Found
from ..versioning.refs import BranchMoved
from . import adoption
from .adoption import Seen, StaleRead
from .building import blob_ids, build_commits
from .commit_text import Header
from .journal import Journal, JournalFile
from .recovery import OutsideCheck, commit_outside, recover
from .undoing import undo

if TYPE_CHECKING:
    from ..versioning import GitStore, Prepared
    from ..versioning.locks import LockMark

__all__ = ["Change", "Header", "recover"]

log = logging.getLogger(__name__)

#: ``after`` of a snapshot taken to read a path: the change leaves there what it found, so far
#: (never a blob id, which is 40 hex digits).
_SNAPSHOT = "snapshot"


class Change:
    """The file operations of one commit (or one transaction), with their undo.

    ``seen`` (:class:`~contextfs.changes.adoption.Seen`) turns on the comparison with HEAD that
    finds outside versions; without it the change snapshots without comparing (what the
    commit benchmark measures the comparison against).
    """

    def __init__(
        self,
        files: RootFiles,
        git: GitStore,
        journal: Journal,
        header: Header,
        trailers: Mapping[str, str] | None = None,
        *,
        outside_author: str,
        seen: Seen | None = None,
        outside_check: OutsideCheck | None = None,
    ) -> None:
        self.files = files
        self.git = git
        self.journal = journal
        self.header = header
        self.trailers = dict(trailers or {})
        self.ops: list[str] = []
        self.before: dict[str, bytes | None] = {}
        self.after: dict[str, bytes | None] = {}
        self.executable: set[str] = set()
        #: Outside versions this change commits before its own commit, oldest first: one
        #: commit per layer (path -> bytes, None: deleted); a path saved again by somebody
        #: while the change was under way starts a new layer, so each version is kept.
        self.adopted: list[dict[str, bytes | None]] = [{}]
        #: Who outside versions are attributed to, and how their commit reads.
        self.outside_author = outside_author
        #: The commit gate's check of an outside version committed on its own (undoing).
        self.outside_check = outside_check
        self.adoption_op = adoption.DEFAULT_OP
        self.adoption_subject: str | None = None
        self._seen = seen
        #: HEAD when the change began: a git commit made meanwhile is checked at commit time.
        self.started_on = git.head()
        self._renames: list[tuple[str, str]] = []
        #: Per path, every blob id (None: no file) this change has put there: what undo may replace.
        self._left: dict[str, set[str | None]] = {}
        #: Paths read for a read-modify-write that has not written them yet.
        self._reading: set[str] = set()
        #: Whether a stale read may be retried by the caller (a call on its own, not a transaction).
        self.standalone = False
        self._journal: JournalFile | None = None
        #: A commit built elsewhere (a merge, a fast-forward) to publish instead of one built
        #: from HEAD and the changed paths; its tree must hold exactly what was written.
        self.prepared: Prepared | None = None
        #: Per path, the bytes the change last saw or left on disk (a staged write is not
        #: on disk until it is put in place): what a save made meanwhile is told from.
        self._disk: dict[str, bytes | None] = {}
        #: What the change wrote and has not flushed yet; the files, objects and journal
        #: hand theirs here while the change runs.
        self.unflushed = Unflushed(files.root, git.common_dir, durable=files.durable)
        files.unflushed = git.objects.unflushed = journal.unflushed = self.unflushed
        #: Blob ids of bytes a gate has judged in this change (the write gate, sync's scan);
        #: the commit gate judges every other new byte (see contextfs.gate.history).
        self.vetted: set[str] = set()

    # ------------------------------------------------------------ bookkeeping
    def merge_trailers(self, extra: Mapping[str, str] | None) -> None:
        """Add a nested call's trailers; several values for one key are all kept."""
        for key, value in (extra or {}).items():
            have = [v.strip() for v in self.trailers.get(key, "").split(",") if v.strip()]
            if value and value not in have:
                have.append(value)
            self.trailers[key] = ", ".join(have)

    def _record(self, entry: dict[str, Any]) -> None:
        if self._journal is None:
            try:
                self._journal = self.journal.begin(self.header.to_json())
            except OSError as exc:
                raise io_error("the contextfs journal", exc) from None
        try:
            self._journal.record(entry)
        except OSError as exc:
            raise io_error("the contextfs journal", exc) from None

    def read(self, rel: str) -> bytes | None:
        """The bytes at ``rel`` as this change sees them (snapshotting the path first).

        A read-modify-write (append, edit, a metadata change) reads through the change, so
        it works on exactly the version that is committed first when that is an outside one.
        """
        if rel not in self.before:
            self._touch(rel, _SNAPSHOT)
        else:
            self._recheck(rel, _SNAPSHOT)
        self._reading.add(rel)
        return self.after[rel]

    def _touch(self, rel: str, after: str | None, found: Found | None = None) -> None:
        """Snapshot ``rel`` before the change alters it, adopting an outside version found there.

        ``after`` is the blob id the change is about to leave at ``rel`` (None: no file;
        ``_SNAPSHOT``: the bytes found, when the path is only read so far); it is journaled
        with the snapshot, so recovery can tell the dead writer's bytes from anybody's later ones.
        """
        # What is on disk (a save made meanwhile too), unless the caller has just read it.
        data, st = found if found is not None else self.files.read_stat(rel, staged=False)
        if self._seen is not None:
            blob = self._seen.blob(rel, data, st)
            outside = blob != self.git.head_blob(rel)
            if outside and data is not None:
                self.git.store_blob(data)
                self.git.objects.flush()  # the snapshot must outlive a power cut before it is needed
        else:
            blob = self.git.store_blob(data) if data is not None else None
            outside = False
            if blob is not None:
                self.git.objects.flush()
        # The line is durable before the path is touched, for a new path too: it goes with
        # the flush that comes before the change's bytes are put in place (a staged write
        # is renamed into place only after it), so a power cut never keeps a new file and
        # loses the line, which would make recovery take the half-made change for a
        # person's edit.
        left = blob if after == _SNAPSHOT else after
        entry: dict[str, Any] = {"touch": rel, "blob": blob, "after": left}
        if outside:
            entry["outside"] = self.outside_author  # recovery commits it if it would be lost
        self._record(entry)
        self._left.setdefault(rel, set()).add(left)
        faults.point("change.touched")
        self.before[rel] = data
        self.after[rel] = data
        self._disk[rel] = data
        executable = st is not None and bool(st.st_mode & 0o100)
        if executable:
            self.executable.add(rel)
        if outside:
            log.info(
                "%s holds a version contextfs has not committed; committing it first as %s",
                rel,
                self.outside_author,
            )
            if rel in self.adopted[-1]:
                self.adopted.append({})
            self.adopted[-1][rel] = data

    def _intend(self, rel: str, data: bytes | None) -> None:
        """Journal that ``rel`` is about to hold ``data``, snapshotting it first when needed.

        A path this change already touched is snapshotted again when somebody saved it
        since the change last wrote it (a long transaction): their version is then the
        one to commit first, and the one to put back if the change is undone.
        """
        digest = blob_version(data) if data is not None else None
        if rel not in self.before:
            self._touch(rel, digest)
        elif not self._recheck(rel, digest):
            # Durable before the bytes it names can be: a power cut that keeps the file and
            # loses this line would make recovery take the change's bytes for a person's.
            self._record({"wrote": rel, "after": digest})
        self._left.setdefault(rel, set()).add(digest)

    def adopt(self, rel: str, data: bytes | None, *, executable: bool = False) -> None:
        """Commit the outside version at ``rel`` as it is (None: it was deleted), before this change.

        Nothing is written, and undoing the change never touches the path: it is not ours.
        Nor is anything journaled: recovery has nothing of it to undo, and a ``ready`` line
        names the outside versions' commit with the blobs its building stores.
        """
        self.adopted[-1][rel] = data
        if executable:
            self.executable.add(rel)

    def _recheck(self, rel: str, digest: str | None) -> bool:
        """Snapshot ``rel`` again if somebody saved it since the change last looked; True if so.

        Runs before the change's bytes replace a file, so that version is committed first too
        (a write the change staged there is dropped: the save came after it). New bytes
        computed from what the change read are stale then: :class:`StaleRead`.
        """
        if self.files.read_stat(rel, staged=False)[0] == self._disk.get(rel):
            return False
        self.files.unstage(rel)
        self._touch(rel, digest)
        if rel in self._reading:
            raise StaleRead.saved_meanwhile(rel, retryable=self.standalone)
        return True

    def _took(self, rel: str, taken: Found) -> None:
        """``rel``'s file was just moved or removed, and ``taken`` is what it held then: a save
        somebody made in the moment since the change last looked is committed first as
        theirs (a move carries it to its new place)."""
        if taken[0] != self._disk.get(rel):
            self._touch(rel, None, taken)

    def _replacing(
        self,
        rel: str,
        data: bytes,
        digest: str,
        derived: bool,
        staged_at: int | None,
        found: Found,
    ) -> bool | None:
        """Runs just before the change's bytes replace the file at ``rel`` (a staged write: when
        it is put in place, after the change's first flush; see :data:`~contextfs.files.staged.ReplaceHook`).

        A save somebody made since the change last saw the file is snapshotted, to be
        committed first, and True returned: its journal line is flushed before the rename
        (bytes computed from what the change read, ``derived``, are stale then:
        :class:`StaleRead`). A save made *after* the write was staged supersedes it, as if
        the bytes had been in place and the person saved over them: None, and the save stays
        for the next look to adopt.
        """
        if found[0] == self._disk.get(rel):
            self._disk[rel] = data
            return False
        # File times come from a coarse clock: a save in the same tick counts as after.
        st = found[1]
        if staged_at is not None and st is not None and st.st_ctime_ns >= staged_at:
            return None
        self._touch(rel, digest, found)
        self.after[rel] = data
        if derived:
            raise StaleRead.saved_meanwhile(rel, retryable=self.standalone)
        self._disk[rel] = data
        return True

    # ------------------------------------------------------------ operations
    def write(self, rel: str, data: bytes, *, max_bytes: int | None = None) -> None:
        self._intend(rel, data)
        digest = blob_version(data)
        # Computed from what the change read (a read-modify-write): stale if somebody saves
        # first. The flag goes with these staged bytes, so a later write that replaces them
        # before they are in place is judged by what it was computed from, not by them.
        derived = rel in self._reading
        self.files.write(
            rel,
            data,
            max_bytes=max_bytes,
            before_replace=lambda at, found: self._replacing(rel, data, digest, derived, at, found),
        )
        self.after[rel] = data
        self._reading.discard(rel)
        faults.point("change.written")

    def remove(self, rel: str) -> None:
        self._intend(rel, None)
        self._recheck(rel, None)
        faults.point("change.judged")
        self._took(rel, self.files.remove(rel))
        self.after[rel] = None
        self._disk[rel] = None
        self._reading.discard(rel)

    def rename(self, src: str, dst: str, moved: list[str]) -> None:
        """Move the file or folder ``src`` to ``dst``; ``moved`` lists the files under ``src``."""
        pairs = [(rel, dst + rel[len(src) :]) for rel in moved]
        for old, new in pairs:
            self._intend(old, None)
            self._intend(new, self.after[old])
        # Saved since the snapshot: that version moves, and is committed first.
        for old, new in pairs:
            if self._recheck(old, None):
                self._intend(new, self.after[old])
        self._record({"rename": [src, dst]})
        faults.point("change.judged")
        self.files.rename(src, dst)
        self._renames.append((src, dst))
        self.files.prune(src.rpartition("/")[0])
        faults.point("change.renamed")
        # What the move carried (read at its new place): a save made in the moment is
        # committed first as theirs. Undoing the move brings it back to where it was saved.
        for old, new in pairs:
            self._took(old, self.files.read_stat(new, staged=False))
        contents = {old: self.after[old] for old, _new in pairs}
        for old, new in pairs:
            self.after[new] = self._disk[new] = contents[old]
            self.after[old] = self._disk[old] = None
            if old in self.executable:
                self.executable.add(new)

    def changes(self) -> dict[str, bytes | None]:
        """Paths whose bytes this change altered, with their new bytes (outside versions aside)."""
        return {rel: data for rel, data in self.after.items() if data != self.before.get(rel)}

    # ------------------------------------------------------------ undo
    def rollback(self) -> None:
        """Put every touched path back; nothing about the change stays on disk."""
        self._undo()
        self._finish(flush=True)

    def _undo(self) -> None:
        """Undo the files; outside versions found on paths somebody saved over since are committed."""
        self.files.discard()  # staged writes were never in place
        kept = undo(self.files, self._renames, self.before, self._left)
        self.files.publish()
        found = [
            {rel: data for rel, data in layer.items() if rel in kept} for layer in self.adopted
        ]
        layers = [adoption.blobs(self.git, layer) for layer in found if layer]
        if layers:
            with contextlib.suppress(ContextFSError):
                commit_outside(
                    self.git, layers, self.outside_author, time.time(), check=self.outside_check
                )

    def _finish(self, *, flush: bool = False) -> None:
        """Forget the journal (``flush``: once what was undone is durable) and stop collecting."""
        try:
            if flush:
                self.unflushed.flush()
        finally:
            self.files.unflushed = self.git.objects.unflushed = self.journal.unflushed = None
            if self._journal is not None:
                self._journal.close()
                self._journal = None

    # ------------------------------------------------------------ commit
    def commit(
        self,
        message: str,
        *,
        when: float,
        notify: Callable[[list[str]], None] | None = None,
        gate: Callable[[Change, str], None] | None = None,
    ) -> str | None:
        """Commit what changed, after the outside versions; None (and no commit) when nothing did.

        ``gate`` judges the change and its message once its files are in place (the saves
        found under them adopted) and before any object of the commit is written; what it
        raises undoes the change. A git commit made meanwhile is built on, unless it took up
        this change's own bytes.
        """
        try:
            self.files.publish()  # the change's files in place, after one flush
            if gate is not None:
                gate(self, message)
            faults.point("change.published")
        except BaseException:
            self._undo()
            self._finish(flush=True)
            raise
        own = self.changes()
        paths = sorted(set(own).union(*self.adopted))
        if not paths and self.prepared is None:
            self._finish()
            return None
        try:
            for attempt in range(1, 4):
                try:
                    top = self._publish(own, paths, message, when)
                    break
                except BranchMoved:  # a git commit made meanwhile: built on, twice more at most
                    if attempt == 3:
                        raise
            if top is None:  # the tree is unchanged (e.g. a file written back as it was)
                self._finish()
                return None
        except BaseException:
            # Nothing was published: undo the files, then bring git's index back in line.
            self._undo()
            with contextlib.suppress(ContextFSError):
                self.git.record(paths)
            self._finish(flush=True)
            raise
        faults.point("commit.published")
        self._finish()
        if notify is not None:
            notify(paths)
        return top.sha

    def _publish(
        self, own: dict[str, bytes | None], paths: list[str], message: str, when: float
    ) -> Prepared | None:
        """Build the commits on HEAD (or take :attr:`prepared`), journal them ``ready``, record the
        paths and move the branch."""
        base, outside, ours = build_commits(self, own, message, when)
        top = ours or (outside[-1][0] if outside else None)
        if top is None:
            self.git.record(paths)
            return None
        faults.point("commit.prepared")
        ready: dict[str, Any] = {
            "parent": base,
            "sha": top.sha,
            "changes": blob_ids(self.git, own),
            "message": message,
            "when": when,
            "executable": sorted(self.executable & set(paths)),
        }
        if outside:
            ready["adopted"] = [entry for _prepared, entry in outside]
        self._record({"ready": ready})
        faults.point("commit.ready")
        # git's index and the branch (from the HEAD the commits were built on, to the top one)
        # written into their locks, whose marks are journaled first.
        publication = self.git.publication(
            dataclasses.replace(top, parent=base), paths, journal=self._mark_locks
        )
        try:
            # From here on the locks are held: anything that stops the publication (a full
            # disk, an interrupt) releases them, or every later write would wait for them.
            faults.point("record.locked")
            faults.point("commit.recorded")
            # One flush: files, objects, the journal's ready line, the index and the
            # branch's new value, all written into place or into their locks.
            self.unflushed.flush()
            publication.commit()
        except BaseException:
            publication.abort()
            raise
        self.unflushed.add(self.git.git_dir)
        self.unflushed.flush()  # the moved branch and index
        return top

    def _mark_locks(self, marks: list[LockMark]) -> None:
        self._record({"locks": [m.to_json() for m in marks]})
