"""The text rules every ranker uses, in one place: words, normalisation, stop words, stems, BM25.

The search index's analyzer, page-in, archival and conversation memory, duplicate
detection, topic detection and the evolving agent's hygiene all ask this module what a
word is and how two texts compare, so a question is read the same way everywhere:

* **a word** is a run of letters and digits (``[^\\W_]+``), with inner dots kept so
  ``v1.2.3``, ``4.5`` and ``e.g`` stay one word; underscores, hyphens and apostrophes
  separate words (``dead-letter`` is two, ``Caroline's`` is ``caroline`` + ``s``);
* **normalised** means NFKC-folded and case-folded, so full-width letters and case never
  make two texts differ;
* **stop words** are English function words *and question words* ("what", "did", "how",
  "when", ...): an agent's question ranks by what it asks about, not by how it asks;
* **terms** are normalised words that are not stop words, at least two characters long
  (single digits count: "7 May"), at most 40, reduced to their Snowball (Porter2) stem so
  ``retries`` meets ``retry`` and ``nightly`` meets ``night``;
* **forms**: a word whose stem is not the word itself (``visited``) is also kept as it was
  written (``=visited``, :func:`forms`), in the body only; a question's words match their
  own form at :data:`EXACT_WEIGHT`, so "visited" ranks "I visited Mexico" above the many
  "I want to visit ...": the stem finds, the form breaks the tie;
* **BM25** is Okapi BM25 with Lucene's non-negative idf, ``log(1 + (N - df + 0.5) / (df +
  0.5))``; :class:`TermIndex` holds it for collections that change (page-in's passages);
* **neighbours**: a passage also counts :data:`NEIGHBOUR_WEIGHT` of the passages next to
  it, and that share again of the ones next to those (an answer is often split over a
  few turns or sentences);
* **who and when**: a passage spoken by a person the query names (:func:`names_in`), or
  dated within a period it names (:mod:`contextfs.periods`), counts :data:`PRIOR` times
  as much, each: who said something and when are facts about a passage, not words in it,
  and a question about Caroline is almost always answered by something Caroline said.

Changing a rule here changes what the search index holds: the index's schema fingerprint
includes :data:`RULES_VERSION`, so existing indexes are rebuilt.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import unicodedata
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

import snowballstemmer

__all__ = [
    "BM25",
    "EXACT_WEIGHT",
    "FORM_MARK",
    "INTERJECTIONS",
    "MAX_TERM_CHARS",
    "NEIGHBOUR_REACH",
    "NEIGHBOUR_WEIGHT",
    "PRIOR",
    "QUOTED_WEIGHT",
    "RULES_VERSION",
    "SCORE_DIGITS",
    "STOP_WORDS",
    "VARIANTS",
    "WORD",
    "TermIndex",
    "address_names",
    "bm25_scores",
    "content_words",
    "fingerprint",
    "forms",
    "names_in",
    "normalize",
    "query_forms",
    "query_terms",
    "quoted",
    "raw_words",
    "stem",
    "term",
    "term_counts",
    "term_weights",
    "terms",
    "tie_order",
    "words",
]

#: Bump when any rule below changes what a text's terms are (the search index rebuilds).
RULES_VERSION = 3
#: What a word is, before normalisation.
WORD = re.compile(r"[^\W_]+(?:\.[^\W_]+)*", re.UNICODE)
MAX_TERM_CHARS = 40

STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just let lets me more most my myself no nor not now of off on once only or other
    our ours ourselves out over own please same shall she should so some someone such than that
    the their theirs them themselves then there these they this those through to too under
    until up upon us very via was we were what whatever when whenever where whereas wherever
    whether which while who whoever whom whose why will with would yet you your yours yourself
    yourselves per tbd might must many much every ever
    don didn doesn isn aren wasn weren haven hasn hadn won wouldn couldn shouldn ll ve re
    """.split()  # noqa: SIM905 - a word list reads better as text
)

#: Short forms people type for a longer word, read as that word in texts and queries alike,
#: so ``postgres`` finds "PostgreSQL" and "Database" is found by ``DB`` (and the other way
#: round). Only forms with one usual meaning in notes about software and work; an ambiguous
#: one (``auth``: authentication or authorization?) is left as written. Prefixes are the
#: query's own business (``postg*``) and compounds stay one word (``PostgreSQL``).
VARIANTS: dict[str, str] = {
    "db": "database", "dbs": "databases", "postgres": "postgresql", "pg": "postgresql",
    "mongo": "mongodb", "k8s": "kubernetes", "js": "javascript", "ts": "typescript",
    "py": "python", "repo": "repository", "repos": "repositories", "config": "configuration",
    "configs": "configurations", "cfg": "configuration", "env": "environment",
    "envs": "environments", "prod": "production", "docs": "documentation",
    "msg": "message", "msgs": "messages", "info": "information", "infra": "infrastructure",
    "app": "application", "apps": "applications", "dept": "department", "mgmt": "management",
}

