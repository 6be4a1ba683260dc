"""Page-in inside a view: ranked passages fill the budget the items left, then their neighbours.

:func:`page_in` takes passages ranked by :mod:`.pagein` (best first) and shows each file as
one excerpt section, its passages in file order, as long as they fit; when the matches are
in, the passages next to them fill what is left. :func:`contextfs.scopes.packing.pack`
calls it with the room its items left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .passages import chunks_of, is_heading
from .tiers import Source, render_passages
from .views import Candidate, PagedPassage, load_or_drop

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = [
    "MAX_MISSES",
    "MIN_PASSAGE_TOKENS",
    "SEPARATOR_TOKENS",
    "PageMemo",
    "PagedSection",
    "page_in",
    "paged_source",
]

#: Page-in stops when less than this is left (a label and a few words).
MIN_PASSAGE_TOKENS = 12
#: What the "\n\n" between two sections of a view costs.
SEPARATOR_TOKENS = 1


class PagedSection:
    """The passages of one file paged into a view."""

    __slots__ = ("cost", "picked", "score", "src", "text")

    def __init__(self, src: Source, score: float) -> None:
        self.src = src
        self.score = score
        self.picked: list[int] = []
        self.text = ""
        self.cost = 0


@dataclass
class PageMemo:
    """What one view's page-in attempts share: each file as read, each excerpt as measured
    ((path, passages) -> (text, tokens))."""

    sources: dict[str, Source | None] = field(default_factory=dict)
    excerpts: dict[tuple[str, tuple[int, ...]], tuple[str, int]] = field(default_factory=dict)


#: Page-in stops after this many passages in a row did not fit.
MAX_MISSES = 40


def page_in(
    ctx: ContextManager,
    count: Callable[[str], int],
    paged: Sequence[PagedPassage],
    rev: str | None,
    seen: set[str],
    room: int,
    memo: PageMemo | None = None,
) -> list[PagedSection]:
    """Fill ``room`` tokens with ranked passages, best first, then their neighbours.

    A passage is taken when it fits; files are shown as one excerpt section each (in the
    order of their best passage), their passages in file order with neighbours joined.
    When the matching passages are in, the passages next to them fill what is left.
    ``memo`` keeps the files read and the excerpts measured, for a caller that pages in
    several times for one view (the packer searching for the fullest fit): each file is read
    once, so every attempt sees the same bytes.
    """
    memo = memo if memo is not None else PageMemo()
    sections: dict[str, PagedSection] = {}
    skipped: set[str] = set(seen)
    left = room
    misses = 0

    def cost_with(sec: PagedSection, picked: list[int]) -> tuple[str, int]:
        key = (sec.src.path, tuple(picked))
        made = memo.excerpts.get(key)
        if made is None:
            text = render_passages(sec.src, picked)
            made = memo.excerpts[key] = (text, count(text) + SEPARATOR_TOKENS)
        return made

    def take(sec: PagedSection, index: int) -> bool:
        nonlocal left
        if index in sec.picked:
            return True
        text, cost = cost_with(sec, [*sec.picked, index])
        if cost - sec.cost > left:
            return False
        left -= cost - sec.cost
        sec.picked.append(index)
        sec.text, sec.cost = text, cost
        return True

    for p in paged:
        if left < MIN_PASSAGE_TOKENS or misses >= MAX_MISSES:
            break
        if p.path in skipped:
            continue
        sec = sections.get(p.path)
        if sec is None:
            if p.path not in memo.sources:
                memo.sources[p.path] = paged_source(ctx, p.path, rev)
            src = memo.sources[p.path]
            if src is None:
                skipped.add(p.path)
                continue
            sec = PagedSection(src, p.score)
        if not 0 <= p.index < len(chunks_of(sec.src.body, sec.src.line_offset, sec.src.path)):
            continue  # a ranking from other bytes than these: never show a wrong passage
        if take(sec, p.index):
            sections.setdefault(p.path, sec)
            misses = 0
        else:
            misses += 1
    # Neighbours: the passages around each match, best file first, while they fit.
    for sec in list(sections.values()):
        chunks = chunks_of(sec.src.body, sec.src.line_offset, sec.src.path)
        for index in list(sec.picked):
            for near in (index - 1, index + 1):
                if left < MIN_PASSAGE_TOKENS:
                    break
                if (
                    0 <= near < len(chunks)
                    and not is_heading(chunks[near])
                    and near not in sec.picked
                ):
                    take(sec, near)
    return [s for s in sections.values() if s.picked]


def paged_source(ctx: ContextManager, path: str, rev: str | None) -> Source | None:
    """A paged file's content, or None when it cannot be shown (gone, unreadable, quarantined, empty)."""
    src = load_or_drop(ctx, Candidate(path, "paged in", 0), rev)
    if not isinstance(src, Source) or src.trust == "quarantined" or not src.body.strip():
        return None
    return src
