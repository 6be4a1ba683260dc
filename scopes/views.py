"""What a view is made of: candidates, passages, the items shown and dropped, and loading.

:mod:`.packing` turns candidates into a :class:`ContextView`; this module holds the values
it takes and hands out, and reads a candidate's content (from the work tree, or from a
commit for ``as_of``), parsing each (path, blob) once.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contextfs.document import blob_version, decode, is_markdown, parse
from contextfs.errors import ConfigError, ContentError, ContextFSError, NotFoundError
from contextfs.files import paths
from contextfs.gate.fencing import seal

from .tiers import TIERS, Source

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = [
    "Candidate",
    "ContextView",
    "DroppedItem",
    "PagedPassage",
    "ViewItem",
    "check_candidates",
    "check_passages",
    "load_or_drop",
    "load_source",
    "resolve_rev",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    """Something that may go into a view, and how much it matters."""

    path: str
    reason: str
    priority: int
    pinned: bool = False
    body: str | None = None
    min_tier: str = "cue"
    title: str | None = None


@dataclass(frozen=True)
class PagedPassage:
    """A ranked passage that may be paged into a view: a file, the passage's index among
    its passages (:func:`contextfs.scopes.passages.chunks_of`), and its score."""

    path: str
    index: int
    score: float


@dataclass(frozen=True)
class ViewItem:
    """One item shown in a view: at which tier, at what cost, and why it is there."""

    path: str
    tier: str
    tokens: int
    version: str
    reason: str
    priority: int = 0
    pinned: bool = False
    lines: str | None = None  # excerpt line ranges, e.g. "12-18,40"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "tier": self.tier,
            "tokens": self.tokens,
            "version": self.version,
            "reason": self.reason,
            "priority": self.priority,
            "pinned": self.pinned,
            "lines": self.lines,
        }


@dataclass(frozen=True)
class DroppedItem:
    """A candidate that is not in the view, and why."""

    path: str
    reason: str
    tokens: int = 0  # what it would have cost in full (0 when it could not be read)
    version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "reason": self.reason,
            "tokens": self.tokens,
            "version": self.version,
        }


@dataclass(frozen=True)
class ContextView:
    """An assembled view: the text, its exact token count and the accounting behind it."""

    text: str
    tokens: int
    budget: int | None
    items: tuple[ViewItem, ...] = ()
    dropped: tuple[DroppedItem, ...] = ()
    manifest: tuple[tuple[str, str], ...] = ()
    encoding: str = "cl100k_base"
    query: str | None = None
    as_of: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text

    def tier_of(self, path: str) -> str | None:
        """The tier ``path`` is shown at, or None when it is not in the view."""
        for item in self.items:
            if item.path == path:
                return item.tier
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "budget": self.budget,
            "encoding": self.encoding,
            "query": self.query,
            "as_of": self.as_of,
            **self.meta,
            "items": [i.to_dict() for i in self.items],
            "dropped": [d.to_dict() for d in self.dropped],
            "manifest": [{"path": p, "version": v} for p, v in self.manifest],
            "text": self.text,
        }


def resolve_rev(ctx: ContextManager, rev: str | None) -> str | None:
    """The full commit id for ``rev`` (NotFoundError when it does not exist)."""
    if rev is None:
        return None
    return ctx.parts.git.resolve(rev).hexsha


_SOURCES: OrderedDict[tuple[str, str, str | None], Source] = OrderedDict()
_SOURCES_SIZE = 4096
_SOURCES_LOCK = threading.Lock()


def _from_bytes(rel: str, data: bytes, title: str | None) -> Source:
    """Parse once per (path, blob): YAML frontmatter costs milliseconds a file, hashing microseconds."""
    key = (rel, blob_version(data), title)
    with _SOURCES_LOCK:
        hit = _SOURCES.get(key)
        if hit is not None:
            _SOURCES.move_to_end(key)
            return hit
    src = _parse_source(rel, data, title)
    with _SOURCES_LOCK:
        _SOURCES[key] = src
        if len(_SOURCES) > _SOURCES_SIZE:
            _SOURCES.popitem(last=False)
    return src


def _parse_source(rel: str, data: bytes, title: str | None) -> Source:
    text = decode(data, rel)
    doc = parse(text, rel, version=blob_version(data))
    offset = (
        text[: len(text) - len(doc.body)].count("\n") if doc.body and text.endswith(doc.body) else 0
    )
    return Source(
        rel, doc.body, dict(doc.metadata), doc.version or blob_version(data), offset, title
    )


def load_source(ctx: ContextManager, cand: Candidate, rev: str | None) -> Source | None:
    """The candidate's content (at ``rev`` when given), or None when it does not exist."""
    if cand.body is not None:
        return Source(
            cand.path,
            cand.body,
            {},
            blob_version(cand.body.encode("utf-8", "surrogatepass")),
            0,
            cand.title,
        )
    rel = paths.check(ctx.root, cand.path)
    data = ctx.parts.git.blob_at(rel, rev) if rev is not None else ctx.parts.read_raw(rel)
    if data is None:
        return None
    return _from_bytes(rel, data, cand.title)