_STEMMER = snowballstemmer.stemmer("english")
_STEM_LOCK = threading.Lock()
#: word (already case-folded) -> term, or None for a word that is not a term.
_TERMS: dict[str, str | None] = {}
_TERMS_LIMIT = 500_000


def normalize(text: str) -> str:
    """NFKC-folded, case-folded text: the form every comparison works on."""
    return unicodedata.normalize("NFKC", text).casefold()


def raw_words(text: str) -> list[str]:
    """The words of ``text`` in order, as written (case kept)."""
    return WORD.findall(text)


def words(text: str) -> list[str]:
    """The normalised words of ``text`` in order, stop words included."""
    return WORD.findall(normalize(text))


def content_words(text: str) -> list[str]:
    """:func:`words` without stop words: the words that carry meaning (not stemmed)."""
    return [w for w in words(text) if w not in STOP_WORDS]


def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word."""
    with _STEM_LOCK:  # the pure-Python stemmer keeps state between calls
        return _STEMMER.stemWord(word)


def term(word: str) -> str | None:
    """The term for one case-folded word, or None when it is not a term (stop word, size)."""
    got = _TERMS.get(word, "")
    if got != "":
        return got
    norm = word if word.isascii() else unicodedata.normalize("NFKC", word).casefold()
    size = len(norm)
    if norm in STOP_WORDS or size > MAX_TERM_CHARS or (size < 2 and not norm.isdigit()):
        out: str | None = None
    else:
        out = stem(VARIANTS.get(norm, norm))
    if len(_TERMS) > _TERMS_LIMIT:
        _TERMS.clear()
    _TERMS[word] = out
    return out


def terms(text: str) -> list[str]:
    """The terms of ``text`` in order: the unit every ranker matches on."""
    out = []
    for word in WORD.findall(text.casefold()):
        found = term(word)
        if found is not None:
            out.append(found)
    return out


#: What marks a word kept as written (see :func:`forms`); never part of a word or a stem.
FORM_MARK = "="
#: How much a question's word counts when it also matches the word as written, beyond its stem.
EXACT_WEIGHT = 0.25


def _form(word: str, found: str) -> str | None:
    """``=word`` for a term whose stem differs from the (normalised) word, else None."""
    norm = word if word.isascii() else unicodedata.normalize("NFKC", word).casefold()
    return None if norm == found else FORM_MARK + norm


def forms(text: str) -> list[str]:
    """The words of ``text`` whose stem differs from them, as written (``=visited``), in order."""
    out = []
    for word in WORD.findall(text.casefold()):
        found = term(word)
        if found is not None:
            form = _form(word, found)
            if form is not None:
                out.append(form)
    return out


def term_counts(text: str, *, with_forms: bool = False) -> dict[str, int]:
    """How often each term occurs in ``text`` (the same as counting :func:`terms`), and
    with ``with_forms`` each of its :func:`forms` too.

    Words are counted first (in C, by ``Counter``) and turned into terms once per
    distinct word, so the loop runs over a text's vocabulary, not over every word.
    """
    out: dict[str, int] = {}
    for word, n in Counter(WORD.findall(text.casefold())).items():
        found = term(word)
        if found is not None:
            out[found] = out.get(found, 0) + n
            if with_forms:
                form = _form(word, found)
                if form is not None:
                    out[form] = out.get(form, 0) + n
    return out


def query_terms(text: str | None) -> tuple[str, ...]:
    """The distinct terms of a query, in first-seen order."""
    if not text:
        return ()
    return tuple(dict.fromkeys(terms(text)))


def query_forms(text: str | None) -> tuple[str, ...]:
    """The distinct :func:`forms` of a query, in first-seen order (they count :data:`EXACT_WEIGHT`)."""
    if not text:
        return ()
    return tuple(dict.fromkeys(forms(text)))


_QUOTED = re.compile(r'"([^"]*)"')


def quoted(text: str | None) -> list[str]:
    """The spans of ``text`` between double quotes that pair up, left to right (an odd
    quote out is punctuation): the titles and exact words a question quotes."""
    return _QUOTED.findall(text) if text and '"' in text else []


def term_weights(text: str | None) -> dict[str, float]:
    """How much each term of a question counts beyond 1: the words it quotes count
    :data:`QUOTED_WEIGHT` times (a quoted span boosts, it never filters: a chat may spell
    the title it names otherwise)."""
    return {t: QUOTED_WEIGHT for span in quoted(text) for t in terms(span)}


#: Words that open or close a chat message without being anyone's name.
INTERJECTIONS: frozenset[str] = frozenset(
    """
    hey hi hello hiya yo dear thanks thank thx ty congrats congratulations cheers wow whoa oh ooh aw aww
    awww ouch ugh yay woohoo woo haha hahaha lol omg yeah yes yep yup yea no nope nah ok okay sure
    cool great awesome nice right well so hmm mmm mm exactly totally definitely absolutely agreed indeed
    morning night evening bye goodbye welcome sorry please true damn gosh phew man dude bro guys
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_GREETING = r"(?i:thank\s+you|good\s+(?:morning|night|evening|luck)|see\s+you|love\s+you|" + \
    "|".join(sorted(INTERJECTIONS, key=len, reverse=True)) + ")"
