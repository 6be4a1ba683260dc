"""The budget packer: turn ranked candidates into one markdown view that never exceeds its budget.

Every layer that puts context in front of a model (scopes, topics, memory, the evolving
agent) hands the packer a list of :class:`Candidate` and a token budget and gets back a
:class:`ContextView`. The packer's promises:

* ``view.tokens <= budget`` whenever a budget is set, counted exactly on the final text (it
  re-packs against a tighter target if token merges at section joins push the total over);
* pinned candidates are always shown whole; if they alone do not fit, :class:`BudgetError`
  names them and their sizes;
* a candidate whose file cannot be read (binary, not UTF-8, broken frontmatter) is left
  out and listed in ``view.dropped`` as ``unreadable: ...``, pinned or not;
* every item whose file is not trusted, or whose shown text the poisoning guard flags, is
  fenced as quoted data (:mod:`.tiers`), and the fence counts against the budget;
* the other items get the room left in one order that depends on them alone
  (:meth:`.climbing.Packer.climb`): each comes in at its cheapest allowed tier, the cheapest first,
  then they are raised one tier per round (full ← excerpt ← overview ← abstract ← cue), the
  leanest first and the most important first among equals; a view is the longest run of
  that order its budget holds, so a larger budget never shows fewer items nor any at a
  leaner tier, no item is raised while another is left out, and room left over holds no
  item that was left out (page-in aside: see :func:`pack`);
* room the next step does not fit in enlarges the excerpts shown, most important first;
* the result is a pure function of the candidates' bytes, the query and the budget — no
  clock, no index state — so ``as_of`` can reproduce it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from contextfs.errors import BudgetError, ConfigError
from contextfs.gate.fencing import seal
from contextfs.gate.poisoning import render_untrusted
from contextfs.text.tokens import get_counter
from contextfs.text.turns import is_log

from .arguments import check_int, check_number
from .climbing import DROPPED, Packer, Slot
from .paging import SEPARATOR_TOKENS, PagedSection, PageMemo, page_in
from .tiers import TIERS, flags, join_sections, query_terms, render, shows_whole
from .views import (
    Candidate,
    ContextView,
    DroppedItem,
    PagedPassage,
    ViewItem,
    check_candidates,
    check_passages,
    load_or_drop,
    load_source,
    resolve_rev,
)

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = [
    "Candidate",
    "ContextView",
    "DroppedItem",
    "PagedPassage",
    "ViewItem",
    "load_or_drop",
    "load_source",
    "pack",
    "resolve_rev",
]

log = logging.getLogger(__name__)

#: Views the budget search may build: stepping down from an overshoot doubles its step and
#: the search then halves the gap, so a budget of 2**20 tokens needs at most about 42.
MAX_ATTEMPTS = 48


def _lines_of(text: str | None) -> str | None:
    if not text:
        return None
    found = re.findall(r"^\[lines? (\d+)(?:-(\d+))?", text, flags=re.M)
    if not found:
        return None
    return ",".join(a if not b else f"{a}-{b}" for a, b in found)


def pack(
    ctx: ContextManager,
    candidates: list[Candidate],
    budget: int | None,
    *,
    query: str | None = None,
    encoding: str | None = None,
    as_of: str | None = None,
    header: str | None = None,
    paged: Sequence[PagedPassage] = (),
    page_share: float = 0.0,
    relevance: Mapping[str, float] | None = None,
) -> ContextView:
    """Pack ``candidates`` into a view of at most ``budget`` tokens (no limit when None).

    ``paged`` are ranked passages from outside the candidates (best first). They are
    guaranteed ``page_share`` of the budget left after the pinned items, and take
    whatever else the candidates leave: the budget is a cap the view comes close to when
    there is matching material. What the passages leave goes back to the candidates, so
    with page-in a candidate's tier also follows what the passages take, and a larger
    budget that pages in more may show it leaner. ``relevance`` (path -> score for ``query``) orders the
    unpinned candidates when room is short: the ones that answer the query keep their
    richer tiers.
    """
    if budget is not None:
        check_int(
            budget,
            "budget",
            minimum=0,
            expect="a non-negative number of tokens",
            fix="pass e.g. budget=2000",
            error=ConfigError,
        )
    check_number(
        page_share,
        "page_share",
        low=0,
        high=1,
        fix="pass a share such as 0.5 (ScopedContext's default)",
        error=ConfigError,
    )
    check_candidates(candidates)
    check_passages(paged)
    counter = get_counter(encoding)
    rev = resolve_rev(ctx, as_of)
    packer = Packer(counter, query_terms(query))
    scores = dict(relevance or {})

    slots: list[Slot] = []
    dropped: list[DroppedItem] = []
    seen: set[str] = set()
    indexed = sorted(enumerate(candidates), key=lambda p: (not p[1].pinned, p[1].priority, p[0]))
    for order, cand in indexed:
        slot = _make_slot(ctx, cand, order, rev, seen, dropped)
        if slot is not None:
            slot.relevance = float(scores.get(cand.path, 0.0)) if query else 0.0
            slots.append(slot)

    header_text = header.rstrip() if header else None
    if header_text and flags(header_text):  # a header made from file text is fenced like any item
        header_text = render_untrusted(header_text, "the view's header", reasons=flags(header_text))
    fixed = packer.count(header_text) + SEPARATOR_TOKENS if header_text else 0
    pinned = [s for s in slots if s.cand.pinned]
    for slot in slots:
        slot.place(0, *packer.section(slot, 0))
        slot.full_cost = slot.cost

    sections: list[PagedSection] = []
    if budget is not None:
        pinned_cost = sum(s.cost for s in pinned)
        # Counted joined, not estimated: tokens merge at the joins either way, and the view
        # the search falls back on (the header and the pinned items alone) must fit.
        need = counter.count(_join(header_text, pinned, [])) if pinned or header_text else 0
        if need > budget:
            sizes = ", ".join(f"{s.src.path} ({s.cost} tokens)" for s in pinned)
            raise BudgetError(
                f"the budget of {budget} tokens cannot hold the pinned items alone, which need "
                f"{need} tokens: {sizes}; raise the budget or shorten or unpin them"
            )
        search = _Search(
            packer,
            header_text,
            slots,
            budget,
            fixed + pinned_cost,
            partial(page_in, ctx, packer.count, paged, rev, seen, memo=PageMemo()),
            page_share,
        )
        found = search.fullest(paging=bool(paged) and page_share > 0 and bool(query))
        for slot, shown in zip(slots, found.shown, strict=True):
            slot.place(*shown)
        sections = found.sections

    text = _join(header_text, slots, sections)
    total = counter.count(text)
    items: list[ViewItem] = []
    manifest: list[tuple[str, str]] = []
    for slot in _ordered(slots):
        if slot.level >= DROPPED:
            dropped.append(
                DroppedItem(
                    slot.src.path,
                    f"over budget: {slot.cand.reason}",
                    slot.full_cost - SEPARATOR_TOKENS,
                    slot.src.version,
                )
            )
            continue
        tier = TIERS[slot.level]
        items.append(
            ViewItem(
                slot.src.path,
                tier,
                slot.cost - SEPARATOR_TOKENS,
                slot.src.version,
                slot.cand.reason,
                slot.cand.priority,
                slot.cand.pinned,
                _lines_of(slot.text) if tier == "excerpt" else None,
            )
        )
        manifest.append((slot.src.path, slot.src.version))
    for k, sec in enumerate(sections, start=1):
        items.append(
            ViewItem(
                sec.src.path,
                "full" if shows_whole(sec.src, sec.picked) else "excerpt",
                sec.cost - SEPARATOR_TOKENS,
                sec.src.version,
                f"paged in for the query (best passage score {sec.score:.3f})",
                1000 + k,
                False,
                _lines_of(sec.text),
            )
        )
        manifest.append((sec.src.path, sec.src.version))
    return ContextView(
        text=text,
        tokens=total,
        budget=budget,
        items=tuple(items),
        dropped=tuple(dropped),
        manifest=tuple(manifest),
        encoding=counter.name or counter.requested,
        query=query,
        as_of=rev,
    )


class _Found(NamedTuple):
    """A view the budget search built and counted joined."""

    shown: list[tuple[int, str | None, int]]  # each slot's (level, text, cost)
    sections: list[PagedSection]
    total: int  # tokens, counted on the joined text
    entries: int  # how many of the unpinned items it shows


class _Search:
    """The search for the fullest view a budget holds.

    Section costs are estimates (tokens merge across the joins, either way), so each view
    is counted joined and the target the items are fitted to is searched for: lower while
    the view is over the budget, higher while room is left and something was cut. The view
    kept is the fullest that fits of those built.
    """

    def __init__(
        self,
        packer: Packer,
        header: str | None,
        slots: list[Slot],
        budget: int,
        spent: int,
        pager: Callable[[int], list[PagedSection]],
        share: float,
    ) -> None:
        self.packer, self.header, self.slots = packer, header, slots
        self.budget, self.spent, self.pager, self.share = budget, spent, pager, share
        self.others = [s for s in slots if not s.cand.pinned]
        self.climb = packer.climb(self.others)

    def fullest(self, *, paging: bool) -> _Found:
        """The fullest view found; with ``paging``, passages take room too, but never the
        room of an item the budget holds without them (the share never drops an item)."""
        found = self._run(paging=paging)
        if not paging or found.entries == self.climb.entries:
            return found
        # Section costs are estimates: one can say an item does not fit where the joined
        # view shows it does. Without passages the search then aims higher and finds the
        # item a place; with them, passages take the room at once.
        plain = self._run(paging=False)
        return plain if plain.entries > found.entries else found

    def _run(self, *, paging: bool) -> _Found:
        budget, others = self.budget, self.others
        target = budget
        best: _Found | None = None
        fits: int | None = None  # the largest target known to fit
        over: int | None = None  # the smallest target known to overshoot
        # Below the floor the others get no room, so the view is the header and the pinned
        # items alone, which fit (checked by pack): a target there always fits.
        floor = self.spent - SEPARATOR_TOKENS - 1
        step = 0  # how far the target last stepped down while nothing fitted
        for _attempt in range(MAX_ATTEMPTS):
            sections = self._build(target, paging=paging)
            total = self.packer.count(_join(self.header, self.slots, sections))
            if total > budget:
                # never above an earlier overshoot: before a fit each attempt aims lower,
                # after one the target rises only until something overshoots, and then
                # every target lies between the two
                over = target
                if fits is None:
                    # Token merges at the joins cost more than the per-section sums: aim lower,
                    # by what this overshot and by at least twice the last step (many merges
                    # in a large view would otherwise cost an attempt per token), never below
                    # the floor, which fits.
                    step = max(total - budget, 2 * step)
                    target = max(floor, target - step)
                    continue
            else:
                fits = target  # every target tried after one fits is larger
                # Without passages a larger target climbs further, which is what "fuller"
                # means even where the joins make it cost fewer tokens; with passages its
                # view can come out leaner (they fill what the items leave), so the one
                # of the most tokens is kept.
                if best is None or not paging or total >= best.total:
                    shown = [(s.level, s.text, s.cost) for s in self.slots]
                    entries = sum(s.level < DROPPED for s in others)
                    best = _Found(shown, list(sections), total, entries)
                if total == budget or (not paging and all(s.level == 0 for s in others)):
                    break
                if over is None:
                    # Nothing overshot yet: take the room that is left. (Doubling each rise
                    # spares views when a fit leaves a token of room, but overshoots and
                    # costs more views on the common path: 2,000-file views 14 -> 24 ms.)
                    target += budget - total
                    continue
            assert over is not None and fits is not None  # both known on the paths to here
            if over - fits <= 1:
                break
            target = (fits + over) // 2
        if best is None:  # pragma: no cover - the steps down reach the floor well before
            raise BudgetError(f"could not pack within {budget} tokens; raise the budget")
        return best

    def reserve(self, target: int) -> int:
        """The room guaranteed to passages in a view fitted to ``target``: the share of what
        the header and the pinned items leave, in whole tokens, but never room the items
        need to come in at their lowest allowed tier (the share never drops an item)."""
        room_target = target + SEPARATOR_TOKENS
        share = int((target - self.spent) * self.share)
        return max(0, min(share, room_target - self.spent - self.climb.floor))

    def _build(self, target: int, *, paging: bool) -> list[PagedSection]:
        """Fit the items to ``target`` (and page in around them): the view's passages."""
        packer, others, climb, spent = self.packer, self.others, self.climb, self.spent
        # Every section's cost includes the separator after it, but the last one is
        # followed by none: that one is room too.
        room_target = target + SEPARATOR_TOKENS
        if not paging:
            packer.fit(others, climb, room_target, spent)
            return []
        # The items fit around a reserve; page-in then takes the reserve and whatever the
        # items left; what page-in leaves goes back to them.
        packer.fit(others, climb, room_target, spent + self.reserve(target))
        room = room_target - spent - sum(s.cost for s in others)
        sections = self.pager(room)
        packer.fit(others, climb, room_target, spent + sum(p.cost for p in sections))
        return sections


