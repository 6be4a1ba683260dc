"""The packer's ladder at its floor: items step down to their lowest allowed tier before
anything is dropped, so a budget that holds every item at that tier shows every item.

The floor is measured, not estimated: the view of every item rendered at its lowest allowed
tier, joined as the packer joins sections (a blank line apart). A budget of exactly that
many tokens must show all of them; so must every budget above it.
"""

from __future__ import annotations

import random

import pytest

from contextfs import ContextManager
from contextfs.scopes.packing import MIN_EXCERPT_TOKENS, load_source, pack
from contextfs.scopes.tiers import TIERS, render
from contextfs.scopes.views import Candidate
from contextfs.text.tokens import get_counter

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima crane tide"
#: Lowest allowed tiers of the four notes: none may be dropped for a tier it was not allowed.
LOWEST = ("abstract", "overview", "cue", "abstract")


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> tuple[ContextManager, list[Candidate]]:
    ctx = ContextManager(tmp_path_factory.mktemp("ladder") / "ctx", index=False)
    rng = random.Random(21)
    words = WORDS.split()
    cands = []
    for i, (size, lowest) in enumerate(zip((6, 12, 25, 12), LOWEST, strict=True)):
        body = "\n\n".join(" ".join(rng.choice(words) for _ in range(8)) + "." for _ in range(size))
        ctx.write(f"n/{i}.md", f"# Note {i}\n\n{body}\n")
        cands.append(Candidate(f"n/{i}.md", "a note", i, min_tier=lowest))
    return ctx, cands


def floor_of(ctx: ContextManager, cands: list[Candidate]) -> int:
    """Tokens of the view with every item at its lowest allowed tier."""
    lowest = [render(load_source(ctx, c, None), c.min_tier) or "" for c in cands]
    return get_counter(None).count("\n\n".join(lowest))


@pytest.mark.parametrize("query", [None, "crane tide"])
def test_nothing_is_dropped_while_every_item_fits_at_its_lowest_tier(notes, query) -> None:  # type: ignore[no-untyped-def]
    ctx, cands = notes
    floor = floor_of(ctx, cands)
    whole = pack(ctx, cands, None).tokens
    assert floor < whole // 2  # the ladder has room to step down in
    for budget in [*range(floor, floor + 24), *range(floor + 24, whole + 1, 9)]:
        view = pack(ctx, cands, budget, query=query)
        assert view.tokens <= budget
        assert view.dropped == (), (budget, view.dropped)
        for item, cand in zip(view.items, cands, strict=True):
            assert TIERS.index(item.tier) <= TIERS.index(cand.min_tier), (budget, item)
            # every item listed is shown under its tier's heading, and costs something
            cue = item.tier == "cue"
            heading = f"- `{item.path}` [cue]" if cue else f"## {item.path} [{item.tier}]\n"
            assert heading in view.text, (budget, item)
            assert item.tokens > 0, (budget, item)


@pytest.mark.parametrize("query", [None, "crane tide"])
def test_an_item_allowed_down_to_an_excerpt_steps_down_to_one(notes, query) -> None:  # type: ignore[no-untyped-def]
    """The long note may go no lower than an excerpt, the short one down to a cue: from room
    for a cue and the smallest excerpt (with margin) up to the whole, both are shown."""
    ctx, _ = notes
    cands = [
        Candidate("n/2.md", "a note", 0, min_tier="excerpt"),
        Candidate("n/0.md", "a note", 1, min_tier="cue"),
    ]
    whole = pack(ctx, cands, None).tokens
    for budget in range(2 * MIN_EXCERPT_TOKENS, whole + 1, 3):
        view = pack(ctx, cands, budget, query=query)
        assert view.tokens <= budget
        assert view.dropped == (), (budget, view.dropped)
        assert view.items[0].tier in ("full", "excerpt"), (budget, view.items)


def test_the_sections_of_a_view_are_a_blank_line_apart(notes) -> None:  # type: ignore[no-untyped-def]
    ctx, cands = notes
    view = pack(ctx, cands, None)
    sections = view.text.removeprefix("## ").split("\n\n## ")
    assert [s.partition(" [full]\n")[0] for s in sections] == [c.path for c in cands]
    assert get_counter(None).count(view.text) == view.tokens
