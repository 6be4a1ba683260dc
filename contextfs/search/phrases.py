"""Quoted phrases on the body, which the index stores without word positions.

Reading positions was half of a query's time, so a quoted phrase cannot be matched by the
index alone. The index finds candidates that hold every word of the phrase; the phrase
itself is then checked against the file's text, which is the truth anyway. Title and meta
keep positions: they are short and Whoosh matches phrases in them exactly.
"""

from __future__ import annotations

from typing import Any

from whoosh import query as wq

from ..errors import SearchIndexError
from .analyzers import WORD

__all__ = ["PhraseCheck", "loosen_phrases"]

_HINT = "write the phrase on its own or with AND/OR between plain parts"


def _body_phrase(q: wq.Query) -> bool:
    return isinstance(q, wq.Phrase) and q.fieldname == "body"


def _has_body_phrase(q: wq.Query) -> bool:
    return _body_phrase(q) or (not q.is_leaf() and any(_has_body_phrase(k) for k in q.children()))


def _loosen(q: wq.Query) -> wq.Query:
    """A query matching a superset of ``q``'s documents, with no phrase on the body.

    A body phrase becomes the AND of its words; a negated part that holds a body phrase
    is dropped (excluding nothing keeps the candidates a superset). ``PhraseCheck`` then
    decides each candidate exactly.
    """
    if _body_phrase(q):
        terms = [wq.Term("body", w, boost=q.boost) for w in q.words]
        return terms[0] if len(terms) == 1 else wq.And(terms, boost=q.boost)
    if not _has_body_phrase(q):
        return q
    if isinstance(q, wq.Not):
        return wq.Every()
    if isinstance(q, wq.AndNot):
        return _loosen(q.a) if _has_body_phrase(q.b) else wq.AndNot(_loosen(q.a), q.b)
    if isinstance(q, (wq.AndMaybe, wq.Require)):
        return q.__class__(_loosen(q.a), _loosen(q.b))
    if isinstance(q, (wq.And, wq.Or, wq.DisjunctionMax)):
        return q.__class__([_loosen(k) for k in q.subqueries], boost=q.boost)
    raise SearchIndexError(f"a quoted phrase cannot be used inside {type(q).__name__}; {_HINT}")


def _body_tokens(analyzer: Any, body: str) -> dict[str, list[int]]:
    """stem -> positions in ``body``, numbered as the index numbers them (stop words skipped)."""
    out: dict[str, list[int]] = {}
    stems = analyzer.stems(body) if hasattr(analyzer, "stems") else [t.text for t in analyzer(body)]
    for pos, stem in enumerate(stems):
        out.setdefault(stem, []).append(pos)
    return out


def _phrase_in(tokens: dict[str, list[int]], words: list[str], slop: int) -> bool:
    current: set[int] = set(tokens.get(words[0], ()))
    for word in words[1:]:
        if not current:
            return False
        if slop == 1:
            current = {p for p in tokens.get(word, ()) if p - 1 in current}
        else:
            current = {p for p in tokens.get(word, ()) if any(0 < p - q <= slop for q in current)}
    return bool(current)


def _starts_word(text: str, i: int) -> bool:
    """True when a word of the analyzer's tokenizer starts at ``text[i]``."""
    if i == 0:
        return True
    before = text[i - 1]
    if before.isalnum() or before == "_":
        return False
    return not (before == "." and i >= 2 and (text[i - 2].isalnum() or text[i - 2] == "_"))


def _phrase_at_anchors(analyzer: Any, body: str, words: list[str]) -> bool:
    """Adjacent-phrase check that stems only the words right after each candidate start.

    Porter stemming only rewrites the end of a word (at most the last three letters of
    the stem differ from the word), so every word whose stem is ``words[0]`` starts with
    that stem minus three letters; each such place is checked by stemming forward.
    """
    low = body.lower()
    first = words[0]
    prefix = first[: max(1, len(first) - 3)]
    n = len(words)
    i = low.find(prefix)
    while i >= 0:
        if _starts_word(low, i):
            got = 0
            for match in WORD.finditer(low, i):
                stem = analyzer.stem_of(match.group())
                if stem is None:
                    if got == 0:
                        break  # the anchor itself is a stop word
                    continue
                if stem != words[got]:
                    break
                got += 1
                if got == n:
                    return True
        i = low.find(prefix, i + 1)
    return False


class PhraseCheck:
    """Exact evaluation of a query whose body phrases the index could only approximate.

    ``loose`` is what Whoosh runs (a superset of the true matches); ``holds(docnum, body)``
    decides a candidate exactly: body phrases against the text, every other part of the
    query by the documents Whoosh says match it.
    """

    def __init__(self, query: wq.Query, loose: wq.Query, searcher: Any, analyzer: Any) -> None:
        self.query = query
        self.loose = loose
        self.searcher = searcher
        self.analyzer = analyzer
        self._sets: dict[int, frozenset[int]] = {}

    def _docs(self, q: wq.Query) -> frozenset[int]:
        got = self._sets.get(id(q))
        if got is None:
            got = self._sets[id(q)] = frozenset(self.searcher.docs_for_query(q))
        return got

    def holds(self, docnum: int, body: str) -> bool:
        tokens: dict[str, list[int]] | None = None

        def ev(q: wq.Query) -> bool:
            nonlocal tokens
            if _body_phrase(q):
                if q.words and max(1, int(q.slop)) == 1 and hasattr(self.analyzer, "stem_of"):
                    return _phrase_at_anchors(self.analyzer, body, q.words)
                if tokens is None:
                    tokens = _body_tokens(self.analyzer, body)
                return bool(q.words) and _phrase_in(tokens, q.words, max(1, int(q.slop)))
            if not _has_body_phrase(q):
                return docnum in self._docs(q)
            if isinstance(q, wq.Not):
                return not ev(q.query)
            if isinstance(q, wq.AndNot):
                return ev(q.a) and not ev(q.b)
            if isinstance(q, wq.Require):
                return ev(q.a) and ev(q.b)
            if isinstance(q, wq.AndMaybe):
                return ev(q.a)
            if isinstance(q, wq.And):
                return all(ev(k) for k in q.subqueries)
            return any(ev(k) for k in q.subqueries)  # Or, DisjunctionMax

        return ev(self.query)


def loosen_phrases(q: wq.Query) -> wq.Query | None:
    """The index-only superset of ``q`` when it has phrases on the body, else None."""
    if not _has_body_phrase(q):
        return None
    return _loosen(q).normalize()
