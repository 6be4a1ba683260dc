"""Turning a user's query and filters into a Whoosh query, and cutting snippets.

Queries come from agents as often as from people, so the parser is forgiving where a
question is natural language (plain words are OR-ed and ranked by how many match) and
strict where a typo would silently change the meaning (unbalanced parentheses, unknown
fields, wildcards that would expand to half the vocabulary): those raise
``SearchIndexError`` with a hint instead of returning something surprising.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from whoosh import query as wq
from whoosh.qparser import FieldAliasPlugin, MultifieldParser, OrGroup
from whoosh.qparser.plugins import GtLtPlugin

from ..errors import SearchIndexError
from .schema import WORD, FusedStemmingAnalyzer, parse_when

__all__ = [
    "MAX_EXPANSION",
    "MAX_QUERY_CHARS",
    "ParsedQuery",
    "PhraseCheck",
    "build_filter",
    "check_expansion",
    "loosen_phrases",
    "make_snippet",
    "parse_query",
    "strip_frontmatter",
]

MAX_QUERY_CHARS = 2000
MAX_CLAUSES = 64
#: How many index terms one wildcard or prefix may expand to before the query is refused.
MAX_EXPANSION = 512
SEARCH_FIELDS = ["title", "meta", "body"]
FIELD_BOOSTS = {"title": 3.0, "meta": 2.0, "body": 1.0}
_TEXT_FIELDS = {"title", "meta", "body"}
_FIELD_ALIASES = {"tags": ["tag"], "kind": ["folder_kind"], "title": ["name"]}
_KNOWN_FIELDS = set(SEARCH_FIELDS) | {"tags", "path", "kind", "author", "trust", "updated", "tag", "name"}
_HINT = (
    "use plain words, \"quoted phrases\", AND/OR/NOT, (groups), tag:x, path:folder, "
    "updated:>2026-01-01 or updated:[2026-01-01 TO 2026-06-30], or * for the most recent notes"
)
_FIELD_REF = re.compile(r"(?<![\w\"])([A-Za-z_][\w-]*):(?!//)(?=\S)")
_DATE_CLAUSE = re.compile(
    r"(?<!\S)updated:(?:\[\s*(?P<a>[^\]\s]*)\s+(?:to|TO)\s+(?P<b>[^\]\s]*)\s*\]|(?P<op>[<>]=?)?(?P<v>[^\s)]+))"
)


@dataclass
class ParsedQuery:
    """A parsed query plus what snippets and ranking need to know about it."""

    query: wq.Query
    most_recent: bool = False
    words: list[str] = field(default_factory=list)


_PARSERS: dict[int, MultifieldParser] = {}


def _parser(schema: Any) -> MultifieldParser:
    """One parser per schema object: building one costs more than parsing a query."""
    cached = _PARSERS.get(id(schema))
    if cached is not None and cached.schema is schema:
        return cached
    # A plain OR (no coordination factor): BM25 already sums per-word scores, so notes
    # matching more words rank higher, and Whoosh can skip low-scoring blocks.
    parser = MultifieldParser(SEARCH_FIELDS, schema, fieldboosts=FIELD_BOOSTS, group=OrGroup)
    parser.add_plugin(FieldAliasPlugin(_FIELD_ALIASES))
    parser.add_plugin(GtLtPlugin())
    _PARSERS[id(schema)] = parser
    return parser


def _date_bound(text: str, *, end: bool) -> datetime:
    """'2026', '2026-09', '2026-09-14' or a full ISO time, as the start (or end) of that period."""
    text = text.strip()
    try:
        if re.fullmatch(r"\d{4}", text):
            start = datetime(int(text), 1, 1)
            stop = datetime(int(text) + 1, 1, 1)
        elif re.fullmatch(r"\d{4}-\d{1,2}", text):
            y, m = (int(x) for x in text.split("-"))
            start = datetime(y, m, 1)
            stop = datetime(y + (m == 12), m % 12 + 1, 1)
        elif re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", text):
            start = datetime.fromisoformat("-".join(f"{int(x):02d}" if i else x for i, x in enumerate(text.split("-"))))
            stop = start + timedelta(days=1)
        else:
            moment = parse_when(text)
            if moment is None:
                raise ValueError(text)
            return moment
    except ValueError:
        raise SearchIndexError(
            f"cannot read the date {text!r} in the query; write dates as 2026, 2026-09 or 2026-09-14"
        ) from None
    return stop - timedelta(microseconds=1) if end else start


def _date_query(match: re.Match[str]) -> wq.Query:
    if match.group("a") is not None:
        a, b = match.group("a"), match.group("b")
        low = _date_bound(a, end=False) if a and a != "*" else None
        high = _date_bound(b, end=True) if b and b != "*" else None
        return wq.DateRange("updated", low, high)
    op, value = match.group("op"), match.group("v")
    if not op:
        return wq.DateRange("updated", _date_bound(value, end=False), _date_bound(value, end=True))
    if op == ">":
        return wq.DateRange("updated", _date_bound(value, end=True), None, startexcl=True)
    if op == ">=":
        return wq.DateRange("updated", _date_bound(value, end=False), None)
    if op == "<":
        return wq.DateRange("updated", None, _date_bound(value, end=False), endexcl=True)
    return wq.DateRange("updated", None, _date_bound(value, end=True))


def _check_syntax(text: str) -> None:
    depth = 0
    in_quote = False
    for ch in text:
        if ch == '"':
            in_quote = not in_quote
        elif not in_quote and ch == "(":
            depth += 1
        elif not in_quote and ch == ")":
            depth -= 1
            if depth < 0:
                break
    if in_quote:
        raise SearchIndexError(f"the query has an unclosed quote; close the phrase with \" or drop it; {_HINT}")
    if depth != 0:
        raise SearchIndexError(f"the query has unbalanced parentheses; close every ( with ); {_HINT}")
    unquoted = re.sub(r'"[^"]*"', " ", text)
    for match in _FIELD_REF.finditer(unquoted):
        name = match.group(1)
        if name not in _KNOWN_FIELDS:
            raise SearchIndexError(
                f"unknown field {name!r} in the query; known fields are "
                f"{', '.join(sorted(_KNOWN_FIELDS - {'name'}))}; {_HINT}"
            )


def _split_not(q: wq.Query) -> wq.Query:
    """Make 'a b NOT c' mean (a OR b) minus c; a bare NOT inside an OR would match everything."""
    if isinstance(q, wq.Or):
        negatives = [_split_not(k.query) for k in q.subqueries if isinstance(k, wq.Not)]
        positives = [_split_not(k) for k in q.subqueries if not isinstance(k, wq.Not)]
        kids = positives
        if negatives:
            base = q.__class__(positives, boost=q.boost, scale=getattr(q, "scale", None)) if positives else wq.Every()
            if len(positives) == 1:
                base = positives[0]
            neg = negatives[0] if len(negatives) == 1 else wq.Or(negatives)
            return wq.AndNot(base, neg)
        return q.__class__(kids, boost=q.boost, scale=getattr(q, "scale", None))
    if isinstance(q, wq.And):
        negatives = [_split_not(k.query) for k in q.subqueries if isinstance(k, wq.Not)]
        positives = [_split_not(k) for k in q.subqueries if not isinstance(k, wq.Not)]
        base = wq.And(positives, boost=q.boost) if len(positives) > 1 else (positives[0] if positives else wq.Every())
        if negatives:
            return wq.AndNot(base, negatives[0] if len(negatives) == 1 else wq.Or(negatives))
        return base
    if isinstance(q, wq.Not):
        return wq.AndNot(wq.Every(), _split_not(q.query))
    if isinstance(q, wq.AndNot):
        return wq.AndNot(_split_not(q.a), _split_not(q.b))
    if isinstance(q, wq.AndMaybe):
        return wq.AndMaybe(_split_not(q.a), _split_not(q.b))
    return q


_QUALIFIERS = {"path", "tags", "kind", "author", "trust"}


def _is_qualifier(q: wq.Query) -> bool:
    leaves = list(_leaves(q))
    return bool(leaves) and all(leaf.field() in _QUALIFIERS for leaf in leaves)


def _narrow(q: wq.Query) -> wq.Query:
    """'postgres tag:adr path:project' means postgres *within* that tag and folder.

    Plain words are OR-ed, but a field clause written next to them is a qualifier, so it
    is required rather than just one more way to match. Qualifiers alone (tag:a OR tag:b)
    keep their own operators.
    """
    if not isinstance(q, wq.Or):
        return q
    quals = [k for k in q.subqueries if _is_qualifier(k)]
    rest = [k for k in q.subqueries if not _is_qualifier(k)]
    if not quals or not rest:
        return q
    words = rest[0] if len(rest) == 1 else q.__class__(rest, boost=q.boost, scale=getattr(q, "scale", None))
    return wq.And([words, *quals])


def _leaves(q: wq.Query) -> Iterable[wq.Query]:
    if q.is_leaf():
        yield q
        return
    for child in q.children():
        yield from _leaves(child)


_PLAIN_WORDS = re.compile(r"[\w\s]+")
#: Words Whoosh's parser reads as operators (case-sensitive, as Whoosh matches them).
_OPERATORS = frozenset({"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE"})


def _plain_words(text: str, schema: Any) -> ParsedQuery | None:
    """The parsed form of a query of plain words only, built without Whoosh's parser.

    An agent's question is almost always this shape, and Whoosh's parser (plugins, a
    tagging pass, then ``normalize()`` deep-copying every term) took about a millisecond of
    a query. The result is exactly what the full path builds (a test compares them): an OR
    over the three text fields with their boosts, one term per distinct stem, in order.
    Anything else (operators, quotes, fields, wildcards, punctuation) returns None.
    """
    if not _PLAIN_WORDS.fullmatch(text):
        return None
    tokens = text.split()
    if len(tokens) > MAX_CLAUSES or any(t in _OPERATORS for t in tokens):
        return None
    analyzer = schema["body"].analyzer
    if not isinstance(analyzer, FusedStemmingAnalyzer) or any(schema[n].analyzer is not analyzer for n in SEARCH_FIELDS):
        return None
    stems: list[str] = []
    for token in tokens:
        found = [t.text for t in analyzer(token, mode="query")]
        if len(found) > 1:
            return None
        if found and found[0] not in stems:
            stems.append(found[0])
    if not stems:
        return None  # only stop words: the full path explains the problem
    terms = [wq.Term(name, stem, boost=FIELD_BOOSTS[name]) for stem in stems for name in SEARCH_FIELDS]
    return ParsedQuery(wq.Or(terms), words=stems)


def parse_query(text: object, schema: Any) -> ParsedQuery:
    """Parse ``text``; raise SearchIndexError (with a hint) when it is malformed or too big."""
    if not isinstance(text, str):
        raise SearchIndexError(f"a query must be a string, not {type(text).__name__}; {_HINT}")
    if len(text) > MAX_QUERY_CHARS:
        raise SearchIndexError(
            f"the query is {len(text)} characters, over the {MAX_QUERY_CHARS}-character limit; "
            "search for a few distinctive words instead"
        )
    if "\x00" in text:
        raise SearchIndexError(f"the query contains NUL bytes; {_HINT}")
    stripped = text.strip()
    if not stripped:
        raise SearchIndexError(f"the query is empty; {_HINT}")
    if stripped == "*":
        return ParsedQuery(wq.Every(), most_recent=True)
    fast = _plain_words(stripped, schema)
    if fast is not None:
        return fast
    _check_syntax(stripped)
    dates = [_date_query(m) for m in _DATE_CLAUSE.finditer(stripped)]
    rest = _DATE_CLAUSE.sub(" ", stripped).strip()
    if rest in ("", "*"):
        base: wq.Query = wq.Every()
        most_recent = True
    else:
        try:
            base = _parser(schema).parse(rest, normalize=False)
        except SearchIndexError:
            raise
        except Exception as exc:  # whoosh raises assorted errors on odd input
            raise SearchIndexError(f"cannot parse the query ({exc}); {_HINT}") from None
        if base is wq.NullQuery or isinstance(base, type(wq.NullQuery)):
            raise SearchIndexError(f"the query has no searchable words (only stop words or symbols); {_HINT}")
        most_recent = False
        base = _narrow(_split_not(base)).normalize()
    leaves = list(_leaves(base))
    if len(leaves) > MAX_CLAUSES * len(SEARCH_FIELDS):
        raise SearchIndexError(
            f"the query has too many terms ({len(leaves) // len(SEARCH_FIELDS)}); keep it under {MAX_CLAUSES} words"
        )
    for leaf in leaves:
        if isinstance(leaf, wq.Every) and leaf.fieldname:
            raise SearchIndexError(f"a bare * inside a query matches everything; drop it or search for * alone; {_HINT}")
        if isinstance(leaf, (wq.Wildcard, wq.Prefix)):
            stem = re.split(r"[*?]", leaf.text, maxsplit=1)[0]
            if len(stem) < 2:
                raise SearchIndexError(
                    f"the wildcard {leaf.text!r} is too broad; put at least two letters before * or ?"
                )
    words: list[str] = []
    for leaf in leaves:
        if leaf.field() in _TEXT_FIELDS:
            if isinstance(leaf, wq.Phrase):
                words.extend(leaf.words)
            elif isinstance(leaf, (wq.Term, wq.Prefix, wq.Wildcard)):
                words.append(re.split(r"[*?]", str(leaf.text), maxsplit=1)[0])
    words = list(dict.fromkeys(w for w in words if w))
    final = wq.And([base, *dates]) if dates else base
    return ParsedQuery(final, most_recent=most_recent, words=words)


# ------------------------------------------------------------------ phrases on the body
# The body is indexed without positions (reading them was half of a query's time), so a
# quoted phrase cannot be matched by the index alone. The index finds candidates that hold
# every word of the phrase; the phrase itself is then checked against the file's text, which
# is the truth anyway. Title and meta keep positions: they are short and Whoosh matches
# phrases in them exactly.
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


def check_expansion(q: wq.Query, reader: Any) -> None:
    """Refuse wildcards and prefixes that would expand to more than ``MAX_EXPANSION`` terms."""
    for leaf in _leaves(q):
        if isinstance(leaf, (wq.Wildcard, wq.Prefix)):
            count = sum(1 for _ in itertools.islice(leaf._btexts(reader), MAX_EXPANSION + 1))
            if count > MAX_EXPANSION:
                raise SearchIndexError(
                    f"{leaf.text!r} matches more than {MAX_EXPANSION} different words; "
                    "make the wildcard more specific"
                )


def _as_list(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise SearchIndexError(f"the {name} filter must be a string or a list of strings")


def _moment(value: Any, name: str, *, end: bool) -> datetime:
    if isinstance(value, datetime):
        return parse_when(value) or value
    if isinstance(value, date):
        return _date_bound(value.isoformat(), end=end)
    if isinstance(value, str):
        return _date_bound(value, end=end)
    raise SearchIndexError(f"the {name} filter must be a date, a datetime or an ISO string like 2026-09-14")


FILTERS = ("author", "folder", "include_trash", "kind", "since", "tag", "tags", "trust", "until")


def build_filter(path_rel: str, filters: dict[str, Any]) -> tuple[wq.Query | None, bool]:
    """The filter query for ``path=`` and keyword filters, and whether trash is included."""
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise SearchIndexError(
            f"unknown search filter {sorted(unknown)[0]!r}; use one of {', '.join(FILTERS)}"
        )
    parts: list[wq.Query] = []
    if path_rel:
        parts.append(wq.Term("path", path_rel))
    for name in ("tag", "tags"):
        if filters.get(name) is not None:
            for tag in _as_list(filters[name], name):
                parts.append(wq.Term("tags", tag.strip().lower()))
    if filters.get("kind") is not None:
        parts.append(wq.Or([wq.Term("kind", k) for k in _as_list(filters["kind"], "kind")]))
    if filters.get("folder") is not None:
        folders = [f.strip("/") for f in _as_list(filters["folder"], "folder")]
        parts.append(wq.Or([wq.Term("path", f) for f in folders if f]))
    if filters.get("author") is not None:
        options: list[wq.Query] = []
        for who in _as_list(filters["author"], "author"):
            options.append(wq.Term("author", who))
            if who == "agent":  # 'agent' means any agent, named or not
                options.append(wq.Prefix("author", "agent:"))
        parts.append(wq.Or(options))
    if filters.get("trust") is not None:
        parts.append(wq.Or([wq.Term("trust", t) for t in _as_list(filters["trust"], "trust")]))
    since, until = filters.get("since"), filters.get("until")
    if since is not None or until is not None:
        parts.append(wq.DateRange(
            "updated",
            _moment(since, "since", end=False) if since is not None else None,
            _moment(until, "until", end=True) if until is not None else None,
        ))
    include_trash = bool(filters.get("include_trash", False))
    if not parts:
        return None, include_trash
    return (parts[0] if len(parts) == 1 else wq.And(parts)), include_trash


# ------------------------------------------------------------------ snippets
_SPACE = re.compile(r"\s+")


def strip_frontmatter(text: str) -> str:
    """The body of a markdown file, found without parsing YAML (snippets only need text)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return text
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].rstrip() != "---":
        return text
    match = re.search(r"^(?:---|\.\.\.)[ \t]*\r?$", text[first_nl + 1:], re.MULTILINE)
    if match is None:
        return text
    return text[first_nl + 1 + match.end():].lstrip("\r\n")


