"""Page-in ranking: which passages outside a scope best answer a query, reproducibly.

A view assembled ``as_of`` a past commit must be byte-for-byte the view assembled when that
commit was the head. The live Whoosh index cannot promise that: it only knows the present,
and its scores drift with segment merges and deleted-document statistics. So the default
ranker here is BM25 computed in-process over the *passages* (:mod:`.passages`) of the
markdown files and conversation logs *of one commit*, a pure function of that commit's
blobs: the same commit always yields the same ranking.

Passages, not files, are ranked, across every file: a 60-sentence paragraph is cut into
sentence windows and a conversation log into its messages, so the passage holding the
answer competes on its own, and many files can contribute. Each passage is matched on its
text, its section heading and its file's real title (never the file name; archival notes
are named after their first words).

Who said a passage and when count too: a turn spoken by a person the query names, or
dated within a period it names, weighs :data:`~contextfs.text.scoring.PRIOR` times as much (a
markdown passage is dated by its file's ``updated``/``created``), and a passage also
counts half of each neighbour's score.

Cost is kept low with caches that cannot change results: per-blob passages and term
counts keyed by the blob id (content-addressed), in memory and in the root's state folder
for the next process (:mod:`.pagestore`), and one :class:`~contextfs.text.scoring.TermIndex`
per root, moved from commit to commit by re-reading only the paths ``git diff-tree``
reports. A warm look-up at an unchanged head reads only the postings of the query terms.

``pager="search"`` orders files with the live index instead (``ctx.search``), for callers
that prefer Whoosh's field boosts and query syntax and do not need ``as_of`` reproduction.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextfs.document import blob_version
from contextfs.embeddings import vectors_for
from contextfs.errors import ContextFSError
from contextfs.text import analysis as contextfs_text
from contextfs.text import scoring
from contextfs.text.analysis import EXACT_WEIGHT, query_forms
from contextfs.text.periods import Period, periods, within
from contextfs.text.scoring import BM25, TermIndex
from contextfs.text.turns import is_log

from .pagestats import FileStats, Layout, eligible
from .pagestore import StatsStore, stats_key, stats_of, store_for
from .passages import TRANSCRIPT_LINES
from .tiers import query_terms

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = ["PAGERS", "Passage", "rank", "relevance"]

log = logging.getLogger(__name__)

PAGERS = ("exact", "search")
#: Passages are short, so length normalisation is BM25's usual 0.75.
SCORER = BM25(k1=1.2, b=0.75)


@dataclass(frozen=True)
class Passage:
    """One ranked passage: the file, the passage's index in :func:`chunks_of`, its score."""

    path: str
    index: int
    score: float


