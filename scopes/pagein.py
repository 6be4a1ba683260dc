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

Cost is kept low with two caches that cannot change results: per-blob passages and term
counts keyed by the blob id (content-addressed), and one :class:`~contextfs.text.scoring.TermIndex`
per root, moved from commit to commit by re-reading only the paths ``git diff-tree``
reports. A warm look-up at an unchanged head reads only the postings of the query terms.

``pager="search"`` orders files with the live index instead (``ctx.search``), for callers
that prefer Whoosh's field boosts and query syntax and do not need ``as_of`` reproduction.
"""

from __future__ import annotations

import bisect
import heapq
import logging
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from contextfs.document import blob_version, decode, parse
from contextfs.embeddings import vectors_for
from contextfs.errors import ContextFSError
from contextfs.text import analysis as contextfs_text
from contextfs.text import scoring
from contextfs.text.analysis import EXACT_WEIGHT, forms, query_forms
from contextfs.text.periods import Period, day_of, moment_of, periods, within
from contextfs.text.scoring import BM25, TermIndex
from contextfs.text.turns import is_log

from .passages import (
    TRANSCRIPT_LINES,
    Chunk,
    chunk_terms,
    chunks_of,
    is_heading,
    labels_of,
    speakers_of,
)
from .tiers import query_terms

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = ["PAGERS", "Passage", "rank", "relevance"]

log = logging.getLogger(__name__)

PAGERS = ("exact", "search")
#: Passages are short, so length normalisation is BM25's usual 0.75.
SCORER = BM25(k1=1.2, b=0.75)
_BLOB_CACHE: OrderedDict[str, _FileStats] = OrderedDict()
_BLOB_CACHE_SIZE = 60_000
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Passage:
    """One ranked passage: the file, the passage's index in :func:`chunks_of`, its score."""

    path: str
    index: int
    score: float


def _eligible(rel: str) -> bool:
    if is_log(rel):
        return True
    return rel.endswith(".md") and not any(part.startswith(".") for part in rel.split("/"))


def _title(meta: dict[str, Any], body: str) -> str:
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    for line in body.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


@dataclass(frozen=True)
class _FileStats:
    """What ranking needs of one blob: each passage's term counts (empty for headings),
    who spoke it and on which day (None when unknown), and whether the file is quarantined."""

    counts: tuple[Counter[str], ...] = ()
    speakers: tuple[str, ...] = ()
    days: tuple[date | None, ...] = ()
    moments: tuple[float, ...] = ()  # when each passage was said or its file written, for ties
    aliases: frozenset[tuple[str, str]] = frozenset()  # (other name, speaker) in a conversation
    texts: tuple[
        str, ...
    ] = ()  # what each passage says, as embedded for dense ranking ("Caroline: ...")
    labels: tuple[str, ...] = ()  # the ``Name:`` label opening each passage, if any
    #: (session, turn) the file was written in, from its frontmatter: a note an agent wrote
    #: during a conversation sits in that session's thread, between the notes written
    #: before and after it (a note per message, or a few facts per turn).
    thread: tuple[str, float] | None = None
    quarantined: bool = False


def _thread_of(meta: dict[str, Any]) -> tuple[str, float] | None:
    session, turn = meta.get("session"), meta.get("turn")
    if not isinstance(session, str) or not session.strip() or isinstance(turn, bool):
        return None
    try:
        at = float(turn) if isinstance(turn, int | float | str) else math.nan
    except ValueError:
        return None
    return (session.strip(), at) if math.isfinite(at) else None


