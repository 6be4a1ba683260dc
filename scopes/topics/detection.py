"""Which topic owns a message: deterministic, in-process, no model and no tokens spent.

Detection decides which topic's context to load before the model sees a message, so
it must be cheap and give the same answer every time. Two stages, first hit wins:

1. **Names.** Each topic's name (``billing-migration`` -> "billing migration"), title and
   ``aliases`` are matched against word windows of the message with difflib, so
   "switch to the biling migraton" still finds ``billing-migration``.
2. **BM25** over each topic's title, description (the cue), one-line summary,
   vocabulary and aliases, with the words, stop words, stems and BM25 of
   :mod:`contextfs.text.analysis`. The best topic must reach
   ``threshold`` and beat the runner-up by ``margin`` (a ratio); otherwise the message
   is ambiguous and nothing is returned, because a wrong switch costs more than none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from contextfs.text import analysis as contextfs_text
from contextfs.text.scoring import bm25_scores

__all__ = [
    "DEFAULT_FUZZY_RATIO",
    "DEFAULT_MARGIN",
    "DEFAULT_THRESHOLD",
    "Detection",
    "DetectionDoc",
    "bm25_scores",
    "detect",
    "fuzzy_match",
    "keywords",
    "tokenize",
]

#: Minimum BM25 score for the best topic; calibrated on the sample tree (see tests).
DEFAULT_THRESHOLD = 2.0
#: The best BM25 score must be at least this many times the runner-up's.
DEFAULT_MARGIN = 1.5
#: difflib ratio for a window of the message to count as naming a topic.
DEFAULT_FUZZY_RATIO = 0.85


def tokenize(text: str) -> list[str]:
    """The terms of ``text`` (:func:`contextfs.text.analysis.terms`: stop words out, stems in)."""
    return contextfs_text.terms(str(text))


def keywords(text: str) -> set[str]:
    return set(tokenize(text))


@dataclass(frozen=True)
class DetectionDoc:
    """What detection knows about one topic."""

    name: str
    names: tuple[str, ...]  # name, title, aliases: matched fuzzily
    text: str  # description, summary, vocabulary: scored with BM25


@dataclass(frozen=True)
class Detection:
    """The outcome for one message: the topic (or None), how it was found, and the scores."""

    name: str | None
    method: str  # "name", "bm25" or "none"
    score: float
    scores: tuple[tuple[str, float], ...] = ()
    matched: str | None = None


def _words(text: str) -> list[str]:
    return contextfs_text.words(str(text))


def fuzzy_match(message: str, phrase: str, ratio: float = DEFAULT_FUZZY_RATIO) -> float:
    """The best similarity of ``phrase`` to a window of the message's words (0 when below ``ratio``).

    Single-word phrases must be at least 5 characters and match almost exactly, so a
    short name like "ops" does not fire on every message that contains "top".
    """
    target = _words(phrase)
    if not target:
        return 0.0
    joined = " ".join(target)
    if len(target) == 1 and len(joined) < 5:
        return 1.0 if joined in _words(message) else 0.0
    words = _words(message)
    # Cheap gate before difflib: a typo rarely changes a word's first three letters.
    prefixes = {w[:3] for w in words}
    if not any(w[:3] in prefixes for w in target if len(w) >= 3):
        return 0.0
    best = 0.0
    size = len(target)
    for width in {max(1, size - 1), size, size + 1}:
        for start in range(0, max(1, len(words) - width + 1)):
            window = " ".join(words[start : start + width])
            if not window:
                continue
            if window == joined:
                return 1.0
            matcher = SequenceMatcher(None, window, joined, autojunk=False)
            if matcher.real_quick_ratio() < ratio or matcher.quick_ratio() < ratio:
                continue
            best = max(best, matcher.ratio())
    needed = max(ratio, 0.95) if size == 1 else ratio
    return best if best >= needed else 0.0


def detect(
    message: str,
    docs: Sequence[DetectionDoc],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    margin: float = DEFAULT_MARGIN,
    fuzzy_ratio: float = DEFAULT_FUZZY_RATIO,
) -> Detection:
    """The topic a message is about, by name first and BM25 second; ``name=None`` when unsure."""
    best_name: tuple[float, int, str, str] | None = None
    for doc in docs:
        for phrase in doc.names:
            score = fuzzy_match(message, phrase, fuzzy_ratio)
            if score:
                key = (score, len(phrase), doc.name, phrase)
                if best_name is None or key[:2] > best_name[:2]:
                    best_name = key
    if best_name is not None:
        return Detection(
            name=best_name[2], method="name", score=round(best_name[0], 4), matched=best_name[3]
        )

    query = tokenize(message)
    scores = bm25_scores(query, [tokenize(d.text + " " + " ".join(d.names)) for d in docs])
    ranked = sorted(zip((d.name for d in docs), scores, strict=True), key=lambda p: (-p[1], p[0]))
    shown = tuple((name, round(score, 4)) for name, score in ranked if score > 0)
    if not ranked or ranked[0][1] < threshold:
        return Detection(
            name=None, method="none", score=ranked[0][1] if ranked else 0.0, scores=shown
        )
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    if runner_up > 0 and ranked[0][1] < runner_up * margin:
        return Detection(name=None, method="none", score=round(ranked[0][1], 4), scores=shown)
    return Detection(name=ranked[0][0], method="bm25", score=round(ranked[0][1], 4), scores=shown)
