"""What the memory tiers hand out, where they live on disk, and the settings they share.

Every record carries its source (session and turn), taken from the manager's provenance
at write time and never from the text: :func:`source_label` is how it is shown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, overload

from contextfs.errors import ContentError, ContextFSError
from contextfs.gate.poisoning import Verdict, render_memory
from contextfs.manager import ContextManager
from contextfs.text.tokens import TokenCounter
from contextfs.text.turns import SESSIONS_DIR, format_line

from ..packing import DroppedItem

__all__ = [
    "ARCHIVE_DIR",
    "CORE_DIR",
    "DEFAULT_CORE_LIMIT",
    "DEFAULT_NEAR_DUPLICATE",
    "NOTE_STATUSES",
    "ROLES",
    "SESSIONS_DIR",
    "ArchivalNote",
    "CoreBlock",
    "CoreBlocks",
    "MemoryHit",
    "MemoryHits",
    "MemorySettings",
    "Message",
    "newest_first",
    "parse_time",
    "provenance",
    "source_label",
]

CORE_DIR = "memory/core"
ARCHIVE_DIR = "memory/archive"
DEFAULT_CORE_LIMIT = 500
DEFAULT_NEAR_DUPLICATE = 0.85
ROLES = ("user", "assistant", "system", "tool")
#: Archival note states; only ``active`` notes are searched by default.
NOTE_STATUSES = ("active", "invalidated", "superseded")


@dataclass(frozen=True)
class MemorySettings:
    """The options every tier reads: poisoning policy, core block limit, dedupe threshold, counter."""

    policy: str
    core_limit: int
    near_duplicate: float
    counter: TokenCounter


def source_label(session: str | None, turn: object) -> str:
    """``session:<id> turn:<n>``: where a record came from, as shown beside it."""
    out = f"session:{session or 'unknown'}"
    return out + (f" turn:{turn}" if turn not in (None, "") else "")


def provenance(ctx: ContextManager) -> tuple[str | None, str | None, str]:
    """(session, turn, source label) of the write about to happen."""
    prov = ctx.parts.current_provenance
    return prov.session, prov.turn, source_label(prov.session, prov.turn)


@overload
def parse_time(value: datetime | str, name: str) -> datetime: ...


@overload
def parse_time(value: None, name: str) -> None: ...


def parse_time(value: datetime | str | None, name: str) -> datetime | None:
    """An aware datetime from a datetime or an ISO-8601 string (UTC when no zone is given)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ContentError(
            f"{name}={value!r} is not an ISO-8601 time; pass e.g. '2026-10-02T09:00:00Z'"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def newest_first(value: str | None) -> float:
    """Sort key putting newer times first; unknown times last."""
    if not value:
        return math.inf
    try:
        return -parse_time(value, "time").timestamp()
    except ContextFSError:
        return math.inf


@dataclass(frozen=True)
class CoreBlock:
    """One pinned core block as it is now (after the call that returned it)."""

    label: str
    path: str
    text: str
    limit: int
    tokens: int
    trust: str = "trusted"
    verdict: Verdict = field(default_factory=lambda: Verdict(False, ()))
    #: Under the ``quarantine`` policy, suspicious text goes to this archival note instead.
    quarantined_to: str | None = None

    @property
    def remaining(self) -> int:
        return self.limit - self.tokens


class CoreBlocks(list[CoreBlock]):
    """Every readable core block, by label; ``skipped`` lists the block files left out, and why.

    A list, so code that iterates the blocks keeps working; a block file that cannot be
    read (binary, not UTF-8, broken frontmatter or limit) is reported here instead of
    making the whole listing fail.
    """

    def __init__(
        self, blocks: Iterable[CoreBlock] = (), skipped: Iterable[DroppedItem] = ()
    ) -> None:
        super().__init__(blocks)
        self.skipped: tuple[DroppedItem, ...] = tuple(skipped)


@dataclass(frozen=True)
class ArchivalNote:
    """One archival note; ``duplicate`` is True when an insert returned an existing note."""

    path: str
    text: str
    tags: tuple[str, ...]
    trust: str
    status: str
    source: str
    session: str | None
    turn: str | None
    created: str | None
    verdict: Verdict = field(default_factory=lambda: Verdict(False, ()))
    duplicate: bool = False


@dataclass(frozen=True)
class MemoryHit:
    """A recalled fact with where it came from; ``rendered`` is what goes into a prompt."""

    path: str
    text: str
    score: float
    source: str
    session: str | None
    turn: str | None
    updated: str | None
    tags: tuple[str, ...]
    trust: str
    status: str = "active"
    role: str | None = None  # set for conversation hits
    speaker: str | None = None  # conversation hits with a named speaker

    @property
    def rendered(self) -> str:
        """Trusted text with its source cited; anything else fenced as quoted data."""
        return render_memory(self.text, f"{self.source}, {self.path}", self.trust)


class MemoryHits(list[MemoryHit]):
    """Recalled messages, best first; ``skipped`` lists the logs (or their lines) left out, and why.

    A list, so code that iterates the hits keeps working; a log that cannot be read (not
    UTF-8, not a file any more) or a line of one that is not a message is reported here
    instead of making the whole search fail.
    """

    def __init__(self, hits: Iterable[MemoryHit] = (), skipped: Iterable[DroppedItem] = ()) -> None:
        super().__init__(hits)
        self.skipped: tuple[DroppedItem, ...] = tuple(skipped)


@dataclass(frozen=True)
class Message:
    """One line of a conversation log.

    ``role`` is what the message is in the conversation (``user``, ``assistant``,
    ``system``, ``tool``); ``speaker`` names who said it when there is a name
    ("Caroline"), so a chat between two people needs no role tricks.
    """

    role: str
    content: str
    time: str
    turn: str | None = None
    session: str | None = None
    trust: str = "trusted"
    speaker: str | None = None
    #: The message as its agent framework holds it (tool calls, ids, content blocks), kept in
    #: the log line so the message can be rebuilt exactly; None for plain chat messages.
    data: dict[str, Any] | None = None

    def to_json(self) -> str:
        return format_line(
            self.role,
            self.content,
            self.time,
            self.turn,
            trust=self.trust,
            speaker=self.speaker,
            data=self.data,
        )

    @property
    def source(self) -> str:
        return source_label(self.session, self.turn)

    @property
    def who(self) -> str:
        """The speaker's name, else the role."""
        return self.speaker or self.role

    def render(self) -> str:
        """The message as one prompt line (untrusted content is fenced)."""
        if self.trust == "trusted":
            return f"{self.who}: {self.content}"
        return f"{self.who}: " + render_memory(self.content, self.source, self.trust)