class _TreeIndex:
    """BM25 statistics for the passages of the eligible files of one commit."""

    def __init__(self, store: StatsStore | None = None, *, live: bool = False) -> None:
        self.store = store  # statistics kept across processes (None: read every file)
        self.live = live  # this index follows the head (a past one never rewrites the store)
        self.sha: str | None = None
        self.blobs: dict[str, str] = {}
        self.files: dict[str, FileStats] = {}  # rel -> its passages' statistics
        self.usable: dict[str, frozenset[int]] = {}  # rel -> its passages that hold terms
        self.speakers: Counter[str] = Counter()  # speaker -> how many files have their turns
        self.aliases: Counter[tuple[str, str]] = (
            Counter()
        )  # (other name, speaker) -> how many files
        self.index: TermIndex[tuple[str, int]] = TermIndex(SCORER)
        self.labels: Counter[str] = Counter()  # ``Name:`` label -> passages it opens, tree-wide
        # session -> its notes in writing order ((turn, path)); path -> (session, position)
        self.threads: dict[str, list[tuple[float, str]]] = {}
        self.places: dict[str, tuple[str, int]] = {}
        self.unplaced: set[str] = set()  # sessions whose notes moved since places was made
        # passage -> its neighbours one, two, ... steps away (beside), kept until its file
        # or its session's thread changes: a query reads them for every passage it matches.
        self.near: dict[tuple[str, int], tuple[tuple[tuple[str, int], ...], ...]] = {}
        self.near_reach = scoring.NEIGHBOUR_REACH
        # session -> the passages of its notes whose neighbours are in ``near``: a change to a
        # thread forgets those only (walking the whole thread on every note added made building
        # a tree of one long session quadratic).
        self.near_in: dict[str, set[tuple[str, int]]] = {}
        self.layout: Layout | None = None

    def _forget(self, rel: str, stats: FileStats) -> None:
        """Drop the neighbours known of ``rel``'s passages and of its session's notes."""
        for i in range(len(stats.counts)):
            self.near.pop((rel, i), None)
        if stats.thread is not None:
            for key in self.near_in.pop(stats.thread[0], ()):
                self.near.pop(key, None)

    def _remove(self, rel: str) -> None:
        self.blobs.pop(rel, None)
        stats = self.files.pop(rel, None)
        if stats is None:
            self.usable.pop(rel, None)
            return
        self._forget(rel, stats)
        self.usable.pop(rel, None)
        self.speakers.subtract(set(stats.speakers) - {""})
        self.speakers += Counter()  # drop the names no file has any more
        self.aliases.subtract(stats.aliases)
        self.aliases += Counter()
        self.labels.subtract(label for label in stats.labels if label)
        self.labels += Counter()
        if stats.thread is not None:
            notes = self.threads.get(stats.thread[0], [])
            if (stats.thread[1], rel) in notes:
                notes.remove((stats.thread[1], rel))
                self.places.pop(rel, None)
                self.unplaced.add(stats.thread[0])
        for i in range(len(stats.counts)):
            self.index.remove((rel, i))

    def _add(self, ctx: ContextManager, rel: str, blob: str, sha: str, at_head: bool) -> None:
        self.blobs[rel] = blob
        stats = stats_of(ctx, rel, blob, sha, at_head, self.store)
        if stats.quarantined:
            return
        self.files[rel] = stats
        self.speakers.update(set(stats.speakers) - {""})
        self.aliases.update(stats.aliases)
        self.labels.update(label for label in stats.labels if label)
        self.usable[rel] = frozenset(i for i, counts in enumerate(stats.counts) if counts)
        if stats.thread is not None and len(self.usable[rel]) == 1:
            bisect.insort(self.threads.setdefault(stats.thread[0], []), (stats.thread[1], rel))
            self.unplaced.add(stats.thread[0])
        self._forget(rel, stats)
        for i, counts in enumerate(stats.counts):
            if counts:
                self.index.add((rel, i), counts)

    def build(self, ctx: ContextManager, sha: str) -> None:
        at_head = sha == ctx.parts.git.head()
        for rel, blob in sorted(ctx.parts.git.files_at(sha).items()):
            if eligible(rel):
                self._add(ctx, rel, blob, sha, at_head)
        self.sha = sha
        self._save()

    def advance(self, ctx: ContextManager, sha: str) -> None:
        """Move to ``sha`` by re-reading only the paths that changed since ``self.sha``."""
        assert self.sha is not None
        at_head = sha == ctx.parts.git.head()
        for rel in ctx.parts.git.changed(self.sha, sha):
            if not eligible(rel):
                continue
            self._remove(rel)
            data = ctx.parts.git.blob_at(rel, sha)
            if data is not None:
                self._add(ctx, rel, blob_version(data), sha, at_head)
        self.sha = sha
        self._save()

    def _save(self) -> None:
        """Keep what was read for the next process (a past commit's tree is never kept alone:
        the store is rewritten only with the keys of the tree a head index holds)."""
        if self.store is not None and self.live:
            blobs = self.blobs
            self.store.save(
                len(blobs), lambda: {stats_key(is_log(rel), b) for rel, b in blobs.items()}
            )

    def speaker(self, stats: FileStats, i: int) -> str:
        """Who said passage ``i``: its file's speaker (:func:`.passages.speakers_of`) or a
        ``Name:`` label opening at least :data:`.passages.TRANSCRIPT_LINES` passages across
        the tree (one note per message, each "Caroline: ...", is a transcript too)."""
        if stats.speakers[i]:
            return stats.speakers[i]
        label = stats.labels[i] if stats.labels else ""
        return label if label and self.labels[label] >= TRANSCRIPT_LINES else ""

    def named(self, terms: tuple[str, ...]) -> set[str]:
        """The speakers (and labels that stand for one) a query's terms name."""
        labels = [label for label, n in self.labels.items() if n >= TRANSCRIPT_LINES]
        return (
            contextfs_text.names_in(terms, self.speakers)
            | contextfs_text.names_in(terms, labels)
            | {speaker for name, speaker in self.aliases if contextfs_text.names_in(terms, [name])}
        )

    def _place(self, rel: str) -> tuple[str, int] | None:
        """A one-passage note's session and position in that session's thread."""
        if self.unplaced:
            for session in self.unplaced:
                for k, (_turn, path) in enumerate(self.threads.get(session, ())):
                    self.places[path] = (session, k)
                if not self.threads.get(session):
                    self.threads.pop(session, None)
            self.unplaced.clear()
        return self.places.get(rel)

    def beside(self, rel: str, i: int, d: int) -> list[tuple[str, int]]:
        """The passages ``d`` steps before and after passage ``i`` of ``rel`` (previous
        first): within a conversation log up to ``NEIGHBOUR_REACH`` messages away; between
        the notes of one session's thread as far; in prose one passage away."""
        reach = scoring.NEIGHBOUR_REACH
        if is_log(rel):
            ok = self.usable.get(rel, frozenset())
            return [(rel, n) for n in (i - d, i + d) if n in ok] if d <= reach else []
        place = self._place(rel)
        if place is not None:
            if d > reach:
                return []
            notes = self.threads[place[0]]
            out: list[tuple[str, int]] = []
            for k in (place[1] - d, place[1] + d):
                if 0 <= k < len(notes):
                    other = notes[k][1]
                    out.extend((other, n) for n in self.usable.get(other, ()))
            return out
        ok = self.usable.get(rel, frozenset())
        return [(rel, n) for n in (i - d, i + d) if n in ok] if d <= 1 else []

    def around(self, key: tuple[str, int]) -> tuple[tuple[tuple[str, int], ...], ...]:
        """The passages one, two, ... steps from ``key`` (:meth:`beside`), remembered."""
        if self.near_reach != scoring.NEIGHBOUR_REACH:
            self.near, self.near_in, self.near_reach = {}, {}, scoring.NEIGHBOUR_REACH
        got = self.near.get(key)
        if got is None:
            got = self.near[key] = tuple(
                tuple(self.beside(key[0], key[1], d)) for d in range(1, scoring.NEIGHBOUR_REACH + 1)
            )
            stats = self.files.get(key[0])
            if stats is not None and stats.thread is not None:
                self.near_in.setdefault(stats.thread[0], set()).add(key)
        return got

    def _layout(self) -> Layout:
        """What ranking needs per slot of the term index, as arrays (rebuilt when it changes)."""
        import numpy as np  # only rankers need numpy (contextfs.text.scoring.TermIndex)

        generation = (self.index.generation, scoring.NEIGHBOUR_REACH, scoring.NEIGHBOUR_WEIGHT)
        if self.layout is not None and self.layout.generation == generation:
            return self.layout
        slots = self.index.slots()
        at = {key: k for k, key in enumerate(slots) if key is not None}
        rels, idx = [""] * len(slots), [0] * len(slots)
        codes: dict[str, int] = {}
        speakers = np.full(len(slots), -1, dtype=np.int64)
        days = np.full(len(slots), -1, dtype=np.int64)
        moments = np.zeros(len(slots), dtype=np.float64)
        edges: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
        for k, key in enumerate(slots):
            if key is None:
                continue
            rel, i = key
            stats = self.files[rel]
            rels[k], idx[k] = rel, i
            who = self.speaker(stats, i)
            if who:
                speakers[k] = codes.setdefault(who, len(codes))
            day = stats.days[i]
            if day is not None:
                days[k] = day.toordinal()
            moments[k] = stats.moments[i]
            for d, ring in enumerate(self.around(key), 1):
                for j, other in enumerate(ring):
                    o = at.get(other)
                    if o is not None:
                        src, dst = edges.setdefault((d, j), ([], []))
                        src.append(k)
                        dst.append(o)
        w = scoring.NEIGHBOUR_WEIGHT
        passes = [
            (w**d, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64))
            for (d, _j), (src, dst) in sorted(edges.items())
        ]
        self.layout = Layout(generation, rels, idx, codes, speakers, days, moments, passes)
        return self.layout

    def _ranked(
        self,
        terms: tuple[str, ...],
        weights: dict[str, float],
        named: set[str],
        when: tuple[Period, ...],
        exclude: set[str],
        allow: Callable[[str], bool] | None,
        limit: int | None = None,
    ) -> list[tuple[float, str, int]]:
        import numpy as np  # only rankers need numpy (contextfs.text.scoring.TermIndex)

        for _attempt in range(8):  # a commit read by another thread renumbers the slots
            lay = self._layout()
            acc, generation = self.index.score_array(terms, weights)
            if generation == lay.generation[0]:
                break
        if acc is None or generation != lay.generation[0]:
            return []
        # Each passage plus NEIGHBOUR_WEIGHT ** d of each neighbour d steps away (ring by
        # ring, previous before next: the same sum in the same order for every passage).
        total = acc.copy()
        for share, src, dst in lay.passes:
            total[src] += share * acc[dst]
        prior = scoring.PRIOR
        if named:
            wanted = [lay.codes[name] for name in named if name in lay.codes]
            if wanted:
                total[np.isin(lay.speakers, wanted)] *= prior
        if when:
            inside = np.zeros(len(total), dtype=bool)
            for p in when:
                inside |= (lay.days >= p.start.toordinal()) & (lay.days < p.until.toordinal())
            total[inside] *= prior
        found = np.flatnonzero(total > 0)
        rels, idx, moments = lay.rels, lay.idx, lay.moments

        def keyed(slots: list[int]) -> list[tuple[tuple[float, float, str, int], float]]:
            out = []
            for k in slots:
                rel = rels[k]
                if rel in exclude or (allow is not None and not allow(rel)):
                    continue
                s = float(total[k])
                out.append((scoring.tie_order(s, float(moments[k]), rel, idx[k]), s))
            out.sort()
            return out

        # Only the best few are put in tie order: the ``m`` highest totals, and every total
        # within rounding of the lowest of them. When the ``limit``-th allowed one is among
        # the ``m`` themselves, nothing outside can tie with it or beat it (scores compare
        # at SCORE_DIGITS decimals); otherwise ``m`` grows.
        m = len(found) if limit is None else limit
        while True:
            if limit is None or m >= len(found):
                ranked = keyed(found.tolist())[:limit]
                break
            values = total[found]
            floor = float(np.partition(values, len(values) - m)[len(values) - m])
            got = keyed(found[values >= floor - 2 * 10.0**-scoring.SCORE_DIGITS].tolist())
            if len(got) >= limit and got[limit - 1][1] >= floor:
                ranked = got[:limit]
                break
            m *= 4
        return [(round(s, scoring.SCORE_DIGITS), key[2], key[3]) for key, s in ranked]

    def score(
        self, query: str, exclude: set[str], limit: int, allow: Callable[[str], bool] | None = None
    ) -> list[Passage]:
        return [Passage(rel, i, s) for s, rel, i in self.score_all(query, exclude, allow, limit)]

    def fused(
        self, query: str, vectors: Any, exclude: set[str], allow: Callable[[str], bool] | None
    ) -> list[Passage]:
        """Every passage by the words and by vectors, fused (:mod:`contextfs.search.dense`)."""
        from contextfs.search import dense  # numpy: with embeddings only

        lexical = [(rel, i) for _s, rel, i in self.score_all(query, exclude, allow)]
        keys = [
            (rel, i)
            for rel, ok in sorted(self.usable.items())
            for i in sorted(ok)
            if rel not in exclude and (allow is None or allow(rel))
        ]
        question = vectors.query(" ".join(query.split()))
        files = self.files
        own = dense.similar(vectors, [files[rel].texts[i] for rel, i in keys], question)
        read = dense.similar(
            vectors, [dense.in_context(files[rel].texts, i) for rel, i in keys], question
        )
        when = periods(query)
        if when:
            inside = [within(files[rel].days[i], when) for rel, i in keys]
            own, read = dense.dated(own, inside), dense.dated(read, inside)
        scores = dense.fuse(lexical, dense.dense_order(keys, own), dense.dense_order(keys, read))
        ranked = sorted(
            (scoring.tie_order(v, files[rel].moments[i], rel, i), v)
            for (rel, i), v in scores.items()
        )
        return [Passage(key[2], key[3], v) for key, v in ranked]

    def score_all(
        self,
        query: str,
        exclude: set[str],
        allow: Callable[[str], bool] | None = None,
        limit: int | None = None,
    ) -> list[tuple[float, str, int]]:
        terms = query_terms(query)
        named = self.named(terms)
        written = query_forms(query)
        weights = {**contextfs_text.term_weights(query), **dict.fromkeys(written, EXACT_WEIGHT)}
        return self._ranked(
            (*terms, *written), weights, named, periods(query), exclude, allow, limit
        )

    def best_of(self, terms: tuple[str, ...], paths: list[str]) -> dict[str, float]:
        """The best passage score of each of ``paths`` (0 when nothing matches)."""
        wanted = set(paths)
        best = dict.fromkeys(paths, 0.0)
        for (rel, _i), s in self.index.scores(terms).items():
            if rel in wanted and s > best[rel]:
                best[rel] = round(s, 9)
        return best


