"""Structured entries in ``memory/lessons.md`` and ``memory/facts.md``.

The files stay plain markdown a person edits. Everything above the marker line
``<!-- contextfs:entries -->`` is the human part and is kept byte-for-byte; below it the
agent keeps one block per entry::

    ### F-3f9a2c1b
    - date: 2026-11-05
    - task: Upgrade the API to Python 3.13
    - source: 1a2b3c4d5e6f
    - supersedes: [F-77aa0012](#f-77aa0012)

    The API runs on Python 3.13.

A restatement of an existing entry is merged into it (``seen`` counts how often);
a contradiction (one the model names, or a plain one :mod:`.contradictions` finds: same
subject, another value) supersedes it visibly: the old entry stays, struck through, with
``superseded-by`` linking to the new one (the heading id doubles as the anchor GitHub
and most renderers generate). Human-written bullets above the marker can be
superseded the same way: the line is struck through and linked, never deleted.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Literal

from .contradictions import contradicts

__all__ = [
    "MARKER",
    "Change",
    "Entry",
    "EntryFile",
    "normalize",
    "parse_entries",
]

MARKER = "<!-- contextfs:entries -->"
Kind = Literal["fact", "lesson"]
_PREFIX = {"fact": "F", "lesson": "L"}
_HEADING = re.compile(r"^### ([FL]-[0-9a-f]{8})(?::[ \t]+(.*?))?[ \t]*$")
_FIELD = re.compile(r"^- ([a-z-]+):[ \t]*(.*?)[ \t]*$")
_LINK = re.compile(r"\[([FLH]-[0-9a-f]+)\]\(#[^)]*\)")
_BULLET = re.compile(r"^(\s*[-*+]\s+)(.*\S)\s*$")
_STRUCK = re.compile(r"^~~(.*)~~")
_DEFAULT_HEAD = {"fact": "# Facts\n", "lesson": "# Lessons learned\n"}


def normalize(text: str) -> str:
    """The comparison key for "exact duplicates": case, spacing, markup and end punctuation."""
    t = re.sub(r"[*_`~]", "", text).lower()
    t = re.sub(r"\s+", " ", t).strip()
    return t.rstrip(" .;:!")


def _one_line(text: str, limit: int = 200) -> str:
    return " ".join(str(text).replace("·", "-").split())[:limit]


def _anchor(entry_id: str) -> str:
    return f"[{entry_id}](#{entry_id.lower()})"


@dataclass
class Entry:
    """One fact or lesson the agent recorded."""

    id: str
    kind: Kind
    text: str
    title: str | None = None
    date: str | None = None
    task: str | None = None
    source: str | None = None
    superseded_by: str | None = None
    superseded_on: str | None = None
    supersedes: list[str] = field(default_factory=list)
    seen: int = 1
    last_seen: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.superseded_by is None

    def render(self) -> str:
        head = f"### {self.id}" + (f": {_one_line(self.title, 100)}" if self.title else "")
        lines = [head]
        if self.date:
            lines.append(f"- date: {self.date}")
        if self.task:
            lines.append(f"- task: {_one_line(self.task)}")
        if self.source:
            lines.append(f"- source: {self.source}")
        if self.supersedes:
            lines.append(
                "- supersedes: "
                + ", ".join(_anchor(s) if s[0] in "FL" else s for s in self.supersedes)
            )
        if self.superseded_by:
            on = f" on {self.superseded_on}" if self.superseded_on else ""
            lines.append(f"- superseded-by: {_anchor(self.superseded_by)}{on}")
        if self.seen > 1:
            last = f" (last {self.last_seen})" if self.last_seen else ""
            lines.append(f"- seen: {self.seen}{last}")
        for key, value in self.extra.items():
            lines.append(f"- {key}: {_one_line(value)}")
        text = " ".join(self.text.split())
        lines.append("")
        lines.append(f"~~{text}~~" if self.superseded_by else text)
        return "\n".join(lines) + "\n"


def _parse_block(m: re.Match[str], lines: list[str]) -> Entry:
    entry_id, title = m.group(1), m.group(2)
    kind: Kind = "fact" if entry_id.startswith("F") else "lesson"
    entry = Entry(id=entry_id, kind=kind, text="", title=title or None)
    i = 0
    while i < len(lines) and (fm := _FIELD.match(lines[i])):
        key, value = fm.group(1), fm.group(2)
        if key == "date":
            entry.date = value
        elif key == "task":
            entry.task = value
        elif key == "source":
            entry.source = value
        elif key == "supersedes":
            entry.supersedes = _LINK.findall(value) or [value]
        elif key == "superseded-by":
            found = _LINK.findall(value)
            entry.superseded_by = found[0] if found else value.split()[0]
            on = re.search(r"\bon (\S+)", value)
            entry.superseded_on = on.group(1) if on else None
        elif key == "seen":
            num = re.match(r"(\d+)", value)
            entry.seen = int(num.group(1)) if num else 1
            last = re.search(r"\(last ([^)]*)\)", value)
            entry.last_seen = last.group(1) if last else None
        else:
            entry.extra[key] = value
        i += 1
    text = " ".join(" ".join(lines[i:]).split())
    struck = _STRUCK.match(text)
    if struck and text.endswith("~~"):
        text = text[2:-2]
    entry.text = text
    return entry


def parse_entries(body: str) -> tuple[str, list[Entry]]:
    """Split a file body into (human preamble, agent entries)."""
    pre, sep, rest = body.partition(MARKER)
    if not sep:
        return body, []
    entries: list[Entry] = []
    current: re.Match[str] | None = None
    block: list[str] = []
    for line in rest.split("\n"):
        m = _HEADING.match(line)
        if m:
            if current is not None:
                entries.append(_parse_block(current, block))
            current, block = m, []
        elif current is not None:
            block.append(line)
    if current is not None:
        entries.append(_parse_block(current, block))
    return pre, entries


@dataclass(frozen=True)
class Change:
    """What ``EntryFile.add`` did: ``added``, ``merged`` (restatement) or ``superseded``."""

    action: str
    id: str
    target: str | None = None
    text: str = ""


class EntryFile:
    """A parsed lessons/facts file: edit entries in memory, then ``render()`` it back."""

    def __init__(self, body: str | None, kind: Kind) -> None:
        self.kind = kind
        if body is None or not body.strip():
            body = _DEFAULT_HEAD[kind]
        self.preamble, self.entries = parse_entries(body)
        if MARKER not in body:
            self.preamble = body.rstrip("\n") + "\n\n"

    # -------------------------------------------------------------- reading
    def get(self, entry_id: str) -> Entry | None:
        return next((e for e in self.entries if e.id == entry_id), None)

    def _human_bullets(self) -> list[tuple[int, str, bool]]:
        """(line index, text, live) of the bullets in the human part; ids are H-<n> in order.

        Struck-through bullets keep their number so ids stay stable while one batch of
        model decisions is applied.
        """
        out = []
        for i, line in enumerate(self.preamble.split("\n")):
            m = _BULLET.match(line)
            if m:
                out.append((i, m.group(2), not m.group(2).startswith("~~")))
        return out

    def _human_lessons(self) -> list[str]:
        """Headings plus first paragraph of ``### `` sections in the human part."""
        out: list[str] = []
        for section in re.split(r"^### ", self.preamble, flags=re.M)[1:]:
            head, _, rest = section.partition("\n")
            para = rest.strip().split("\n\n")[0]
            out.append(f"{head.strip()}: {' '.join(para.split())}")
        return out

    def existing(self) -> list[tuple[str, str]]:
        """(id, text) of everything live, human and agent-written, for prompts and dedupe."""
        items: list[tuple[str, str]] = []
        if self.kind == "fact":
            items += [
                (f"H-{n}", text)
                for n, (_, text, live) in enumerate(self._human_bullets(), 1)
                if live
            ]
        else:
            items += [(f"H-{n}", text) for n, text in enumerate(self._human_lessons(), 1)]
        items += [(e.id, e.text) for e in self.entries if e.active]
        return items

    def find_contradicted(self, text: str) -> str | None:
        """The id of the live item ``text`` gives another value for (same subject), if any;
        the most recent one when several do (it is the one a reader takes as current)."""
        found = [item_id for item_id, item_text in self.existing() if contradicts(item_text, text)]
        return found[-1] if found else None

    def find_duplicate(self, text: str) -> str | None:
        """The id of a live item with the same normalized text (or lesson body), if any."""
        key = normalize(text)
        for item_id, item_text in self.existing():
            if normalize(item_text) == key or normalize(item_text.partition(": ")[2]) == key:
                return item_id
        return None

    # -------------------------------------------------------------- writing
    def _new_id(self, text: str, date: str | None, task: str | None) -> str:
        taken = {e.id for e in self.entries}
        salt = 0
        while True:
            digest = hashlib.sha1(f"{self.kind}|{text}|{date}|{task}|{salt}".encode()).hexdigest()[
                :8
            ]
            entry_id = f"{_PREFIX[self.kind]}-{digest}"
            if entry_id not in taken:
                return entry_id
            salt += 1

    def _mark_seen(self, target: str, date: str | None) -> bool:
        entry = self.get(target)
        if entry is not None and entry.active:
            entry.seen += 1
            entry.last_seen = date
            return True
        return target.startswith("H-")  # a human bullet: merging means not adding it again

    def _supersede_human(self, target: str, new_id: str, date: str | None) -> bool:
        try:
            n = int(target[2:])
        except ValueError:
            return False
        bullets = self._human_bullets()
        if not 1 <= n <= len(bullets):
            return False
        idx, text, live = bullets[n - 1]
        if not live:
            return False
        lines = self.preamble.split("\n")
        bullet = _BULLET.match(lines[idx])
        assert bullet is not None  # _human_bullets() found this line by the same pattern
        prefix = bullet.group(1)
        on = f", {date}" if date else ""
        lines[idx] = f"{prefix}~~{text}~~ (superseded by {_anchor(new_id)}{on})"
        self.preamble = "\n".join(lines)
        return True

    def add(
        self,
        text: str,
        *,
        title: str | None = None,
        date: str | None = None,
        task: str | None = None,
        source: str | None = None,
        same_as: str | None = None,
        supersedes: str | None = None,
    ) -> Change:
        """Record ``text``: merged into a duplicate, superseding a contradicted item, or new."""
        text = " ".join(text.split())
        dup = self.find_duplicate(text)
        if dup is not None and self._mark_seen(dup, date):
            return Change("merged", dup, dup, text)
        live = {item_id for item_id, _ in self.existing()}
        if same_as and same_as in live and self._mark_seen(same_as, date):
            return Change("merged", same_as, same_as, text)
        entry = Entry(
            id=self._new_id(text, date, task),
            kind=self.kind,
            text=text,
            title=title,
            date=date,
            task=task,
            source=source,
        )
        if not (supersedes and supersedes in live) and self.kind == "fact":
            supersedes = self.find_contradicted(text)  # the plain cases, when the model named none
        if supersedes and supersedes in live:
            old = self.get(supersedes)
            if old is not None:
                old.superseded_by, old.superseded_on = entry.id, date
                entry.supersedes = [supersedes]
            else:
                old_text = dict(self.existing())[supersedes]
                if self._supersede_human(supersedes, entry.id, date):
                    entry.supersedes = ['"' + _one_line(old_text, 80).replace('"', "'") + '"']
            self.entries.append(entry)
            return Change("superseded", entry.id, supersedes, text)
        self.entries.append(entry)
        return Change("added", entry.id, None, text)

    def consolidate(
        self,
        ids: list[str],
        text: str,
        *,
        title: str | None,
        date: str | None,
        task: str | None = None,
        source: str | None = None,
    ) -> Change | None:
        """Replace several live entries by one merged entry that supersedes them all."""
        olds = [e for e in (self.get(i) for i in ids) if e is not None and e.active]
        if len(olds) < 2:
            return None
        entry = Entry(
            id=self._new_id(text, date, "consolidate:" + ",".join(ids)),
            kind=self.kind,
            text=" ".join(text.split()),
            title=title,
            date=date,
            task=task,
            source=source,
            supersedes=[e.id for e in olds],
            seen=sum(e.seen for e in olds),
        )
        for old in olds:
            old.superseded_by, old.superseded_on = entry.id, date
        self.entries.append(entry)
        return Change("consolidated", entry.id, ",".join(e.id for e in olds), entry.text)

    def dedupe(self, *, date: str | None) -> list[Change]:
        """Merge live agent entries whose texts are exact duplicates (offline consolidation)."""
        groups: dict[str, list[Entry]] = {}
        for e in self.entries:
            if e.active:
                groups.setdefault(normalize(e.text), []).append(e)
        changes = []
        for group in groups.values():
            if len(group) < 2:
                continue
            keeper, rest = group[0], group[1:]
            for dup in rest:
                keeper.seen += dup.seen
                dup.superseded_by, dup.superseded_on = keeper.id, date
            keeper.last_seen = date
            changes.append(Change("merged", keeper.id, ",".join(d.id for d in rest), keeper.text))
        return changes

    def render(self) -> str:
        pre = self.preamble.rstrip("\n") + "\n\n" if self.preamble.strip() else ""
        blocks = "\n".join(e.render() for e in self.entries)
        return f"{pre}{MARKER}\n\n{blocks}" if blocks else f"{pre}{MARKER}\n"
