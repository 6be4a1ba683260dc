"""The on-disk form of a topic: four plain files a person can read and edit by hand.

``topics/<slug>/topic.md``        frontmatter (name, title, cue description, status, open,
                                  last_active, one-line summary, vocabulary) + the summary
``topics/<slug>/where-are-we.md`` "where were we?" state in five ``##`` sections
``topics/<slug>/decisions.md``    ``## D<n>: title`` blocks with text, reason, depends_on,
                                  supersedes, time (and superseded_by once replaced)
``topics/<slug>/exchanges.jsonl`` compressed recent exchanges, one JSON object a line

This module only parses and renders text; it never touches the disk, so every write
still goes through the ContextManager (one gate, one commit per operation). Parsing is
forgiving on purpose: a person may add a section, a paragraph or a key, and it survives
a round trip instead of being silently dropped.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from contextfs import paths
from contextfs.errors import TopicError
from contextfs.fixes import Fix

__all__ = [
    "DECISIONS_FILE",
    "EXCHANGES_FILE",
    "SECTIONS",
    "STATE_FILE",
    "TOPICS_DIR",
    "TOPIC_FILE",
    "WHERE_FILE",
    "Decision",
    "Exchange",
    "WhereAreWe",
    "canonical_section",
    "check_slug",
    "compress",
    "item_text",
    "new_decisions_body",
    "new_where_body",
    "parse_decisions",
    "parse_exchanges",
    "render_decisions",
    "render_exchange_line",
    "slugify",
    "topic_path",
]

TOPICS_DIR = "topics"
TOPIC_FILE = "topic.md"
WHERE_FILE = "where-are-we.md"
DECISIONS_FILE = "decisions.md"
EXCHANGES_FILE = "exchanges.jsonl"
#: Committed bookkeeping shared by all topics: the general summary (body) and which
#: topics were opened since the last compaction (frontmatter). Not a topic folder.
STATE_FILE = f"{TOPICS_DIR}/_state.md"

#: The where-are-we sections, in the order they are written and loaded.
SECTIONS = ("Key Facts", "In Progress", "Pending Notifications", "Recently Completed", "Next Actions")

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")
_HEADING = re.compile(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$")
_DECISION = re.compile(r"^##[ \t]+([A-Za-z][A-Za-z0-9_-]{0,31})[ \t]*:[ \t]*(.*?)[ \t]*$")
_FIELD = re.compile(r"^-[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*:[ \t]?(.*)$")


def slugify(text: str) -> str:
    """A topic name from a title: lowercase ASCII words joined by '-' (at most 48 chars)."""
    return paths.slugify(text, max_len=48)


def check_slug(name: str) -> str:
    """Refuse names that cannot be a topic folder, with the fix in the message."""
    if not isinstance(name, str) or not _SLUG.match(name):
        raise TopicError(
            f"topic name {name!r} is not valid; use 1-64 lowercase letters, digits and '-', "
            "starting with a letter or digit (e.g. 'billing-migration')"
        )
    return name


def topic_path(name: str, file: str = TOPIC_FILE) -> str:
    """``topics/<name>/<file>`` for a checked name."""
    return f"{TOPICS_DIR}/{check_slug(name)}/{file}"


def compress(text: str, limit: int) -> str:
    """Whitespace collapsed and cut to ``limit`` characters with a visible marker."""
    line = " ".join(str(text).split())
    if len(line) <= limit:
        return line
    cut = line[: max(0, limit - 1)].rsplit(" ", 1)[0] if limit > 20 else line[: max(0, limit - 1)]
    return cut + "…"


# ------------------------------------------------------------------ where-are-we
def item_text(raw: str) -> str:
    """One line of an item's text: bullet and checkbox removed, whitespace collapsed."""
    text = " ".join(raw.split())
    if text.startswith("- "):
        text = text[2:]
    for box in ("[ ] ", "[x] ", "[X] "):
        if text.startswith(box):
            text = text[len(box):]
    return text.strip()


