"""What page-in knows of one file version: its passages' term counts, speakers, days,
moments, labels and the session thread it was written in (a pure function of a blob's bytes
and its path, so :mod:`.pagein` caches it by blob id); and the arrays page-in ranks a whole
tree's passages with.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Any

from contextfs.document import decode, parse
from contextfs.errors import ContextFSError
from contextfs.text.analysis import forms
from contextfs.text.periods import day_of, moment_of
from contextfs.text.turns import is_log

from .passages import Chunk, chunk_terms, chunks_of, is_heading, labels_of, speakers_of

__all__ = ["FileStats", "Layout", "eligible", "passages_of"]


def eligible(rel: str) -> bool:
    if is_log(rel):
        return True
    return rel.endswith(".md") and not any(part.startswith(".") for part in rel.split("/"))


def _title(meta: dict[str, Any], body: str) -> str:
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    for line in body.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


@dataclass(frozen=True)
class FileStats:
    """What ranking needs of one blob: each passage's term counts (empty for headings),
    who spoke it and on which day (None when unknown), and whether the file is quarantined."""

    counts: tuple[Counter[str], ...] = ()
    speakers: tuple[str, ...] = ()
    days: tuple[date | None, ...] = ()
    moments: tuple[float, ...] = ()  # when each passage was said or its file written, for ties
    aliases: frozenset[tuple[str, str]] = frozenset()  # (other name, speaker) in a conversation
    texts: tuple[
        str, ...
    ] = ()  # what each passage says, as embedded for dense ranking ("Caroline: ...")
    labels: tuple[str, ...] = ()  # the ``Name:`` label opening each passage, if any
    #: (session, turn) the file was written in, from its frontmatter: a note an agent wrote
    #: during a conversation sits in that session's thread, between the notes written
    #: before and after it (a note per message, or a few facts per turn).
    thread: tuple[str, float] | None = None
    quarantined: bool = False


def _thread_of(meta: dict[str, Any]) -> tuple[str, float] | None:
    session, turn = meta.get("session"), meta.get("turn")
    if not isinstance(session, str) or not session.strip() or isinstance(turn, bool):
        return None
    try:
        at = float(turn) if isinstance(turn, int | float | str) else math.nan
    except ValueError:
        return None
    return (session.strip(), at) if math.isfinite(at) else None


def passages_of(rel: str, data: bytes) -> FileStats:
    try:
        text = decode(data, rel)
        if is_log(rel):
            meta, body, offset = {}, text, 0
        else:
            doc = parse(text, rel)
            meta, body = doc.metadata, doc.body
            offset = (
                text[: len(text) - len(body)].count("\n") if body and text.endswith(body) else 0
            )
    except ContextFSError:
        return FileStats()
    if meta.get("trust") == "quarantined":
        return FileStats(quarantined=True)
    title = _title(meta, body)
    chunks: tuple[Chunk, ...] = chunks_of(body, offset, rel)
    written = meta.get("updated") or meta.get("created")
    file_day = day_of(written)
    return FileStats(
        counts=tuple(
            Counter()
            if is_heading(ch)
            else Counter(chunk_terms(ch, title)) + Counter(forms(ch.text))
            for ch in chunks
        ),
        speakers=speakers_of(chunks),
        days=tuple(day_of(ch.time) if ch.time else file_day for ch in chunks),
        moments=tuple(moment_of(ch.time if ch.time else written) for ch in chunks),
        aliases=frozenset((name, ch.speaker) for ch in chunks for name in ch.aka),
        texts=tuple(f"{ch.speaker}: {ch.text}" if ch.speaker else ch.text for ch in chunks),
        labels=labels_of(chunks),
        thread=None if is_log(rel) else _thread_of(meta),
    )


@dataclass(frozen=True)
class Layout:
    """Per slot of a term index: its passage, speaker, day and moment, and the neighbour
    passes (share, slots, their neighbours' slots) in the order the sum is made."""

    generation: tuple[int, int, float]
    rels: list[str]
    idx: list[int]
    codes: dict[str, int]
    speakers: Any
    days: Any
    moments: Any
    passes: list[tuple[float, Any, Any]]
