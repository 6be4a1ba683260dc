"""What the search index holds for one file, and the Whoosh schema that holds it.

Files are the truth: the index keeps only what ranking and filtering need. The body is
indexed but never stored (snippets are cut from the file at query time), which keeps the
index small and means a stale index can never show text the file no longer has.
"""

from __future__ import annotations

import hashlib
import logging
import re
from datetime import date, datetime, timezone
from typing import Any

from whoosh.analysis import Analyzer, Token
from whoosh.fields import DATETIME, ID, KEYWORD, STORED, TEXT, Schema
from whoosh.formats import Frequency, Positions
from whoosh.system import pack_uint

from .. import paths
from .. import text as contextfs_text
from ..document import blob_version, load
from ..errors import ContentError, ContextFSError, FrontmatterError
from ..files import TMP_SUFFIX, RootFiles
from ..sync import conflict_markers, strip_conflict_markers
from ..turns import is_log, known_as, read_turns

__all__ = [
    "ALIAS_SEP",
    "FormsAnalyzer",
    "INDEXED_SUFFIXES",
    "SCHEMA_FINGERPRINT",
    "StemFrequency",
    "StemPositions",
    "TRASH_FILES",
    "TextAnalyzer",
    "WORD",
    "extract",
    "indexable",
    "make_schema",
    "parse_when",
    "walk_indexable",
]

log = logging.getLogger(__name__)

#: Text files that are notes (conversation logs, ``sessions/*.jsonl``, are indexed per turn).
INDEXED_SUFFIXES = (".md", ".markdown", ".txt")
#: Soft-deleted files live below this prefix inside each trash entry.
TRASH_FILES = re.compile(r"^\.trash/[^/]+/files/.+")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_MAX_INDEXED_CHARS = 1 << 20
#: Between a speaker's other name and the speaker in the ``alias`` field.
ALIAS_SEP = "\t"
#: How much of each neighbouring message a turn's ``context`` holds.
_MAX_CONTEXT_CHARS = 1 << 14


#: How the analyzer splits text into words (before normalisation, stop words and stemming).
WORD = contextfs_text.WORD


class TextAnalyzer(Analyzer):
    """The index's analyzer: the terms of :mod:`contextfs.text`, as Whoosh tokens.

    Every ranker in contextfs reads text through :mod:`contextfs.text`; the index does too,
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

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Any:
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
    not the word itself, as written (:func:`contextfs.text.forms`), at the same position.

    Questions match a word's form at :data:`~contextfs.text.EXACT_WEIGHT` beyond its stem;
    ``stems()`` (phrases, positions) stays the terms alone.
    """

    @staticmethod
    def stem_counts(value: str) -> dict[str, int]:
        """How often each term and each form occurs in ``value``."""
        return contextfs_text.term_counts(value, with_forms=True)

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Any:
        if not tokenize:
            yield from super().__call__(value, positions, chars, keeporiginal, removestops, start_pos, start_char,
                                        tokenize, mode, **kwargs)
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


def _text_field(analyzer: Any, *, positions: bool, stored: bool = False, field_boost: float = 1.0) -> TEXT:
    field = TEXT(analyzer=analyzer, phrase=positions, stored=stored, field_boost=field_boost)
    fmt = StemPositions if positions else StemFrequency
    field.format = fmt(field_boost=field.format.field_boost)
    return field