_NAME = r"([A-Z][a-z]{1,19})"
#: A name that opens a message ("Hey Kate!", "Kate, ...", "Thanks Mel.") or closes it ("..., Kate?",
#: "How are you doing today Kate?").
_ADDRESS = (re.compile(rf"^\W*(?:{_GREETING}\W+)?{_NAME}\s*[,!?.](?!\w)"),
            re.compile(rf"(?:,|\b{_GREETING}|\w)\s+{_NAME}\s*[!?.]*[^\w]*$"))


def address_names(text: str) -> list[str]:
    """The capitalised words a message uses to address someone, as written: a name that
    opens it ("Hey Kate!") or closes it ("How are you doing today Kate?"). A guess per
    message; :func:`contextfs.turns.known_as` keeps only names used that way, for one
    person, again and again."""
    out: list[str] = []
    for pattern in _ADDRESS:
        m = pattern.search(text)
        if m and m.group(1) not in out and m.group(1).casefold() not in INTERJECTIONS:
            out.append(m.group(1))
    return out


def names_in(query: Iterable[str], names: Iterable[str]) -> set[str]:
    """The ``names`` (as given) that the query's terms name: a name is named by any of its
    terms ("Caroline's" names Caroline; "Smith" names "Anna Smith")."""
    wanted = set(query)
    return {name for name in names if wanted.intersection(terms(name))} if wanted else set()


def fingerprint(text: str) -> str:
    """A hash of the normalised words in order: case, width, punctuation and spacing do not matter."""
    return hashlib.sha1(" ".join(words(text)).encode("utf-8")).hexdigest()[:20]


# ------------------------------------------------------------------ ranking rules
#: How many times a passage counts when the query names its speaker, or a period its date
#: falls in (each; both: four times). Measured on long dated conversations, where a
#: question naming a person is answered by that person's own words 19 times in 20.
PRIOR = 2.0
#: The words a question quotes count this many times as much as its other words
#: ('When did he start playing "TMNT Shredder's Revenge"?'): the quotes say what it is about.
QUOTED_WEIGHT = 2.0
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


def tie_order(score: float, moment: float, path: str, position: int) -> tuple[float, float, str, int]:
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
        return tf * (self.k1 + 1.0) / (tf + self.k1 * (1.0 - self.b + self.b * length / (avg or 1.0)))

    def scores(self, query: Iterable[str], docs: Sequence[Mapping[str, int]],
               lengths: Sequence[int] | None = None) -> list[float]:
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


def bm25_scores(query: Iterable[str], docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> list[float]:
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

    def scores(self, query: Sequence[str], weights: Mapping[str, float] | None = None) -> dict[K, float]:
        """Every living document sharing a term with ``query``, with its BM25 score (a term
        in ``weights`` counts that many times)."""
        import numpy as np  # numpy costs ~0.1 s to import; only rankers need it

        with self._lock:
            n = len(self._ids)
            if not n or not query:
                return {}
            if self._cache_generation != self._generation:
                self._arrays = {}
                self._cache_generation = self._generation
            alive = self._arrays.get("_alive")
            if alive is None:
                alive = self._arrays["_alive"] = np.frombuffer(bytes(self._alive), dtype=np.uint8).astype(bool)
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
            if acc is None:
                return {}
            hit = np.flatnonzero(acc > 0)
            keys = cast("list[K]", self._keys)  # a hit is a living document: its key is set
            return {keys[d]: s for d, s in zip(hit.tolist(), acc[hit].tolist())}  # noqa: B905
