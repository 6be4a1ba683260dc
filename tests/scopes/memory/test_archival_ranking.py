"""Archival notes rank like the turns of a conversation: one ranker (page-in's), the notes
written in one session as neighbours, a ``Name:`` label opening many notes as a speaker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from contextfs import ContextManager
from contextfs.scopes import ScopedContext
from contextfs.scopes.memory import Memory

#: A chat stored one note per message, as an agent saving what was said would store it.
CHAT = [
    ("session-01", "Melanie: What instrument did you pick up last summer?"),
    ("session-01", "Caroline: The cello! I practise it every evening now."),
    ("session-01", "Melanie: Lovely, my kids would enjoy hearing it."),
    ("session-02", "Caroline: I went hiking with friends on Saturday."),
    ("session-02", "Melanie: Sounds fun, we went to the beach with the kids."),
    ("session-02", "Caroline: Next week I start a pottery class."),
    ("session-03", "Melanie: The orchestra played an instrument I had never heard."),
    ("session-03", "Caroline: Was it a theremin? Those sound eerie."),
]
QUESTION = "What instrument did Caroline pick up last summer?"
ANSWER = "Caroline: The cello! I practise it every evening now."


def _store(ctx: ContextManager, mem: Memory, chat: list[tuple[str, str]]) -> dict[str, str]:
    paths = {}
    for turn, (session, text) in enumerate(chat, 1):
        with ctx.provenance(session=session, turn=turn):
            paths[text] = mem.archival_memory_insert(text).path
    return paths


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ContextManager]:
    manager = ContextManager(tmp_path / "ctx", session="agent")
    yield manager
    manager.close()


def test_the_reply_to_a_question_is_found_by_the_question_it_answers(
    ctx: ContextManager,
) -> None:
    # The answer shares no word with the question but the speaker's name; the note written
    # just before it (same session) repeats the question's words. Ranked by the words
    # alone, the question's own note and every other note naming an instrument come first.
    mem = Memory(ctx)
    paths = _store(ctx, mem, CHAT)
    hits = mem.archival_memory_search(QUESTION, top_k=3)
    assert hits[0].path == paths[ANSWER]
    passages = ScopedContext(ctx).passages(QUESTION, limit=3)
    assert passages[0].path == paths[ANSWER]


def test_notes_of_other_sessions_are_no_neighbours(ctx: ContextManager) -> None:
    # The same two notes, written in different sessions: nothing ties the answer to the
    # question any more, so the question's own note ranks above it.
    mem = Memory(ctx)
    chat = [(f"session-{n:02d}", text) for n, (_s, text) in enumerate(CHAT, 1)]
    paths = _store(ctx, mem, chat)
    ranked = [h.path for h in mem.archival_memory_search(QUESTION, top_k=8)]
    question = paths["Melanie: What instrument did you pick up last summer?"]
    assert ranked.index(question) < ranked.index(paths[ANSWER]) if paths[ANSWER] in ranked else True


def test_a_label_opening_many_notes_names_a_speaker(ctx: ContextManager) -> None:
    # Notes written outside any session (no neighbours): a question naming Caroline puts
    # her note first though Melanie's repeats the question's words and names her too.
    mem = Memory(ctx)
    for text in (
        "Melanie: Caroline and I paint together, Caroline paints landscapes and I paint portraits.",
        "Caroline: I paint with my friend Ana on Sundays.",
        "Caroline: My cello teacher lives in Lund.",
        "Caroline: I moved here four years ago.",
        "Melanie: We camped by the lake.",
        "Melanie: My son loves dinosaurs.",
    ):
        mem.archival_memory_insert(text)
    hits = mem.archival_memory_search("Who does Caroline paint with?", top_k=2)
    assert hits[0].text == "Caroline: I paint with my friend Ana on Sundays."


def test_a_search_with_a_tag_keeps_only_notes_holding_every_tag(ctx: ContextManager) -> None:
    mem = Memory(ctx)
    mem.archival_memory_insert("The staging database runs PostgreSQL 16.", tags=["infra", "db"])
    mem.archival_memory_insert("The production database runs PostgreSQL 15.", tags=["infra"])
    mem.archival_memory_insert("The analytics database runs DuckDB.", tags=["DB"])
    assert [h.text for h in mem.archival_memory_search("database", tags=["infra", "db"])] == [
        "The staging database runs PostgreSQL 16."
    ]
    assert len(mem.archival_memory_search("database", tags=["db"])) == 2
