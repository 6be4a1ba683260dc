"""The ``ContextManager`` façade: CRUD, trash, history and transactions on one root.

Every mutating call follows the same cycle under the root's write lock: gate the paths, finish or
undo whatever a killed process left, snapshot what will be touched (committing first, as an outside
edit, any version there that contextfs has not committed), write through the confined file layer,
commit exactly those paths, then tell the search index and other listeners. Inside ``transaction()``
the commit is deferred to the end of the outermost block, and an exception undoes every file
instead. Reads take no lock: files are replaced atomically, so a reader sees one whole version and
never waits for a writer.

The concerns live in their own modules: :mod:`~contextfs.files` (confined I/O),
:mod:`~contextfs.transaction` and :mod:`~contextfs.writes` (snapshots, journal, commit),
:mod:`~contextfs.recovery`, :mod:`~contextfs.trash` (soft delete), :mod:`~contextfs.history` (log,
diff, revert), :mod:`~contextfs.sync` (edits made outside), :mod:`~contextfs.versioning` (git).

A read-only open imports neither GitPython (~37 ms), history and trash (~4 ms) nor the write
side (the write gate, config, the commit cycle and its lock: ~10 ms); the methods needing them do.
"""

from __future__ import annotations

import builtins  # annotations in ContextManager, whose list() method shadows the builtin
import contextlib
import logging
import os
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import clock, managed, paths
from .document import Document, load
from .errors import ContentError, InvalidArgumentError, NotFoundError, VersioningError
from .files import TMP_SUFFIX, RootFiles
from .fixes import Fix
from .folders import make_private_folders
from .lazy import exports
from .provenance import Provenance, Writers, check_actor, check_token
from .state import StateDir, locate_root
from .sync import SyncReport, refuse_conflicted
from .sync import sync as sync_outside_edits

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from .guard import WriteGuard
    from .history import HistoryEntry, RevertReport
    from .remote import Remote
    from .review_branch import ReviewHandle
    from .search import SearchHit, SearchIndex
    from .transaction import Change
    from .trash import TrashEntry
    from .versioning import GitStore
    from .writes import Writes

__all__ = ["ContextManager", "HistoryEntry", "Provenance", "RevertReport", "SyncReport"]


# Re-exported on first use, with the history module (see above).
__getattr__, __dir__ = exports(__name__, {"HistoryEntry": "contextfs.history", "RevertReport": "contextfs.history"})

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 4 * 1024 * 1024


