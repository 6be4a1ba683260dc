"""The conversation log format: ``sessions/<session>.jsonl``, one JSON object per message.

A line is ``{"role": ..., "content": ..., "time": ..., "turn": ..., "speaker": ...}`` (plus
``"trust"`` when the poisoning guard flagged it, and ``"data"``, an object, when the writer
keeps the message as its agent framework holds it: tool calls, ids, content blocks, so the
message can be rebuilt exactly). The memory layer writes these lines; the
search index and page-in read them back as *turns*, one passage per line, each with its
speaker, session and time, so past conversations can be searched and paged into a view.
Reading is forgiving: a line that is not a message is skipped (and its number reported
by :func:`read_turns`), never fatal.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .text import WORD, address_names

__all__ = ["LOG_SUFFIX", "SESSIONS_DIR", "Turn", "format_line", "is_log", "known_as", "read_turns", "session_of",
           "turn_at"]

SESSIONS_DIR = "sessions"
LOG_SUFFIX = ".jsonl"
_LOG = re.compile(r"^sessions/[^/]+\.jsonl\Z")


def is_log(rel: str) -> bool:
    """True for root-relative paths of conversation logs (``sessions/<session>.jsonl``)."""
    return bool(_LOG.match(rel))


def session_of(rel: str) -> str:
    """The session id a log path names."""
    return rel.rsplit("/", 1)[-1][: -len(LOG_SUFFIX)]


@dataclass(frozen=True)
class Turn:
    """One message of a log, with its 1-based line number in the file."""

    line: int
    role: str
    content: str
    time: str = ""
    turn: str | None = None
    trust: str = "trusted"
    speaker: str | None = None
    data: dict[str, Any] | None = None

    @property
    def who(self) -> str:
        """The speaker's name when the message has one, else its role."""
        return self.speaker or self.role


def format_line(role: str, content: str, time: str, turn: str | None, *, trust: str = "trusted",
                speaker: str | None = None, data: dict[str, Any] | None = None) -> str:
    """One log line (no newline); ``data`` is the message as its framework holds it (JSON-able)."""
    line: dict[str, Any] = {"role": role, "content": content, "time": time, "turn": turn}
    if speaker:
        line["speaker"] = speaker
    if trust != "trusted":
        line["trust"] = trust
    if data:
        line["data"] = data
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def _turn(n: int, line: str) -> Turn | None:
    """The message on one line, or None when the line is not one.

    A message is a JSON object whose ``role`` and ``content`` are strings; ``time``,
    ``speaker`` and ``trust``, when given, are strings too, and ``turn`` a string or a
    whole number. Anything else (a hand edit gone wrong, a torn write) is not shown as a
    message with made-up text ("None", a dict's repr): it is skipped and reported.
    """
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("role"), str) or not isinstance(data.get("content"), str):
        return None
    if any(data.get(k) is not None and not isinstance(data[k], str) for k in ("time", "speaker", "trust")):
        return None
    if data.get("turn") is not None and (isinstance(data["turn"], bool) or not isinstance(data["turn"], (str, int))):
        return None
    speaker = data.get("speaker")
    extra = data.get("data")
    return Turn(
        line=n, role=str(data["role"]), content=str(data["content"]), time=str(data.get("time") or ""),
        turn=None if data.get("turn") is None else str(data["turn"]), trust=str(data.get("trust", "trusted")),
        speaker=str(speaker) if isinstance(speaker, str) and speaker.strip() else None,
        data=extra if isinstance(extra, dict) else None,  # anything else is ignored, as unknown keys are
    )


def read_turns(text: str) -> tuple[list[Turn], list[int]]:
    """The messages of a log's text, and the line numbers that are not messages."""
    turns: list[Turn] = []
    bad: list[int] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        turn = _turn(n, line)
        if turn is None:
            bad.append(n)
        else:
            turns.append(turn)
    return turns, bad


def turn_at(text: str, line: int) -> Turn | None:
    """The message on 1-based ``line`` of a log's text, or None when that line is not one."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    return _turn(line, lines[line - 1])


#: How often a name must address one person, and nobody else, to be taken as theirs.
_ALIAS_USES = 2


def _addressee(turns: Sequence[Turn], i: int) -> str | None:
    """Who message ``i`` speaks to: the nearest other speaker before it, else after it."""
    me = turns[i].speaker
    for j in [*range(i - 1, -1, -1), *range(i + 1, len(turns))]:
        other = turns[j].speaker
        if other and other != me:
            return other
    return None


def known_as(turns: Sequence[Turn]) -> dict[str, tuple[str, ...]]:
    """Each speaker's other names in one conversation: what the others call them ("Kate"
    for Katherine, "Mel" for Melanie), in first-seen order.

    A name counts when messages address a speaker by it (:func:`contextfs.text.address_names`)
    at least twice, never address anyone else by it, never write it in lower case (so
    "Wow" and "Thanks" are never names), and it is not already a word of a speaker's name.
    """
    speakers = {t.speaker for t in turns if t.speaker}
    if len(speakers) < 2:
        return {}
    taken = {w.casefold() for name in speakers for w in WORD.findall(name)}
    lower: set[str] = set()
    used: dict[str, Counter[str]] = defaultdict(Counter)
    for i, t in enumerate(turns):
        lower.update(w for w in WORD.findall(t.content) if w[:1].islower())
        if not t.speaker:
            continue
        names = address_names(t.content)
        to = _addressee(turns, i) if names else None
        for name in names:
            if to is not None and name.casefold() not in taken:
                used[name][to] += 1
    out: dict[str, list[str]] = {}
    for name, whom in used.items():
        if len(whom) == 1 and name.casefold() not in lower:
            (speaker, uses), = whom.items()
            if uses >= _ALIAS_USES:
                out.setdefault(speaker, []).append(name)
    return {speaker: tuple(names) for speaker, names in out.items()}
