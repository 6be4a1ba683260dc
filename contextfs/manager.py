"""The ``ContextManager`` façade: CRUD, trash, history and transactions on one root.

Every mutating call follows the same cycle under the root's write lock: gate the paths, finish or
undo whatever a killed process left, snapshot what will be touched (committing first, as an outside
edit, any version there that contextfs has not committed), write through the confined file layer,
commit exactly those paths, then tell the search index and other listeners. Inside ``transaction()``
the commit is deferred to the end of the outermost block, and an exception undoes every file
instead. Reads take no lock: files are replaced atomically, so a reader sees one whole version and
never waits for a writer.

The façade holds the user API only (what docs/store.md documents); the open root's parts
— files, derived state, git, the commit cycle, the path and write gates, listeners — are one
internal object, :class:`~contextfs.parts.RootParts` (``ctx.parts``), which the concern
modules are given: :mod:`~contextfs.changes.writing`, :mod:`~contextfs.changes.trash`,
:mod:`~contextfs.changes.history`, :mod:`~contextfs.changes.outside` (edits made outside),
:mod:`~contextfs.remote` (sharing), :mod:`~contextfs.search` (the index).

A read-only open imports neither GitPython (~37 ms), history and trash (~4 ms) nor the write side
(the write gate, adoption of outside edits, the commit cycle: ~10 ms); the methods needing them do.
"""

from __future__ import annotations

import builtins  # annotations in ContextManager, whose list() method shadows the builtin
import contextlib
import os
import secrets
from collections.abc import Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import clock
from .document import Document
from .errors import ContentError, InvalidArgumentError, NotFoundError
from .files.folders import make_private_folders
from .files.state import locate_root
from .fixes import Fix
from .lazy import exports
from .parts import RootParts
from .provenance import Provenance, Writers, check_actor, check_token

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from .changes.adoption import SyncReport
    from .changes.history import HistoryEntry, RevertReport
    from .changes.trash import TrashEntry
    from .remote import Remote
    from .review.branch import ReviewHandle
    from .search import SearchHit, SearchIndex
    from .versioning import GitStore

__all__ = ["ContextManager", "HistoryEntry", "Provenance", "RevertReport", "SyncReport"]


