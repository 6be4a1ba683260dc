"""Passages: the pieces of a file that page-in ranks and excerpts show.

A view should carry the sentence that answers a question, not the file around it. So a
file is cut into passages, each with the file lines it came from:

* a paragraph (or a fenced block, or a heading line) is one passage;
* a long list is cut into its items, and long prose into *sentence windows* of a few
  sentences (about :data:`WINDOW_CHARS` characters), so a fact in the middle of a
  60-sentence paragraph is a passage of its own;
* a conversation log (``sessions/*.jsonl``) is one passage per message, with its date and
  speaker ("2023-05-08 13:56 · Caroline").

Rendering joins neighbours: passages that sit next to each other in the file are shown as
one block under one label, and ``[…]`` marks where text was skipped. Everything here is a
pure function of the text, so a view at ``as_of`` renders byte for byte as it did.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from contextfs.text import analysis as contextfs_text
from contextfs.text.turns import is_log, known_as, read_turns

__all__ = [
    "HEADING_WEIGHT",
    "MAX_PARAGRAPH_CHARS",
    "TRANSCRIPT_LINES",
    "WINDOW_CHARS",
    "Chunk",
    "blocks",
    "chunk_terms",
    "chunks_of",
    "is_heading",
    "labels_of",
    "speakers_of",
]

#: Paragraphs longer than this are cut (list items, then sentence windows).
MAX_PARAGRAPH_CHARS = 600
#: About how long a sentence window of long prose is.
WINDOW_CHARS = 400
#: How many times a passage's headings, its file's title and a turn's speaker count, as the
#: search index's meta field does (what a passage is about, more than any word in it).
HEADING_WEIGHT = 2
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_ITEM = re.compile(r"^\s{0,3}([-*+]|\d+[.)])\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9`\"'(\[*_-])")


@dataclass(frozen=True)
class Chunk:
    """A passage with its 1-based file line range.

    ``piece`` numbers the sentence windows of one long paragraph (0: the whole
    paragraph); ``note`` is a conversation turn's date and speaker as shown, ``speaker``
    and ``time`` the turn's own (a named speaker only, ISO time as logged); ``trust`` a
    turn's own trust (a log's lines are trusted one by one).
    """

    first: int
    last: int
    text: str
    heading: str
    piece: int = 0
    note: str = ""
    trust: str = "trusted"
    speaker: str = ""
    time: str = ""
    aka: tuple[
        str, ...
    ] = ()  # the speaker's other names in this conversation (contextfs.text.turns.known_as)
    trail: str = (
        ""  # the headings above the section heading ("Service runbook 2 · Orca"), for matching
    )


_LABEL = re.compile(r"^([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,3}):\s+\S")
#: How many paragraphs a ``Name:`` label must open before the file reads as a transcript.
TRANSCRIPT_LINES = 3


def labels_of(chunks: Sequence[Chunk]) -> tuple[str, ...]:
    """The ``Name:`` label opening each passage ("" for none, and for a logged turn)."""
    return tuple(
        m.group(1) if not ch.note and (m := _LABEL.match(ch.text)) else "" for ch in chunks
    )


def speakers_of(chunks: Sequence[Chunk]) -> tuple[str, ...]:
    """Who said each passage: a turn's speaker, or in a markdown transcript (paragraphs
    opening ``Caroline: ...``) the label, when it opens at least :data:`TRANSCRIPT_LINES`
    passages of the file (a facts list's one "Database: PostgreSQL 16" names nobody)."""
    labels = labels_of(chunks)
    counts: dict[str, int] = {}
    for label in labels:
        if label:
            counts[label] = counts.get(label, 0) + 1
    return tuple(
        ch.speaker or (label if counts.get(label, 0) >= TRANSCRIPT_LINES else "")
        for ch, label in zip(chunks, labels, strict=True)
    )


def is_heading(ch: Chunk) -> bool:
    return bool(_HEADING.match(ch.text.strip())) and not ch.note


def chunks_of(body: str, line_offset: int = 0, path: str = "") -> tuple[Chunk, ...]:
    """The passages of a file's body (a conversation log: one per message)."""
    if is_log(path):
        return _turn_chunks(body)
    return _chunks(body, line_offset)


def _when(time: str) -> str:
    """'2023-05-08T13:56:00Z' -> '2023-05-08 13:56' (anything else as written)."""
    m = re.match(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})", time)
    return f"{m.group(1)} {m.group(2)}" if m else time


