"""The packer's ladder: items step down to their lowest allowed tier before anything is
dropped, so a budget that holds every item at that tier shows every item; a larger budget
never shows less; room is spent on richer tiers only once every item is in.

The floor is measured, not estimated: the view of every item rendered at its lowest allowed
tier, joined as the packer joins sections (a blank line apart). A budget of exactly that
many tokens must show all of them; so must every budget above it.
"""

from __future__ import annotations

import random

import pytest

from contextfs import ContextManager
from contextfs.scopes.climbing import MIN_EXCERPT_TOKENS
from contextfs.scopes.packing import load_source, pack
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


@pytest.mark.parametrize(("query", "step"), [(None, 1), ("crane tide", 2)])
def test_a_larger_budget_never_shows_an_item_less_or_at_a_leaner_tier(notes, query, step) -> None:  # type: ignore[no-untyped-def]
    """Every budget from nothing to the notes whole (every other one with a query, to keep it
    quick). Handing room back greedily, most important first, fails here: note 3 is shown at
    280 and 289 tokens and left out at 281-288, where room goes to note 0 whole instead."""
    ctx, cands = notes
    whole = pack(ctx, cands, None).tokens
    shown: dict[str, int] = {}
    for budget in range(0, whole + 1, step):
        view = pack(ctx, cands, budget, query=query)
        now = {item.path: TIERS.index(item.tier) for item in view.items}
        for path, level in shown.items():
            assert now.get(path, len(TIERS)) <= level, (budget, path, shown, now)
        shown = now


@pytest.mark.parametrize("query", [None, "crane tide"])
def test_an_item_is_dropped_only_when_the_others_at_their_lowest_tiers_leave_no_room_for_it(
    notes, query
) -> None:  # type: ignore[no-untyped-def]
    """Room is not spent on richer tiers while an item that would fit beside the others at
    their lowest tiers is left out."""
    ctx, cands = notes
    count = get_counter(None).count
    lowest = {c.path: render(load_source(ctx, c, None), c.min_tier) or "" for c in cands}
    for budget in range(floor_of(ctx, cands)):
        view = pack(ctx, cands, budget, query=query)
        kept = [lowest[item.path] for item in view.items]
        for gone in view.dropped:
            assert count("\n\n".join([*kept, lowest[gone.path]])) > budget, (budget, view.items)


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> ContextManager:
    return ContextManager(tmp_path_factory.mktemp("bodies") / "ctx", index=False)


def test_room_the_next_step_does_not_fit_in_enlarges_an_excerpt_to_less_than_its_file(
    bodies: ContextManager,
) -> None:
    """The important note's next step, whole, does not fit, and its excerpt cannot grow (its
    two passages are one sentence each: an excerpt of both would be the whole note). The room
    left goes to the other note's excerpt: the room would hold all eight of its passages,
    which is no excerpt, so it gets the largest excerpt that costs less than the note whole
    (its first five passages, lines 1-9), not its smallest (lines 1-3)."""
    rng = random.Random(3)
    words = WORDS.split()[:12]
    big = "\n\n".join(" ".join(rng.choice(words) for _ in range(200)) + "." for _ in range(2))
    small = "\n\n".join(" ".join(rng.choice(words) for _ in range(8)) + "." for _ in range(8))
    cands = [
        Candidate("n/big.md", "big", 0, body=big),
        Candidate("n/small.md", "small", 1, body=small),
    ]
    whole = {item.path: item.tokens for item in pack(bodies, cands, None).items}
    view = pack(bodies, cands, 600)
    assert [(i.path, i.tier) for i in view.items] == [
        ("n/big.md", "excerpt"),
        ("n/small.md", "excerpt"),
    ]
    shown = view.items[1]
    assert shown.lines == "1-9" and shown.tokens < whole["n/small.md"]


def test_an_item_with_nothing_to_show_at_its_allowed_tiers_is_not_listed(
    bodies: ContextManager,
) -> None:
    # A conversation log with no message in it has no whole rendering, and may go no lower.
    cands = [
        Candidate("sessions/broken.jsonl", "a log", 0, body="not a message\n", min_tier="full"),
        Candidate("n/a.md", "a note", 1, body="# A\n\nSome words here.\n"),
    ]
    view = pack(bodies, cands, 200)
    assert [i.path for i in view.items] == ["n/a.md"]
    assert [d.path for d in view.dropped] == ["sessions/broken.jsonl"]
