"""The top k of any search is the first k of a larger search, in every ranker.

Equal scores are common in chats (short messages, one matching word, quantised field
lengths), so the order among ties decides what a small ``limit`` returns. Every ranker
breaks ties the same documented way: the newest first (a message's time, a note's
``updated``), then by path, then by line or position, never by where a document happens
to sit in the index.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfs import ContextManager, ScopedContext
from contextfs.scopes.memory import Memory
from contextfs.search import planning


def _chat(n: int) -> list[tuple[str, str, str]]:
    """A chat where every message matches 'congratulations' the same way (all scores tie)."""
    out = []
    for i in range(n):
        who = "Vanessa" if i % 2 else "Nicolas"
        out.append(
            (who, f"congratulations {i % 7}", f"2023-{1 + i // 28:02d}-{1 + i % 28:02d}T10:00:00Z")
        )
    return out


@pytest.fixture
def chat(tmp_path: Path) -> ContextManager:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:test", session="s1")
    turns = _chat(120)
    mem = Memory(ctx)
    mem.import_transcript(turns[:60], session="first")
    mem.import_transcript(turns[60:], session="second")
    yield ctx
    ctx.close()


def _rankers(ctx: ContextManager) -> dict[str, Callable[[str, int], list[object]]]:
    mem, scoped = Memory(ctx), ScopedContext(ctx)
    return {
        "ctx.search": lambda q, k: [h.ref for h in ctx.search(q, limit=k)],
        "conversation_search": lambda q, k: [h.path for h in mem.conversation_search(q, limit=k)],
        "passages": lambda q, k: [(p.path, p.first) for p in scoped.passages(q, limit=k)],
    }


@pytest.mark.parametrize("ranker", ["ctx.search", "conversation_search", "passages"])
@pytest.mark.parametrize("block", [True, False])
def test_a_small_limit_is_the_start_of_a_large_one(
    chat: ContextManager, ranker: str, block: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        planning, "block_terms", (lambda t, _s: t) if block else (lambda _t, _s: None)
    )
    run = _rankers(chat)[ranker]
    q = "When has Vanessa congratulated Nicolas?"
    big = run(q, 300)
    assert len(big) == 120
    for k in (1, 3, 10, 25):
        assert run(q, k) == big[:k], k


def test_ties_go_to_the_newest_message(chat: ContextManager) -> None:
    mem = Memory(chat)
    hits = mem.conversation_search("congratulations", limit=120)
    for a, b in zip(hits, hits[1:], strict=False):
        assert round(a.score, 9) >= round(b.score, 9)
        if round(a.score, 9) == round(b.score, 9):
            assert (a.updated or "") >= (b.updated or "")
    # Messages with neighbours on both sides (one and two steps away) tie; the last two of
    # the chat have fewer, so they are lower.
    assert [h.ref for h in chat.search("congratulations", limit=3)] == [
        "sessions/second.jsonl#L58",
        "sessions/second.jsonl#L57",
        "sessions/second.jsonl#L56",
    ]
    assert hits[0].path == "sessions/second.jsonl#L58"


def test_archival_ties_go_to_the_newest_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import datetime, timedelta, timezone

    from contextfs import clock

    ctx = ContextManager(tmp_path / "ctx", actor="agent:test", session="s1")
    try:
        mem = Memory(ctx)
        start = datetime(2024, 1, 1, tzinfo=timezone.utc)
        for i in range(30):
            monkeypatch.setattr(clock, "now", lambda i=i: start + timedelta(days=i))
            mem.archival_memory_insert(
                f"Priya passed mock interview number {i} with a strong score {i * 7}"
            )
        big = [h.path for h in mem.archival_memory_search("mock interview", top_k=30)]
        assert len(big) == 30
        for k in (1, 5, 12):
            assert [h.path for h in mem.archival_memory_search("mock interview", top_k=k)] == big[
                :k
            ]
        first = mem.archival_memory_search("mock interview", top_k=1)[0]
        assert first.text.startswith("Priya passed mock interview number 29")
    finally:
        ctx.close()


_WORDS = ["alpha", "beta", "gamma", "delta", "congratulations", "visit"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    notes=st.lists(
        st.tuples(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4), st.integers(1, 28)),
        min_size=1,
        max_size=30,
    ),
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3),
    k=st.integers(1, 12),
    block=st.booleans(),
)
def test_every_limit_is_a_prefix(
    tmp_path_factory: pytest.TempPathFactory,
    notes: list[tuple[list[str], int]],
    query: list[str],
    k: int,
    block: bool,
) -> None:
    root = tmp_path_factory.mktemp("ties") / "ctx"
    ctx = ContextManager(root, actor="agent:test", durable=False)
    saved = planning.block_terms
    try:
        with ctx.transaction("notes"):
            for i, (words, day) in enumerate(notes):
                ctx.write(
                    f"notes/n{i:02d}.md",
                    " ".join(words) + "\n",
                    metadata={"updated": f"2024-01-{day:02d}"},
                )
        planning.block_terms = (lambda t, _s: t) if block else (lambda _t, _s: None)  # type: ignore[assignment]
        q = " ".join(query)
        for run in _rankers(ctx).values():
            big = run(q, 100)
            assert run(q, k) == big[:k]
    finally:
        planning.block_terms = saved  # type: ignore[assignment]
        ctx.close()
