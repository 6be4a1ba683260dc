"""The values the topics API hands out, and the small text rules they share.

:class:`Topic` is one ``topic.md`` as parsed; :class:`IndexEntry` one line of the topic
index; :class:`RouteResult` where a routed result went; :class:`Spawned` what a spawn
did. :func:`open_section` is the markdown an open topic takes in the context block,
which the block, the initial-topic validation and the compactor all have to measure the
same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..packing import ContextView
from .files import TOPIC_FILE, TOPICS_DIR, compress

__all__ = [
    "STATUSES",
    "IndexEntry",
    "RouteResult",
    "Spawned",
    "Topic",
    "as_terms",
    "open_section",
    "summary_line",
]

#: A topic's lifecycle: ``active`` (the one being worked on), ``paged`` (on disk,
#: resumable), ``closed`` (done, still listed), ``archived`` (out of sight).
STATUSES = ("active", "paged", "closed", "archived")


@dataclass(frozen=True)
class Topic:
    """One topic as its ``topic.md`` describes it."""

    name: str
    title: str
    description: str = ""
    status: str = "paged"
    open: bool = False
    last_active: str | None = None
    summary: str = ""  # the one-line summary shown in the index
    body: str = ""  # the topic's summary, shown in the block when open and answered by open_topic
    vocabulary: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    version: str | None = None

    @property
    def folder(self) -> str:
        return f"{TOPICS_DIR}/{self.name}"

    def path(self, file: str = TOPIC_FILE) -> str:
        return f"{self.folder}/{file}"


@dataclass(frozen=True)
class IndexEntry:
    """One line of the awareness layer, with the token size of the topic's files."""

    name: str
    title: str
    status: str
    open: bool
    last_active: str | None
    summary: str
    tokens: int


@dataclass(frozen=True)
class RouteResult:
    """Where a result went: ``delivered`` (the owner is active; process it now),
    ``filed`` (under the paged owner's Pending Notifications) or ``unmatched``."""

    action: str
    topic: str | None
    text: str
    task_id: str | None = None
    via: str | None = None  # "task" or "keyword"
    notification: str | None = None
    message: str = ""


@dataclass(frozen=True)
class Spawned:
    """What a spawn did: the new topic, how many exchanges moved, its boot view."""

    topic: Topic
    moved: int
    view: ContextView


def open_section(name: str, description: str, summary: str) -> str:
    """The markdown an open topic takes in the context block: heading with its cue, then the summary."""
    head = f"### {name} — {description}" if description else f"### {name}"
    return f"{head}\n{summary.strip()}\n" if summary.strip() else head + "\n"


def as_terms(value: Any) -> tuple[str, ...]:
    """A frontmatter list (or comma-separated string) as stripped, non-empty strings."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return ()


def summary_line(text: str, limit: int = 200) -> str:
    """The first sentence (when it is at least 20 characters), whitespace collapsed, cut to ``limit``."""
    first = " ".join(str(text).split())
    match = re.match(r"(.+?[.!?])(\s|$)", first)
    if match and len(match.group(1)) >= 20:
        first = match.group(1)
    return compress(first, limit)
