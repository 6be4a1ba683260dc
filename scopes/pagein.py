"""Page-in ranking: which files outside a scope best match a query, reproducibly.

A view assembled ``as_of`` a past commit must be byte-for-byte the view assembled when that
commit was the head. The live Whoosh index cannot promise that: it only knows the present,
and its scores drift with segment merges and deleted-document statistics. So the default
ranker here is BM25 computed in-process over the markdown files *of one commit*, a pure
function of that commit's blobs: the same commit always yields the same ranking.

Cost is kept low with two caches that cannot change results: per-blob term counts keyed by
the blob id (content-addressed), and one inverted index per root, moved from commit to
commit by re-reading only the paths ``git diff-tree`` reports. A warm look-up at an
unchanged head touches only the postings of the query terms.

``pager="search"`` ranks with the live index instead (``ctx.search``), for callers that
prefer Whoosh's field boosts and phrase syntax and do not need ``as_of`` reproduction.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter, OrderedDict
from typing import Any

from contextfs.document import blob_version, decode, parse
from contextfs.errors import ContextFSError

from .tiers import query_terms, terms_of

__all__ = ["PAGERS", "rank"]

log = logging.getLogger(__name__)

PAGERS = ("exact", "search")
_K1 = 1.2
# Weak length normalisation: a long file costs little here (page-in shows only its
# matching passages), so it should not lose to a short file that merely mentions a term.
_B = 0.3
#: Path and title words are counted this many times (a cheap BM25F): names identify files.
_NAME_WEIGHT = 3
_BLOB_CACHE: OrderedDict[str, tuple[Counter[str], int, bool]] = OrderedDict()
_BLOB_CACHE_SIZE = 60_000
_LOCK = threading.Lock()


def _eligible(rel: str) -> bool:
    return rel.endswith(".md") and not any(part.startswith(".") for part in rel.split("/"))


def _doc_stats(rel: str, data: bytes) -> tuple[Counter[str], int, bool]:
    try:
        doc = parse(decode(data, rel), rel)
    except ContextFSError:
        return Counter(), 0, False
    meta = doc.metadata
    quarantined = meta.get("trust") == "quarantined"
    names = " ".join([rel.rsplit(".", 1)[0].replace("/", " ").replace("-", " "), str(meta.get("title") or doc.title)])
    extra = " ".join(str(meta.get(k, "")) for k in ("abstract", "tags") if meta.get(k))
    terms = terms_of(names) * _NAME_WEIGHT + terms_of(extra + " " + doc.body)
    return Counter(terms), len(terms), quarantined


class _TreeIndex:
    """BM25 statistics for the eligible files of one commit."""

    def __init__(self) -> None:
        self.sha: str | None = None
        self.blobs: dict[str, str] = {}
        self.postings: dict[str, dict[str, int]] = {}
        self.lengths: dict[str, int] = {}
        self.total = 0

    def _stats(self, ctx: Any, rel: str, blob: str, sha: str) -> tuple[Counter[str], int, bool]:
        with _LOCK:
            hit = _BLOB_CACHE.get(blob)
            if hit is not None:
                _BLOB_CACHE.move_to_end(blob)
                return hit
        data = ctx.read_raw(rel) if sha == ctx.git.head() else None
        if data is None or blob_version(data) != blob:
            data = ctx.git.blob_at(rel, sha) or b""
        stats = _doc_stats(rel, data)
        with _LOCK:
            _BLOB_CACHE[blob] = stats
            if len(_BLOB_CACHE) > _BLOB_CACHE_SIZE:
                _BLOB_CACHE.popitem(last=False)
        return stats

    def _remove(self, rel: str) -> None:
        if rel not in self.blobs:
            return
        del self.blobs[rel]
        length = self.lengths.pop(rel, None)
        if length is None:
            return
        self.total -= length
        for term in list(self._terms.pop(rel, ())):
            plist = self.postings.get(term)
            if plist is not None:
                plist.pop(rel, None)
                if not plist:
                    del self.postings[term]

    def _add(self, ctx: Any, rel: str, blob: str, sha: str) -> None:
        self.blobs[rel] = blob
        counts, length, quarantined = self._stats(ctx, rel, blob, sha)
        if quarantined or not length:
            return
        self.lengths[rel] = length
        self.total += length
        self._terms[rel] = tuple(counts)
        for term, tf in counts.items():
            self.postings.setdefault(term, {})[rel] = tf

    _terms: dict[str, tuple[str, ...]]

    def build(self, ctx: Any, sha: str) -> None:
        self._terms = {}
        for rel, blob in sorted(ctx.git.files_at(sha).items()):
            if _eligible(rel):
                self._add(ctx, rel, blob, sha)
        self.sha = sha

    def advance(self, ctx: Any, sha: str) -> None:
        """Move to ``sha`` by re-reading only the paths that changed since ``self.sha``."""
        assert self.sha is not None
        for rel in ctx.git.changed(self.sha, sha):
            if not _eligible(rel):
                continue
            self._remove(rel)
            data = ctx.git.blob_at(rel, sha)
            if data is not None:
                self._add(ctx, rel, blob_version(data), sha)
        self.sha = sha

    def score(self, terms: tuple[str, ...], exclude: set[str], limit: int) -> list[tuple[str, float]]:
        n = len(self.lengths)
        if not n or not terms:
            return []
        avg = self.total / n
        scores: dict[str, float] = {}
        for term in terms:
            plist = self.postings.get(term)
            if not plist:
                continue
            idf = math.log(1 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
            for rel in sorted(plist):  # a fixed order keeps float sums identical across builds
                tf = plist[rel]
                norm = tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * self.lengths[rel] / avg))
                scores[rel] = scores.get(rel, 0.0) + idf * norm
        ranked = sorted(((round(s, 9), rel) for rel, s in scores.items() if rel not in exclude),
                        key=lambda p: (-p[0], p[1]))
        return [(rel, s) for s, rel in ranked[:limit]]


_HEADS: dict[str, _TreeIndex] = {}
_PAST: OrderedDict[tuple[str, str], _TreeIndex] = OrderedDict()
_INDEX_LOCK = threading.Lock()


def _index_for(ctx: Any, sha: str) -> _TreeIndex:
    root = str(ctx.root)
    with _INDEX_LOCK:
        live = _HEADS.get(root)
        if live is not None and live.sha == sha:
            return live
        past = _PAST.get((root, sha))
        if past is not None:
            return past
        if sha == ctx.git.head():
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
    ctx: Any, query: str, *, rev: str | None, exclude: set[str], limit: int = 8, pager: str = "exact"
) -> list[tuple[str, float]]:
    """The best ``limit`` files for ``query`` at commit ``rev`` (head when None), best first."""
    if pager == "search" and rev is None:
        hits = ctx.search(query, limit=limit + len(exclude))
        return [(h.path, float(h.score)) for h in hits if h.path not in exclude and _eligible(h.path)][:limit]
    sha = rev or ctx.git.head()
    if sha is None:
        return []
    return _index_for(ctx, sha).score(query_terms(query), exclude, limit)