def left_out_note(item: DroppedItem) -> str:
    """One line for a text view saying what was left out and why (an HTML comment, so markdown
    renderers hide it; ``-->`` inside is broken up so the comment cannot be closed early)."""
    body = f"left out: {item.path} ({item.reason})".replace("-->", "-- >")
    return seal(f"<!-- {body} -->", "a note on what the view left out")  # it names a file


def load_or_drop(
    ctx: ContextManager, cand: Candidate, rev: str | None
) -> Source | DroppedItem | None:
    """The candidate's content; None when it does not exist; a :class:`DroppedItem` when it
    exists but cannot be read (binary, not UTF-8, broken frontmatter...).

    An unreadable file is left out and reported (in the view's ``dropped`` and a logged
    warning), pinned or not: one bad file must never take every view down with it.
    """
    try:
        return load_source(ctx, cand, rev)
    except NotFoundError:
        return None
    except ContentError as exc:
        if is_markdown(cand.path):
            log.warning("leaving %s out of the view: %s", cand.path, exc)
            return DroppedItem(cand.path, f"unreadable: {exc}")
        # A binary or non-UTF-8 file a glob matched is kept in the root but is no document.
        log.debug("%s is not text; not a candidate: %s", cand.path, exc)
        return None
    except ContextFSError as exc:
        log.warning("leaving %s out of the view: %s", cand.path, exc)
        return DroppedItem(cand.path, f"unreadable: {exc}")


def check_candidates(candidates: Sequence[Candidate]) -> None:
    """ConfigError unless ``candidates`` is a list of Candidate objects with real tiers."""
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
        raise ConfigError(
            f"pack() takes a list of Candidate objects, got {type(candidates).__name__}; "
            "build them with Candidate(...)"
        )
    for cand in candidates:
        if not isinstance(cand, Candidate):
            raise ConfigError(
                f"pack() takes Candidate objects, got {type(cand).__name__}; build them with Candidate(...)"
            )
        if cand.min_tier not in TIERS:
            raise ConfigError(
                f"min_tier {cand.min_tier!r} of {cand.path} is not a tier; use one of {', '.join(TIERS)}"
            )


def check_passages(paged: Sequence[PagedPassage]) -> None:
    """ConfigError unless ``paged`` is a list of PagedPassage objects."""
    if isinstance(paged, (str, bytes)) or not isinstance(paged, Sequence):
        raise ConfigError(
            f"pack() takes paged= as a list of PagedPassage objects, got {type(paged).__name__}"
        )
    for p in paged:
        if not isinstance(p, PagedPassage):
            raise ConfigError(
                f"pack() takes paged= as PagedPassage objects, got {type(p).__name__}; "
                "build them with PagedPassage(path, index, score)"
            )