def _passages_of(rel: str, data: bytes) -> _FileStats:
    try:
        text = decode(data, rel)
        if is_log(rel):
            meta, body, offset = {}, text, 0
        else:
            doc = parse(text, rel)
            meta, body = doc.metadata, doc.body
            offset = (
                text[: len(text) - len(body)].count("\n") if body and text.endswith(body) else 0
            )
    except ContextFSError:
        return _FileStats()
    if meta.get("trust") == "quarantined":
        return _FileStats(quarantined=True)
    title = _title(meta, body)
    chunks: tuple[Chunk, ...] = chunks_of(body, offset, rel)
    written = meta.get("updated") or meta.get("created")
    file_day = day_of(written)
    return _FileStats(
        counts=tuple(
            Counter()
            if is_heading(ch)
            else Counter(chunk_terms(ch, title)) + Counter(forms(ch.text))
            for ch in chunks
        ),
        speakers=speakers_of(chunks),
        days=tuple(day_of(ch.time) if ch.time else file_day for ch in chunks),
        moments=tuple(moment_of(ch.time if ch.time else written) for ch in chunks),
        aliases=frozenset((name, ch.speaker) for ch in chunks for name in ch.aka),
        texts=tuple(f"{ch.speaker}: {ch.text}" if ch.speaker else ch.text for ch in chunks),
        labels=labels_of(chunks),
        thread=None if is_log(rel) else _thread_of(meta),
    )


class _TreeIndex:
    """BM25 statistics for the passages of the eligible files of one commit."""

    def __init__(self) -> None:
        self.sha: str | None = None
        self.blobs: dict[str, str] = {}
        self.files: dict[str, _FileStats] = {}  # rel -> its passages' statistics
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

    def _stats(self, ctx: ContextManager, rel: str, blob: str, sha: str) -> _FileStats:
        with _LOCK:
            hit = _BLOB_CACHE.get(blob)
            if hit is not None:
                _BLOB_CACHE.move_to_end(blob)
                return hit
        data = ctx.parts.read_raw(rel) if sha == ctx.parts.git.head() else None
        if data is None or blob_version(data) != blob:
            data = ctx.parts.git.blob_at(rel, sha) or b""
        stats = _passages_of(rel, data)
        with _LOCK:
            _BLOB_CACHE[blob] = stats
            if len(_BLOB_CACHE) > _BLOB_CACHE_SIZE:
                _BLOB_CACHE.popitem(last=False)
        return stats

    def _forget(self, rel: str, stats: _FileStats) -> None:
        """Drop the neighbours known of ``rel``'s passages and of its session's notes."""
        for i in range(len(stats.counts)):
            self.near.pop((rel, i), None)
        if stats.thread is not None:
            for _turn, other in self.threads.get(stats.thread[0], ()):
                for i in self.usable.get(other, ()):
                    self.near.pop((other, i), None)

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

    def _add(self, ctx: ContextManager, rel: str, blob: str, sha: str) -> None:
        self.blobs[rel] = blob
        stats = self._stats(ctx, rel, blob, sha)
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
        for rel, blob in sorted(ctx.parts.git.files_at(sha).items()):
            if _eligible(rel):
                self._add(ctx, rel, blob, sha)
        self.sha = sha

    def advance(self, ctx: ContextManager, sha: str) -> None:
        """Move to ``sha`` by re-reading only the paths that changed since ``self.sha``."""
        assert self.sha is not None
        for rel in ctx.parts.git.changed(self.sha, sha):
            if not _eligible(rel):
                continue
            self._remove(rel)
            data = ctx.parts.git.blob_at(rel, sha)
            if data is not None:
                self._add(ctx, rel, blob_version(data), sha)
        self.sha = sha

    def speaker(self, stats: _FileStats, i: int) -> str:
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
            self.near, self.near_reach = {}, scoring.NEIGHBOUR_REACH
        got = self.near.get(key)
        if got is None:
            got = self.near[key] = tuple(
                tuple(self.beside(key[0], key[1], d)) for d in range(1, scoring.NEIGHBOUR_REACH + 1)
            )
        return got

    def _priors(
        self, scores: dict[Any, float], named: set[str], when: tuple[Period, ...]
    ) -> dict[Any, float]:
        """Scores times PRIOR for a turn of a named speaker, and again for a passage dated in a named period."""
        if not named and not when:
            return scores
        files, prior = self.files, scoring.PRIOR
        out = {}
        for key, s in scores.items():
            stats = files.get(key[0])
            if stats is not None:
                if named and self.speaker(stats, key[1]) in named:
                    s *= prior
                if when and within(stats.days[key[1]], when):
                    s *= prior
            out[key] = s
        return out

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
        scores = self._priors(
            _with_neighbours(self.index.scores(terms, weights), self.around), named, when
        )
        files = self.files
        keyed = (
            (scoring.tie_order(s, files[rel].moments[i], rel, i), s)
            for (rel, i), s in scores.items()
            if rel not in exclude and (allow is None or allow(rel))
        )
        # tie_order is a total order, so the smallest ``limit`` are exactly the sorted prefix.
        ranked = (
            heapq.nsmallest(limit, keyed)
            if limit is not None and limit < len(scores)
            else sorted(keyed)
        )
        return [(round(s, scoring.SCORE_DIGITS), key[2], key[3]) for key, s in ranked]

    def score(
        self, query: str, exclude: set[str], limit: int, allow: Callable[[str], bool] | None = None
    ) -> list[Passage]:
        return [Passage(rel, i, s) for s, rel, i in self.score_all(query, exclude, allow, limit)]

    def fused(
        self, query: str, vectors: Any, exclude: set[str], allow: Callable[[str], bool] | None
    ) -> list[Passage]:
        """Every passage by the words and by vectors, fused (:mod:`contextfs.search.dense`)."""
        from contextfs.search.dense import dense_order, fuse  # numpy: only with embeddings in use

        lexical = [(rel, i) for _s, rel, i in self.score_all(query, exclude, allow)]
        keys = [
            (rel, i)
            for rel, ok in sorted(self.usable.items())
            for i in sorted(ok)
            if rel not in exclude and (allow is None or allow(rel))
        ]
        texts = {f"{rel}#{i}": self.files[rel].texts[i] for rel, i in keys}
        hashed = [blob_version(texts[f"{rel}#{i}"].encode("utf-8")) for rel, i in keys]
        by_hash = dict(zip(hashed, (f"{rel}#{i}" for rel, i in keys)))  # noqa: B905 - same length
        similarities = vectors.of(hashed, lambda h: texts[by_hash[h]]) @ vectors.query(
            " ".join(query.split())
        )
        scores = fuse(lexical, dense_order(keys, similarities))
        files = self.files
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