def make_schema() -> Schema:
    """The index layout. Change it and bump ``SCHEMA_FINGERPRINT``'s inputs: old indexes rebuild."""
    # One analyzer object shared by the text fields, so its stem cache is shared too; the
    # body and the neighbours also hold words as written (FormsAnalyzer).
    ana = TextAnalyzer()
    forms = FormsAnalyzer()
    return Schema(
        # The file. A conversation log has one document per message (its turns), each
        # with the message's line number in ``line``; every other file has one document.
        rel=ID(stored=True),
        line=STORED(),
        # Every ancestor folder and the file itself: 'path:topics' matches whole components.
        path=KEYWORD(commas=True),
        title=_text_field(ana, positions=True, stored=True, field_boost=3.0),
        # Abstract, headings and tag words share one field: every searched field multiplies
        # the matchers a query needs, and Whoosh's cost grows with them.
        meta=_text_field(ana, positions=True, field_boost=2.0),
        # No positions for the body: reading them was half of a query's time. Quoted phrases
        # in the body are checked against the file text instead (search_query.PhraseCheck).
        body=_text_field(forms, positions=False),
        # Conversation turns: the messages just before and after, so plain words rank a
        # turn by its neighbours too, at NEIGHBOUR_WEIGHT (an answer is often the turn
        # after the one that repeats the question's words). Empty for every other file.
        context=_text_field(forms, positions=False),
        # ... and the messages two steps away, at NEIGHBOUR_WEIGHT squared.
        far=_text_field(forms, positions=False),
        # Exact tags for tag: clauses and filters; their words again for plain-word queries.
        tags=KEYWORD(commas=True, lowercase=True, scorable=True, stored=True),
        kind=ID(stored=True),
        author=ID(stored=True),
        trust=ID(stored=True),
        # Conversation turns: who spoke ("Caroline") and in which role ("user"), and the other
        # names the speaker goes by in that conversation ("Mel<TAB>Melanie", contextfs.turns.known_as).
        speaker=ID(stored=True),
        alias=KEYWORD(commas=True),
        role=ID(stored=True),
        trash=ID(),
        updated=DATETIME(stored=True, sortable=True),
        version=STORED(),
        stat=STORED(),
    )


def _fingerprint() -> str:
    schema = make_schema()
    desc = ";".join(f"{name}:{type(schema[name]).__name__}:{getattr(schema[name], 'field_boost', 1)}"
                    for name in schema.names())
    rules = f"text{contextfs_text.RULES_VERSION}|{type(schema['body'].analyzer).__name__}"
    return hashlib.sha1(f"v4|{desc}|{rules}|{','.join(INDEXED_SUFFIXES)}|logs".encode()).hexdigest()[:16]


SCHEMA_FINGERPRINT = _fingerprint()


def indexable(rel: str) -> bool:
    """True for root-relative paths of files the index covers (notes and conversation logs)."""
    if is_log(rel):
        return True
    if not rel.lower().endswith(INDEXED_SUFFIXES) or rel.endswith(TMP_SUFFIX):
        return False
    top = rel.split("/", 1)[0]
    if top == ".trash":
        return bool(TRASH_FILES.match(rel))
    return not (top in paths.INTERNAL_DIRS or top == ".git" or rel in paths.MANAGED_FILES)


def walk_indexable(files: RootFiles) -> dict[str, tuple[int, int]]:
    """Every indexable file of the root with its (mtime_ns, size); links are never followed."""
    out: dict[str, tuple[int, int]] = {}
    for st in files.walk(skip_top=frozenset({".contextfs"})):
        if indexable(st.rel):
            out[st.rel] = (st.mtime_ns, st.size)
    return out


