"""How every ranker scores a text against a question: BM25, neighbours, who and when, ties.

* **BM25** is Okapi BM25 with Lucene's non-negative idf, ``log(1 + (N - df + 0.5) / (df +
  0.5))``; :class:`TermIndex` holds it for collections that change (page-in's passages);
* **neighbours**: a passage also counts :data:`NEIGHBOUR_WEIGHT` of the passages next to
  it, and that share again of the ones next to those (an answer is often split over a
  few turns or sentences);
* **who and when**: a passage spoken by a person the query names
  (:func:`contextfs.text.analysis.names_in`), or dated within a period it names
  (:mod:`contextfs.text.periods`), counts :data:`PRIOR` times as much, each: who said
  something and when are facts about a passage, not words in it, and a question about
  Caroline is almost always answered by something Caroline said;
* **ties**: :func:`tie_order` is the one total order of hits every ranker sorts by.

The words themselves (what a word, a term, a form is) are :mod:`contextfs.text.analysis`.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

__all__ = [
    "BM25",
    "NEIGHBOUR_REACH",
    "NEIGHBOUR_WEIGHT",
    "PRIOR",
    "SCORE_DIGITS",
    "TermIndex",
    "bm25_scores",
    "tie_order",
]

# ------------------------------------------------------------------ ranking rules
#: How many times a passage counts when the query names its speaker, or a period its date
#: falls in (each; both: four times). Measured on long dated conversations, where a
#: question naming a person is answered by that person's own words 19 times in 20.
PRIOR = 2.0
#: A passage also counts this share of each neighbour's match (the passage before and after
#: it in the same file or conversation): in a dialogue the answer is often the turn after
#: the one that repeats the question's words, in prose the sentence after the one that
#: names the subject. A neighbour ``d`` steps away counts ``NEIGHBOUR_WEIGHT ** d``, up to
#: :data:`NEIGHBOUR_REACH` steps (chosen on LoCoMo's development conversations: R@10 0.755
#: with one step, 0.769 with two, 0.765 with three).
NEIGHBOUR_WEIGHT = 0.5
NEIGHBOUR_REACH = 2


#: Scores are compared at this many decimals: two rankers that add the same contributions
#: in another order (the index's two, page-in's neighbours) then agree on what is a tie.
SCORE_DIGITS = 9


def tie_order(
    score: float, moment: float, path: str, position: int
) -> tuple[float, float, str, int]:
    """The sort key every ranker orders hits by: the best score first and, among equal
    scores, the newest first (a message's time, a note's ``updated``, as a timestamp), then
    by path, then by line or position in the file.

    A total order on what a hit *is*, never on where the index happens to keep it, so the
    first k hits of a search are the first k of any larger search.
    """
    return (-round(score, SCORE_DIGITS), -moment, path, position)


# ------------------------------------------------------------------ BM25
class BM25:
    """Okapi BM25 parameters and formulas (Lucene's non-negative idf)."""

    __slots__ = ("b", "k1")

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    @staticmethod
    def idf(df: float, n: float) -> float:
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def weight(self, tf: float, length: float, avg: float) -> float:
        """The saturated, length-normalised term frequency (times idf gives the score)."""
        return (
            tf * (self.k1 + 1.0) / (tf + self.k1 * (1.0 - self.b + self.b * length / (avg or 1.0)))
        )

    def scores(
        self,
        query: Iterable[str],
        docs: Sequence[Mapping[str, int]],
        lengths: Sequence[int] | None = None,
    ) -> list[float]:
        """BM25 of the query terms against each document's term counts (statistics from ``docs``)."""
        n = len(docs)
        if not n:
            return []
        sizes = list(lengths) if lengths is not None else [sum(d.values()) for d in docs]
        avg = (sum(sizes) / n) or 1.0
        out = [0.0] * n
        for t in dict.fromkeys(query):
            df = sum(1 for d in docs if t in d)
            if not df:
                continue
            idf = self.idf(df, n)
            for i, d in enumerate(docs):
                tf = d.get(t, 0)
                if tf:
                    out[i] += idf * self.weight(tf, sizes[i], avg)
        return out


def bm25_scores(
    query: Iterable[str], docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75
) -> list[float]:
    """Okapi BM25 of query terms against documents given as term lists (small collections)."""
    return BM25(k1, b).scores(query, [Counter(d) for d in docs], [len(d) for d in docs])


K = TypeVar("K", bound=Hashable)  # the key a caller files a TermIndex document under


class TermIndex(Generic[K]):
    """An inverted index of short texts that can grow and shrink, ranked with BM25 in numpy.

    Documents are added under a caller's key with their term counts. Postings are
    append-only arrays (a removed document is only marked dead; the arrays are compacted
    when the dead outnumber the living), so adding and removing stay cheap while a query
    reads each term's postings as one array. A document's score is summed term by term
    in query order, so it does not depend on the order documents were added in: two
    indexes holding the same documents rank them identically, to the bit.
    """

    def __init__(self, scorer: BM25 | None = None) -> None:
        self.scorer = scorer or BM25()
        self._ids: dict[K, int] = {}
        self._keys: list[K | None] = []
        self._lengths = array("i")
        self._alive = bytearray()
        self._postings: dict[str, tuple[array[int], array[int]]] = {}
        self._terms: list[tuple[str, ...]] = []
        self._dead = 0
        self.total = 0
        self._arrays: dict[str, Any] = {}
        self._generation = 0
        self._cache_generation = -1
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, key: K) -> bool:
        return key in self._ids

    def add(self, key: K, counts: Mapping[str, int]) -> None:
        """Index one document (replacing any document under the same key)."""
        with self._lock:
            if key in self._ids:
                self._remove(key)
            self._add_unlocked(key, counts)

    def remove(self, key: K) -> None:
        with self._lock:
            self._remove(key)
            if self._dead > 4096 and self._dead > len(self._ids):
                self._compact()

    def _remove(self, key: K) -> None:
        doc = self._ids.pop(key, None)
        if doc is None:
            return
        self._alive[doc] = 0
        self.total -= self._lengths[doc]
        self._keys[doc] = None
        self._dead += 1
        self._generation += 1

    def _compact(self) -> None:
        old_keys, old_terms = self._keys, self._terms
        old_postings = self._postings
        counts: dict[int, dict[str, int]] = {}
        for t, (docs, tfs) in old_postings.items():
            for d, tf in zip(docs, tfs):  # noqa: B905 - parallel arrays
                if self._alive[d]:
                    counts.setdefault(d, {})[t] = tf
        self._ids, self._keys, self._lengths, self._alive = {}, [], array("i"), bytearray()
        self._postings, self._terms, self._dead, self.total = {}, [], 0, 0
        for d, key in enumerate(old_keys):
            if key is not None:
                found = counts.get(d, {})
                ordered = {t: found[t] for t in old_terms[d] if t in found}
                self._add_unlocked(key, ordered)

    def _add_unlocked(self, key: K, counts: Mapping[str, int]) -> None:
        doc = len(self._keys)
        self._ids[key] = doc
        self._keys.append(key)
        length = sum(counts.values())
        self._lengths.append(length)
        self._alive.append(1)
        self._terms.append(tuple(counts))
        self.total += length
        for t, tf in counts.items():
            plist = self._postings.get(t)
            if plist is None:
                plist = self._postings[t] = (array("i"), array("i"))
            plist[0].append(doc)
            plist[1].append(tf)
        self._generation += 1

    @property
    def generation(self) -> int:
        """Changes whenever a document is added or removed."""
        return self._generation

    def slots(self) -> list[K | None]:
        """Each slot's key (None for a removed document), as :meth:`score_array` numbers them."""
        with self._lock:
            return list(self._keys)

    def scores(
        self, query: Sequence[str], weights: Mapping[str, float] | None = None
    ) -> dict[K, float]:
        """Every living document sharing a term with ``query``, with its BM25 score (a term
        in ``weights`` counts that many times)."""
        import numpy as np  # numpy costs ~0.1 s to import; only rankers need it

        with self._lock:
            acc = self._score_array(query, weights)
            if acc is None:
                return {}
            hit = np.flatnonzero(acc > 0)
            keys = cast("list[K]", self._keys)  # a hit is a living document: its key is set
            return {keys[d]: s for d, s in zip(hit.tolist(), acc[hit].tolist())}  # noqa: B905

    def score_array(
        self, query: Sequence[str], weights: Mapping[str, float] | None = None
    ) -> tuple[Any, int]:
        """The scores of :meth:`scores` as one numpy array over the slots (0 where nothing
        matches; None when nothing does), with the generation they were computed at."""
        with self._lock:
            return self._score_array(query, weights), self._generation

    def _score_array(self, query: Sequence[str], weights: Mapping[str, float] | None) -> Any:
        import numpy as np  # numpy costs ~0.1 s to import; only rankers need it

        n = len(self._ids)
        if not n or not query:
            return None
        if self._cache_generation != self._generation:
            self._arrays = {}
            self._cache_generation = self._generation
        alive = self._arrays.get("_alive")
        if alive is None:
            alive = self._arrays["_alive"] = np.frombuffer(
                bytes(self._alive), dtype=np.uint8
            ).astype(bool)
        lengths = self._arrays.get("_lengths")
        if lengths is None:
            lengths = self._arrays["_lengths"] = np.array(self._lengths, dtype=np.float64)
        avg = self.total / n
        k1, b = self.scorer.k1, self.scorer.b
        acc: Any = None
        for t in dict.fromkeys(query):
            got = self._arrays.get(t)
            if got is None:
                plist = self._postings.get(t)
                if plist is None:
                    got = (np.zeros(0, np.int64), np.zeros(0, np.float64))
                else:
                    docs = np.array(plist[0], dtype=np.int64)
                    keep = alive[docs]
                    got = (docs[keep], np.array(plist[1], dtype=np.float64)[keep])
                self._arrays[t] = got
            docs, tfs = got
            if not len(docs):
                continue
            idf = self.scorer.idf(len(docs), n) * (weights.get(t, 1.0) if weights else 1.0)
            if acc is None:
                acc = np.zeros(len(self._keys), dtype=np.float64)
            norm = k1 * (1.0 - b + b * lengths[docs] / avg)
            acc[docs] += idf * (tfs * (k1 + 1.0) / (tfs + norm))
        return acc
