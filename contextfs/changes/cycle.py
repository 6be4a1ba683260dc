"""The commit cycle of one root: its write lock, one change or a transaction of many, the commit.

:class:`Writes` is what :class:`~contextfs.parts.RootParts` drives: every mutating call
takes the write lock (finishing or undoing what a killed writer left first), makes one
:class:`~.transaction.Change` (or joins the open transaction), and commits it, each commit
judged by the commit gate (:mod:`contextfs.gate.history`) before any object of it is
written, or undoes it on an exception.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from .. import clock
from ..files.confined import RootFiles
from ..files.fileerrors import typed_io
from ..provenance import Provenance, email_of
from .adoption import Seen
from .commit_text import Header, commit_message
from .journal import Journal
from .recovery import OutsideCheck, recover
from .rendering import clean_line

if TYPE_CHECKING:
    from ..files.state import RootLock
    from ..versioning import GitStore

from .transaction import Change

__all__ = ["Writes"]

log = logging.getLogger(__name__)


class Writes:
    """The write side of one root: the write lock, recovery, and one Change per call or transaction.

    Every mutating call runs inside :meth:`change`, which joins the Change of an open
    :meth:`transaction` (per thread) or makes its own commit. ``outside_actor`` is who
    outside versions are attributed to; ``check_outside`` turns the comparison that finds
    them off (only the commit benchmark does, to measure what it costs). ``gate`` is the commit
    gate; ``outside_check`` its check of an outside version an undone change commits on its own.
    """

    def __init__(
        self,
        files: RootFiles,
        git: GitStore,
        journal: Journal,
        lock: RootLock,
        *,
        provenance: Callable[[], Provenance],
        notify: Callable[[list[str]], None],
        outside_actor: str = "human",
        gate: Callable[[Change, str], None] | None = None,
        outside_check: OutsideCheck | None = None,
    ) -> None:
        self.files = files
        self.git = git
        self.journal = journal
        self.lock = lock
        self.outside_actor = outside_actor
        self.check_outside = True
        self.seen = Seen()
        self._provenance = provenance
        self._notify = notify
        self._gate = gate
        self._outside_check = outside_check
        self._local = threading.local()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The write lock, with anything a killed writer left finished or undone first."""
        with self.lock.held():
            if getattr(self._local, "txn", None) is None:
                recover(self.files, self.git, self.journal, check=self._outside_check)
            yield

    def _start(self, op: str, subject: str, trailers: Mapping[str, str] | None) -> Change:
        """A new change; a git command holding git's index (a person's ``git commit`` waiting
        for its message) is waited for first, for a bounded time: nothing is written under it."""
        self.git.check_writable()
        self.git.wait_for_index()
        prov = self._provenance()
        header = Header(
            op=op,
            subject=clean_line(subject),
            actor=prov.actor,
            email=email_of(prov.actor),
            session=prov.session,
            turn=prov.turn,
        )
        return Change(
            self.files,
            self.git,
            self.journal,
            header,
            trailers,
            outside_author=self.outside_actor,
            seen=self.seen if self.check_outside else None,
            outside_check=self._outside_check,
        )

    def _commit(self, change: Change, subject: str) -> str | None:
        message = commit_message(change, subject, self._provenance())
        # The gate runs inside the commit cycle: once the staged files are in place (saves
        # found under them adopted, to be judged too) and before any object of the commit.
        return change.commit(
            message, when=clock.now().timestamp(), notify=self._notify, gate=self._gate
        )

    @contextlib.contextmanager
    def change(
        self, op: str, subject_path: str, trailers: Mapping[str, str] | None
    ) -> Iterator[Change]:
        with self.locked(), typed_io(subject_path):
            txn: Change | None = getattr(self._local, "txn", None)
            if txn is not None:
                txn.ops.append(f"{op}: {subject_path}")
                txn.merge_trailers(trailers)
                yield txn
                return
            change = self._start(op, f"{op}: {subject_path}", trailers)
            change.standalone = True
            change.ops.append(f"{op}: {subject_path}")
            try:
                yield change
            except BaseException:
                change.rollback()
                raise
            self._commit(change, f"{op}: {subject_path}")

    @contextlib.contextmanager
    def transaction(
        self, message: str, op: str, trailers: Mapping[str, str] | None
    ) -> Iterator[None]:
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