def parse_when(value: Any) -> datetime | None:
    """A frontmatter date (ISO string, date, datetime) as naive UTC, or None."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(_text(v) for v in value)
    return "" if value is None else str(value)


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value)
    elif isinstance(value, (list, tuple, set)):
        items = [str(v) for v in value if isinstance(v, (str, int, float))]
    else:
        return []
    return [t.strip().lower().replace(",", " ") for t in items if t and t.strip()]


def _real_title(meta: dict[str, Any], body: str) -> str:
    """The frontmatter title, else the first heading, else nothing.

    A file name is not a title: archival notes are named after their first words (a date
    and a slug, often chat filler), and boosting those as a title ranks the filler.
    """
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    match = _HEADING.search(body)
    return match.group(1).strip() if match else ""


def _turn_docs(base: dict[str, Any], text: str, rel: str) -> list[dict[str, Any]]:
    """One document per message of a conversation log: who said what, when, and next to what."""
    turns, bad = read_turns(text)
    if bad:
        log.warning("%s: lines %s are not messages; not indexing them", rel, ", ".join(map(str, bad[:5])))
    aka = known_as(turns)
    # Quarantined messages are hidden from recall, so their words must not lift a neighbour.
    shown = [t.content[:_MAX_CONTEXT_CHARS] if t.trust != "quarantined" else "" for t in turns]
    docs = []
    for i, turn in enumerate(turns):
        doc = dict(base)
        doc.update({
            "line": turn.line, "title": "", "meta": " ".join((turn.speaker or "", *aka.get(turn.speaker or "", ()))),
            "body": turn.content[:_MAX_INDEXED_CHARS],
            "alias": ",".join(f"{name}{ALIAS_SEP}{turn.speaker}".replace(",", " ")
                              for name in aka.get(turn.speaker or "", ())),
            "context": "\n".join(shown[j] for j in (i - 1, i + 1) if 0 <= j < len(shown)),
            "far": "\n".join(shown[j] for j in (i - 2, i + 2) if 0 <= j < len(shown)),
            "speaker": turn.speaker or "", "role": turn.role,
            "trust": turn.trust if turn.trust in ("trusted", "untrusted", "quarantined") else "untrusted",
            "updated": parse_when(turn.time) or base["updated"],
        })
        docs.append(doc)
    return docs


def extract(files: RootFiles, rel: str) -> list[dict[str, Any]] | None:
    """The index documents of one file, or None when it does not exist (or is not text).

    Reads through the confined file layer and the document codec; a file with broken
    frontmatter is still indexed by its raw text so it stays findable, and nothing is
    ever written back. A conversation log yields one document per message.
    """
    try:
        st = files.lstat(rel)
        if st is None or (st.st_mode & 0o170000) != 0o100000:
            return None
        data = files.read(rel)
    except ContextFSError as exc:  # a link on the way, an unreadable file
        log.warning("not indexing %s: %s", rel, exc)
        return None
    if data is None:
        return None
    stored = blob_version(data)
    if conflict_markers(data):
        # A merge a person is in the middle of: index both sides' text, never the markers.
        data = strip_conflict_markers(data)
    mtime = datetime.fromtimestamp(st.st_mtime, timezone.utc).replace(tzinfo=None)
    top = rel.split("/", 1)[0]
    if is_log(rel):
        text = data.decode("utf-8", errors="replace")
        base = {
            "rel": rel, "path": ",".join(s.replace(",", " ") for s in _ancestors(rel)), "tags": "",
            "kind": top, "author": "", "trash": "0", "updated": mtime, "version": blob_version(data),
            "stat": (st.st_mtime_ns, st.st_size),
        }
        return _turn_docs(base, text, rel)
    meta: dict[str, Any] = {}
    try:
        doc = load(data, rel)
        meta, body, version = doc.metadata, doc.body, stored
        title = _real_title(meta, body)
    except FrontmatterError as exc:
        log.warning("indexing %s by its raw text: %s", rel, exc)
        body = data.decode("utf-8", errors="replace")
        version, title = stored, ""
    except ContentError as exc:
        # A binary or non-UTF-8 file is kept in the root but is no document: expected, so quiet.
        log.debug("not indexing %s: %s", rel, exc)
        return None
    body = body[:_MAX_INDEXED_CHARS]
    in_trash = top == ".trash"
    if in_trash:
        original = rel.split("/", 3)[3]
        kind = original.split("/", 1)[0] if "/" in original else ""
    else:
        kind = top if "/" in rel else ""
    scopes = _ancestors(rel)
    updated = parse_when(meta.get("updated")) or parse_when(meta.get("created")) or mtime
    trust = meta.get("trust")
    tags = _tags(meta.get("tags"))
    abstract = " ".join(_text(meta.get(k)) for k in ("abstract", "description", "overview", "summary"))
    return [{
        "rel": rel,
        "line": None,
        "path": ",".join(s.replace(",", " ") for s in scopes),
        "title": title,
        "meta": "\n".join((abstract.strip(), "\n".join(_HEADING.findall(body)), " ".join(tags))),
        "body": body,
        "tags": ",".join(tags),
        "kind": kind,
        "author": str(meta.get("author") or ""),
        "trust": trust if isinstance(trust, str) and trust else "trusted",
        "speaker": "",
        "alias": "",
        "role": "",
        "trash": "1" if in_trash else "0",
        "updated": updated,
        "version": version,
        "stat": (st.st_mtime_ns, st.st_size),
    }]