def _make_slot(
    ctx: ContextManager,
    cand: Candidate,
    order: int,
    rev: str | None,
    seen: set[str],
    dropped: list[DroppedItem],
) -> Slot | None:
    if cand.path in seen:
        return None
    src = load_or_drop(ctx, cand, rev)
    if isinstance(src, DroppedItem):
        dropped.append(src)
        return None
    seen.add(cand.path)
    if src is None:
        dropped.append(DroppedItem(cand.path, f"not found: {cand.reason}"))
        return None
    if src.trust == "quarantined":
        dropped.append(
            DroppedItem(src.path, "quarantined: shown only on explicit request", 0, src.version)
        )
        return None
    # A log whose lines hold no message (or only quarantined ones) has nothing to show either.
    if not src.body.strip() or (is_log(src.path) and render(src, "full") is None):
        dropped.append(DroppedItem(src.path, "empty", 0, src.version))
        return None
    return Slot(cand, src, order)


def _ordered(slots: list[Slot]) -> list[Slot]:
    return sorted(slots, key=lambda s: (not s.cand.pinned, s.key))


def _join(header: str | None, slots: list[Slot], paged: list[PagedSection]) -> str:
    """The view's text. Each part is sealed (:func:`contextfs.gate.fencing.seal`): a heading or a
    header that names a file whose name reads as an instruction is fenced like its text
    (judgements are cached, so the packer's repeated joins cost one judgement per part)."""
    parts = [header] if header else []
    parts += [s.text for s in _ordered(slots) if s.text is not None]  # a dropped slot has none
    parts += [s.text for s in paged if s.text]
    return join_sections(seal(part, "the view's headings") for part in parts)
