"""What a view holds at the budgets where the packer's cost bookkeeping decides: the
leanest excerpt an item can come in at, and what a file with nothing to show becomes."""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest

from contextfs import ContextManager
from contextfs.scopes.climbing import Packer, Slot
from contextfs.scopes.packing import SEPARATOR_TOKENS, load_source, pack
from contextfs.scopes.tiers import TIERS, Source, query_terms, render
from contextfs.scopes.views import Candidate
from contextfs.text.tokens import get_counter

FILLER = "The berth schedule shifts with the tide and the crane crews follow it closely"


def _long(words: int, k: int) -> str:
    return " ".join(f"{FILLER} on day {k}." for _ in range(words // 15))


def test_with_a_query_an_item_comes_in_at_its_smallest_matching_excerpt(tmp_path: Path) -> None:
    """A note allowed down to an excerpt whose opening is long and whose one short paragraph
    answers the query: the smallest budget that shows it shows that paragraph alone, for
    less than the opening would cost, and every smaller budget shows nothing (the leanest
    excerpt is sized by the cheapest passage that may be picked, not by the opening)."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    paras = [_long(120, 0), "The heron nests by the river.", _long(60, 1), _long(60, 2)]
    cand = Candidate("n/a.md", "the task", 0, body="\n\n".join(paras), min_tier="excerpt")
    opening = get_counter(None).count(paras[0])
    first = None
    for budget in range(opening):
        view = pack(ctx, [cand], budget, query="heron")
        if view.items:
            first = view
            break
        assert view.text == "", budget
    assert first is not None, "no excerpt shown below the opening's cost"
    assert [(i.tier, i.lines) for i in first.items] == [("excerpt", "3")]
    assert first.text == "## n/a.md [excerpt]\n[line 3]\nThe heron nests by the river."
    assert first.tokens == first.budget


OPENING = [
    "The harbour opens at dawn and the cranes start with the tide.",
    "Berth 4 takes the container ships; berth 9 the ferries.",
    "The night crew hands over at six.",
]


def _gate_note(words: int) -> str:
    """Three short paragraphs and a last one of ``words`` words: the note's whole cost
    moves a token at a time around what an excerpt of the first three is asked for."""
    last = "The north gate closes when the last crane rests at night by the quay"
    return "\n\n".join([*OPENING, " ".join(last.split(" ")[:words]) + "."])


def _excerpts(ctx: ContextManager, cand: Candidate, below: int) -> dict[str, int]:
    """Every excerpt of ``cand`` asked for fewer than ``below`` tokens, with its cost."""
    src = load_source(ctx, cand, None)
    count = get_counter(None).count
    shown = (render(src, "excerpt", allowance=a, count=count) for a in range(below))
    return {text: count(text) for text in shown if text is not None}


@pytest.mark.parametrize("words", [8, 9, 10])
def test_a_note_alone_shows_the_richest_excerpt_its_budget_holds(
    tmp_path: Path, words: int
) -> None:
    """A note alone, allowed down to an excerpt, at every budget below its whole cost: the
    view is the richest of its excerpts asked for fewer tokens than the note costs whole
    that the budget holds (without a query an excerpt is the note's opening, so a richer
    one holds the leaner ones). Richer excerpts cost more; at one token short of the whole
    the richest is asked for exactly that."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    cand = Candidate("n/a.md", "the task", 0, body=_gate_note(words), min_tier="excerpt")
    whole = pack(ctx, [cand], None).tokens
    excerpts = _excerpts(ctx, cand, whole)
    shown = 0
    for budget in range(whole):
        view = pack(ctx, [cand], budget)
        if not view.items:
            continue
        held = [text for text, cost in excerpts.items() if cost <= budget]
        richest = max(held, key=len)
        assert view.text == richest, budget
        shown += 1
    assert shown > 10


@pytest.mark.parametrize("words", [8, 9])
def test_an_excerpt_left_with_room_for_its_whole_file_is_asked_for_less(
    tmp_path: Path, words: int
) -> None:
    """Two notes: the climb raises the leaner one (a cue, then its abstract, then its
    long overview) before it shows the other whole, so at some budgets the climb stops at
    that overview with room left that the first note's whole file would fit in. That
    room enlarges the first note's excerpt, but only to one asked for fewer tokens than
    its file costs whole: at every budget its excerpt is one of those, and cheaper."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    gate = Candidate("n/a.md", "the task", 0, body=_gate_note(words), min_tier="excerpt")
    prose = " ".join(f"{FILLER} on pier {k}." for k in range(8))
    other = Candidate("n/b.md", "a neighbour", 1, body=f"# Piers\n\n{prose}\n", min_tier="cue")
    whole = pack(ctx, [gate], None).tokens
    excerpts = _excerpts(ctx, gate, whole)
    left_room = 0
    for budget in range(pack(ctx, [gate, other], None).tokens):
        view = pack(ctx, [gate, other], budget)
        tiers = {item.path: item for item in view.items}
        if "n/a.md" not in tiers or tiers["n/a.md"].tier != "excerpt":
            continue
        section = view.text.split("\n\n")[0]
        assert section in excerpts and tiers["n/a.md"].tokens < whole, budget
        if budget - view.tokens + tiers["n/a.md"].tokens >= whole:
            left_room += 1
    assert left_room > 0  # the case described arose


# An untrusted note (its fence reserves the same room for every excerpt) whose cheapest
# passage does not answer the query and whose answering passage costs as much once shown.
# Drawn from generated trees: a tie of this kind needs the two to count alike exactly.
TIED = (
    "# Note 1\n\ncontainers shift north dawn berth tide heron berth lifts harbour tide crane "
    "north gate heron\nharbour containers schedule heron north heron lifts dawn dusk\n\n"
    'gate harbour gate"=>\n\nThe crane schedule for the night shift.\n\nberth gate tide shift '
    "river river berth schedule tide heron dawn river dusk shift harbour gate harbour gate crane "
    'tide shift containers gate schedule berth dusk dusk dusk north gate"=>\n\n'
    "heron heron berth.\n\ntide crane heron harbour gate lifts containers crane."
)


def test_room_beyond_the_leanest_excerpt_shows_the_answer_that_costs_as_much(
    tmp_path: Path,
) -> None:
    """The leanest excerpt of a note is its cheapest passage, which need not answer the
    query. Once the budget holds more, the excerpt is the one the room affords, best
    matches first, even when that costs no more than the leanest: every budget above the
    leanest view's shows a passage that answers the query."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    ctx.write("n/x.md", TIED, metadata={"trust": "untrusted"})
    cand = Candidate("n/x.md", "the task", 0, min_tier="excerpt")
    src = load_source(ctx, cand, None)
    count = get_counter(None).count
    leanest = next(b for b in range(200) if pack(ctx, [cand], b, query="heron river").items)
    view = pack(ctx, [cand], leanest, query="heron river")
    assert "heron" not in view.text and view.tokens == leanest
    # the tie: an excerpt of the answering passage alone costs what the leanest does
    answers = [
        render(src, "excerpt", terms=("heron", "river"), allowance=a, count=count)
        for a in range(leanest, 2 * leanest)
    ]
    assert any(t and "heron heron berth." in t and count(t) == leanest for t in answers)
    for budget in range(leanest + 1, leanest + 8):
        view = pack(ctx, [cand], budget, query="heron river")
        assert "heron" in view.text, budget


def test_an_enlarged_excerpt_may_take_the_room_left_to_its_last_token() -> None:
    """The room left after the climb is spent on the excerpts to its last token: an
    excerpt whose cost is exactly the room it was offered is shown. (The excerpt's fence is
    reserved by estimate, so an untrusted excerpt may come out at its allowance exactly,
    or over it, when it is refused.)"""
    body = frontmatter.loads(
        (Path(__file__).parents[2] / "sample-context" / "task" / "current.md").read_text()
    ).content
    src = Source("task/current.md", body, {"trust": "untrusted"}, "v")
    count = get_counter(None).count
    terms = query_terms("tenants")
    whole = count(render(src, "full") or "")
    exact = [
        a
        for a in range(whole // 3, whole)
        if (text := render(src, "excerpt", terms=terms, allowance=a, count=count))
        and count(text) == a
    ]
    assert exact, "no excerpt of the note costs exactly its allowance: pick another note"
    for allowance in exact:
        packer = Packer(get_counter(None), terms)
        slot = Slot(Candidate(src.path, "the task", 0, min_tier="excerpt"), src, 0)
        slot.relevance = 1.0
        slot.place(0, *packer.section(slot, 0))
        slot.full_cost = slot.cost
        assert allowance + SEPARATOR_TOKENS < slot.full_cost  # the whole note does not fit
        target = allowance + SEPARATOR_TOKENS
        packer.fit([slot], packer.climb([slot]), target, 0)
        assert slot.level == TIERS.index("excerpt")
        assert slot.cost == target, allowance
        assert slot.text == render(src, "excerpt", terms=terms, allowance=allowance, count=count)