@lru_cache(maxsize=256)
def _turn_chunks(body: str) -> tuple[Chunk, ...]:
    turns, _bad = read_turns(body)
    aka = known_as(turns)
    out = []
    for t in turns:
        if t.trust == "quarantined":
            continue  # hidden from recall and views
        note = " · ".join(p for p in (_when(t.time), t.who) if p)
        out.append(
            Chunk(
                t.line,
                t.line,
                t.content,
                "",
                note=note,
                trust=t.trust,
                speaker=t.speaker or "",
                time=t.time,
                aka=aka.get(t.speaker or "", ()),
            )
        )
    return tuple(out)


def _windows(lines: list[tuple[int, str]], heading: str, trail: str = "") -> list[Chunk]:
    """Long prose cut into windows of whole sentences, each citing the lines it spans."""
    text = "\n".join(line for _, line in lines)
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text)]
    bounds = list(zip(starts, [*starts[1:], len(text)]))  # noqa: B905 - same length by construction
    line_at = []  # offset -> file line, via the start offset of each line
    offset = 0
    for n, line in lines:
        line_at.append((offset, n))
        offset += len(line) + 1

    def line_of(pos: int) -> int:
        found = lines[0][0]
        for off, n in line_at:
            if off > pos:
                break
            found = n
        return found

    out: list[Chunk] = []
    start = None
    for a, b in bounds:
        if start is None:
            start = a
        if b - start >= WINDOW_CHARS or b == len(text):
            piece = text[start:b].strip()
            if piece:
                out.append(
                    Chunk(
                        line_of(start),
                        line_of(max(start, b - 1)),
                        piece,
                        heading,
                        piece=len(out) + 1,
                        trail=trail,
                    )
                )
            start = None
    if len(out) == 1:
        return [Chunk(out[0].first, out[0].last, out[0].text, heading, trail=trail)]
    return out


@lru_cache(maxsize=4096)
def _chunks(body: str, line_offset: int) -> tuple[Chunk, ...]:
    out: list[Chunk] = []
    heading = ""
    trail = ""
    above: list[tuple[int, str]] = []  # (level, text) of the headings enclosing this point
    block: list[tuple[int, str]] = []
    fenced = False

    def flush() -> None:
        if not block:
            return
        text = "\n".join(line for _, line in block)
        if len(text) <= MAX_PARAGRAPH_CHARS or block[0][1].lstrip().startswith(("```", "~~~")):
            out.append(Chunk(block[0][0], block[-1][0], text, heading, trail=trail))
        elif any(_ITEM.match(line) for _, line in block):
            # One passage per list item (continuation lines stay with their item).
            items: list[list[tuple[int, str]]] = []
            for n, line in block:
                if not items or _ITEM.match(line):
                    items.append([])
                items[-1].append((n, line))
            for item in items:
                joined = "\n".join(t for _, t in item)
                if len(joined) > MAX_PARAGRAPH_CHARS:
                    out.extend(_windows(item, heading, trail))
                else:
                    out.append(Chunk(item[0][0], item[-1][0], joined, heading, trail=trail))
        else:
            out.extend(_windows(block, heading, trail))
        block.clear()

    for i, line in enumerate(body.splitlines(), start=1 + line_offset):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            if not fenced:
                flush()
            fenced = not fenced
            block.append((i, line))
            if not fenced:
                flush()
            continue
        if fenced:
            block.append((i, line))
            continue
        m = _HEADING.match(stripped)
        if m:
            flush()
            level = len(m.group(1))
            while above and above[-1][0] >= level:
                above.pop()
            trail = " · ".join(text for _, text in above)
            heading = m.group(2).strip()
            above.append((level, heading))
            out.append(Chunk(i, i, line, heading, trail=trail))
            continue
        if not stripped:
            flush()
            continue
        block.append((i, line))
    flush()
    return tuple(out)


