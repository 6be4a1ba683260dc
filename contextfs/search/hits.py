"""Search hits: what a search returns, each read from the file as it is at that moment.

A hit's snippet, version and trust come from the file on disk, never from the index (which
may lag a write by one commit); a file gone or changed behind the index is left out and
queued for re-indexing. A conversation turn's hit names its line, speaker and role.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..changes.markers import conflict_markers, strip_conflict_markers
from ..document import blob_version
from ..errors import ContextFSError
from ..text.turns import turn_at
from .snippets import make_snippet, strip_frontmatter

if TYPE_CHECKING:
    from ..files.confined import RootFiles
    from .phrases import PhraseCheck

__all__ = ["SearchHit", "make_hit"]


@dataclass(frozen=True)
class SearchHit:
    """One search result. Unpacks as ``(path, snippet)``; the fields hold the rest."""

    path: str
    snippet: str
    score: float = 0.0
    title: str = ""
    tags: tuple[str, ...] = ()
    updated: str | None = None
    version: str | None = None
    author: str | None = None
    trust: str | None = None
    kind: str = ""
    #: Conversation turns (``sessions/*.jsonl``): the message's line, who said it and in which role.
    line: int | None = None
    speaker: str | None = None
    role: str | None = None

    @property
    def ref(self) -> str:
        """``path`` for a file, ``path#L<line>`` for a conversation turn."""
        return self.path if self.line is None else f"{self.path}#L{self.line}"

    def __iter__(self) -> Iterator[str]:
        yield self.path
        yield self.snippet

    def __len__(self) -> int:
        return 2

    def __getitem__(self, item: int | slice) -> Any:
        return (self.path, self.snippet)[item]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "snippet": self.snippet,
            "score": round(self.score, 4),
            "title": self.title,
            "tags": list(self.tags),
            "updated": self.updated,
            "version": self.version,
            "author": self.author,
            "trust": self.trust,
            "kind": self.kind,
            "line": self.line,
            "speaker": self.speaker,
            "role": self.role,
        }


def make_hit(
    files: RootFiles,
    notify: Callable[[list[str]], None],
    fields: dict[str, Any],
    score: float,
    words: list[str],
    *,
    check: PhraseCheck | None = None,
    docnum: int = -1,
) -> SearchHit | None:
    """The hit for one matched document, read from the file as it is now (None when the
    file is gone, unreadable, or no longer holds what the index matched: the index is told)."""
    rel = fields["rel"]
    try:
        data = files.read(rel)
    except ContextFSError:
        data = None  # swapped for a link or unreadable: never shown
    if data is None:
        notify([rel])  # gone behind our back: drop it from the index next time
        return None
    if conflict_markers(data):
        data = strip_conflict_markers(data)  # a merge in progress: its markers are never shown
    text = data.decode("utf-8", errors="replace")
    line = fields.get("line")
    turn = None
    if line is not None:
        turn = turn_at(text, int(line))
        if turn is None:  # the log changed under the index: re-index it, show nothing stale
            notify([rel])
            return None
        body = turn.content
    else:
        body = strip_frontmatter(text)
    if check is not None and not check.holds(docnum, body):
        return None
    updated = fields.get("updated")
    tags = tuple(t for t in (fields.get("tags") or "").split(",") if t)
    return SearchHit(
        path=rel,
        snippet=make_snippet(body, words),
        score=float(score or 0.0),
        title=fields.get("title") or rel.rsplit("/", 1)[-1],
        tags=tags,
        updated=updated.isoformat() + "Z" if isinstance(updated, datetime) else None,
        version=blob_version(data),
        author=fields.get("author") or None,
        trust=(turn.trust if turn is not None else fields.get("trust")) or None,
        kind=fields.get("kind") or "",
        line=None if turn is None else turn.line,
        speaker=None if turn is None else turn.speaker,
        role=None if turn is None else turn.role,
    )
