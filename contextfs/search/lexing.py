"""The query language's tokens: quotes, parentheses, operators, field clauses and words.

Text is read left to right into :class:`Tok` tokens (:func:`tokens`): quotes that pair up
become phrases, parentheses that balance stay as groups, upper-case ``AND``/``OR``/``NOT``
are operators, ``field:value`` with a known field is a field clause, ``ab*`` a wildcard,
and everything else is words, read by :mod:`contextfs.text.analysis`. :class:`Parser` then gives
them structure; :mod:`.query` compiles that into Whoosh queries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import SearchIndexError
from ..text import analysis as contextfs_text
from .filters import date_query

__all__ = ["FIELDS", "HINT", "WILDCARD", "Parser", "Tok", "is_question", "tokens"]

FIELDS = {
    "title": "title",
    "name": "title",
    "meta": "meta",
    "body": "body",
    "tags": "tags",
    "tag": "tags",
    "path": "path",
    "kind": "kind",
    "folder_kind": "kind",
    "author": "author",
    "trust": "trust",
    "speaker": "speaker",
    "role": "role",
    "updated": "updated",
}
HINT = (
    'plain words always work; for operators write AND/OR/NOT in upper case, "quoted phrases", (groups), '
    "tag:x, path:folder, updated:>2026-01-01 or updated:[2026-01-01 TO 2026-06-30], or * for the most recent notes"
)
_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?<![^\s(])updated:(?P<date>\[\s*(?P<a>[^\]\s]*)\s+(?:to|TO)\s+(?P<b>[^\]\s]*)\s*\]|(?P<op>[<>]=?)?(?P<v>[^\s()\"]+))"
    r"|(?P<quote>\")|(?P<open>\()|(?P<close>\))|(?P<chunk>[^\s\"()]+)"
)
_FIELD_CHUNK = re.compile(r"([a-z_]+):(.*)", re.S)
WILDCARD = re.compile(r"[^\W_]{2}[\w.\-]*\*[\w.*\-]*")
_OPERATORS = frozenset({"AND", "OR", "NOT"})


# ------------------------------------------------------------------ tokens
@dataclass
class Tok:
    kind: str  # words, phrase, wild, field, date, star, AND, OR, NOT, open, close
    start: int
    end: int
    text: str = ""
    field: str | None = None  # the index field of a field clause
    value: Any = None  # terms, phrase text, wildcard pattern, a date query, a group of tokens


def lex(text: str) -> list[Tok]:
    """Raw tokens: spaces dropped, dates read, quotes/parens/chunks kept for pairing."""
    out: list[Tok] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "space":
            continue
        if m.group("date") is not None:
            out.append(Tok("date", m.start(), m.end(), m.group(), value=date_query(m)))
        elif kind in ("quote", "open", "close"):
            out.append(Tok(kind, m.start(), m.end(), m.group()))
        else:
            out.append(Tok("chunk", m.start(), m.end(), m.group()))
    return out


def pair_quotes(toks: list[Tok], text: str) -> list[Tok]:
    """Quotes that pair up (left to right) become phrases; an odd one out is punctuation."""
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        if tok.kind != "quote":
            out.append(tok)
            i += 1
            continue
        close = next((j for j in range(i + 1, len(toks)) if toks[j].kind == "quote"), None)
        if close is None:
            i += 1  # unpaired: punctuation
            continue
        end = toks[close].end
        out.append(
            Tok(
                "phrase",
                tok.start,
                end,
                text[tok.start : end],
                value=text[tok.end : toks[close].start],
            )
        )
        i = close + 1
    return out


def pair_parens(toks: list[Tok]) -> list[Tok]:
    """Parentheses that balance stay as groups; a stray one is punctuation."""
    stack: list[int] = []
    keep: set[int] = set()
    for i, tok in enumerate(toks):
        if tok.kind == "open":
            stack.append(i)
        elif tok.kind == "close" and stack:
            keep.update((stack.pop(), i))
    return [t for i, t in enumerate(toks) if t.kind not in ("open", "close") or i in keep]


def classify(toks: list[Tok]) -> list[Tok]:
    """Chunks become operators, field clauses, wildcards or plain words."""
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        i += 1
        if tok.kind != "chunk":
            out.append(tok)
            continue
        chunk = tok.text
        if chunk in _OPERATORS:
            out.append(Tok(chunk, tok.start, tok.end, chunk))
            continue
        if chunk == "*":
            out.append(Tok("star", tok.start, tok.end, chunk))
            continue
        m = _FIELD_CHUNK.fullmatch(chunk)
        name = FIELDS.get(m.group(1)) if m else None
        if m and name is not None and name != "updated":
            value = m.group(2)
            if value:
                out.append(Tok("field", tok.start, tok.end, chunk, field=name, value=value))
                continue
            nxt = toks[i] if i < len(toks) else None
            if nxt is not None and nxt.start == tok.end and nxt.kind in ("phrase", "open"):
                out.append(Tok("field", tok.start, tok.end, chunk, field=name, value=None))
                continue
        if WILDCARD.fullmatch(chunk.rstrip(",.;:!?")):
            out.append(Tok("wild", tok.start, tok.end, chunk, value=chunk.rstrip(",.;:!?").lower()))
            continue
        out.append(Tok("words", tok.start, tok.end, chunk, value=contextfs_text.terms(chunk)))
    return out


# ------------------------------------------------------------------ structure
class Parser:
    """Recursive descent over the classified tokens: NOT binds tightest, then AND, then OR;
    words written next to each other form a group (OR-ed, see ``_Compiler.group``)."""

    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def group(self) -> tuple[str, list[Any]]:
        items = []
        while (tok := self.peek()) is not None and tok.kind != "close":
            items.append(self.or_())
        return ("group", items)

    def _operand(self, op: str) -> None:
        nxt = self.peek()
        if nxt is None or nxt.kind in ("close", "AND", "OR"):
            where = "at the end" if nxt is None else f"before {nxt.text!r}"
            raise SearchIndexError(
                f"{op} needs a word after it ({op} {where}); add the word, or write '{op.lower()}' "
                f"in lower case to search for it as a word; {HINT}"
            )

    def or_(self) -> Any:
        left = self.and_()
        while (tok := self.peek()) is not None and tok.kind == "OR":
            self.take()
            self._operand("OR")
            left = ("or", [left, self.and_()])
        return left

    def and_(self) -> Any:
        left = self.unary()
        while (tok := self.peek()) is not None and tok.kind == "AND":
            self.take()
            self._operand("AND")
            left = ("and", [left, self.unary()])
        return left

    def unary(self) -> Any:
        tok = self.peek()
        if tok is not None and tok.kind == "NOT":
            self.take()
            self._operand("NOT")
            return ("not", self.unary())
        return self.atom()

    def atom(self) -> Any:
        tok = self.take()
        if tok.kind in ("AND", "OR"):
            raise SearchIndexError(
                f"{tok.kind} needs words on both sides ({tok.kind} at the start of a query or group); "
                f"add the word before it, or write '{tok.kind.lower()}' in lower case; {HINT}"
            )
        if tok.kind == "open":
            inner: tuple[str, list[Any]] | None = self.group()
            self.take()  # the matching close (parentheses were paired)
            return inner
        if tok.kind == "field" and tok.value is None:
            nxt = self.take()
            inner = self.group() if nxt.kind == "open" else None
            if nxt.kind == "open":
                self.take()
                return ("field-group", tok.field, inner)
            return (
                "leaf",
                Tok("phrase", nxt.start, nxt.end, nxt.text, field=tok.field, value=nxt.value),
            )
        return ("leaf", tok)


def is_question(toks: list[Tok]) -> bool:
    """True for plain words with quoted spans among them, and nothing else (no operator,
    field, group, wildcard or date): a question that quotes a title, not a phrase query."""
    return (
        any(t.kind == "phrase" for t in toks)
        and any(t.kind == "words" and t.value for t in toks)
        and all(t.kind == "words" or (t.kind == "phrase" and t.field is None) for t in toks)
    )


def tokens(text: str) -> list[Tok]:
    """The classified tokens of a query's (stripped) text."""
    return classify(pair_parens(pair_quotes(lex(text), text)))
