"""Every limit of the library, tried at the limit and one past it.

A limit tested only far above or far below lets an off-by-one through: a view one token
over its budget, a core block one token over its limit. Each test here sits on the
boundary: exactly at the limit is accepted whole, one more is refused (or cut) with the
typed error, and nothing changes on a refusal. The packer is also held to use its budget:
a view that could have shown an item richer within the budget fails.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from contextfs import (
    ContentError,
    ContextManager,
    InvalidPathError,
    MemoryLimitError,
    SearchIndexError,
)
from contextfs.files.paths import MAX_NAME_BYTES, MAX_PATH_CHARS
from contextfs.integrations.tools.output import MAX_OUTPUT_CHARS, cap
from contextfs.scopes import Memory
from contextfs.scopes.packing import pack
from contextfs.scopes.views import Candidate
from contextfs.search.language import MAX_QUERY_CHARS
from contextfs.text.tokens import get_counter

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
]


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> tuple[ContextManager, list[Candidate]]:
    ctx = ContextManager(tmp_path_factory.mktemp("views") / "ctx", index=False)
    rng = random.Random(20)
    cands = []
    for i in range(4):
        body = "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(8)) + "." for _ in range(25))
        ctx.write(f"n/{i}.md", f"# Note {i}\n\n{body}\n")
        cands.append(Candidate(f"n/{i}.md", "a note", i))
    return ctx, cands


# ------------------------------------------------------------------ the packer
def test_a_view_the_budget_holds_exactly_is_packed_whole(notes) -> None:  # type: ignore[no-untyped-def]
    ctx, cands = notes
    whole = pack(ctx, cands, None)
    view = pack(ctx, cands, whole.tokens)
    assert view.tokens == whole.tokens == view.budget
    assert view.text == whole.text and [i.tier for i in view.items] == ["full"] * len(cands)
    assert view.dropped == ()


def test_one_token_less_and_the_packer_pulls_the_view_back_under(notes) -> None:  # type: ignore[no-untyped-def]
    ctx, cands = notes
    whole = pack(ctx, cands, None)
    view = pack(ctx, cands, whole.tokens - 1)
    assert view.tokens <= whole.tokens - 1
    assert get_counter(None).count(view.text) == view.tokens  # counted on the text itself
    assert [i.tier for i in view.items] != ["full"] * len(cands)


@pytest.mark.parametrize("short", [1, 2, 5, 17, 40, 90, 160, 300, 600])
def test_a_view_under_budget_could_not_have_shown_more(notes, short: int) -> None:  # type: ignore[no-untyped-def]
    """No item left at a poorer tier (or dropped) would have fitted whole in the room left."""
    ctx, cands = notes
    whole = {item.path: item.tokens for item in pack(ctx, cands, None).items}
    budget = sum(whole.values()) + len(whole) - 1 - short
    view = pack(ctx, cands, budget)
    assert view.tokens <= budget
    room = budget - view.tokens
    for item in view.items:
        if item.tier != "full":
            # +2: the joins around a section may merge a token either way
            assert whole[item.path] - item.tokens > room - 2, (item.path, item.tier, room)
    for gone in view.dropped:
        assert whole[gone.path] + 1 > room - 2, (gone.path, room)


def test_pinned_items_exactly_at_the_budget_and_one_over(notes) -> None:  # type: ignore[no-untyped-def]
    from contextfs import BudgetError

    ctx, cands = notes
    pinned = [Candidate(c.path, c.reason, c.priority, pinned=True) for c in cands[:2]]
    need = pack(ctx, pinned, None).tokens
    assert pack(ctx, pinned, need).tokens == need
    with pytest.raises(BudgetError, match="cannot hold the pinned items"):
        pack(ctx, pinned, need - 1)


# ------------------------------------------------------------------ core memory
def _text_of(tokens: int) -> str:
    counter = get_counter(None)
    text = " ".join(WORDS[i % len(WORDS)] for i in range(tokens))
    while counter.count(text) > tokens:
        text = text.rsplit(" ", 1)[0]
    while counter.count(text) < tokens:
        text += " x"
    assert counter.count(text) == tokens
    return text


def test_a_core_block_at_its_limit_and_one_token_over(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", index=False)
    memory = Memory(ctx, core_limit=40)
    at_limit = _text_of(40)
    block = memory.core_memory_rethink("persona", at_limit)
    assert block.text.rstrip("\n") == at_limit and block.tokens == block.limit == 40
    head = ctx.parts.git.head()
    with pytest.raises(MemoryLimitError, match="1 over its limit of 40"):
        memory.core_memory_rethink("persona", _text_of(41))
    assert memory.core("persona").text.rstrip("\n") == at_limit and ctx.parts.git.head() == head
    with pytest.raises(MemoryLimitError):
        memory.core_memory_append("persona", "x")  # appending to a full block is one over too


# ------------------------------------------------------------------ files, paths, queries, tools
def test_a_file_of_exactly_max_file_bytes_and_one_byte_more(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", index=False, max_file_bytes=1000)
    ctx.write("notes/exact.txt", "x" * 1000)
    assert len((ctx.root / "notes/exact.txt").read_bytes()) == 1000
    head = ctx.parts.git.head()
    with pytest.raises(ContentError, match="1001 bytes, over the 1000-byte limit"):
        ctx.write("notes/over.txt", "x" * 1001)
    with pytest.raises(ContentError, match="over the 1000-byte limit"):
        ctx.append("notes/exact.txt", "y")
    assert not ctx.exists("notes/over.txt") and ctx.parts.git.head() == head


def test_paths_at_their_length_limits_and_one_past(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", index=False)
    name = "n" * (MAX_NAME_BYTES - 3) + ".md"
    ctx.write(f"notes/{name}", "a name of exactly the longest length")
    with pytest.raises(InvalidPathError, match=f"longer than {MAX_NAME_BYTES} bytes"):
        ctx.write(f"notes/n{name}", "one byte more")
    folders = ("d" * 99 + "/") * 9
    rel = folders + "f" * (MAX_PATH_CHARS - len(folders) - 3) + ".md"
    assert len(rel) == MAX_PATH_CHARS
    ctx.write(rel, "the longest path")
    with pytest.raises(InvalidPathError, match=f"longer than {MAX_PATH_CHARS} characters"):
        ctx.write("q" + rel, "one character more")


def test_a_query_at_the_length_limit_and_one_character_more(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx")
    ctx.write("notes/a.md", "alpha bravo")
    query = ("alpha " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
    assert [h.path for h in ctx.search(query)] == ["notes/a.md"]
    with pytest.raises(SearchIndexError, match=f"over the {MAX_QUERY_CHARS}-character limit"):
        ctx.search(query + "x")


def test_a_tool_answer_at_the_output_cap_and_one_character_over() -> None:
    exact = "y" * MAX_OUTPUT_CHARS
    assert cap(exact) == exact
    over = cap(exact + "z")
    assert len(over) == MAX_OUTPUT_CHARS and "cut: showing" in over and over.startswith("y")
    assert f"of {MAX_OUTPUT_CHARS + 1} characters" in over