@dataclass
class WhereAreWe:
    """The sections of a ``where-are-we.md`` body, each a list of raw items.

    An item is the raw markdown of one bullet (``- text`` plus indented continuation
    lines) or of one free paragraph a person wrote, kept verbatim so hand edits survive.
    """

    preamble: str = "# Where are we\n\n"
    sections: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, body: str) -> WhereAreWe:
        preamble_lines: list[str] = []
        sections: dict[str, list[str]] = {}
        current: list[str] | None = None
        item: list[str] = []

        def flush() -> None:
            if current is not None and item:
                while item and not item[-1].strip():
                    item.pop()
                if item:
                    current.append("\n".join(item))
            item.clear()

        for line in body.split("\n"):
            heading = _HEADING.match(line)
            if heading and not line.startswith("###"):
                flush()
                current = sections.setdefault(heading.group(1).strip(), [])
                continue
            if current is None:
                preamble_lines.append(line)
                continue
            if line.startswith("- ") or line == "-":
                flush()
                item.append(line)
            elif not line.strip():
                if item and not item[0].startswith("- "):
                    flush()  # a free paragraph ends at a blank line
                elif item:
                    item.append(line)
            elif item and (line[:1] in (" ", "\t") or not item[0].startswith("- ")):
                item.append(line)
            else:
                flush()
                item.append(line)
        flush()
        preamble = "\n".join(preamble_lines)
        preamble = preamble.rstrip("\n") + "\n\n" if preamble.strip() else ""
        for name in SECTIONS:
            sections.setdefault(name, [])
        # Blank lines inside a bullet's continuation are kept; trailing ones are not.
        for items in sections.values():
            items[:] = [i.rstrip() for i in items]
        return cls(preamble=preamble, sections=sections)

    def render(self) -> str:
        parts = [self.preamble]
        names = list(SECTIONS) + [n for n in self.sections if n not in SECTIONS]
        for name in names:
            items = self.sections.get(name, [])
            parts.append(f"## {name}\n\n")
            if items:
                parts.append("\n".join(items) + "\n\n")
        return "".join(parts).rstrip("\n") + "\n"

    def section(self, name: str) -> list[str]:
        return self.sections.setdefault(canonical_section(name), [])

    def existing(self, name: str) -> str:
        """The section ``name`` stands for (case and separators aside), refusing one the file
        does not have: the five standard sections and any a person added are the list."""
        known = canonical_section(name)
        names = list(self.sections)
        folded = re.sub(r"[^a-z0-9]", "", known.casefold())
        same = [n for n in names if re.sub(r"[^a-z0-9]", "", n.casefold()) == folded]
        if same:
            return same[0]
        close = difflib.get_close_matches(known.casefold(), [n.casefold() for n in names], n=1, cutoff=0.6)
        guess = next((n for n in names if close and n.casefold() == close[0]), None)
        hint = f"did you mean {guess!r}? The sections are" if guess else "the sections are"
        raise TopicError(f"there is no section {known!r}; {hint}: {', '.join(names)}", fix=Fix("new-section"))

    def append(self, section: str, text: str, *, new_section: bool = False) -> str:
        """Add ``- text`` (continuation lines indented) to a section; return the raw item.

        The section must exist unless ``new_section`` asks for a new one, so a typo is
        refused instead of starting a section of its own.
        """
        if not new_section:
            section = self.existing(section)
        lines = [ln.rstrip() for ln in str(text).strip().split("\n")]
        if not lines or not lines[0]:
            raise TopicError("the item text is empty; pass the text to add")
        if lines[0].startswith("- "):
            lines[0] = lines[0][2:].lstrip()  # the caller wrote the bullet already
        raw = "- " + lines[0] + "".join("\n  " + ln.strip() if ln.strip() else "\n" for ln in lines[1:])
        self.section(section).append(raw)
        return raw

    def find(self, section: str, query: str) -> int:
        """Index of the one item in ``section`` whose text equals or contains ``query``."""
        items = self.section(section)
        wanted = " ".join(str(query).split()).casefold()
        if not wanted:
            raise TopicError("the item to find is empty; quote part of the item's text")
        exact = [i for i, raw in enumerate(items) if item_text(raw).casefold() == wanted]
        if len(exact) == 1:
            return exact[0]
        hits = [i for i, raw in enumerate(items) if wanted in item_text(raw).casefold()]
        if len(hits) == 1:
            return hits[0]
        listing = "; ".join(item_text(r)[:60] for r in items) or "(the section is empty)"
        if not hits:
            raise TopicError(f"no item in {section!r} matches {query!r}; items are: {listing}")
        raise TopicError(f"{len(hits)} items in {section!r} match {query!r}; quote a longer, unique part")


def canonical_section(name: str) -> str:
    """Match a section name case- and separator-insensitively ('in-progress' -> 'In Progress')."""
    folded = re.sub(r"[^a-z]", "", str(name).casefold())
    for known in SECTIONS:
        if re.sub(r"[^a-z]", "", known.casefold()) == folded:
            return known
    if not folded:
        raise TopicError(f"section {name!r} is empty; use one of: {', '.join(SECTIONS)}")
    return str(name).strip()


def new_where_body(title: str) -> str:
    return WhereAreWe(preamble=f"# Where are we: {title}\n\n", sections={s: [] for s in SECTIONS}).render()


