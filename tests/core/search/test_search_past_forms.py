"""An irregular past form finds its verb and back, through the one text analyser.

A question asks "When did Tim meet his teammates?"; the message says "I met back up with my
teammates". A stemmer strips regular endings only ("visited" -> "visit"), so "met" and
"meet" were two words to every ranker.
"""

from __future__ import annotations

import pytest

from contextfs import ContextManager
from contextfs.scopes import Memory, ScopedContext
from contextfs.text import analysis as text

TURNS = [
    {
        "speaker": "John",
        "text": "I met back up with my teammates after the trip.",
        "time": "2023-08-17T10:00:00Z",
    },
    {
        "speaker": "Tim",
        "text": "My sister painted the kitchen a bright yellow this weekend.",
        "time": "2023-08-17T10:01:00Z",
    },
    {
        "speaker": "Tim",
        "text": "The library had a sale on old novels, so I grabbed three.",
        "time": "2023-08-17T10:02:00Z",
    },
    {"speaker": "John", "text": "We should meet the coach soon.", "time": "2023-08-17T10:03:00Z"},
    {
        "speaker": "Tim",
        "text": "My cat knocked a plant off the shelf again.",
        "time": "2023-08-17T10:04:00Z",
    },
    {"speaker": "John", "text": "The coach was late again.", "time": "2023-08-17T10:05:00Z"},
    {
        "speaker": "Tim",
        "text": "Turn left after the stadium, the teammates wait there.",
        "time": "2023-08-17T10:06:00Z",
    },
]


@pytest.fixture
def chat(tmp_path) -> ContextManager:  # type: ignore[no-untyped-def]
    ctx = ContextManager(tmp_path / "ctx")
    Memory(ctx).import_transcript(TURNS, session="s1")
    yield ctx
    ctx.close()


def test_a_past_form_is_read_as_its_verb() -> None:
    assert text.terms("I met them and took it home") == text.terms("I meet them and take it home")
    assert text.terms("she bought, taught and wrote") == text.terms("she buys, teaches and writes")
    # The form as written is still kept, so a question using it prefers it (as "visited").
    assert "=met" in text.forms("I met them")


def test_a_word_that_is_as_often_something_else_stays_as_written() -> None:
    # "left" is a side as often as a past form; "saw" and "bit" are nouns; "go" is also a
    # language, so "went" is not read as it; "won" is the "won" of a split "won't", a stop word.
    assert text.terms("left saw bit rose went") == ["left", "saw", "bit", "rose", "went"]
    assert text.terms("won") == []


def test_the_table_maps_forms_to_verbs_that_are_not_forms_themselves() -> None:
    # No chains, and no verb that is also a short form read as another word.
    assert not set(text.PAST_FORMS.values()) & set(text.PAST_FORMS)
    assert not set(text.PAST_FORMS) & set(text.VARIANTS)
    assert not set(text.PAST_FORMS) & text.STOP_WORDS


def test_every_ranker_finds_the_past_form_first(chat: ContextManager) -> None:
    # John says "meet" in line 4 and "teammates" in line 1, where he says "met".
    question = "When did John meet his teammates?"
    assert chat.search(question, path="sessions", limit=1)[0].line == 1
    [passage, *_] = ScopedContext(chat).passages(question, limit=2)
    assert (passage.path, passage.first) == ("sessions/s1.jsonl", 1)
    [hit, *_] = Memory(chat).conversation_search(question, limit=2)
    assert hit.path == "sessions/s1.jsonl#L1"


def test_a_question_in_the_past_finds_the_verb(chat: ContextManager) -> None:
    # "coach" is in lines 4 and 6; only line 4 has the verb the question puts in the past.
    question = "Who met the coach?"
    assert chat.search(question, path="sessions", limit=1)[0].line == 4
    [passage, *_] = ScopedContext(chat).passages(question, limit=2)
    assert passage.first == 4
