"""The share of a view reserved for passages paged in: taken only from what the items leave
once each is shown at its leanest allowed tier, whatever the header and the pinned items
cost, so a share, however large, never drops an item a budget holds."""

from __future__ import annotations

import re
from pathlib import Path

from contextfs import ContextManager
from contextfs.scopes.packing import load_source, pack
from contextfs.scopes.tiers import render_passages
from contextfs.scopes.views import Candidate, PagedPassage
from contextfs.text.tokens import get_counter

HEADER = "# Harbour scope\n\n" + " ".join(
    f"The {word} crew keeps the harbour log for the night shift." for word in "abcdefgh"
)


def _root(tmp_path: Path) -> ContextManager:
    ctx = ContextManager(tmp_path / "ctx", index=False)
    shifts = [f"Crane {i} lifts containers at the harbour on shift {i}." for i in range(120)]
    ctx.write("n/log.md", "\n\n".join(shifts))
    rules = " ".join(f"Gate {i} opens at {i + 5} and closes at {i + 17}." for i in range(12))
    ctx.write("n/pin.md", f"# Gate rules\n\n{rules}\n")
    for k in range(4):
        parts = "\n\n".join(f"Crane {k} note {j} says the berth shifts at dawn." for j in range(4))
        ctx.write(f"n/note{k}.md", f"# Note {k}\n\n{parts}\n")
    return ctx


def test_a_share_of_the_whole_view_never_drops_an_item_the_budget_holds(
    tmp_path: Path,
) -> None:
    """A header and a pinned note of about a hundred tokens each, and four notes allowed
    down to a cue: at every budget that holds them all at their leanest, with any share up
    to the whole view, every note is shown and the passages take the rest."""
    ctx = _root(tmp_path)
    pin = Candidate("n/pin.md", "core", 0, pinned=True)
    notes = [Candidate(f"n/note{k}.md", "the task", k + 1, min_tier="cue") for k in range(4)]
    cands = [pin, *notes]
    everyone = {c.path for c in cands}
    alone = pack(ctx, [pin], None, header=HEADER).tokens  # the header and the pinned note
    leanest = next(
        b
        for b in range(alone, alone + 2000)
        if {i.path for i in pack(ctx, cands, b, header=HEADER).items} == everyone
    )
    assert pack(ctx, [pin], None).items[0].tokens > 100
    paged = [PagedPassage("n/log.md", i, 1.0 - i / 100) for i in range(40)]
    passages_shown = 0
    for share in (0.5, 0.9, 1.0):
        for budget in range(leanest, leanest + 240, 6):
            view = pack(
                ctx, cands, budget, query="crane", paged=paged, page_share=share, header=HEADER
            )
            shown = {i.path for i in view.items}
            assert everyone <= shown, (share, budget, sorted(everyone - shown))
            assert view.tokens <= budget
            passages_shown += sum(i.path == "n/log.md" for i in view.items)
    assert passages_shown > 0  # the passages were there to take the room


def test_with_every_item_whole_the_passages_fill_the_budget_to_the_next_one(
    tmp_path: Path,
) -> None:
    """Once every item is whole, what is left goes to passages until the next one would not
    fit: the view with that passage added, counted joined, is over the budget (section
    costs are estimates, so the first view built for a budget may leave room a passage
    fits in; the search then aims higher)."""
    ctx = _root(tmp_path)
    notes = [Candidate(f"n/note{k}.md", "the task", k + 1) for k in range(2)]
    paged = [PagedPassage("n/log.md", i, 1.0 - i / 1000) for i in range(120)]
    log = load_source(ctx, Candidate("n/log.md", "passages", 0), None)
    assert log is not None
    count = get_counter(None).count
    whole = pack(ctx, notes, None).tokens
    checked = 0
    for share in (0.2, 0.6):
        least = int(whole / (1 - share)) + 40  # the share of page-in leaves the items whole
        for budget in range(least, least + 360, 5):
            view = pack(ctx, notes, budget, query="crane", paged=paged, page_share=share)
            assert [i.tier for i in view.items if i.path != "n/log.md"] == ["full", "full"]
            picked = sorted(int(n) for n in re.findall(r"Crane (\d+) lifts", view.text))
            unshown = [i for i in range(120) if i not in picked]
            assert picked and unshown, (budget, share)
            section = render_passages(log, picked)
            assert section in view.text, budget
            fuller = view.text.replace(section, render_passages(log, [*picked, unshown[0]]))
            assert count(fuller) > budget, (budget, share, view.tokens)
            checked += 1
    assert checked