def _prefixes(words: list[str]) -> list[str]:
    """What to look for in the text for each query word, longest first.

    Index terms are stems ('polici'); one letter is cut so 'policy' and 'policies' both match.
    """
    out = {(w[:-1] if len(w) > 4 else w) for w in (word.lower() for word in words)}
    return sorted((p for p in out if p), key=len, reverse=True)


_MAX_MATCHES = 400


def _word_starts(body: str, prefixes: list[str]) -> list[tuple[int, str]]:
    """``(position, prefix)`` of every word of ``body`` that starts with a prefix, in order.

    The same matches as the regex ``\b(prefix|...)`` with IGNORECASE, found with
    ``str.find`` on the lower-cased text (C speed; the regex tried every position). Where
    lower-casing changes the text's length (a few Unicode letters) the regex is used.
    """
    low = body.lower()
    if len(low) != len(body):
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, prefixes)) + ")", re.IGNORECASE)
        return [(m.start(), m.group(1).lower()) for m in itertools.islice(pattern.finditer(body), _MAX_MATCHES)]
    taken: dict[int, str] = {}
    for prefix in prefixes:  # longest first: a position keeps the longest prefix, as the regex does
        i = low.find(prefix)
        found = 0
        while i >= 0 and found < _MAX_MATCHES:
            if i not in taken and (i == 0 or not (low[i - 1].isalnum() or low[i - 1] == "_")):
                taken[i] = prefix
                found += 1
            i = low.find(prefix, i + 1)
    return sorted(taken.items())[:_MAX_MATCHES]


def make_snippet(body: str, words: list[str], width: int = 200) -> str:
    """About ``width`` characters of ``body`` around the densest cluster of query words."""
    prefixes = _prefixes(words)
    start = 0
    if prefixes:
        matches = _word_starts(body, prefixes)
        if matches:
            best, best_score = matches[0][0], 0
            wanted = len({w for _, w in matches})  # the most distinct words any window can hold
            for i, (pos, _) in enumerate(matches):
                distinct = {w for p, w in matches[i:i + 12] if p < pos + width}
                if len(distinct) > best_score:
                    best, best_score = pos, len(distinct)
                    if best_score >= wanted:  # every query word is in this window: no better one
                        break
            start = max(0, best - width // 4)
            while start > 0 and not body[start - 1].isspace() and best - start < width // 2:
                start -= 1
    else:
        # No words to show (a '*' or filter-only query): skip a leading heading line.
        lines = body.lstrip().splitlines()
        while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
            lines.pop(0)
        body = "\n".join(lines)
    chunk = body[start:start + width + 40]
    text = _SPACE.sub(" ", chunk).strip()
    if len(text) > width:
        cut = text.rfind(" ", 0, width)
        text = text[: cut if cut > width // 2 else width]
    return text