def _with_neighbours(
    scores: dict[tuple[str, int], float],
    around: Callable[[tuple[str, int]], tuple[tuple[tuple[str, int], ...], ...]],
) -> dict[tuple[str, int], float]:
    """Each passage's score plus ``NEIGHBOUR_WEIGHT ** d`` times each neighbour's ``d`` steps
    away (``around``: the passages one, two, ... steps away), in a fixed order (own, then by
    distance, previous before next) so the sum is the same whatever order the index holds
    them in. Messages of a conversation and the notes of a session's thread reach
    ``NEIGHBOUR_REACH`` steps, as in the index; prose one (two steps of sentence windows
    light up whole stretches of a long file: recall at 1,000 tokens 0.95 → 0.85 on the
    first tree of bench-scopes)."""
    w = scoring.NEIGHBOUR_WEIGHT
    if not w or not scores:
        return scores
    keys = set(scores)
    for key in scores:
        for ring in around(key):
            keys.update(ring)
    get = scores.get
    out = {}
    for key in keys:
        total = get(key, 0.0)
        share = 1.0
        for ring in around(key):
            share *= w
            for other in ring:
                total += share * get(other, 0.0)
        out[key] = total
    return out


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
        if sha == ctx.parts.git.head():
            if live is None:
                live = _HEADS[root] = _TreeIndex()
                live.build(ctx, sha)
            else:
                try:
                    live.advance(ctx, sha)
                except ContextFSError:
                    live = _HEADS[root] = _TreeIndex()
                    live.build(ctx, sha)
            return live
        idx = _TreeIndex()
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
        order = {h.path: k for k, h in enumerate(ctx.search(query, limit=100)) if _eligible(h.path)}
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