# Re-exported on first use (see above): a reading command never loads history or adoption.
_HISTORY, _ADOPTION = "contextfs.changes.history", "contextfs.changes.adoption"
__getattr__, __dir__ = exports(
    __name__, {"HistoryEntry": _HISTORY, "RevertReport": _HISTORY, "SyncReport": _ADOPTION}
)

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
    ``review``: see :func:`contextfs.review.branch.enter`.

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
        """Open (or create) the root at ``root``.

        Raises InvalidArgumentError for a bad ``actor``, ``session``, ``outside_actor`` or
        ``max_file_bytes``; ContentError when the folder cannot be created; VersioningError
        when ``read_only`` finds no repository, or git refuses (a repository of another
        root, a merge in progress at the first commit); ReviewError when review mode cannot
        open the session's branch; ConfigError for broken settings in ``config.toml``.
        """
        base_actor = check_actor(actor if actor is not None else "agent")
        outside_actor = check_actor(outside_actor)
        if session is None:
            session = f"s-{clock.now().strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
        if (
            not isinstance(max_file_bytes, int)
            or isinstance(max_file_bytes, bool)
            or max_file_bytes < 1
        ):
            raise InvalidArgumentError(
                f"max_file_bytes must be a positive whole number, not {max_file_bytes!r}"
            )
        writers = Writers(
            Provenance(actor=base_actor, session=check_token("session", session), turn=None),
            actor_given=actor is not None,
        )
        raw_root = Path(root)
        handle: ReviewHandle | None = None
        if review or (review is None and base_actor.startswith("agent")):
            from .review.opening import enter  # review mode only (git worktree)

            handle, raw_root, own_repository = enter(
                writers.current,
                raw_root,
                review,
                own_repository,
                read_only=read_only,
                durable=durable,
                open_main=_open_main,
            )
        git: GitStore | None = None
        if read_only:
            self.root, git_dir, prefix = locate_root(raw_root)
        else:
            try:
                make_private_folders(raw_root)
            except OSError as exc:
                raise ContentError(
                    f"cannot create the context root {raw_root} ({exc.strerror}); pick a writable folder"
                ) from None
            self.root = raw_root.resolve()
            from .versioning import GitStore  # GitPython: ~37 ms, for writes and history only

            git = GitStore(self.root, own_repository=own_repository, durable=durable)
            git_dir, prefix = git.git_dir, git.prefix
        #: The open root's parts, for the concern modules and the layers above the core
        #: (:class:`~contextfs.parts.RootParts`): files, state, git, the commit cycle, the gates.
        commit_gate = None
        if not read_only:
            from .gate import history  # the commit gate: writes only

            commit_gate = history.check
        self.parts = RootParts(
            self.root,
            git_dir,
            prefix,
            git=git,
            writers=writers,
            max_file_bytes=max_file_bytes,
            read_only=read_only,
            durable=durable,
            outside_actor=outside_actor,
            review=handle,
            commit_gate=commit_gate,
        )
        self._index: SearchIndex | None = None
        if not read_only:
            from .changes import setup  # the write side: adoption, outside edits, the gate

            setup.ensure_root(self.parts)
            if sync:
                self.sync()
        if index:
            self._open_index()

    def provenance(
        self, *, actor: str | None = None, session: str | None = None, turn: str | int | None = None
    ) -> AbstractContextManager[Provenance]:
        """Change who is writing for the duration of a block (nests).

        Raises InvalidArgumentError for an actor or session that is not a valid name.
        """
        return self.parts.provenance(actor=actor, session=session, turn=turn)

    @contextlib.contextmanager
    def transaction(
        self, message: str, *, op: str = "transaction", trailers: Mapping[str, str] | None = None
    ) -> Iterator[ContextManager]:
        """Group many calls into one commit; on an exception undo them and commit nothing.

        Raises VersioningError on a read-only root (or when the commit fails, after undoing
        every file), ReviewError when the actor's writes need review, and whatever the
        block raises.
        """
        with self.parts.transaction(message, op, trailers):
            yield self

    # ------------------------------------------------------------ reading
    def read(self, path: str) -> str | None:
        """The body of a file (frontmatter removed), or None when it does not exist.

        Raises InvalidPathError for a path the gate refuses, ConflictError for a file git
        left with conflict markers mid-merge, FrontmatterError for unreadable frontmatter.
        """
        parts = self.parts
        rel = parts.gate(path)
        doc = parts.load(rel)
        parts.touched(rel)
        return None if doc is None else doc.body

    def get(self, path: str) -> Document:
        """The whole document: path, metadata, body and version (its git blob id).

        Raises NotFoundError when the file does not exist, and what :meth:`read` raises.
        """
        parts = self.parts
        rel = parts.gate(path)
        doc = parts.load(rel)
        if doc is None:
            raise NotFoundError(
                f"{rel} does not exist", path=rel, fix=Fix("list", rel.rpartition("/")[0])
            )
        parts.touched(rel)
        return doc

    def free_path(self, stem: str, suffix: str = ".md") -> str:
        """``stem + suffix``, or ``stem-2 + suffix``, ``-3``... whichever does not exist yet.

        Raises InvalidPathError when ``stem + suffix`` is not a path the gate accepts.
        """
        path, n = f"{stem}{suffix}", 2
        while self.parts.files.kind(self.parts.gate(path)) is not None:
            path, n = f"{stem}-{n}{suffix}", n + 1
        return path

    def exists(self, path: str) -> bool:
        """True when ``path`` is an existing file. Raises InvalidPathError for a refused path."""
        return self.parts.files.kind(self.parts.gate(path)) == "file"

    def list(self, path: str = "") -> builtins.list[str]:
        """Relative paths of the files under ``path``, sorted; [] for a missing folder.

        Raises InvalidPathError for a refused path.
        """
        return self.parts.list_files(path)

    # ------------------------------------------------------------ writing
    # Each raises InvalidPathError for a refused path, ContentError (a secret, a file too
    # big, text that is not UTF-8), PoisoningError (instruction-like text where the
    # settings refuse it), VersioningError (a read-only root, a failed commit: the file is
    # undone) and ReviewError (the actor's writes need review).
    def write(
        self,
        path: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        *,
        expected_version: str | None = None,
        trailers: Mapping[str, str] | None = None,
    ) -> Document:
        """Create or replace a file. ``metadata`` replaces the user keys; omitted, they are kept.

        Raises ConflictError when ``expected_version`` is stale, and the write errors above.
        """
        from .changes import writing  # with the write gate: ~5 ms to import, never needed to read

        return writing.write(
            self.parts,
            path,
            content,
            metadata,
            expected_version=expected_version,
            trailers=trailers,
        )

    def create(
        self, path: str, content: str, metadata: Mapping[str, Any] | None = None
    ) -> Document:
        """Like ``write`` but refuses to overwrite: AlreadyExistsError."""
        from .changes import writing  # with the write gate: ~5 ms to import, never needed to read

        return writing.create(self.parts, path, content, metadata)

    def append(
        self, path: str, text: str, *, trailers: Mapping[str, str] | None = None
    ) -> Document:
        """Add text at the end of a file's body (creating the file when missing); the write errors."""
        from .changes import writing  # with the write gate: ~5 ms to import, never needed to read

        return writing.append(self.parts, path, text, trailers=trailers)

    def edit(
        self, path: str, old_text: str, new_text: str, *, expected_version: str | None = None
    ) -> Document:
        """Replace ``old_text`` with ``new_text`` in the body; it must occur exactly once.

        Raises NotFoundError for a missing file, ConflictError when the text occurs zero or
        several times or ``expected_version`` is stale, and the write errors.
        """
        from .changes import writing  # with the write gate: ~5 ms to import, never needed to read

        return writing.edit(self.parts, path, old_text, new_text, expected_version=expected_version)

    def update_metadata(
        self, path: str, changes_: Mapping[str, Any], *, expected_version: str | None = None
    ) -> Document:
        """Merge keys into the frontmatter (None removes a key); the body stays byte-for-byte.

        Raises NotFoundError, FrontmatterError for keys the store manages or values YAML
        cannot hold, ConflictError for a stale ``expected_version``, and the write errors.
        """
        from .changes import writing  # with the write gate: ~5 ms to import, never needed to read

        return writing.update_metadata(
            self.parts, path, changes_, expected_version=expected_version
        )

    def move(self, src: str, dst: str) -> str:
        """Rename a file or folder; the destination must be free (a case-only rename is fine).

        Raises NotFoundError for a missing source, AlreadyExistsError for a taken
        destination, and the write errors.
        """
        from .changes import writing  # with the write gate: ~5 ms to import, never needed to read

        return writing.move(self.parts, src, dst)

    # ------------------------------------------------------------ trash
    def delete(self, path: str) -> TrashEntry:
        """Move a file or folder to ``.trash/``; never a hard delete.

        Raises NotFoundError for a missing path, and the write errors.
        """
        from .changes import trash  # ~1 ms; only the trash commands need it

        return trash.delete_path(self.parts, path)

    def trash(self) -> builtins.list[TrashEntry]:
        """Soft-deleted entries, oldest first (raises nothing for an empty trash)."""
        from .changes import trash  # ~1 ms; only the trash commands need it

        return trash.list_entries(self.parts.files)

    def restore(self, path_or_entry_id: str, to: str | None = None) -> str:
        """Bring a deleted file back (the latest deletion of a path, or a given entry).

        Raises NotFoundError when nothing in the trash matches, AlreadyExistsError when
        the destination is taken, and the write errors.
        """
        from .changes import trash  # ~1 ms; only the trash commands need it

        return trash.restore_path(self.parts, path_or_entry_id, to)

    def purge_trash(self, older_than: timedelta | float | None = None) -> int:
        """Remove trash entries for good (git history still has them); returns how many.

        Raises InvalidArgumentError for a negative age, and the write errors.
        """
        from .changes import trash  # ~1 ms; only the trash commands need it

        return trash.purge_older(self.parts, older_than)

    # ------------------------------------------------------------ history
    # Each raises InvalidPathError for a refused path and VersioningError for a revision
    # git does not know.
    def history(self, path: str | None = None, limit: int = 50) -> builtins.list[HistoryEntry]:
        """Commits that touched the root or one path, newest first (following renames)."""
        from .changes import history  # with difflib: ~3 ms that only history calls need

        return history.history(self.parts, path, limit)

    def read_at(self, path: str, rev: str) -> str | None:
        """The body of ``path`` as it was at ``rev`` (None if it did not exist then)."""
        from .changes import history  # with difflib: ~3 ms that only history calls need

        return history.read_at(self.parts, path, rev)

    def show_at(self, path: str, rev: str) -> str | None:
        """The whole file (frontmatter included) at ``rev``."""
        from .changes import history  # with difflib: ~3 ms that only history calls need

        return history.show_at(self.parts, path, rev)

    def diff(self, path: str, rev_a: str, rev_b: str | None = None) -> str:
        """A unified diff of the whole file between two revisions (or ``rev_a`` and now)."""
        from .changes import history  # with difflib: ~3 ms that only history calls need

        return history.diff(self.parts, path, rev_a, rev_b)

    def revert(self, path: str, rev: str) -> Document | None:
        """Make a file what it was at ``rev`` (content and metadata), as a new commit.

        Also raises the write errors (the reverted version passes the write gate again).
        """
        from .changes import history  # with difflib: ~3 ms that only history calls need

        return history.revert(self.parts, path, rev)

    def revert_session(self, session_id: str) -> RevertReport:
        """Undo everything one session wrote, newest first, one new commit per commit undone
        (a path someone changed after the session is left alone and reported as a conflict).

        Raises InvalidArgumentError for a malformed session id, and the write errors.
        """
        from .changes import history  # with difflib: ~3 ms that only history calls need

        return history.revert_session(self.parts, session_id)

    # ------------------------------------------------------------ outside edits, sharing
    def sync(self) -> builtins.list[str]:
        """Commit edits made behind the store's back (an editor, a script) as ``outside_actor``;
        the paths committed (what was held back, and why, is in ``ctx.parts.last_sync``).

        Raises VersioningError on a read-only root or when git refuses the commit.
        """
        from .changes.outside import sync as sync_outside_edits  # the write side, on demand

        return sync_outside_edits(self.parts)

    @property
    def remote(self) -> Remote:
        """Sharing through a git remote (``ctx.remote.sync()``); :meth:`sync` commits outside edits.

        Its calls raise VersioningError (no remote, a refused push) and ConflictError.
        """
        from .remote import Remote  # fetch, push and the merge engine: only sharing needs them

        return Remote(self.parts)

    # ------------------------------------------------------------ search
    def _open_index(self) -> None:
        from .search import SearchIndex  # Whoosh costs ~0.1 s to import; only searches need it

        self._index = SearchIndex(self.parts)
        self._index.open()
        self.parts.index_notify = self._index.notify

    @property
    def index(self) -> SearchIndex:
        """The search index (opened on first use when the manager was made with index=False).

        Opening raises SearchIndexError when the index cannot be rebuilt.
        """
        if self._index is None:
            self._open_index()
        assert self._index is not None
        return self._index

    def search(
        self, query: str, path: str = "", limit: int = 10, **filters: Any
    ) -> builtins.list[SearchHit]:
        """Ranked search; ``for path, snippet in ctx.search(q)`` unpacks each hit.

        Raises InvalidArgumentError for a query or filter the language refuses (the message
        says where), InvalidPathError for a refused ``path``, SearchIndexError when the
        index cannot be opened or rebuilt.
        """
        return self.index.search(query, path=path, limit=limit, **filters)

    def close(self) -> None:
        """Close the search index (nothing else holds resources); raises nothing."""
        if self._index is not None:
            self._index.close()

    def __enter__(self) -> ContextManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ContextManager({str(self.root)!r}, actor={self.parts.current_provenance.actor!r})"


def _open_main(
    root: Path, actor: str, session: str, own_repository: bool, durable: bool
) -> RootParts:
    """The main root, opened for writing without review mode (review mode opens it first)."""
    main = ContextManager(
        root,
        actor=actor,
        session=session,
        index=False,
        own_repository=own_repository,
        durable=durable,
        review=False,
    )
    return main.parts
