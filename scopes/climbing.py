"""The packer's climb: each candidate as a slot with its tiers, and the one order in which
room is given to them, from no item shown to every item whole.

:func:`contextfs.scopes.packing.pack` builds a view as the longest run of that order a
target holds (:meth:`Packer.fit`); this module knows the tiers and their costs, the packer
knows the budget, the header, the pinned items and the passages paged in.
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

from contextfs.text.tokens import TokenCounter

from .paging import SEPARATOR_TOKENS
from .tiers import TIERS, Source, excerpt_floor, render
from .views import Candidate

DROPPED = len(TIERS)
#: Below this many tokens an excerpt shows too little to be worth its heading.
MIN_EXCERPT_TOKENS = 40
EXCERPT = TIERS.index("excerpt")
#: One step of the climb: an item and the tier it is raised to (level, text, cost).
Step = tuple["Slot", int, str, int]


class Slot:
    __slots__ = (
        "cand",
        "src",
        "order",
        "level",
        "text",
        "cost",
        "min_level",
        "full_cost",
        "relevance",
    )
    # Set by pack before any is read: the caller's score for the query, then the item's
    # first placement (whole) and what that costs.
    relevance: float
    level: int
    text: str | None
    cost: int
    full_cost: int

    def __init__(self, cand: Candidate, src: Source, order: int) -> None:
        self.cand = cand
        self.src = src
        self.order = order
        # the leanest tier it may be shown at (pinned items are never stepped down: only the
        # others climb)
        self.min_level = TIERS.index(cand.min_tier)

    @property
    def key(self) -> tuple[int, int]:
        """Where the item sits in the view's text: rule order."""
        return (self.cand.priority, self.order)

    @property
    def rank(self) -> tuple[int, float, int, int]:
        """How much the item matters when room is short: with a query, items that answer
        it first (best answer first), then the rest in rule order."""
        return (0 if self.relevance > 0 else 1, -self.relevance, self.cand.priority, self.order)

    def place(self, level: int, text: str | None, cost: int) -> None:
        self.level, self.text, self.cost = level, text, cost


class Climb(NamedTuple):
    """The order room is given in, from no item shown to every item whole (:meth:`Packer.climb`)."""

    steps: list[Step]
    floor: int  # what every item costs at its cheapest tier
    entries: int  # how many items have a tier to show: the first steps bring each one in


class Packer:
    def __init__(self, counter: TokenCounter, terms: tuple[str, ...]) -> None:
        self.counter = counter
        self.terms = terms
        # (slot, level, allowance) -> section, asked for again and again by the climb and
        # the search for the fullest fit (a section depends on nothing else)
        self._sections: dict[tuple[int, int, int | None], tuple[str | None, int]] = {}

    def count(self, text: str) -> int:
        return self.counter.count(text)

    def section(
        self, slot: Slot, level: int, allowance: int | None = None
    ) -> tuple[str | None, int]:
        """``slot`` at tier ``level`` and its cost (separator included); (None, 0) when the tier
        has nothing to show. An excerpt without ``allowance`` is the smallest the file has."""
        key = (id(slot), level, allowance)
        if key not in self._sections:
            self._sections[key] = self._section(slot, level, allowance)
        return self._sections[key]

    def _section(self, slot: Slot, level: int, allowance: int | None) -> tuple[str | None, int]:
        tier = TIERS[level]
        if tier == "excerpt":
            if allowance is None:
                floor = excerpt_floor(slot.src, self.terms, self.count)
                if floor is None:
                    return None, 0
                allowance = max(floor, MIN_EXCERPT_TOKENS)
            text = render(slot.src, tier, terms=self.terms, allowance=allowance, count=self.count)
        else:
            text = render(slot.src, tier)
        if text is None:
            return None, 0
        return text, self.count(text) + SEPARATOR_TOKENS

    def rungs(self, slot: Slot) -> list[tuple[int, str, int]]:
        """The tiers ``slot`` may be shown at, leanest first, each costlier than the one below.

        A tier with nothing to show is passed over, and so is a leaner tier that costs no less
        than a richer one (the richer one is shown for the same room).
        """
        rungs: list[tuple[int, str, int]] = []
        for level in range(slot.min_level + 1):
            text, cost = self.section(slot, level)
            if text is not None and (not rungs or cost < rungs[-1][2]):
                rungs.append((level, text, cost))
        return rungs[::-1]

    def climb(self, others: list[Slot]) -> Climb:
        """Every step from no item shown to every item whole, in the order room is given.

        First every item comes in at its cheapest tier, the cheapest first (the most important
        first among equals); then the items are raised one tier per round, the leanest first
        and the most important first among equals. The order depends on the items alone,
        never on the budget: a view is the longest run of steps its budget holds, so a larger
        budget shows every item a smaller one shows, at the same tier or a richer one. Only
        the cheapest items can come first: any other order would leave room a dropped item
        fits in, or take an item back out when the budget grows.
        """
        ladders = [(slot, rungs) for slot in others if (rungs := self.rungs(slot))]
        ladders.sort(key=lambda pair: (pair[1][0][2], pair[0].rank))
        steps: list[Step] = [(slot, *rungs[0]) for slot, rungs in ladders]
        waiting = [(-rungs[0][0], slot.rank, 0, k) for k, (slot, rungs) in enumerate(ladders)]
        heapq.heapify(waiting)
        while waiting:
            _, rank, height, k = heapq.heappop(waiting)
            slot, rungs = ladders[k]
            if height + 1 < len(rungs):
                steps.append((slot, *rungs[height + 1]))
                heapq.heappush(waiting, (-rungs[height + 1][0], rank, height + 1, k))
        return Climb(steps, sum(rungs[0][2] for _, rungs in ladders), len(ladders))

    def fit(self, others: list[Slot], climb: Climb, target: int, spent: int) -> None:
        """Show ``others`` as richly as ``target`` tokens allow, ``spent`` being taken already.

        The climb stops at the first step that does not fit: a later step taken in its place
        would spend room that a larger budget gives to the step that did not fit, and so be
        taken back there. What is left then enlarges the excerpts shown, the most important
        first, each to less than its file whole (an excerpt never changes an item's tier).
        """
        for slot in others:
            slot.place(DROPPED, None, 0)
        total = spent
        for slot, level, text, cost in climb.steps:
            if total + cost - slot.cost > target:
                break
            total += cost - slot.cost
            slot.place(level, text, cost)
        for slot in sorted(others, key=lambda s: s.rank):
            if slot.level == EXCERPT:
                room = target - total
                allowance = min(room + slot.cost, slot.full_cost - 1) - SEPARATOR_TOKENS
                larger, cost = self.section(slot, EXCERPT, allowance)
                # (None, 0) when nothing fits; one as costly as the leanest (the cheapest
                # passage) replaces it too: it holds the best matches the room affords.
                if slot.cost <= cost <= slot.cost + room:
                    total += cost - slot.cost
                    slot.place(EXCERPT, larger, cost)
