"""Parsing chatty model output, sentiment hygiene and structured entries (no git needed)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from contextfs.errors import EvolveError
from contextfs.evolve.entries import MARKER, EntryFile, parse_entries
from contextfs.evolve.hygiene import clean
from contextfs.evolve.parsing import extract_items, find_json, message_text


# ------------------------------------------------------------------ parsing
def test_json_with_chatter_and_fences() -> None:
    text = 'Sure! Here are the facts:\n```json\n{"facts": [{"text": "Port is 8000"}]}\n```\nHope this helps!'
    assert extract_items(text) == [{"text": "Port is 8000"}]
    assert extract_items('Result: ["a", "b"] -- done') == [{"text": "a"}, {"text": "b"}]


def test_bullets_none_and_malformed() -> None:
    assert extract_items("Here is what I found:\n- Redis is 7.2\n* API on 8000\n1. Node 20") == [
        {"text": "Redis is 7.2"},
        {"text": "API on 8000"},
        {"text": "Node 20"},
    ]
    assert extract_items("NONE") == []
    assert extract_items("None.") == []
    assert extract_items('{"facts": []}') == []
    for bad in (
        "",
        "   ",
        '{"facts": [{"text": "trunc',
        "I think the task went fine overall.",
        "```json\n{oops\n```",
    ):
        with pytest.raises(EvolveError):
            extract_items(bad)


def test_message_text_accepts_messages_strings_and_blocks() -> None:
    assert message_text(AIMessage(content="hi")) == "hi"
    assert message_text("plain") == "plain"
    assert (
        message_text(AIMessage(content=[{"type": "text", "text": "a"}, {"type": "tool_use"}, "b"]))
        == "ab"
    )
    found, value = find_json("no json here")
    assert not found and value is None


# ------------------------------------------------------------------ hygiene
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the four examples of docs/evolve.md's hygiene table
        ("Alex seemed frustrated with the Docker setup", None),
        ("Docker setup is blocked on X", "Docker setup is blocked on X"),
        ("This was a rough debugging session", None),
        (
            "Root cause: race condition in worker-boot.sh line 47",
            "Root cause: race condition in worker-boot.sh line 47",
        ),
        # mixed: the mood goes, the operational fact stays
        (
            "Unfortunately, the deploy failed because the migration locked the table!",
            "The deploy failed because the migration locked the table.",
        ),
        (
            "Alex was really frustrated because the Docker build fails on M1 with exit code 137.",
            "The Docker build fails on M1 with exit code 137.",
        ),
        (
            "What a nightmare, the root cause was a race condition in boot.sh line 47 😤",
            "The root cause was a race condition in boot.sh line 47",
        ),
        ("I love this codebase.", None),
    ],
)
def test_hygiene_examples(text: str, expected: str | None) -> None:
    assert clean(text).text == expected


def test_hygiene_leaves_operational_text_byte_identical() -> None:
    text = "ALTER TABLE t ADD COLUMN ... DEFAULT now() rewrote 40M rows; backfill in batches."
    result = clean(text)
    assert result.text == text and not result.flagged


_WORDS = st.sampled_from(
    [
        "the",
        "deploy",
        "failed",
        "because",
        "redis",
        "frustrated",
        "rough",
        "ugh",
        "port",
        "8000",
        "was",
        "locked",
        "great",
        "session",
        "unfortunately",
        "config.toml",
        "alex",
        "seemed",
        "happy",
        "error",
        "timeout",
        "lesson",
        "!",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=20).map(" ".join))
def test_hygiene_only_removes_words_and_is_idempotent(text: str) -> None:
    once = clean(text)
    out = once.text or ""
    source = {w.lower() for w in re.findall(r"\w+", text)}
    assert {w.lower() for w in re.findall(r"\w+", out)} <= source  # never invents words
    assert (clean(out).text or "") == out  # a second pass changes nothing


# ------------------------------------------------------------------ entries
def test_entries_supersede_human_bullet_and_roundtrip() -> None:
    body = "# Facts\n\n- Python is 3.12.\n- Redis is 7.2.\n"
    f = EntryFile(body, "fact")
    change = f.add(
        "Python is 3.13.", date="2026-11-05", task="upgrade", source="abc", supersedes="H-1"
    )
    assert change.action == "superseded"
    again = f.add("redis is 7.2", date="2026-11-05")  # exact duplicate of a human bullet
    assert again.action == "merged" and again.id == "H-2"
    text = f.render()
    assert "- ~~Python is 3.12.~~ (superseded by [" in text and MARKER in text
    assert EntryFile(text, "fact").render() == text
    pre, entries = parse_entries(text)
    assert [e.text for e in entries] == ["Python is 3.13."]


def test_entries_supersede_agent_entry_keeps_old_visible() -> None:
    f = EntryFile(None, "fact")
    old = f.add("Deploys run on Fridays.", date="2026-11-01")
    new = f.add("Deploys run on Tuesdays.", date="2026-11-05", supersedes=old.id)
    text = f.render()
    assert "~~Deploys run on Fridays.~~" in text
    assert f"- superseded-by: [{new.id}](#{new.id.lower()}) on 2026-11-05" in text
    assert f"- supersedes: [{old.id}](#{old.id.lower()})" in text
    assert [i for i, _ in EntryFile(text, "fact").existing()] == [new.id]


_TEXT = st.text(
    st.characters(whitelist_categories=("L", "N"), whitelist_characters=" .,-"),
    min_size=1,
    max_size=60,
)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_TEXT, st.booleans()), min_size=1, max_size=8))
def test_entries_render_parse_roundtrip(items: list[tuple[str, bool]]) -> None:
    f = EntryFile("# Lessons\n\nhuman text stays\n", "lesson")
    last = None
    for text, supersede in items:
        if not text.strip():
            continue
        change = f.add(
            text,
            title="T",
            date="2026-11-05",
            task="t",
            source="s",
            supersedes=last if supersede else None,
        )
        last = change.id
    rendered = f.render()
    again = EntryFile(rendered, "lesson")
    assert again.render() == rendered
    assert again.preamble.startswith("# Lessons\n\nhuman text stays")
    live = [normalize for normalize in (e.text for e in again.entries if e.active)]
    assert len({t.lower().strip(" .") for t in live}) == len(live)  # no duplicates survive
