"""What the search index holds for one file, and the Whoosh schema that holds it.

Files are the truth: the index keeps only what ranking and filtering need. The body is
indexed but never stored (snippets are cut from the file at query time), which keeps the
index small and means a stale index can never show text the file no longer has.
"""

from __future__ import annotations

import hashlib
import logging
import re
from datetime import datetime, timezone
from typing import Any

from whoosh.fields import DATETIME, ID, KEYWORD, STORED, TEXT, Schema

from ..changes.markers import conflict_markers, strip_conflict_markers
from ..document import blob_version, load
from ..errors import ContentError, ContextFSError, FrontmatterError
from ..files import paths
from ..files.confined import TMP_SUFFIX, RootFiles
from ..text import analysis as contextfs_text
from ..text.periods import aware_moment
from ..text.turns import is_log, known_as, read_turns
from .analyzers import FormsAnalyzer, StemFrequency, StemPositions, TextAnalyzer

__all__ = [
    "ALIAS_SEP",
    "INDEXED_SUFFIXES",
    "SCHEMA_FINGERPRINT",
    "TRASH_FILES",
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


def _text_field(
    analyzer: Any, *, positions: bool, stored: bool = False, field_boost: float = 1.0
) -> TEXT:
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
        # names the speaker goes by in that conversation ("Mel<TAB>Melanie", contextfs.text.turns.known_as).
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
    desc = ";".join(
        f"{name}:{type(schema[name]).__name__}:{getattr(schema[name], 'field_boost', 1)}"
        for name in schema.names()
    )
    rules = f"text{contextfs_text.RULES_VERSION}|{type(schema['body'].analyzer).__name__}"
    return hashlib.sha1(
        f"v4|{desc}|{rules}|{','.join(INDEXED_SUFFIXES)}|logs".encode()
    ).hexdigest()[:16]


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
    moment = aware_moment(value)
    return moment.astimezone(timezone.utc).replace(tzinfo=None) if moment is not None else None


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
        log.warning(
            "%s: lines %s are not messages; not indexing them", rel, ", ".join(map(str, bad[:5]))
        )
    aka = known_as(turns)
    # Quarantined messages are hidden from recall, so their words must not lift a neighbour.
    shown = [t.content[:_MAX_CONTEXT_CHARS] if t.trust != "quarantined" else "" for t in turns]
    docs = []
    for i, turn in enumerate(turns):
        doc = dict(base)
        doc.update(
            {
                "line": turn.line,
                "title": "",
                "meta": " ".join((turn.speaker or "", *aka.get(turn.speaker or "", ()))),
                "body": turn.content[:_MAX_INDEXED_CHARS],
                "alias": ",".join(
                    f"{name}{ALIAS_SEP}{turn.speaker}".replace(",", " ")
                    for name in aka.get(turn.speaker or "", ())
                ),
                "context": "\n".join(shown[j] for j in (i - 1, i + 1) if 0 <= j < len(shown)),
                "far": "\n".join(shown[j] for j in (i - 2, i + 2) if 0 <= j < len(shown)),
                "speaker": turn.speaker or "",
                "role": turn.role,
                "trust": turn.trust
                if turn.trust in ("trusted", "untrusted", "quarantined")
                else "untrusted",
                "updated": parse_when(turn.time) or base["updated"],
            }
        )
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
            "rel": rel,
            "path": ",".join(s.replace(",", " ") for s in _ancestors(rel)),
            "tags": "",
            "kind": top,
            "author": "",
            "trash": "0",
            "updated": mtime,
            "version": blob_version(data),
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
    abstract = " ".join(
        _text(meta.get(k)) for k in ("abstract", "description", "overview", "summary")
    )
    return [
        {
            "rel": rel,
            "line": None,
            "path": ",".join(s.replace(",", " ") for s in scopes),
            "title": title,
            "meta": "\n".join(
                (abstract.strip(), "\n".join(_HEADING.findall(body)), " ".join(tags))
            ),
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
        }
    ]