# ------------------------------------------------------------------ decisions
@dataclass
class Decision:
    """One recorded decision; ``id`` is stable (``D<n>``) and never reused."""

    id: str
    title: str
    text: str = ""
    reason: str = ""
    depends_on: list[str] = field(default_factory=list)
    supersedes: str | None = None
    superseded_by: str | None = None
    time: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def number(self) -> int:
        digits = re.sub(r"\D", "", self.id)
        return int(digits) if digits else 0


def _id_list(value: str) -> list[str]:
    value = value.strip()
    if value.lower() in ("", "null", "none", "[]", "~"):
        return []
    value = value.strip("[]")
    return [v.strip().strip("'\"") for v in value.split(",") if v.strip().strip("'\"")]


def _one_id(value: str) -> str | None:
    ids = _id_list(value)
    return ids[0] if ids else None


def parse_decisions(body: str) -> tuple[str, list[Decision]]:
    """The preamble and decisions of a ``decisions.md`` body, in file order."""
    preamble: list[str] = []
    decisions: list[Decision] = []
    current: Decision | None = None
    last_key: str | None = None
    for line in body.split("\n"):
        head = _DECISION.match(line)
        if head and not line.startswith("###"):
            current = Decision(id=head.group(1), title=head.group(2))
            decisions.append(current)
            last_key = None
            continue
        if current is None:
            preamble.append(line)
            continue
        fld = _FIELD.match(line)
        if fld:
            last_key = fld.group(1).lower()
            _set_field(current, last_key, fld.group(2).strip())
        elif line.strip() and last_key and line[:1] in (" ", "\t"):
            _set_field(current, last_key, _get_field(current, last_key) + " " + line.strip())
        elif line.strip():
            current.extra["note"] = (current.extra.get("note", "") + " " + line.strip()).strip()
    return "\n".join(preamble).rstrip("\n") + "\n\n", decisions


def _get_field(d: Decision, key: str) -> str:
    if key in ("text", "reason", "time"):
        return getattr(d, key)
    return d.extra.get(key, "")


def _set_field(d: Decision, key: str, value: str) -> None:
    if key in ("text", "reason", "time"):
        setattr(d, key, value)
    elif key == "depends_on":
        d.depends_on = _id_list(value)
    elif key == "supersedes":
        d.supersedes = _one_id(value)
    elif key == "superseded_by":
        d.superseded_by = _one_id(value)
    else:
        d.extra[key] = value


def render_decisions(preamble: str, decisions: list[Decision]) -> str:
    out = [preamble if preamble.strip() else "# Decisions\n\n"]
    for d in decisions:
        lines = [f"## {d.id}: {' '.join(d.title.split())}"]
        lines.append(f"- text: {' '.join(d.text.split())}")
        lines.append(f"- reason: {' '.join(d.reason.split())}")
        lines.append(f"- depends_on: [{', '.join(d.depends_on)}]")
        lines.append(f"- supersedes: {d.supersedes or 'null'}")
        if d.superseded_by:
            lines.append(f"- superseded_by: {d.superseded_by}")
        lines.append(f"- time: {d.time}")
        for key, value in d.extra.items():
            if key != "note":
                lines.append(f"- {key}: {value}")
        if d.extra.get("note"):
            lines.append("")
            lines.append(d.extra["note"])
        out.append("\n".join(lines) + "\n\n")
    return "".join(out).rstrip("\n") + "\n"


def new_decisions_body(title: str) -> str:
    return f"# Decisions: {title}\n"


# ------------------------------------------------------------------ exchanges
@dataclass(frozen=True)
class Exchange:
    """One compressed exchange: what was said, what was answered, when, in which session."""

    time: str
    user: str
    agent: str
    session: str | None = None
    id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"time": self.time, "user": self.user, "agent": self.agent}
        if self.session:
            data["session"] = self.session
        if self.id:
            data["id"] = self.id
        data.update(self.extra)
        return data


def parse_exchanges(text: str, path: str = EXCHANGES_FILE) -> list[tuple[str, Exchange | None]]:
    """Every line of an exchanges file with its parsed exchange (None for a line that is not one).

    Lines are kept verbatim so that moving them (spawn) moves exactly what was there,
    including a line a person broke by hand.
    """
    out: list[tuple[str, Exchange | None]] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            out.append((line, None))
            continue
        if not isinstance(data, dict):
            out.append((line, None))
            continue
        known = {"time", "user", "agent", "session", "id"}
        out.append((line, Exchange(
            time=str(data.get("time", "")),
            user=str(data.get("user", "")),
            agent=str(data.get("agent", "")),
            session=data.get("session"),
            id=data.get("id"),
            extra={k: v for k, v in data.items() if k not in known},
        )))
    return out


def render_exchange_line(exchange: Exchange) -> str:
    return json.dumps(exchange.to_dict(), ensure_ascii=False, separators=(", ", ": "))
