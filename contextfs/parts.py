"""An open root's parts: what the concern modules are given, never the façade.

:class:`RootParts` holds what one open root is made of — its folder, the confined file
layer (:mod:`contextfs.files.confined`), the derived-state folder under ``.git/``, the
repository, the commit cycle with its lock and journal (:mod:`contextfs.changes.cycle`),
the path gate and the write gate, who is writing, the change listeners and the marking of
library-owned log writes. :class:`~contextfs.ContextManager` makes one and keeps it as
``ctx.parts``; the concern modules (writing, trash, history, outside edits, review, sharing,
the search index) take it as their argument, so none of them imports the façade, and the
layers above the core reach the plumbing through ``ctx.parts`` rather than the user API.

Nothing here imports a module that takes a ``RootParts``: the concern modules sit above it.
A read-only open imports neither GitPython (~37 ms) nor the write side (the write gate,
config, the commit cycle and its lock: ~10 ms); the calls needing them do.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .changes.adoption import SyncReport
from .changes.markers import refuse_conflicted
from .document import Document, load
from .errors import VersioningError
from .files import paths as paths_gate
from .files.confined import TMP_SUFFIX, RootFiles
from .files.state import StateDir
from .provenance import Provenance, Writers

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from .changes.cycle import Writes
    from .changes.transaction import Change
    from .gate.guard import WriteGuard
    from .review.branch import ReviewHandle
    from .versioning import GitStore

__all__ = ["HasParts", "RootParts", "parts_of"]

log = logging.getLogger(__name__)


class RootParts:
    """The parts of one open root (see the module docstring); made by ``ContextManager``."""

    def __init__(
        self,
        root: Path,
        git_dir: Path,
        prefix: str,
        *,
        git: GitStore | None,
        writers: Writers,
        max_file_bytes: int,
        read_only: bool,
        durable: bool,
        outside_actor: str,
        review: ReviewHandle | None,
        commit_gate: Callable[[RootParts, Change, str], None] | None = None,
    ) -> None:
        self.root = root
        self.files = RootFiles(root, durable=durable)
        self.state = StateDir(git_dir, prefix)
        self.max_file_bytes = max_file_bytes
        self.read_only = read_only
        self.durable = durable
        self.outside_actor = outside_actor
        #: The review branch this root is a work tree of (review mode), else None.
        self.review = review
        #: What the last sync of outside edits committed and held back.
        self.last_sync = SyncReport()
        self._git = git
        self._writers = writers
        self._local = threading.local()
        #: The search index's queue: told first, and a failure to queue fails the write.
        self.index_notify: Callable[[list[str]], None] | None = None
        self._listeners: list[Callable[[list[str]], None]] = []
        self._read_listeners: list[Callable[[str], None]] = []
        self._guard_cache: tuple[object, WriteGuard] | None = None
        self._writes: Writes | None = None
        if not read_only:
            # The journal and the commit cycle: writes only.
            from .changes.cycle import Writes
            from .changes.journal import Journal  # (see above)

            self._writes = Writes(
                self.files,
                self.git,
                Journal(self.state.file("journal"), durable=durable),
                self.state.lock("lock"),
                provenance=lambda: self.current_provenance,
                notify=self.notify,
                outside_actor=outside_actor,
                gate=None
                if commit_gate is None
                else (lambda change, message: commit_gate(self, change, message)),
                # The same check of a person's version the commit gate makes, for those an
                # undone change commits on its own.
                outside_check=lambda rel, data: self.guard().check_outside(
                    rel, data, actor=self.outside_actor
                ),
            )

    # ------------------------------------------------------------ the repository
    @property
    def git(self) -> GitStore:
        """The repository gate (opened on first use by a read-only root)."""
        if self._git is None:
            from .versioning import GitStore  # GitPython: ~37 ms, for writes and history only

            self._git = GitStore(self.root, create=False, durable=self.durable)
        return self._git

    def head(self) -> str | None:
        """HEAD's commit id (None before the first commit), read from the refs without GitPython."""
        if self._git is not None:
            return self._git.head()
        from .versioning.refs import Refs  # no GitPython: what a search checks before it runs

        return Refs.of(self.state.git_dir).head()

    @property
    def config(self) -> dict[str, Any]:
        """The parsed ``.contextfs/config.toml`` ({} when absent)."""
        from .config import load_config  # tomllib and the checks: ~2.5 ms a plain read never needs

        return load_config(self.files)

    # ------------------------------------------------------------ who is writing
    @property
    def current_provenance(self) -> Provenance:
        return self._writers.current

    @property
    def session(self) -> str | None:
        return self.current_provenance.session

    @property
    def chosen_actor(self) -> str | None:
        """The actor a person set (``actor=`` or an enclosing ``provenance()``), else None."""
        return self._writers.chosen_actor

    def provenance(
        self, *, actor: str | None = None, session: str | None = None, turn: str | int | None = None
    ) -> AbstractContextManager[Provenance]:
        """Change who is writing for the duration of a block (nests)."""
        return self._writers.push(actor, session, turn)

    # ------------------------------------------------------------ the path gate, reading
    def gate(self, raw: object, *, write: bool = False) -> str:
        """The path gate every call uses: ``raw`` as a root-relative path, or InvalidPathError.

        Hostile input (traversal, absolute paths, ``.git``, symlinks, reserved names) is
        refused before any I/O; an existing file's on-disk spelling is returned.
        """
        rel = paths_gate.check(self.root, raw, write=write)
        return self.files.disk_rel(rel)

    def load(self, rel: str) -> Document | None:
        """The document at an already-gated path, or None; ConflictError mid-merge (git's markers)."""
        data = self.files.read(rel)
        return None if data is None else load(refuse_conflicted(self.state.git_dir, rel, data), rel)

    def read_raw(self, path: str) -> bytes | None:
        """The file's bytes as stored (frontmatter included), or None."""
        return self.files.read(self.gate(path))

    def is_folder(self, path: str) -> bool:
        """True when ``path`` is an existing folder (the root itself included)."""
        rel = paths_gate.check(self.root, path, allow_root=True)
        return not rel or self.files.kind(self.files.disk_rel(rel)) == "dir"

    def list_files(self, path: str = "") -> list[str]:
        """Relative paths of the files under ``path``, sorted; [] for a missing folder.

        Internal folders (``.git``, ``.trash``, ``.contextfs``), temporary files and the
        managed files at the top are left out.
        """
        rel = paths_gate.check(self.root, path, allow_root=True)
        if rel and self.files.kind(rel) != "dir":
            return []
        out = []
        for st in self.files.walk(self.files.disk_rel(rel), skip_top=paths_gate.INTERNAL_DIRS):
            name = st.rel.rsplit("/", 1)[-1]
            if name.endswith(TMP_SUFFIX) or (
                name in paths_gate.MANAGED_FILES and "/" not in st.rel
            ):
                continue
            out.append(st.rel)
        return sorted(out)

    def is_executable(self, rel: str) -> bool:
        """True when the file at an already-gated path has its owner's execute bit."""
        st = self.files.lstat(rel)
        return bool(st is not None and st.st_mode & 0o100)

    # ------------------------------------------------------------ listeners
    def add_listener(self, callback: Callable[[list[str]], None]) -> None:
        """Call ``callback(paths)`` after every commit (the search index, caches above the core)."""
        self._listeners.append(callback)

    def add_read_listener(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(path)`` whenever a file is read through ``read``/``get``."""
        self._read_listeners.append(callback)

    def notify(self, changed: list[str]) -> None:
        """Tell the search index, then the change listeners (a failing listener never breaks a write)."""
        if self.index_notify is not None:
            self.index_notify(changed)
        for callback in self._listeners:
            try:
                callback(changed)
            except Exception:  # a cache must never break a write
                log.exception("a change listener failed")

    def touched(self, rel: str) -> None:
        """Tell the read listeners; a failing listener never breaks a read."""
        for callback in self._read_listeners:
            try:
                callback(rel)
            except Exception:  # access tracking must never break a read
                log.debug("a read listener failed for %s", rel, exc_info=True)

    # ------------------------------------------------------------ the commit cycle
    def writer(self, op: str = "lock") -> Writes:
        """The commit cycle, after the checks a write of ``op`` must pass (read-only, review)."""
        if self._writes is None:
            raise VersioningError(
                f"{self.root} was opened read-only; open it without read_only=True to write"
            )
        if self.review is not None or (
            op != "lock" and self.current_provenance.actor.startswith("agent")
        ):
            from .review.branch import check_write  # agents and review mode only

            check_write(self.review, self.files, self.current_provenance.actor, op)
        return self._writes

    def write_lock(self) -> AbstractContextManager[None]:
        """The root's write lock (every process; a killed writer's change finished or undone
        first), for steps that must read and commit as one. Reads never need it."""
        return self.writer().locked()

    def change(
        self, op: str, subject_path: str, *, trailers: Mapping[str, str] | None = None
    ) -> AbstractContextManager[Change]:
        """One mutating step: joins the open transaction or commits.

        The yielded :class:`~contextfs.changes.transaction.Change` writes, removes and
        renames gated paths; an exception undoes them, otherwise one commit
        ``<op>: <subject>`` is made (none when nothing changed).
        """
        return self.writer(op).change(op, subject_path, trailers)

    def transaction(
        self, message: str, op: str = "transaction", trailers: Mapping[str, str] | None = None
    ) -> AbstractContextManager[None]:
        """Many changes, one commit; on an exception every file is undone."""
        return self.writer(op).transaction(message, op, trailers)

    # ------------------------------------------------------------ the write gate
    def guard(self) -> WriteGuard:
        """The write gate's content checks, as ``config.toml`` sets them (re-read when it changes)."""
        from .config import CONFIG_PATH  # tomllib and the checks: ~2.5 ms a plain read never needs
        from .gate.guard import WriteGuard  # the secret and poisoning scanners: ~5 ms, writes only

        folder = self.files.kind(".contextfs")
        linked = folder == "link" or (folder == "dir" and self.files.kind(CONFIG_PATH) == "link")
        st = self.files.lstat(CONFIG_PATH) if folder == "dir" and not linked else None
        key = (st.st_mtime_ns, st.st_size) if st is not None else ("link" if linked else None)
        cached = self._guard_cache
        if cached is None or cached[0] != key:
            if linked:
                # Settings behind a link (a hostile clone) are never read; the defaults are the strict ones.
                log.warning(
                    "%s is a symlink; the write gate uses its default (strictest) settings",
                    CONFIG_PATH,
                )
                cached = (key, WriteGuard({}))
            else:
                cached = (key, WriteGuard(self.config))
            self._guard_cache = cached
        return cached[1]

    @property
    def in_library_write(self) -> bool:
        return bool(getattr(self._local, "library", 0))

    @contextlib.contextmanager
    def library_write(self) -> Iterator[None]:
        """Writes in this block come from a layer writing a log it owns (``*.jsonl``).

        Conversation logs and topic exchanges are appended by their own operations, which
        mark each line's trust themselves; a generic write of such a log by an agent (a
        tool call, say) is refused, so nobody can forge a logged message.
        """
        self._local.library = getattr(self._local, "library", 0) + 1
        try:
            yield
        finally:
            self._local.library -= 1


class HasParts(Protocol):
    """An open root that hands out its parts (``ContextManager.parts``)."""

    @property
    def parts(self) -> RootParts: ...


def parts_of(root: RootParts | HasParts) -> RootParts:
    """The parts of ``root``: a :class:`~contextfs.ContextManager` or its parts already.

    Objects people construct themselves (``Sessions(ctx)``, ``Review(ctx)``) take either,
    so they need not import the façade.
    """
    return root if isinstance(root, RootParts) else root.parts
