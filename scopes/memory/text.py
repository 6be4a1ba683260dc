"""Word handling for the memory tiers, in one place: words, stopwords, fingerprints, Jaccard, BM25.

Every tier that compares or ranks text goes through these functions — archival dedupe
(fingerprints and word sets), archival search queries (plain words), conversation
search (BM25 over the messages that pass the filters) and the extractive conversation
summary (content words) — so the text rules can be replaced in exactly one module.

Words are runs of letters and digits after NFKC folding and case folding, so full-width
letters, case and punctuation never make two texts differ.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter

__all__ = [
    "NEGATIONS",
    "STOPWORDS",
    "bm25",
    "content_words",
    "fingerprint",
    "guarded_words",
    "hash_order",
    "jaccard",
    "normalize",
    "raw_words",
    "word_set",
    "words",
]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: Words that flip a fact's meaning while barely moving its word set.
NEGATIONS = frozenset({"not", "no", "never", "nor", "without", "isn", "aren", "wasn", "don", "doesn", "didn", "won", "cannot"})
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "i", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with"]
)


def normalize(text: str) -> str:
    """NFKC-folded, case-folded text: the form every comparison works on."""
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    """The words of ``text`` in order, after :func:`normalize`."""
    return _WORD.findall(normalize(text))


def raw_words(text: str) -> list[str]:
    """The words of ``text`` in order, as written (case kept)."""
    return _WORD.findall(text)


def content_words(text: str) -> list[str]:
    """:func:`words` without stopwords: the terms that carry meaning."""
    return [w for w in words(text) if w not in STOPWORDS]


def word_set(text: str) -> frozenset[str]:
    """The distinct words of ``text``, case- and width-folded (for near-duplicate checks)."""
    return frozenset(words(text))


def fingerprint(text: str) -> str:
    """A hash of the words in order, so case, punctuation and spacing do not matter."""
    return hashlib.sha1(" ".join(words(text)).encode("utf-8")).hexdigest()[:20]


def guarded_words(found: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(numbers, negations) of a word set: two notes are only near duplicates when these agree.

    Numbers and negations change a fact's meaning while barely moving Jaccard
    ("port 5433" vs "port 5434", "is" vs "is never").
    """
    numbers = frozenset(w for w in found if any(ch.isdigit() for ch in w))
    return numbers, found & NEGATIONS


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def hash_order(word: str) -> bytes:
    """A fixed global order of words (for prefix filtering), independent of the corpus."""
    return hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()


def bm25(docs: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Okapi BM25 of ``query`` against each of ``docs`` (IDF from ``docs`` themselves)."""
    terms = set(content_words(query))
    if not docs or not terms:
        return [0.0] * len(docs)
    tfs = [Counter(content_words(d)) for d in docs]
    avg = sum(sum(tf.values()) for tf in tfs) / len(tfs) or 1.0
    df = Counter(t for tf in tfs for t in terms if t in tf)
    n = len(docs)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    out = []
    for tf in tfs:
        length = sum(tf.values())
        score = 0.0
        for t in terms:
            f = tf.get(t, 0)
            if f:
                score += idf[t] * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avg))
        out.append(score)
    return out
