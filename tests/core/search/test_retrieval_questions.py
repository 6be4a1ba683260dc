"""Questions as people ask them in real chats: quoted titles, nicknames, inflected words, dates.

Each case comes from real messaging-app chats, where short messages with typos, nicknames
and dates said relative to when a message was sent make the literal reading of a question
go wrong. Every ranker (``ctx.search``, ``conversation_search``, ``ScopedContext.passages``)
reads a question by the same rules (``contextfs.text.analysis``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from contextfs import ContextManager, ScopedContext
from contextfs.scopes.memory import Memory
from contextfs.search.language import parse_query


@pytest.fixture
def root(tmp_path: Path) -> ContextManager:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:test", session="s1")
    yield ctx
    ctx.close()


def _log(ctx: ContextManager, session: str, day: str, turns: list[tuple[str, str]]) -> None:
    Memory(ctx).import_transcript(
        [(who, text, f"{day}T10:{i:02d}:00Z") for i, (who, text) in enumerate(turns)],
        session=session,
    )


def _rankers(ctx: ContextManager) -> dict[str, Callable[[str], list[tuple[str, int]]]]:
    mem, scoped = Memory(ctx), ScopedContext(ctx)
    return {
        "ctx.search": lambda q: [
            (h.path, h.line or 0) for h in ctx.search(q, path="sessions", limit=5)
        ],
        "conversation_search": lambda q: [
            (h.path.split("#L")[0], int(h.path.split("#L")[1]))
            for h in mem.conversation_search(q, limit=5)
        ],
        "passages": lambda q: [(p.path, p.first) for p in scoped.passages(q, limit=5)],
    }


# ------------------------------------------------------------------ quoted spans
def _games(ctx: ContextManager) -> None:
    _log(
        ctx,
        "2023-03-02",
        "2023-03-02",
        [
            ("Muhhamed", "Yo I just started playing tmnt shradder's revenge, it's so good"),
            ("Lena", "Haha nice, I remember the arcade one"),
        ],
    )
    filler = [("Lena", f"I might start playing the piano again, lesson {i}") for i in range(6)]
    filler += [("Muhhamed", f"Did you start the new book yet? chapter {i}") for i in range(6)]
    _log(ctx, "2023-03-09", "2023-03-09", filler)


@pytest.mark.parametrize("ranker", ["ctx.search", "conversation_search", "passages"])
def test_a_quoted_title_in_a_question_boosts_and_never_filters(
    root: ContextManager, ranker: str
) -> None:
    _games(root)
    run = _rankers(root)[ranker]
    question = 'When did Muhhamed start playing "TMNT Shredder\'s Revenge"?'
    assert run(question)[0] == ("sessions/2023-03-02.jsonl", 1)  # spelled "shradder's" in the chat
    assert run(question)[0] == run(question.replace('"', ""))[0]


def test_a_quoted_question_keeps_the_question_rules(root: ContextManager) -> None:
    parsed = parse_query('What did Lena say about "the piano" in March 2023?')
    assert parsed.plain and [p.text for p in parsed.periods] == ["March 2023"]
    weights = {(leaf.fieldname, leaf.text): leaf.boost for leaf in parsed.query.leaves()}
    assert (
        weights[("body", "piano")] == 2 * weights[("body", "lena")]
    )  # the quoted word counts double


def test_a_phrase_on_its_own_or_with_operators_still_filters(root: ContextManager) -> None:
    _games(root)
    assert root.search('"shredder revenge"', path="sessions") == []  # the chat spells it otherwise
    assert root.search('tmnt AND "shredder revenge"', path="sessions") == []
    assert [h.line for h in root.search('"shradder revenge"', path="sessions")] == [1]
    assert not parse_query('"dead letter"').plain


# ------------------------------------------------------------------ names and forms
def _travels(ctx: ContextManager) -> None:
    _log(
        ctx,
        "2023-06-01",
        "2023-06-01",
        [
            ("Tom", "How are you doing today Kate?"),
            ("Katherine", "Good! I want to visit my aunt this weekend."),
            ("Tom", "Hey Kate! I want to visit the museum too."),
            ("Katherine", "We should visit it together, I want to visit the new wing."),
            ("Tom", "Sure. I want to visit Lisbon one day."),
            ("Katherine", "I have also visited Mexico and Peru, both were amazing."),
            ("Tom", "Wow, good night Kate!"),
        ],
    )
    _log(
        ctx,
        "2023-06-08",
        "2023-06-08",
        [
            ("Tom", "Morning Kate, how are you today?"),
            ("Katherine", "Tired, I want to visit the beach and rest."),
            ("Tom", "Thanks Kate, talk soon!"),
        ],
    )


@pytest.mark.parametrize("ranker", ["ctx.search", "conversation_search", "passages"])
def test_a_name_others_call_a_speaker_names_that_speaker(root: ContextManager, ranker: str) -> None:
    _travels(root)
    run = _rankers(root)[ranker]
    evidence = ("sessions/2023-06-01.jsonl", 6)
    greetings = {("sessions/2023-06-01.jsonl", n) for n in (1, 3, 7)} | {
        ("sessions/2023-06-08.jsonl", n) for n in (1, 3)
    }
    top = run("What countries has Kate visited?")[:3]
    assert evidence in top and not greetings & set(
        top
    )  # Katherine's own words, not the greetings to her
    assert evidence in run("visited")[:3]  # the word as written lifts it among the many "visit"


def test_names_a_speaker_goes_by() -> None:
    from contextfs.text.analysis import address_names
    from contextfs.text.turns import Turn, known_as

    assert address_names("How are you doing today Kate?") == ["Kate"]
    assert address_names("Thanks, Mel!") == ["Mel"] and address_names("Wow, nice!") == []
    turns = [
        Turn(i, "user", text, speaker=who)
        for i, (who, text) in enumerate(
            [
                ("Tom", "Hey Kate!"),
                ("Katherine", "Hi Tom!"),
                ("Tom", "Thanks Kate."),
                ("Katherine", "I went to Paris."),
                ("Tom", "Absolutely! Bye Kate"),
                ("Katherine", "I loved Paris."),
                ("Tom", "I went to paris too"),
            ]
        )
    ]
    assert known_as(turns) == {"Katherine": ("Kate",)}  # 'Paris' is also written in lower case


# ------------------------------------------------------------------ a named day and the days after it
@pytest.mark.parametrize("ranker", ["ctx.search", "conversation_search", "passages"])
def test_a_named_day_reaches_the_messages_sent_just_after_it(
    root: ContextManager, ranker: str
) -> None:
    _log(
        root,
        "2023-12-20",
        "2023-12-20",
        [("Kate", "We were at the lake house for the weekend."), ("Ben", "Sounds lovely.")],
    )
    _log(
        root,
        "2023-12-31",
        "2023-12-31",
        [("Kate", "Happy new year's eve!"), ("Ben", "Same to you!")],
    )
    _log(
        root,
        "2024-01-01",
        "2024-01-01",
        [
            ("Kate", "Last night we were at the lake house with my parents."),
            ("Ben", "Nice way to end the year."),
        ],
    )
    _log(
        root,
        "2024-01-09",
        "2024-01-09",
        [("Kate", "We are going to the lake house again."), ("Ben", "Enjoy.")],
    )
    run = _rankers(root)[ranker]
    assert run("Where was Kate on 31 Dec 2023? The lake house?")[0] == (
        "sessions/2024-01-01.jsonl",
        1,
    )


def test_what_a_named_day_reaches() -> None:
    from datetime import date

    from contextfs.text.periods import DAY_REACH, periods, within

    day, month = periods("on 31 December 2023, in May 2023")
    assert (day.start, day.end) == (date(2023, 12, 31), date(2024, 1, 1)) and DAY_REACH == 2
    assert [within(date(2024, 1, n), (day,)) for n in (1, 2, 3)] == [True, True, False]
    assert not within(
        date(2023, 12, 30), (day,)
    )  # a question about a day asks what happened, not plans
    assert month.until == month.end  # months and years hold what is said about them


# ------------------------------------------------------------------ markdown transcripts
def test_a_markdown_transcript_names_its_speakers(root: ContextManager) -> None:
    from contextfs.scopes.passages import chunks_of, speakers_of

    lines = [
        "Caroline: I painted a sunrise",
        "Melanie: Lovely!",
        "Caroline: Thanks",
        "Melanie: I paint too",
        "Caroline: Show me",
        "Melanie: I painted a lake last year",
    ]
    body = "# Session 1\n\n" + "\n\n".join(lines) + "\n\nDatabase: PostgreSQL 16\n"
    assert speakers_of(chunks_of(body)) == ("", *[line.split(":")[0] for line in lines], "")
    root.write("conversations/session-1.md", body)
    first = ScopedContext(root).passages("What did Melanie paint?", limit=1)[0]
    assert first.text.startswith(
        "Melanie:"
    )  # her own words first, not "Caroline: I painted a sunrise"