_HEADS: dict[str, _TreeIndex] = {}
_PAST: OrderedDict[tuple[str, str], _TreeIndex] = OrderedDict()
_INDEX_LOCK = threading.Lock()


def _index_for(ctx: ContextManager, sha: str) -> _TreeIndex:
    root = str(ctx.root)
    with _INDEX_LOCK:
        live = _HEADS.get(root)
        if live is not None and live.sha == sha:
            return live
        past = _PAST.get((root, sha))
        if past is not None:
            return past
        store = store_for(ctx)
        if sha == ctx.parts.git.head():
            if live is None:
                live = _HEADS[root] = _TreeIndex(store, live=True)
                live.build(ctx, sha)
            else:
                try:
                    live.advance(ctx, sha)
                except ContextFSError:
                    live = _HEADS[root] = _TreeIndex(store, live=True)
                    live.build(ctx, sha)
            return live
        idx = _TreeIndex(store)
        idx.build(ctx, sha)
        _PAST[(root, sha)] = idx
        if len(_PAST) > 4:
            _PAST.popitem(last=False)
        return idx


def rank(
    ctx: ContextManager,
    query: str,
    *,
    rev: str | None,
    exclude: set[str],
    limit: int = 300,
    pager: str = "exact",
    allow: Callable[[str], bool] | None = None,
) -> list[Passage]:
    """The best ``limit`` passages for ``query`` at commit ``rev`` (head when None), best first.

    Files in ``exclude``, and files ``allow`` says no to, never contribute.
    """
    sha = rev or ctx.parts.git.head()
    if sha is None:
        return []
    vectors = vectors_for(str(ctx.root)) if pager != "search" else None
    if vectors is not None:
        return _index_for(ctx, sha).fused(query, vectors, exclude, allow)[:limit]
    passages = _index_for(ctx, sha).score(
        query, exclude, limit if pager != "search" else 100_000, allow
    )
    if pager == "search" and rev is None:
        # Files in the live index's order; within a file, its passages by score.
        order = {h.path: k for k, h in enumerate(ctx.search(query, limit=100)) if eligible(h.path)}
        passages = sorted(
            (p for p in passages if p.path in order),
            key=lambda p: (order[p.path], -p.score, p.index),
        )
    return passages[:limit]


def relevance(
    ctx: ContextManager, query: str, paths: list[str], *, rev: str | None
) -> dict[str, float]:
    """How well each file answers ``query``: its best passage's score (0 when none matches)."""
    sha = rev or ctx.parts.git.head()
    if sha is None or not paths:
        return dict.fromkeys(paths, 0.0)
    return _index_for(ctx, sha).best_of(query_terms(query), paths)
