"""The query language: an agent's question as plain words, operators only when unambiguous.

Queries come from language models as often as from people, and a question is natural
language: "When did Caroline go to the support group?", "What is CS:GO?", a stray quote.
So text is plain words unless it is written as an operator beyond doubt:

* ``AND``, ``OR``, ``NOT`` in upper case (lower-case ``and`` is a word);
* ``"quoted phrases"`` when the quotes pair up (an odd quote out is punctuation), in a
  query that is not a question: a quoted span next to plain words ('When did he start
  playing "TMNT Shredder's Revenge"?') is part of a question, its words counting
  :data:`~contextfs.text.analysis.QUOTED_WEIGHT` times, never a filter (the text may spell it
  otherwise); a phrase alone, or joined by an operator or a field, is a phrase query;
* ``(groups)`` when the parentheses balance (a stray one is punctuation);
* ``field:value`` when ``field`` is a known field, written in lower case with the value
  right after the colon (``CS:GO`` and ``colour:red`` are words, ``path: x`` too);
* ``*`` after at least two letters (``webho*``); ``?`` is always punctuation.

Everything else is a word, read by :mod:`contextfs.text.analysis` (stop words and question words
dropped, stems matched). Natural text therefore never raises. What does raise
``SearchIndexError``, with a hint, is operator syntax that cannot mean anything: an
operator with nothing on one side (``foo AND``), a field clause that would match
everything (``title:*``), a date it cannot read, a query too long or too large.

The parser builds Whoosh query objects directly (no Whoosh parser): plain words become
one flat OR of terms over the text fields, which :mod:`.rank` scores block-at-a-time.
Words side by side also match a conversation turn's neighbouring messages (``context``,
at :data:`~contextfs.text.scoring.NEIGHBOUR_WEIGHT`); a query of plain words only (a question)
also says which periods it names (:mod:`contextfs.text.periods`), for ranking to prefer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from whoosh import query as wq

from ..errors import SearchIndexError
from ..text import analysis as contextfs_text
from ..text import scoring
from ..text.periods import Period, periods
from .lexing import HINT, WILDCARD, Parser, Tok, is_question, tokens

__all__ = [
    "FAR_FIELD",
    "FIELD_BOOSTS",
    "MAX_CLAUSES",
    "MAX_QUERY_CHARS",
    "NEIGHBOUR_FIELD",
    "ParsedQuery",
    "SEARCH_FIELDS",
    "parse_query",
]

MAX_QUERY_CHARS = 2000
#: Distinct words a query may hold (plain-word questions keep their first this many).
MAX_CLAUSES = 64
SEARCH_FIELDS = ("title", "meta", "body")
#: Where plain words also look: a turn's neighbouring messages, at a neighbour's weight.
NEIGHBOUR_FIELD = "context"
#: ... and the messages two steps away, at a neighbour's weight squared.
FAR_FIELD = "far"
FIELD_BOOSTS = {
    "title": 3.0,
    "meta": 2.0,
    "body": 1.0,
    NEIGHBOUR_FIELD: scoring.NEIGHBOUR_WEIGHT,
    FAR_FIELD: scoring.NEIGHBOUR_WEIGHT**2,
}
_TEXT_FIELDS = frozenset(SEARCH_FIELDS)
#: The fields that also hold words as written (contextfs.text.analysis.forms), for plain words.
_FORM_FIELDS = ("body", NEIGHBOUR_FIELD, FAR_FIELD)
#: Known field names (as written in a query) -> index field.
#: Field clauses that narrow plain words instead of adding to them.
_QUALIFIERS = frozenset({"path", "tags", "kind", "author", "trust", "speaker", "role"})


@dataclass
class ParsedQuery:
    """A parsed query plus what snippets and ranking need to know about it.

    ``query`` is None when the text holds no searchable word (only stop words or
    punctuation): such a query matches nothing, and that is not an error. ``plain`` is
    True for a query of plain words only (no operator, quote, field or wildcard), and
    ``periods`` are the days, months and years such a query names.
    """

    query: wq.Query | None
    most_recent: bool = False
    words: list[str] = field(default_factory=list)
    plain: bool = False
    periods: tuple[Period, ...] = ()
    text: str = ""


class _Compiler:
    """Parsed structure -> Whoosh query; parts without searchable words drop out."""

    def __init__(self, plain_cap: int | None, weights: dict[str, float] | None = None) -> None:
        self.words: list[str] = []
        self.star = False
        self.plain_cap = plain_cap
        self.weights = weights or {}

    # -- leaves
    def _terms(
        self,
        stems: list[str],
        fieldname: str | None,
        *,
        neighbours: bool = False,
        forms: list[str] | None = None,
    ) -> wq.Query | None:
        stems = list(dict.fromkeys(stems))
        if not stems:
            return None
        if fieldname is None:
            self.words.extend(stems)
            fields = (*SEARCH_FIELDS, NEIGHBOUR_FIELD, FAR_FIELD) if neighbours else SEARCH_FIELDS
            weight = self.weights
            leaves = [
                wq.Term(f, s, boost=FIELD_BOOSTS[f] * weight.get(s, 1.0))
                for s in stems
                for f in fields
            ]
            # Words as written match their form in the fields that hold forms (contextfs.text.analysis.forms).
            exact = contextfs_text.EXACT_WEIGHT
            leaves += [
                wq.Term(f, form, boost=FIELD_BOOSTS[f] * exact)
                for form in dict.fromkeys(forms or ())
                for f in _FORM_FIELDS
                if f in fields
            ]
            return wq.Or(leaves)
        if fieldname in _TEXT_FIELDS:
            self.words.extend(stems)
            leaves = [wq.Term(fieldname, s) for s in stems]
            return leaves[0] if len(leaves) == 1 else wq.Or(leaves)
        return None

    def _phrase(self, text: str, fieldname: str | None) -> wq.Query | None:
        if fieldname is not None and fieldname not in _TEXT_FIELDS:
            return self._exact(fieldname, text)
        stems = contextfs_text.terms(text)
        if len(stems) < 2:
            return self._terms(stems, fieldname)
        self.words.extend(stems)
        if fieldname is not None:
            return wq.Phrase(fieldname, stems)
        return wq.Or([wq.Phrase(f, stems, boost=FIELD_BOOSTS[f]) for f in SEARCH_FIELDS])

    def _wild(self, pattern: str, fieldname: str | None) -> wq.Query:
        fields = [fieldname] if fieldname is not None else list(SEARCH_FIELDS)
        head = pattern.split("*", 1)[0]
        if fieldname is None or fieldname in _TEXT_FIELDS:
            self.words.append(head)
        simple = pattern.endswith("*") and "*" not in pattern[:-1]
        make: Callable[[str], wq.Query] = (
            (lambda f: wq.Prefix(f, head)) if simple else (lambda f: wq.Wildcard(f, pattern))
        )
        leaves = [make(f) for f in fields]
        if fieldname is None:
            for leaf, f in zip(leaves, fields):  # noqa: B905 - same length
                leaf.boost = FIELD_BOOSTS[f]
        return leaves[0] if len(leaves) == 1 else wq.Or(leaves)

    @staticmethod
    def _exact(fieldname: str, value: str) -> wq.Query | None:
        value = value.strip()
        if fieldname == "tags":
            value = value.lower()
        elif fieldname == "path":
            value = value.strip("/")
        return wq.Term(fieldname, value) if value else None

    def _field(self, tok: Tok) -> wq.Query | None:
        name, value = tok.field, str(tok.value)
        assert name is not None
        if value.strip("*?") == "":
            raise SearchIndexError(
                f"{tok.text!r} would match everything; drop it, or search for * alone; {HINT}"
            )
        if WILDCARD.fullmatch(value):
            return self._wild(value.lower(), name)
        if name in _TEXT_FIELDS:
            return self._terms(contextfs_text.terms(value), name)
        return self._exact(name, value)

    def leaf(self, tok: Tok) -> wq.Query | None:
        if tok.kind == "words":
            return self._terms(tok.value, None)
        if tok.kind == "phrase":
            return self._phrase(tok.value, tok.field)
        if tok.kind == "wild":
            return self._wild(tok.value, None)
        if tok.kind == "field":
            return self._field(tok)
        if tok.kind == "date":
            return tok.value
        if tok.kind == "star":
            self.star = True
            return wq.Every()
        raise AssertionError(tok.kind)  # pragma: no cover

    # -- structure
    def node(self, node: Any, fieldname: str | None = None) -> wq.Query | None:
        kind = node[0]
        if kind == "leaf":
            tok = node[1]
            if fieldname is not None and tok.kind in ("words", "phrase", "wild"):
                tok = Tok(
                    "field" if tok.kind != "phrase" else "phrase",
                    tok.start,
                    tok.end,
                    tok.text,
                    field=fieldname,
                    value=tok.text if tok.kind != "phrase" else tok.value,
                )
            return self.leaf(tok)
        if kind == "field-group":
            return self.group(node[2][1], node[1])
        if kind == "group":
            return self.group(node[1], fieldname)
        if kind == "not":
            inner = self.node(node[1], fieldname)
            return None if inner is None else wq.AndNot(wq.Every(), inner)
        parts = [self.node(child, fieldname) for child in node[1]]
        if kind == "and":
            return self._and(node[1], parts)
        kept = [p for p in parts if p is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else self._or(kept)

    @staticmethod
    def _negated(q: wq.Query | None) -> wq.Query | None:
        """The subtracted part of ``NOT x`` as compiled (AndNot(Every, x)), else None."""
        if isinstance(q, wq.AndNot) and isinstance(q.a, wq.Every):
            return q.b
        return None

    def _and(self, children: list[Any], parts: list[wq.Query | None]) -> wq.Query | None:
        positives = [p for p in parts if p is not None and self._negated(p) is None]
        negatives = [
            self._negated(p) for p in parts if p is not None and self._negated(p) is not None
        ]
        base: wq.Query | None = None
        if positives:
            base = positives[0] if len(positives) == 1 else wq.And(positives)
        if negatives:
            neg = negatives[0] if len(negatives) == 1 else wq.Or(negatives)
            return wq.AndNot(base if base is not None else wq.Every(), neg)
        return base

    @staticmethod
    def _or(parts: list[wq.Query]) -> wq.Query:
        # Plain-word ORs merge into one flat OR of terms (the shape the fast ranker scores).
        if all(type(p) is wq.Or and all(type(k) is wq.Term for k in p.subqueries) for p in parts):
            terms = [k for p in parts for k in p.subqueries]
            return wq.Or(list(dict.fromkeys(terms)))
        return wq.Or(parts)

    def group(self, items: list[Any], fieldname: str | None = None) -> wq.Query | None:
        """Words side by side: OR-ed and ranked; field clauses next to them narrow them.

        ``postgres tag:adr path:project`` means postgres within that tag and folder; date
        clauses are always requirements; ``NOT x`` subtracts x from the rest.
        """
        plain: list[str] = []
        plain_forms: list[str] = []
        positives: list[wq.Query] = []
        qualifiers: list[wq.Query] = []
        dates: list[wq.Query] = []
        negatives: list[wq.Query] = []
        for item in items:
            if item[0] == "leaf" and item[1].kind == "words" and fieldname is None:
                plain.extend(item[1].value)
                plain_forms.extend(contextfs_text.forms(item[1].text))
                continue
            if item[0] == "leaf" and item[1].kind == "date":
                dates.append(item[1].value)
                continue
            q = self.node(item, fieldname)
            if q is None:
                continue
            neg = self._negated(q)
            if neg is not None:
                negatives.append(neg)
            elif _qualifies(q):
                qualifiers.append(q)
            else:
                positives.append(q)
        if plain:
            stems = list(dict.fromkeys(plain))
            if self.plain_cap is not None:
                stems = stems[: self.plain_cap]
            # Words side by side rank a turn by its neighbours too; words joined by an
            # operator (a AND b) must each be in the document itself.
            kept = {contextfs_text.term(f[1:]) for f in plain_forms} & set(stems)
            words = self._terms(
                stems,
                None,
                neighbours=True,
                forms=[f for f in plain_forms if contextfs_text.term(f[1:]) in kept],
            )
            if words is not None:
                positives.insert(0, words)
        if positives:
            base: wq.Query | None = positives[0] if len(positives) == 1 else self._or(positives)
            required = [base, *qualifiers, *dates]
        else:
            base = None
            if len(qualifiers) > 1:
                qualifiers = [wq.Or(qualifiers)]  # qualifiers alone keep their OR
            required = [*qualifiers, *dates]
        core = required[0] if len(required) == 1 else (wq.And(required) if required else None)
        if negatives:
            neg = negatives[0] if len(negatives) == 1 else wq.Or(negatives)
            return wq.AndNot(core if core is not None else wq.Every(), neg)
        return core


def _qualifies(q: wq.Query) -> bool:
    """True when every part of ``q`` is a field clause that narrows (tag:, path:, dates...)."""
    leaves = _leaves(q)
    return bool(leaves) and all(
        leaf.field() in _QUALIFIERS or leaf.field() == "updated" for leaf in leaves
    )


def _leaves(q: wq.Query) -> list[wq.Query]:
    if q.is_leaf():
        return [q]
    return [leaf for child in q.children() for leaf in _leaves(child)]


def parse_query(text: object) -> ParsedQuery:
    """Parse ``text``; raise SearchIndexError (with a hint) only for operator misuse or size."""
    if not isinstance(text, str):
        raise SearchIndexError(f"a query must be a string, not {type(text).__name__}; {HINT}")
    if len(text) > MAX_QUERY_CHARS:
        raise SearchIndexError(
            f"the query is {len(text)} characters, over the {MAX_QUERY_CHARS}-character limit; "
            "search for a few distinctive words instead"
        )
    if "\x00" in text:
        raise SearchIndexError(f"the query contains NUL bytes; {HINT}")
    stripped = text.strip()
    if not stripped:
        raise SearchIndexError(f"the query is empty; {HINT}")
    toks = tokens(stripped)
    weights: dict[str, float] = {}
    if is_question(toks):
        # Quoted spans next to plain words are part of a question: their words rank (with a
        # boost), the question rules stay on, and a span spelled otherwise in the text still finds it.
        weights = contextfs_text.term_weights(stripped)
        toks = [
            t
            if t.kind == "words"
            else Tok("words", t.start, t.end, t.text, value=contextfs_text.terms(t.value))
            for t in toks
        ]
    plain = all(t.kind == "words" for t in toks)
    compiler = _Compiler(MAX_CLAUSES if plain else None, weights)
    query = compiler.group(Parser(toks).group()[1])
    if query is None:
        return ParsedQuery(None)
    leaves = _leaves(query)
    per_word = (
        len(SEARCH_FIELDS) + 2 + len(_FORM_FIELDS)
    )  # a word's stem in each field, its form in three
    if len(leaves) > MAX_CLAUSES * per_word:
        raise SearchIndexError(
            f"the query has too many terms ({len(leaves) // per_word}); keep it under {MAX_CLAUSES} words"
        )
    most_recent = compiler.star and not compiler.words
    return ParsedQuery(
        query,
        most_recent=most_recent,
        words=list(dict.fromkeys(w for w in compiler.words if w)),
        plain=plain,
        periods=periods(stripped) if plain else (),
        text=stripped,
    )
