"""How the index reads text: Whoosh analyzers and postings formats on contextfs's own rules.

Every word goes through :mod:`contextfs.text.analysis` (normalisation, stop words, stems),
so the index reads a text the way every other ranker does; the body and the neighbour
fields also keep a word as written (:class:`FormsAnalyzer`), and the postings formats
count stems rather than Whoosh's own tokens.
"""

from __future__ import annotations

import re
from typing import Any

from whoosh.analysis import Analyzer, Token
from whoosh.formats import Frequency, Positions
from whoosh.system import pack_uint

from ..text import analysis as contextfs_text

__all__ = ["WORD", "FormsAnalyzer", "StemFrequency", "StemPositions", "TextAnalyzer"]


#: How the analyzer splits text into words (before normalisation, stop words and stemming).
WORD = contextfs_text.WORD


class TextAnalyzer(Analyzer):
    """The index's analyzer: the terms of :mod:`contextfs.text.analysis`, as Whoosh tokens.

    Every ranker in contextfs reads text through :mod:`contextfs.text.analysis`; the index does too,
    so a word the index holds is the word page-in, memory and topic detection match on.
    Positions are numbered over terms only (stop words take none), and queries are
    analysed the same way, so phrases match across stop words.
    """

    def __getstate__(self) -> dict[str, Any]:  # Whoosh pickles the schema
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    @staticmethod
    def stem_of(word: str) -> str | None:
        """The term for one lower-case word, or None when the index drops it (stop word, size)."""
        return contextfs_text.term(word)

    @staticmethod
    def stems(value: str) -> list[str]:
        """The terms of ``value`` in order; a term's index is its position in the index."""
        return contextfs_text.terms(value)

    @staticmethod
    def stem_counts(value: str) -> dict[str, int]:
        """How often each term occurs in ``value``: the same as counting ``stems(value)``."""
        return contextfs_text.term_counts(value)

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Any:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        pos = start_pos
        matches = WORD.finditer(value) if tokenize else re.finditer(r"(?s)\A.*", value)
        for match in matches:
            word = match.group().casefold()
            text = contextfs_text.term(word)
            stopped = text is None
            if stopped:
                if removestops:
                    continue
                text = word
            token.text = text
            token.stopped = stopped
            token.boost = 1.0
            if keeporiginal:
                token.original = match.group()
            if positions:
                token.pos = pos
                pos += 1
            if chars:
                token.startchar = start_char + match.start()
                token.endchar = start_char + match.end()
            yield token


class FormsAnalyzer(TextAnalyzer):
    """The body's and neighbours' analyzer: every term, and after it each word whose stem is
    not the word itself, as written (:func:`contextfs.text.analysis.forms`), at the same position.

    Questions match a word's form at :data:`~contextfs.text.analysis.EXACT_WEIGHT` beyond its stem;
    ``stems()`` (phrases, positions) stays the terms alone.
    """

    @staticmethod
    def stem_counts(value: str) -> dict[str, int]:
        """How often each term and each form occurs in ``value``."""
        return contextfs_text.term_counts(value, with_forms=True)

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Any:
        if not tokenize:
            yield from super().__call__(
                value,
                positions,
                chars,
                keeporiginal,
                removestops,
                start_pos,
                start_char,
                tokenize,
                mode,
                **kwargs,
            )
            return
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        pos = start_pos
        for match in WORD.finditer(value):
            word = match.group().casefold()
            found = contextfs_text.term(word)
            if found is None:
                if removestops:
                    continue
                texts: tuple[str, ...] = (word,)
            else:
                texts = (found, *contextfs_text.forms(word))
            for text in texts:
                token.text = text
                token.stopped = found is None
                token.boost = 1.0
                if keeporiginal:
                    token.original = match.group()
                if positions:
                    token.pos = pos
                if chars:
                    token.startchar = start_char + match.start()
                    token.endchar = start_char + match.end()
                yield token
            pos += 1


class StemFrequency(Frequency):
    """Whoosh's Frequency postings, from ``stem_counts()`` (same bytes).

    Whoosh's own path pulls every token through two generators and a Token object; for
    the body that was most of the time a write spent in the index.
    """

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Any:
        if not isinstance(value, str) or not hasattr(analyzer, "stem_counts"):
            return super().word_values(value, analyzer, **kwargs)
        fb = self.field_boost
        return ((w, n, n * fb, pack_uint(n)) for w, n in analyzer.stem_counts(value).items())


class StemPositions(Positions):
    """Whoosh's Positions postings from ``stems()`` (positions are the stop-word-free indexes)."""

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Any:
        if not isinstance(value, str) or not hasattr(analyzer, "stems"):
            yield from super().word_values(value, analyzer, **kwargs)
            return
        fb = self.field_boost
        poses: dict[str, list[int]] = {}
        for pos, w in enumerate(analyzer.stems(value)):
            poses.setdefault(w, []).append(pos)
        for w, poslist in poses.items():
            yield (w, len(poslist), len(poslist) * fb, self.encode(poslist))
