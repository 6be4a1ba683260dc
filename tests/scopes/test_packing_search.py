"""The packer's search for the largest target whose joined view fits a budget, on a tree
where the joined cost of a view is not monotone in its target: a fit that climbs one step
further can cost fewer tokens once joined (a blank line glued to ``"=>`` costs a token
more than apart, to a plain word a token less), so "the fullest view" is the one built for
the largest target that fits, not the one of the most tokens."""

from __future__ import annotations

from pathlib import Path

from contextfs import ContextManager
from contextfs.scopes import climbing, packing
from contextfs.scopes.packing import pack
from contextfs.scopes.tiers import query_terms
from contextfs.scopes.views import Candidate
from contextfs.text.tokens import get_counter

SENTENCE = "The crane detail says shifts at dawn"

# Each note: its least tier, and its parts as (the sentences' ending, how many sentences).
NOTES: list[tuple[str, list[tuple[str, int]]]] = [
    ("overview", [('"=>', 2), ('"=>', 2), ("", 2), ('"', 2)]),
    ("cue", [("", 1), ("", 1), ("=>", 1)]),
    ("cue", [('"=>', 2), ("", 3), ('"=>', 3), (".", 2), ('"=>', 3)]),
    ("overview", [("=>", 2), ("", 1), ("=>", 2), ("=>", 3), ('"=>', 1), ("", 2)]),
    ("cue", [("=>", 1), ('"=>', 3), ('"=>', 1), ('"=>', 2), ('"=>', 3)]),
    ("abstract", [('"', 2), (".", 3), ("=>", 3), ('"=>', 1), (".", 3)]),
    ("overview", [('"=>', 1), ('"=>', 3)]),
    ("full", [('"=>', 2)]),
]
HEADER = "# Scope\n\n" + " ".join(f"w{i}" for i in range(7))


def _candidates() -> list[Candidate]:
    out = []
    for k, (tier, parts) in enumerate(NOTES):
        sections = "\n\n".join(
            f"## Part {j}\n\n" + " ".join([SENTENCE + ending] * times)
            for j, (ending, times) in enumerate(parts)
        )
        body = f"# Note {k}\n\nAbout crane {k}.\n\n{sections}\n"
        out.append(Candidate(f"n/n{k}.md", "t", k, body=body, min_tier=tier))
    return out


def _view_at_every_target(
    ctx: ContextManager, cands: list[Candidate], targets: range
) -> dict[int, tuple[str, int]]:
    """The view of ``cands`` under the header fitted to each target, as pack fits it (no
    query, no page-in): its text and its joined cost."""
    counter = get_counter(None)
    packer = climbing.Packer(counter, query_terms(None))
    slots = [climbing.Slot(c, packing.load_source(ctx, c, None), k) for k, c in enumerate(cands)]
    for slot in slots:
        slot.relevance = 0.0
        slot.place(0, *packer.section(slot, 0))
        slot.full_cost = slot.cost
    climb = packer.climb(slots)
    fixed = counter.count(HEADER) + packing.SEPARATOR_TOKENS
    views = {}
    for target in targets:
        packer.fit(slots, climb, target + packing.SEPARATOR_TOKENS, fixed)
        text = packing._join(HEADER, slots, [])
        views[target] = (text, counter.count(text))
    return views


def test_the_view_is_built_for_a_target_whose_next_one_does_not_fit(tmp_path: Path) -> None:
    """At every budget across the range where joined costs go up and down, the view is
    the fit at some target T within the budget, and the fit at T + 1 shows the same or
    overshoots: the search leaves no larger target that fits untried beside its answer.
    Views also never shrink as the budget grows. (Around 567 tokens a fit one target larger
    costs 4 tokens less once joined: a search stopping one target short returns the
    costlier, leaner view at some budgets and the fuller one at the next.)"""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    cands = _candidates()
    views = _view_at_every_target(ctx, cands, range(540, 620))
    assert any(  # the tree is of the kind described: a larger target, a cheaper join
        views[t + 1][0] != views[t][0] and views[t + 1][1] < views[t][1] for t in range(540, 619)
    )
    last = 0
    for budget in range(560, 576):
        view = pack(ctx, cands, budget, header=HEADER)
        assert view.tokens <= budget, budget
        built_for = [t for t in range(540, 619) if views[t][0] == view.text]
        assert built_for, budget
        top = max(built_for)
        assert views[top + 1][1] > budget, (budget, top)  # the next target overshoots
        assert view.tokens >= last, budget
        last = view.tokens