@lru_cache(maxsize=65536)
def chunk_terms(ch: Chunk, title: str = "") -> tuple[str, ...]:
    """What a passage is matched on: its text, its section heading and the headings above
    it, and the file's title (once each; a turn's speaker and their other names stand in
    for the headings). A fact in a runbook's "Storage" section under "## Orca" is about
    Orca though it never says so."""
    if ch.note:
        context = " ".join((ch.note.rsplit(" · ", 1)[-1], *ch.aka))
    else:
        context = " ".join(h for h in (*ch.trail.split(" · "), ch.heading) if h and h != title)
    extra = context if not title or title == context else f"{context} {title}"
    return (
        tuple(contextfs_text.terms(ch.text)) + tuple(contextfs_text.terms(extra)) * HEADING_WEIGHT
    )


#: The day a turn's note opens with ("2023-05-08 14:03 · Caroline").
_NOTE_DAY = re.compile(r"(\d{4}-\d{2}-\d{2}) ")


def _label(first: Chunk, last: Chunk, above: Chunk | None = None) -> str:
    """``[lines 5-7 · Setup]``, ``[line 3 · 2023-05-08 13:56 · Caroline]``. A label leaves out
    what the label ``above`` it in the same section already said: the same heading, or a
    turn's day (``[line 4 · 13:57 · Melanie]``)."""
    where = (
        f"lines {first.first}-{last.last}" if last.last != first.first else f"line {first.first}"
    )
    extra = first.note or (first.heading if first.heading and not is_heading(first) else "")
    if above is not None and first.note:
        day = _NOTE_DAY.match(above.note)
        if day and first.note.startswith(day.group(0)):
            extra = extra[len(day.group(0)) :]
    elif above is not None and not above.note and extra == above.heading:
        extra = ""
    return f"[{where}{f' · {extra}' if extra else ''}]"


def _joinable(a: Chunk, b: Chunk) -> bool:
    """Neighbouring passages shown as one block: same section, not turns (each turn keeps its label)."""
    return (
        not a.note
        and not b.note
        and a.heading == b.heading
        and not is_heading(a)
        and not is_heading(b)
    )


def blocks(
    chunks: Sequence[Chunk], picked: Sequence[int], fence: Callable[[str, str], str] | None = None
) -> list[str]:
    """The text of the picked passages (indexes into ``chunks``), neighbours joined.

    ``fence(text, trust)``, when given, says how each block's text is shown (a turn
    carries its own trust; the caller fences what is untrusted or flagged).
    """
    order = sorted(set(picked))
    out: list[str] = []
    above: Chunk | None = None  # the chunk the previous label was made for
    i = 0
    while i < len(order):
        j = i
        while (
            j + 1 < len(order)
            and order[j + 1] == order[j] + 1
            and _joinable(chunks[order[j]], chunks[order[j + 1]])
        ):
            j += 1
        group = [chunks[k] for k in order[i : j + 1]]
        if out and order[i] > 0 and (i == 0 or order[i] != order[i - 1] + 1):
            out.append("[…]")
        parts = []
        for k, ch in enumerate(group):
            glue = "" if k == 0 else (" " if ch.piece and group[k - 1].piece else "\n")
            parts.append(glue + ch.text)
        body = "".join(parts)
        if fence is not None:
            body = fence(body, group[0].trust)
        out.append(f"{_label(group[0], group[-1], above)}\n{body}")
        above = group[0]
        i = j + 1
    return out
