"""Three-way merges of text, line by line or entry by entry.

Two rules, both driven by merge3's three-way comparison (breezy's implementation, the
same diff3 model git uses):

* :func:`merge_text` — a clean three-way line merge, or None when both sides changed the
  same lines differently (the caller then keeps a conflict copy);
* :func:`merge_entries` — for files that grow by entries (facts, lessons, where-are-we
  sections, conversation logs): the three-way merge runs over *entries* instead of
  lines, and where both sides changed the same place the result is the union of their
  entries, each once, in time order. An entry one side removed and the other left
  untouched stays removed; an entry one side edited and the other removed survives as
  edited. Nothing either side wrote is dropped.

What an entry is depends on the file: a line of a JSON Lines log; in markdown, a heading
line of level one or two (a section marker), a block under a deeper heading (an evolve
entry ``### F-...`` with its fields), or a list item with its continuation lines.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from merge3 import Merge3

__all__ = [
    "entries_of",
    "join",
    "log_time",
    "markdown_entries",
    "merge_entries",
    "merge_text",
    "split_lines",
]

_HEADING = re.compile(r"^(#{1,6})[ \t]")
_BULLET = re.compile(r"^([-*+]|\d{1,9}[.)])([ \t]|$)")


class _Matcher(difflib.SequenceMatcher[str]):
    """difflib's matcher without its "popular element" heuristic.

    With autojunk, a line that occurs in more than 1% of a file over 200 lines (a blank
    line, a ``- reason:`` field) stops being matched, and merges of long logs align badly.
    """

    def __init__(
        self,
        isjunk: Callable[[str], bool] | None = None,
        a: Sequence[str] = "",
        b: Sequence[str] = "",
        autojunk: bool = False,
    ) -> None:
        super().__init__(isjunk, a, b, autojunk=False)


# merge3 types its matcher with a protocol over a covariant item type that mypy cannot
# match difflib's class against; the class is what merge3 itself defaults to, less autojunk.
_MATCHER: Any = _Matcher


def split_lines(text: str) -> list[str]:
    """Lines with their endings (a last line without one is kept as it is)."""
    return text.splitlines(keepends=True)


def join(items: Sequence[str]) -> str:
    """Entries back to text; an entry that lost its line ending at the end of a side gets one."""
    out = []
    for i, item in enumerate(items):
        out.append(item if item.endswith("\n") or i == len(items) - 1 else item + "\n")
    return "".join(out)


def merge_text(base: str, ours: str, theirs: str) -> str | None:
    """A clean three-way line merge, or None when the two sides conflict."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    merged: list[str] = []
    for group in Merge3(
        split_lines(base), split_lines(ours), split_lines(theirs), sequence_matcher=_MATCHER
    ).merge_groups():
        if group[0] == "conflict":
            return None
        merged.extend(group[1])
    return join(merged)


# ---------------------------------------------------------------- entries
def markdown_entries(text: str) -> list[str]:
    """A markdown body cut into entries (see the module docstring); joined they give it back."""
    entries: list[str] = []
    record = False  # inside a block under a level-3+ heading, which swallows its fields
    for line in split_lines(text):
        heading = _HEADING.match(line)
        starts = False
        if heading:
            starts = True
            record = len(heading.group(1)) >= 3
        elif not record and line.strip() and not line[:1].isspace():
            # A list item starts an entry; so does a paragraph line after a blank line.
            starts = (
                bool(_BULLET.match(line))
                or not entries
                or not entries[-1].strip()
                or entries[-1].endswith("\n\n")
                or _HEADING.match(entries[-1]) is not None
            )
        if starts or not entries:
            entries.append(line)
        else:
            entries[-1] += line
    return entries


def entries_of(text: str, *, log: bool) -> list[str]:
    """A file's entries: lines of a JSON Lines log, markdown entries otherwise."""
    return split_lines(text) if log else markdown_entries(text)


def log_time(entry: str) -> str:
    """The ``time`` of a JSON Lines entry ('' when it has none): the order of merged logs."""
    try:
        data = json.loads(entry)
    except ValueError:
        return ""
    value = data.get("time") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _key(entry: str) -> str:
    """Entries compare without trailing blank space: '- a\\n' and '- a\\n\\n' are one entry."""
    return entry.rstrip()


def _union(
    base: Sequence[str],
    first: Sequence[str],
    second: Sequence[str],
    order: Callable[[str], str] | None,
) -> list[str]:
    """The entries of two conflicting regions: each once, what either side removed from an
    entry the other left alone stays removed, then ordered by ``order`` (stable)."""
    base_keys = {_key(e) for e in base}
    first_keys = {_key(e) for e in first}
    second_keys = {_key(e) for e in second}
    out: list[str] = []
    seen: set[str] = set()
    for entry, other in [(e, second_keys) for e in first] + [(e, first_keys) for e in second]:
        key = _key(entry)
        if key in seen or (key in base_keys and key not in other):
            continue  # already kept, or removed by the other side and untouched here
        seen.add(key)
        out.append(entry if entry.endswith("\n") else entry + "\n")
    if order is not None:
        out.sort(key=order)  # stable: entries without a time keep their place
    return out


def merge_entries(
    base: str, ours: str, theirs: str, *, log: bool, theirs_first: bool = False
) -> tuple[str, bool]:
    """The entry merge of three versions; also whether any region needed the union.

    ``theirs_first`` puts their entries before ours where both sides added at one place
    (the side that wrote earlier goes first); a log orders such entries by their ``time``.
    """
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    b, o, t = (entries_of(x, log=log) for x in (base, ours, theirs))
    merged: list[str] = []
    unioned = False
    for group in Merge3(b, o, t, sequence_matcher=_MATCHER).merge_groups():
        if group[0] != "conflict":
            merged.extend(group[1])
            continue
        unioned = True
        _, zb, zo, zt = group
        first, second = (zt, zo) if theirs_first else (zo, zt)
        if merged and not merged[-1].endswith("\n"):
            merged[-1] += "\n"
        merged.extend(_union(zb, first, second, log_time if log else None))
    return join(merged), unioned
