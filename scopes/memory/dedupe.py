"""Near-duplicate detection over the archive: is this fact already stored?

An exact duplicate has the same :func:`contextfs.text.analysis.fingerprint` (the words in order);
a near duplicate has a word-set Jaccard of at least ``near_duplicate`` and the same numbers
and negations. Candidates come from the search index: a note that shares 85% of a text's
words shares its rare words too, so it ranks among the first hits for those words, and
only those few notes are read. The cost of an insert therefore does not grow with the
archive (the index does the looking up), and a note written by another process is seen as
soon as it is committed.

Notes this object wrote inside a transaction that has not committed yet are not in the
index; they are kept aside and compared too, so two inserts in one transaction still
dedupe against each other.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

from contextfs.errors import ContextFSError
from contextfs.manager import ContextManager
from contextfs.text import analysis as contextfs_text

from .records import ARCHIVE_DIR

__all__ = ["NEGATIONS", "DuplicateIndex", "guarded_words", "jaccard", "word_set"]

log = logging.getLogger(__name__)

#: Words that flip a fact's meaning while barely moving its word set.
NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "nor",
        "without",
        "isn",
        "aren",
        "wasn",
        "don",
        "doesn",
        "didn",
        "won",
        "cannot",
    }
)
#: How many of the best-matching notes are compared with a new one.
CANDIDATES = 8
_RECENT = 256


def word_set(text: str) -> frozenset[str]:
    """The distinct normalised words of ``text``, stop words included (for near-duplicate checks)."""
    return frozenset(contextfs_text.words(text))


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


def _query(text: str) -> str:
    """The note's own words as a plain-word query (the parser drops stop words)."""
    return " ".join(list(dict.fromkeys(contextfs_text.content_words(text)))[:64])[:1900]


class DuplicateIndex:
    """Finds the active note that says the same thing as a text, through the search index."""

    def __init__(self, ctx: ContextManager, near_duplicate: float) -> None:
        self._ctx = ctx
        self._near = near_duplicate
        #: Notes this object wrote lately: path -> (fingerprint, word set), compared in memory.
        self._recent: OrderedDict[
            str, tuple[str, frozenset[str], tuple[frozenset[str], frozenset[str]]]
        ] = OrderedDict()

    def refresh(self, rel: str, text: str | None = None) -> None:
        """Remember a note just written with ``text`` (the index sees it only once committed),
        or forget it (``text=None``: retired, no longer a duplicate of anything)."""
        self._recent.pop(rel, None)
        if text is not None:
            found = word_set(text)
            self._recent[rel] = (contextfs_text.fingerprint(text), found, guarded_words(found))
            while len(self._recent) > _RECENT:
                self._recent.popitem(last=False)

    def _candidates(self, text: str) -> list[str]:
        query = _query(text)
        found: list[str] = []
        if query:
            try:
                found = [
                    h.path for h in self._ctx.search(query, path=ARCHIVE_DIR, limit=CANDIDATES)
                ]
            except ContextFSError as exc:  # an index that cannot answer must not block a write
                log.warning(
                    "duplicate check without the index (%s); comparing recent notes only", exc
                )
        return found

    def find(self, text: str, *, ignore: str | None = None) -> str | None:
        """The path of an active note saying the same thing as ``text``, if any."""
        fp = contextfs_text.fingerprint(text)
        words = word_set(text)
        guard = guarded_words(words)
        best: tuple[float, str] | None = None
        # Recent notes first, in memory (no reads); a winner must still exist (a rolled-back
        # transaction leaves an entry behind).
        for rel, (other_fp, other, other_guard) in reversed(self._recent.items()):
            if rel == ignore:
                continue
            same = other_fp == fp or (
                words and other_guard == guard and jaccard(words, other) >= self._near
            )
            if same and self._ctx.exists(rel):
                return rel
        for rel in self._candidates(text):
            if rel == ignore or not rel.endswith(".md"):
                continue
            try:
                doc = self._ctx.get(rel)
            except ContextFSError:
                self._recent.pop(rel, None)  # rolled back, deleted or unreadable
                continue
            if str(doc.metadata.get("status", "active")) != "active":
                continue
            if contextfs_text.fingerprint(doc.body) == fp:
                return rel
            other = word_set(doc.body)
            if not words or guarded_words(other) != guard:
                continue
            score = jaccard(words, other)
            if score >= self._near and (best is None or (score, rel) > best):
                best = (score, rel)
        return best[1] if best else None
