"""The search index of one root: searching it, healing it after a failed search, verifying it.

:class:`SearchIndex` is what ``ctx.index`` is; how it stays current with every write, in
this process and any other, is :mod:`.upkeep`.
"""

from __future__ import annotations

import contextlib
import errno
import logging
from typing import TYPE_CHECKING, Any

from whoosh.query.qcore import QueryError

from ..embeddings import attach
from ..errors import ContextFSError, SearchIndexError
from ..files import paths
from ..files.fileerrors import typed_io
from . import compat
from .filters import build_filter
from .hits import SearchHit
from .language import parse_query
from .schema import indexable
from .stamp import read_stamp
from .upkeep import BrokenIndex, IndexUpkeep
from .verifying import VerifyReport, compare

if TYPE_CHECKING:
    pass

__all__ = ["SearchIndex"]

log = logging.getLogger(__name__)

#: Disk errors that no rebuild can fix: reported as typed errors at once.
_DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})


class SearchIndex(IndexUpkeep):
    """The index of one context root; made by ``ContextManager`` on its parts."""

    def use_embeddings(self, embeddings: object | None) -> None:
        """Fuse questions' ranking with vectors from a LangChain ``Embeddings`` (None: words alone)."""
        from .dense import Vectors  # numpy and the caller's model load only when asked for

        attach(
            str(self.root),
            None if embeddings is None else Vectors(embeddings, self.state.file("vectors")),
        )

    def search(
        self, query: str, *, path: str = "", limit: int = 10, **filters: Any
    ) -> list[SearchHit]:
        """Ranked hits for ``query``; see docs/search.md for the syntax and filters."""
        rel_path = paths.check(self.root, path, allow_root=True)
        filt, include_trash = build_filter(rel_path, filters)
        parsed = parse_query(query)
        if isinstance(limit, bool) or not isinstance(limit, int):
            try:
                limit = int(limit)
            except (TypeError, ValueError):
                raise SearchIndexError(
                    f"limit must be a whole number, not {limit!r}; pass e.g. limit=10"
                ) from None
        if limit <= 0:
            return []
        with self._mutex, typed_io("the search index"):
            for attempt in (1, 2, 3):
                try:
                    self._catch_up()
                    return self.queries.run(parsed, filt, include_trash, min(limit, 1000))
                except ContextFSError:
                    raise
                except QueryError as exc:  # the query, not the index, is at fault
                    raise SearchIndexError(f"cannot run the query ({exc}); simplify it") from None
                except Exception as exc:  # noqa: BLE001 - a whoosh failure: heal, then retry
                    if isinstance(exc, OSError) and exc.errno in _DISK_ERRORS:
                        raise  # a full or read-only disk: rebuilding cannot help
                    if attempt == 3:
                        raise SearchIndexError(
                            f"the search index failed after a rebuild ({type(exc).__name__}); "
                            "run 'contextfs reindex'"
                        ) from None
                    self._heal(exc, rebuild=attempt == 2)
        return []  # pragma: no cover

    def _heal(self, exc: Exception, *, rebuild: bool) -> None:
        """After a failed search: reopen the index (checked against its stamp), or rebuild it.

        Another process may have merged segments (deleting their files) between this
        process reading the table of contents and opening the segments; that is not
        damage, and reopening under the lock sees the new segments. Real damage fails the
        stamp's checksums on reopen, and a failure after a clean reopen means rebuild.
        """
        name = type(exc).__name__
        with self._locked():
            if not rebuild:
                try:
                    self._open_existing(full=True)
                    log.info(
                        "search index changed while it was read (%s: %s); reopened it", name, exc
                    )
                    return
                except BrokenIndex as why:
                    log.warning(
                        "search index at %s %s; rebuilding it from the files", self.dir, why
                    )
            else:
                log.warning(
                    "search index failed again (%s: %s); rebuilding it from the files", name, exc
                )
            self._rebuild_locked()

    # ------------------------------------------------------------ verify
    def verify(self, fix: bool = True) -> VerifyReport:
        """Compare the index with every file (by content hash) and, with ``fix``, repair it."""
        report = VerifyReport()
        with self._mutex, self._locked(), typed_io("the search index"):
            self._cleanup_leftovers()
            try:
                stamp = self._open_existing(full=True)
            except BrokenIndex as why:
                log.warning("search index at %s %s; rebuilding it from the files", self.dir, why)
                report.rebuilt = True
                if fix:
                    self._rebuild_locked()
                    report.fixed = True
                return report
            # Queued writes and commits made since the stamp are normal upkeep, not drift:
            # apply them first so only real differences are reported.
            head = self.manager.head()
            todo = set(self._pending)
            old = stamp.get("head")
            if old != head and head is not None:
                # An unknown stamp head is fine: the comparison below finds what differs.
                with contextlib.suppress(ContextFSError):
                    todo |= {p for p in self.manager.git.changed(old, head) if indexable(p)}
            if todo or old != head:
                self._apply(todo, head, force_commit=old != head)
                stamp = read_stamp(self.dir, self.state) or stamp
            compare(self.files, self.searcher.reader(), report)
            if fix and not report.ok:
                todo = (
                    set(report.missing)
                    | set(report.stale)
                    | set(report.extra)
                    | set(report.duplicates)
                )
                self._apply(todo, self.manager.head(), force_commit=True)
                report.fixed = True
            elif stamp.get("head") != self.manager.head() and fix:
                self._apply(set(), self.manager.head(), force_commit=True)
        return report

    def doc_count(self) -> int:
        with self._mutex, typed_io("the search index"):
            self._catch_up()
            return int(self.searcher.doc_count())

    def optimize(self) -> None:
        """Merge every segment into one (slow; ``reindex`` is usually the better fix)."""
        with self._mutex, self._locked(), typed_io("the search index"):
            self._ix.optimize(codec=compat.codec())
            self._refresh()
