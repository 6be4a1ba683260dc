"""One change to a root: its file operations, its undo, its journal and its commit.

Every mutating call of :class:`~contextfs.manager.ContextManager` (or a whole
``transaction()`` block) runs through one :class:`Change`:

1. before a path is first touched, its current bytes are snapshotted (in memory, and as a
   git blob named in the journal), so the change can be undone in this process or, after
   a crash, by the next one;
2. files are written, removed and renamed through :class:`~contextfs.files.RootFiles`;
3. :meth:`Change.commit` writes the commit's objects, marks the journal ``ready``, records
   the paths in git's index and only then moves the branch. A failure before the branch
   moved undoes the files (renames are reversed first, so undoing a delete needs no free
   space) and leaves HEAD, git's index and every file as they were.

:func:`recover` finishes or undoes the changes a killed process left (see
:mod:`contextfs.journal`), with their original author, session and message.
:class:`Writes` is the write side of one root: its lock, recovery, and the Change that
each mutating call opens or joins. A root opened read-only never makes one, so reading
processes never import this module.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import clock, faults, paths
from .errors import ContextFSError, InvalidPathError, NotFoundError, VersioningError
from .files import TMP_SUFFIX, RootFiles, io_error, typed_io
from .journal import Journal, JournalFile, Pending
from .provenance import Provenance, email_of
from .rendering import clean_line

if TYPE_CHECKING:
    from .state import RootLock
    from .versioning import GitStore, Prepared

__all__ = ["Change", "Header", "Writes", "commit_message", "recover"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Header:
    """Who makes a change and how its commit will read (journaled before anything else)."""

    op: str
    subject: str
    actor: str
    email: str
    session: str | None
    turn: str | None

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "subject": self.subject, "actor": self.actor, "email": self.email,
                "session": self.session, "turn": self.turn, "pid": os.getpid(), "started": time.time()}


class Change:
    """The file operations of one commit (or one transaction), with their undo."""

    def __init__(self, files: RootFiles, git: GitStore, journal: Journal, header: Header,
                 trailers: Mapping[str, str] | None = None) -> None:
        self.files = files
        self.git = git
        self.journal = journal
        self.header = header
        self.trailers = dict(trailers or {})
        self.ops: list[str] = []
        self.before: dict[str, bytes | None] = {}
        self.after: dict[str, bytes | None] = {}
        self.executable: set[str] = set()
        self._renames: list[tuple[str, str]] = []
        self._external: set[str] = set()
        self._journal: JournalFile | None = None
        self.depth = 0
        #: A commit built elsewhere (a merge, a fast-forward) to publish instead of one built
        #: from HEAD and the changed paths; its tree must hold exactly what was written.
        self.prepared: Prepared | None = None

    # ------------------------------------------------------------ bookkeeping
    def merge_trailers(self, extra: Mapping[str, str] | None) -> None:
        """Add a nested call's trailers; several values for one key are all kept."""
        for key, value in (extra or {}).items():
            have = [v.strip() for v in self.trailers.get(key, "").split(",") if v.strip()]
            if value and value not in have:
                have.append(value)
            self.trailers[key] = ", ".join(have)

    def _record(self, entry: dict[str, Any], *, durable: bool = True) -> None:
        if self._journal is None:
            try:
                self._journal = self.journal.begin(self.header.to_json())
            except OSError as exc:
                raise io_error("the contextfs journal", exc) from None
        try:
            self._journal.record(entry, durable=durable)
        except OSError as exc:
            raise io_error("the contextfs journal", exc) from None

    def touch(self, rel: str) -> None:
        """Snapshot ``rel`` before its first change (journaled before anything is written)."""
        if rel in self.before:
            return
        data = self.files.read(rel)
        st = self.files.lstat(rel) if data is not None else None
        blob = self.git.store_blob(data) if data is not None else None
        if blob is not None:
            self.git.objects.flush()  # the snapshot must outlive a power cut before it is needed
        # The line is durable before the path is touched, for a new path too: a power cut
        # can keep the new file (it is flushed when written) and lose an unflushed line,
        # and recovery would then take the half-made change for a person's edit.
        self._record({"touch": rel, "blob": blob})
        faults.point("change.touched")
        self.before[rel] = data
        self.after[rel] = data
        if st is not None and st.st_mode & 0o100:
            self.executable.add(rel)

    def adopt(self, rel: str, data: bytes | None, *, executable: bool = False) -> None:
        """Commit what a person left on disk at ``rel`` (None: they deleted it).

        Nothing is written, and undoing the change never touches the path: it is theirs.
        """
        blob = self.git.store_blob(data) if data is not None else None
        self._record({"adopt": rel, "blob": blob})
        self._external.add(rel)
        self.after[rel] = data
        if executable:
            self.executable.add(rel)

    # ------------------------------------------------------------ operations
    def write(self, rel: str, data: bytes, *, max_bytes: int | None = None) -> None:
        self.touch(rel)
        self.files.write(rel, data, max_bytes=max_bytes)
        self.after[rel] = data
        faults.point("change.written")

    def remove(self, rel: str) -> None:
        self.touch(rel)
        self.files.remove(rel)
        self.after[rel] = None

    def rename(self, src: str, dst: str, moved: list[str]) -> None:
        """Move the file or folder ``src`` to ``dst``; ``moved`` lists the files under ``src``."""
        pairs = [(rel, dst + rel[len(src):]) for rel in moved]
        for old, new in pairs:
            self.touch(old)
            self.touch(new)
        self._record({"rename": [src, dst]})
        self.files.rename(src, dst)
        self._renames.append((src, dst))
        self.files.prune(src.rpartition("/")[0])
        faults.point("change.renamed")
        contents = {old: self.after[old] for old, _new in pairs}
        for old, new in pairs:
            self.after[new] = contents[old]
            self.after[old] = None
            if old in self.executable:
                self.executable.add(new)

    def changes(self) -> dict[str, bytes | None]:
        """Paths whose bytes differ from before the change, with their new bytes."""
        return {rel: data for rel, data in self.after.items()
                if rel in self._external or data != self.before.get(rel)}

    # ------------------------------------------------------------ undo
    def rollback(self) -> None:
        """Put every touched path back; nothing about the change stays on disk."""
        undo(self.files, self._renames, self._own_before())
        self._finish()

    def _own_before(self) -> dict[str, bytes | None]:
        return {rel: data for rel, data in self.before.items() if rel not in self._external}

    def _finish(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    # ------------------------------------------------------------ commit
    def commit(self, message: str, *, when: float,
               notify: Callable[[list[str]], None] | None = None) -> str | None:
        """Commit what changed; None (and no commit) when nothing did."""
        changed = self.changes()
        if not changed and self.prepared is None:
            self._finish()
            return None
        execs = {rel for rel in changed if rel in self.executable}
        try:
            prepared = self.prepared or self.git.prepare(changed, message, self.header.actor, self.header.email,
                                                         when=when, executable=execs)
            if prepared is None:  # the tree is unchanged (e.g. a file written back as it was)
                self.git.record(sorted(changed))
                self._finish()
                return None
            faults.point("commit.prepared")
            blobs = {rel: (None if data is None else self.git.store_blob(data)) for rel, data in changed.items()}
            self._record({"ready": {"parent": prepared.parent, "sha": prepared.sha, "changes": blobs,
                                    "message": message, "when": when, "executable": sorted(execs)}})
            faults.point("commit.ready")
            self._record({"indexing": time.time()})
            faults.point("record.locked")
            self.git.record(sorted(changed))
            faults.point("commit.recorded")
            self._record({"ref": str(self.git.refs.ref_path()), "t": time.time()})
            self.git.publish(prepared)
        except BaseException:
            # Nothing was published: undo the files, then bring git's index back in line.
            undo(self.files, self._renames, self._own_before())
            with contextlib.suppress(ContextFSError):
                self.git.record(sorted(changed))
            self._finish()
            raise
        faults.point("commit.published")
        self._finish()
        if notify is not None:
            notify(sorted(changed))
        return prepared.sha


def commit_message(change: Change, subject: str, prov: Any) -> str:
    """``<op>: <path>`` subject, the list of operations, then the ``Contextfs-*`` trailers."""
    body = "\n".join(f"- {op}" for op in change.ops[:50])
    trailers = {"Contextfs-Op": change.header.op, "Contextfs-Machine": change.git.machine}
    if prov.session:
        trailers["Contextfs-Session"] = prov.session
    if prov.turn:
        trailers["Contextfs-Turn"] = prov.turn
    for key, value in change.trailers.items():
        if value:
            trailers[key] = " ".join(str(value).split())[:120]
    message = " ".join(str(subject).split())[:200] + "\n\n"
    if body:
        message += body + "\n\n"
    return message + "".join(f"{k}: {v}\n" for k, v in trailers.items())


class Writes:
    """The write side of one root: the write lock, recovery, and one Change per call or transaction.

    Every mutating call runs inside :meth:`change`, which joins the Change of an open
    :meth:`transaction` (per thread) or makes its own commit.
    """

    def __init__(self, files: RootFiles, git: GitStore, journal: Journal, lock: RootLock, *,
                 provenance: Callable[[], Provenance], notify: Callable[[list[str]], None]) -> None:
        self.files = files
        self.git = git
        self.journal = journal
        self.lock = lock
        self._provenance = provenance
        self._notify = notify
        self._local = threading.local()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The write lock, with anything a killed writer left finished or undone first."""
        with self.lock.held():
            if getattr(self._local, "txn", None) is None:
                recover(self.files, self.git, self.journal)
            yield

    def _start(self, op: str, subject: str, trailers: Mapping[str, str] | None) -> Change:
        self.git.check_writable()
        prov = self._provenance()
        header = Header(op=op, subject=clean_line(subject), actor=prov.actor, email=email_of(prov.actor),
                        session=prov.session, turn=prov.turn)
        return Change(self.files, self.git, self.journal, header, trailers)

    def _commit(self, change: Change, subject: str) -> str | None:
        message = commit_message(change, subject, self._provenance())
        return change.commit(message, when=clock.now().timestamp(), notify=self._notify)

    @contextlib.contextmanager
    def change(self, op: str, subject_path: str, trailers: Mapping[str, str] | None) -> Iterator[Change]:
        with self.locked(), typed_io(subject_path):
            txn: Change | None = getattr(self._local, "txn", None)
            if txn is not None:
                txn.ops.append(f"{op}: {subject_path}")
                txn.merge_trailers(trailers)
                yield txn
                return
            change = self._start(op, f"{op}: {subject_path}", trailers)
            change.ops.append(f"{op}: {subject_path}")
            try:
                yield change
            except BaseException:
                change.rollback()
                raise
            self._commit(change, f"{op}: {subject_path}")

    @contextlib.contextmanager
    def transaction(self, message: str, op: str, trailers: Mapping[str, str] | None) -> Iterator[None]:
        subject = clean_line(message) or "transaction"
        with self.locked(), typed_io(subject):
            outer: Change | None = getattr(self._local, "txn", None)
            if outer is not None:
                outer.merge_trailers(trailers)
                yield
                return
            txn = self._local.txn = self._start(op, subject, trailers)
            try:
                yield
            except BaseException:
                self._local.txn = None
                txn.rollback()
                raise
            self._local.txn = None
            self._commit(txn, subject)


def undo(files: RootFiles, renames: list[tuple[str, str]], before: Mapping[str, bytes | None]) -> None:
    """Reverse renames (newest first), then give every path its bytes from ``before``.

    Renames go first so that undoing a delete moves the file back instead of writing it
    again, which would need free space on a full disk.
    """
    for src, dst in reversed(renames):
        try:
            if files.kind(dst) is not None and files.kind(src) is None:
                files.rename(dst, src)
        except ContextFSError as exc:
            log.warning("could not move %s back to %s: %s", dst, src, exc)
    for rel, data in before.items():
        try:
            current = files.read(rel)
        except InvalidPathError:
            continue  # a folder is there now: never removed wholesale
        except ContextFSError as exc:
            log.warning("could not read %s while undoing a change: %s", rel, exc)
            continue
        if current == data:
            continue
        try:
            if data is None:
                files.remove(rel)
            else:
                files.write(rel, data)
        except ContextFSError as exc:
            log.error("could not restore %s while undoing a change: %s", rel, exc)
    for rel in before:
        files.prune(rel.rpartition("/")[0])


# ---------------------------------------------------------------- recovery
def _gated(files: RootFiles, rel: object) -> str | None:
    """A path read back from a journal, only if it passes the path gate."""
    try:
        return paths.check(files.root, rel, allow_internal=True)
    except InvalidPathError:
        log.error("the journal names an invalid path %r; ignoring it", rel)
        return None


def recover(files: RootFiles, git: GitStore, journal: Journal) -> list[str]:
    """Finish or undo every change a dead process left; returns a line per change handled.

    The caller holds the root's write lock, so every journal found belongs to a process
    that died (or to a call of this one that could not even undo itself). Running this
    twice is harmless: a handled journal is deleted last.
    """
    done: list[str] = []
    for pending in journal.pending():
        try:
            _reclaim_locks(git, pending)
            ready = pending.ready
            if ready is not None:
                sha = _roll_forward(files, git, pending, ready)
                done.append(f"finished {pending.header.get('subject', '?')} as {sha[:12]}")
            else:
                _roll_back(files, git, pending)
                done.append(f"undid {pending.header.get('subject', '?')}")
            _remove_temporaries(files, pending)
        except ContextFSError as exc:
            log.error("could not recover the change journaled in %s: %s", pending.path, exc)
            continue
        with contextlib.suppress(OSError):
            pending.path.unlink()
    if done:
        git.objects.remove_leftovers()
        for line in done:
            log.warning("recovered an interrupted change: %s", line)
    return done


def _reclaim_locks(git: GitStore, pending: Pending) -> None:
    """Remove git lock files this journal's dead process created (never anyone else's)."""
    candidates = [(git.git_dir / "index.lock", mark.get("indexing")) for mark in pending.marks("indexing")]
    for mark in pending.marks("ref"):
        candidates.append((os.fspath(mark["ref"]) + ".lock", mark.get("t")))
    for path, since in candidates:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if isinstance(since, (int, float)) and st.st_mtime >= since - 1.0:
            log.warning("removing %s, left by a contextfs process that was killed", path)
            with contextlib.suppress(OSError):
                os.unlink(path)


def _roll_forward(files: RootFiles, git: GitStore, pending: Pending, ready: dict[str, Any]) -> str:
    header = pending.header
    changes: dict[str, str | None] = {}
    for rel, blob in dict(ready["changes"]).items():
        gated = _gated(files, rel)
        if gated is not None:
            changes[gated] = blob
    sha, parent = ready["sha"], ready.get("parent")
    head = git.head()
    if head != sha and not (head is not None and _is_ancestor(git, sha, head)):
        if head == parent:
            # Here, not at the top: the repository module brings GitPython (~37 ms), which a
            # root opened read-only imports this module without needing.
            from .versioning import Prepared

            prepared = Prepared(parent=parent, sha=sha, paths=tuple(changes),
                                subject=str(ready["message"]).splitlines()[0][:200],
                                signature=f"{header['actor']} <{header['email']}> {int(ready['when'])} +0000".encode())
        else:
            rebuilt = git.prepare(changes, ready["message"], header["actor"], header["email"],
                                  when=ready["when"], executable=set(ready.get("executable") or ()))
            if rebuilt is None:
                return head or sha
            prepared = rebuilt
        git.record(sorted(changes))
        git.publish(prepared)
        sha = prepared.sha
    else:
        git.record(sorted(changes))
    return sha


def _is_ancestor(git: GitStore, ancestor: str, head: str) -> bool:
    try:
        git.git("merge-base", "--is-ancestor", ancestor, head)
        return True
    except VersioningError:
        return False


def _roll_back(files: RootFiles, git: GitStore, pending: Pending) -> None:
    renames = []
    for mark in pending.marks("rename"):
        src, dst = _gated(files, mark["rename"][0]), _gated(files, mark["rename"][1])
        if src is not None and dst is not None:
            renames.append((src, dst))
    before: dict[str, bytes | None] = {}
    for mark in pending.marks("touch"):
        rel, blob = _gated(files, mark["touch"]), mark.get("blob")
        if rel is None or rel in before:
            continue
        try:
            before[rel] = git.read_blob(blob) if blob else None
        except (ContextFSError, ValueError):
            log.error("the journal names a blob %s for %s that git does not have; leaving the file as it is", blob, rel)
    undo(files, renames, before)


def _remove_temporaries(files: RootFiles, pending: Pending) -> None:
    """Temporary files of atomic writes the dead process was in the middle of."""
    folders = {rel.rpartition("/")[0] for m in pending.marks("touch") if (rel := _gated(files, m["touch"]))}
    for folder in folders:
        try:
            names = files.listdir(folder)
        except (ContextFSError, NotFoundError):
            continue
        for name in names:
            if name.startswith(".") and name.endswith(TMP_SUFFIX):
                with contextlib.suppress(ContextFSError):
                    files.remove(f"{folder}/{name}" if folder else name)