class ContextManager:
    """A context root: plain markdown files, a git commit for every change.

    >>> ctx = ContextManager("./context")            # doctest: +SKIP
    >>> ctx.write("memory/facts.md", "- Database: PostgreSQL 16")  # doctest: +SKIP

    ``read_only=True`` opens an existing root without ever creating, syncing or
    committing anything and without taking the write lock (what the CLI's reading
    commands use); writes then raise VersioningError.

    ``durable=False`` skips every fsync (files, journal, git objects, the branch): a
    crash of the process still loses nothing, a power cut may. Meant for benchmarks and
    throw-away roots; the default makes an acknowledged write survive a power cut.
    ``review``: see :func:`contextfs.review_branch.enter`.

    ``actor`` (default ``agent``) is who writes; tool adapters built on the manager
    (``make_tools``, ``ContextStore``, the memory tool) write as it too when it was given.
    ``outside_actor`` (default ``human``) is who versions found on disk that contextfs did
    not commit — a person's saved edit — are attributed to when they are committed.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = "./context",
        *,
        actor: str | None = None,
        session: str | None = None,
        index: bool = True,
        sync: bool = True,
        own_repository: bool = False,
        max_file_bytes: int = MAX_FILE_BYTES,
        read_only: bool = False,
        durable: bool = True,
        review: bool | None = None,
        outside_actor: str = "human",
    ) -> None:
        base_actor = check_actor(actor if actor is not None else "agent")
        self.outside_actor = check_actor(outside_actor)
        if session is None:
            session = f"s-{clock.now().strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
        if not isinstance(max_file_bytes, int) or isinstance(max_file_bytes, bool) or max_file_bytes < 1:
            raise InvalidArgumentError(f"max_file_bytes must be a positive whole number, not {max_file_bytes!r}")
        self._writers = Writers(Provenance(actor=base_actor, session=check_token("session", session), turn=None),
                                actor_given=actor is not None)
        self._local = threading.local()
        self.max_file_bytes = max_file_bytes
        self.read_only = read_only
        self.durable = durable
        raw_root = Path(root)
        self.review: ReviewHandle | None = None
        if review or (review is None and base_actor.startswith("agent")):
            from .review_branch import enter  # review mode only (git worktree)
            self.review, raw_root, own_repository = enter(self, raw_root, review, own_repository)
        if read_only:
            self.root, git_dir, prefix = locate_root(raw_root)
            self._git: GitStore | None = None
        else:
            try:
                make_private_folders(raw_root)
            except OSError as exc:
                raise ContentError(f"cannot create the context root {raw_root} ({exc.strerror}); pick a writable folder") from None
            self.root = raw_root.resolve()
            from .versioning import GitStore  # GitPython: ~37 ms, for writes and history only
            self._git = GitStore(self.root, own_repository=own_repository, durable=durable)
            git_dir, prefix = self._git.git_dir, self._git.prefix
        self.files = RootFiles(self.root, durable=durable)
        self.state = StateDir(git_dir, prefix)
        self._index: SearchIndex | None = None
        self._listeners: list[Callable[[list[str]], None]] = []
        self._read_listeners: list[Callable[[str], None]] = []
        self.last_sync = SyncReport()
        self._writes: Writes | None = None
        if not read_only:
            from . import history_gate  # the commit gate: writes only
            from .journal import Journal  # the journal and the commit cycle: writes only
            from .writes import Writes
            self._writes = Writes(self.files, self.git, Journal(self.state.file("journal"), durable=durable),
                                  self.state.lock("lock"), provenance=lambda: self.current_provenance,
                                  notify=self._notify, outside_actor=self.outside_actor,
                                  gate=lambda change, message: history_gate.check(self, change, message))
            managed.ensure_root(self)
            if sync:
                self.sync()
        if index:
            self._open_index()

    # ------------------------------------------------------------ plumbing
    @property
    def git(self) -> GitStore:
        """The repository gate (for layers above the core, not for LLM input)."""
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

    @property
    def current_provenance(self) -> Provenance:
        return self._writers.current

    @property
    def session(self) -> str | None:
        return self.current_provenance.session

    @property
    def chosen_actor(self) -> str | None:
        """The actor a person set (``actor=`` here or in an enclosing ``provenance()``), else None."""
        return self._writers.chosen_actor

    def provenance(self, *, actor: str | None = None, session: str | None = None,
                   turn: str | int | None = None) -> AbstractContextManager[Provenance]:
        """Change who is writing for the duration of a block (nests)."""
        return self._writers.push(actor, session, turn)

    def add_listener(self, callback: Callable[[list[str]], None]) -> None:
        """Call ``callback(paths)`` after every commit (used by caches above the core)."""
        self._listeners.append(callback)

    def add_read_listener(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(path)`` whenever a file is read through ``read``/``get``."""
        self._read_listeners.append(callback)

    def gate(self, raw: object, *, write: bool = False) -> str:
        """The path gate every call uses: ``raw`` as a root-relative path, or InvalidPathError.

        Hostile input (traversal, absolute paths, ``.git``, symlinks, reserved names) is
        refused before any I/O; an existing file's on-disk spelling is returned.
        """
        rel = paths.check(self.root, raw, write=write)
        return self.files.disk_rel(rel)

    def _writer(self, op: str = "lock") -> Writes:
        if self._writes is None:
            raise VersioningError(f"{self.root} was opened read-only; open it without read_only=True to write")
        if self.review is not None or (op != "lock" and self.current_provenance.actor.startswith("agent")):
            from .review_branch import check_write  # agents and review mode only
            check_write(self, op)
        return self._writes

    def write_lock(self) -> AbstractContextManager[None]:
        """The root's write lock (every process; a killed writer's change finished or undone
        first), for layers that must read and commit as one step. Reads never need it."""
        return self._writer().locked()

    def is_executable(self, rel: str) -> bool:
        """True when the file at an already-gated path has its owner's execute bit."""
        st = self.files.lstat(rel)
        return bool(st is not None and st.st_mode & 0o100)

    # ------------------------------------------------------------ commits
    def _notify(self, changed: list[str]) -> None:
        if self._index is not None:
            self._index.notify(changed)
        for callback in self._listeners:
            try:
                callback(changed)
            except Exception:  # a cache must never break a write
                log.exception("a change listener failed")

    def change(self, op: str, subject_path: str, *,
               trailers: Mapping[str, str] | None = None) -> AbstractContextManager[Change]:
        """One mutating step for layers above the core: joins the open transaction or commits.

        The yielded :class:`~contextfs.transaction.Change` writes, removes and renames
        gated paths; an exception undoes them, otherwise one commit ``<op>: <subject>``
        is made (none when nothing changed).
        """
        return self._writer(op).change(op, subject_path, trailers)

    @contextlib.contextmanager
    def transaction(
        self, message: str, *, op: str = "transaction", trailers: Mapping[str, str] | None = None
    ) -> Iterator[ContextManager]:
        """Group many calls into one commit; on an exception undo them and commit nothing."""
        with self._writer(op).transaction(message, op, trailers):
            yield self

    # ------------------------------------------------------------ reading
    def load(self, rel: str) -> Document | None:
        """The document at an already-gated path, or None; ConflictError mid-merge (git's markers)."""
        data = self.files.read(rel)
        return None if data is None else load(refuse_conflicted(self.state.git_dir, rel, data), rel)

    def _touched(self, rel: str) -> None:
        """Tell the read listeners; a failing listener never breaks a read."""
        for callback in self._read_listeners:
            try:
                callback(rel)
            except Exception:  # access tracking must never break a read
                log.debug("a read listener failed for %s", rel, exc_info=True)

    def read(self, path: str) -> str | None:
        """The body of a file (frontmatter removed), or None when it does not exist."""
        rel = self.gate(path)
        doc = self.load(rel)
        self._touched(rel)
        return None if doc is None else doc.body

    def get(self, path: str) -> Document:
        """The whole document: path, metadata, body and version (its git blob id)."""
        rel = self.gate(path)
        doc = self.load(rel)
        if doc is None:
            raise NotFoundError(f"{rel} does not exist", path=rel, fix=Fix("list", rel.rpartition("/")[0]))
        self._touched(rel)
        return doc

    def read_raw(self, path: str) -> bytes | None:
        """The file's bytes as stored (frontmatter included), or None."""
        return self.files.read(self.gate(path))

    def free_path(self, stem: str, suffix: str = ".md") -> str:
        """``stem + suffix``, or ``stem-2 + suffix``, ``-3``... whichever does not exist yet."""
        path, n = f"{stem}{suffix}", 2
        while self.files.kind(self.gate(path)) is not None:
            path, n = f"{stem}-{n}{suffix}", n + 1
        return path

    def exists(self, path: str) -> bool:
        return self.files.kind(self.gate(path)) == "file"

    def is_folder(self, path: str) -> bool:
        """True when ``path`` is an existing folder (the root itself included)."""
        rel = paths.check(self.root, path, allow_root=True)
        return not rel or self.files.kind(self.files.disk_rel(rel)) == "dir"

    def list(self, path: str = "") -> builtins.list[str]:
        """Relative paths of the files under ``path``, sorted; [] for a missing folder."""
        rel = paths.check(self.root, path, allow_root=True)
        if rel and self.files.kind(rel) != "dir":
            return []
        out = []
        for st in self.files.walk(self.files.disk_rel(rel), skip_top=paths.INTERNAL_DIRS):
            name = st.rel.rsplit("/", 1)[-1]
            if name.endswith(TMP_SUFFIX) or (name in paths.MANAGED_FILES and "/" not in st.rel):
                continue
            out.append(st.rel)
        return sorted(out)

    # ------------------------------------------------------------ writing
    def guard(self) -> WriteGuard:
        """The write gate's content checks, as ``config.toml`` sets them (re-read when it changes)."""
        from .config import CONFIG_PATH  # tomllib and the checks: ~2.5 ms a plain read never needs
        from .guard import WriteGuard  # the secret and poisoning scanners: ~5 ms, writes only
        folder = self.files.kind(".contextfs")
        linked = folder == "link" or (folder == "dir" and self.files.kind(CONFIG_PATH) == "link")
        st = self.files.lstat(CONFIG_PATH) if folder == "dir" and not linked else None
        key = (st.st_mtime_ns, st.st_size) if st is not None else ("link" if linked else None)
        cached = getattr(self, "_guard_cache", None)
        if cached is None or cached[0] != key:
            if linked:
                # Settings behind a link (a hostile clone) are never read; the defaults are the strict ones.
                log.warning("%s is a symlink; the write gate uses its default (strictest) settings", CONFIG_PATH)
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

    def write(self, path: str, content: str, metadata: Mapping[str, Any] | None = None, *,
              expected_version: str | None = None, trailers: Mapping[str, str] | None = None) -> Document:
        """Create or replace a file. ``metadata`` replaces the user keys; omitted, they are kept."""
        from . import writing  # with the write gate: ~5 ms to import, never needed to read
        return writing.write(self, path, content, metadata, expected_version=expected_version, trailers=trailers)

    def create(self, path: str, content: str, metadata: Mapping[str, Any] | None = None) -> Document:
        """Like ``write`` but refuses to overwrite (AlreadyExistsError)."""
        from . import writing  # with the write gate: ~5 ms to import, never needed to read
        return writing.create(self, path, content, metadata)

    def append(self, path: str, text: str, *, trailers: Mapping[str, str] | None = None) -> Document:
        """Add text at the end of a file's body (creating the file when missing)."""
        from . import writing  # with the write gate: ~5 ms to import, never needed to read
        return writing.append(self, path, text, trailers=trailers)

    def edit(self, path: str, old_text: str, new_text: str, *, expected_version: str | None = None) -> Document:
        """Replace ``old_text`` with ``new_text`` in the body; it must occur exactly once."""
        from . import writing  # with the write gate: ~5 ms to import, never needed to read
        return writing.edit(self, path, old_text, new_text, expected_version=expected_version)

    def update_metadata(self, path: str, changes_: Mapping[str, Any], *, expected_version: str | None = None) -> Document:
        """Merge keys into the frontmatter (None removes a key); the body stays byte-for-byte."""
        from . import writing  # with the write gate: ~5 ms to import, never needed to read
        return writing.update_metadata(self, path, changes_, expected_version=expected_version)

    def files_under(self, rel: str) -> builtins.list[str]:
        """Every file at or under an already-gated path (links never followed)."""
        from . import writing  # with the write gate: ~5 ms to import, never needed to read
        return writing.files_under(self, rel)

    def move(self, src: str, dst: str) -> str:
        """Rename a file or folder; the destination must be free (a case-only rename is fine)."""
        from . import writing  # with the write gate: ~5 ms to import, never needed to read
        return writing.move(self, src, dst)

    # ------------------------------------------------------------ trash
    def delete(self, path: str) -> TrashEntry:
        """Move a file or folder to ``.trash/``; never a hard delete."""
        rel = self.gate(path, write=True)
        with self.change("delete", rel) as change:
            from . import trash  # ~1 ms; only the trash commands need it
            return trash.delete(change, rel, self.current_provenance)

    def trash(self) -> builtins.list[TrashEntry]:
        """Soft-deleted entries, oldest first."""
        from . import trash  # ~1 ms; only the trash commands need it
        return trash.list_entries(self.files)

    def restore(self, path_or_entry_id: str, to: str | None = None) -> str:
        """Bring a deleted file back (the latest deletion of a path, or a given entry)."""
        from . import trash  # ~1 ms; only the trash commands need it
        entry = trash.find(self.files, path_or_entry_id, self.gate)
        rel = self.gate(to if to is not None else entry.original_path, write=True)
        with self.change("restore", rel) as change:
            trash.restore(change, entry, rel)
        return rel

    def purge_trash(self, older_than: timedelta | float | None = None) -> int:
        """Remove trash entries for good (git history still has them); returns how many."""
        from . import trash  # ~1 ms; only the trash commands need it
        chosen = trash.purgeable(self.files, older_than)
        if not chosen:
            return 0
        with self.change("purge", f"{len(chosen)} trash entries") as change:
            trash.purge(change, chosen)
        return len(chosen)

    # ------------------------------------------------------------ history
    def history(self, path: str | None = None, limit: int = 50) -> builtins.list[HistoryEntry]:
        """Commits that touched the root or one path, newest first (following renames)."""
        from . import history  # with difflib: ~3 ms that only history calls need
        return history.history(self, path, limit)

    def read_at(self, path: str, rev: str) -> str | None:
        """The body of ``path`` as it was at ``rev`` (None if it did not exist then)."""
        from . import history  # with difflib: ~3 ms that only history calls need
        return history.read_at(self, path, rev)

    def show_at(self, path: str, rev: str) -> str | None:
        """The whole file (frontmatter included) at ``rev``."""
        from . import history  # with difflib: ~3 ms that only history calls need
        return history.show_at(self, path, rev)

    def diff(self, path: str, rev_a: str, rev_b: str | None = None) -> str:
        """A unified diff of the whole file between two revisions (or ``rev_a`` and now)."""
        from . import history  # with difflib: ~3 ms that only history calls need
        return history.diff(self, path, rev_a, rev_b)

    def revert(self, path: str, rev: str) -> Document | None:
        """Make a file what it was at ``rev`` (content and metadata), as a new commit."""
        from . import history  # with difflib: ~3 ms that only history calls need
        return history.revert(self, path, rev)

    def revert_session(self, session_id: str) -> RevertReport:
        """Undo everything one session wrote, newest first, one new commit per commit undone
        (a path someone changed after the session is left alone and reported as a conflict)."""
        from . import history  # with difflib: ~3 ms that only history calls need
        return history.revert_session(self, session_id)

    # ------------------------------------------------------------ outside edits
    def sync(self) -> builtins.list[str]:
        """Commit edits made behind the store's back (an editor, a script) as ``human``; the paths
        committed (what was held back, and why, is in ``last_sync``)."""
        return sync_outside_edits(self)

    @property
    def remote(self) -> Remote:
        """Sharing through a git remote (``ctx.remote.sync()``); :meth:`sync` commits outside edits."""
        from .remote import Remote  # fetch, push and the merge engine: only sharing needs them
        return Remote(self)

    # ------------------------------------------------------------ search
    def _open_index(self) -> None:
        from .search import SearchIndex  # Whoosh costs ~0.1 s to import; only searches need it
        self._index = SearchIndex(self)
        self._index.open()

    @property
    def index(self) -> SearchIndex:
        """The search index (opened on first use when the manager was made with index=False)."""
        if self._index is None:
            self._open_index()
        assert self._index is not None
        return self._index

    def search(self, query: str, path: str = "", limit: int = 10, **filters: Any) -> builtins.list[SearchHit]:
        """Ranked search; ``for path, snippet in ctx.search(q)`` unpacks each hit."""
        return self.index.search(query, path=path, limit=limit, **filters)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def __enter__(self) -> ContextManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ContextManager({str(self.root)!r}, actor={self.current_provenance.actor!r})"
