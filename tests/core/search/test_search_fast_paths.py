"""Query-time shortcuts must give exactly what the code they replaced gave.

* ``_word_starts`` replaced a ``\\b(prefix|...)`` IGNORECASE regex scan for snippets:
  Hypothesis checks it finds the same positions on text with punctuation, underscores,
  digits, case and letters whose lower case is longer.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from contextfs.search.snippets import _MAX_MATCHES, _prefixes, _word_starts, make_snippet

_PIECES = st.sampled_from(
    [
        "retry",
        "Retries",
        "RETR",
        "queue",
        "queues",
        "x",
        "_retry",
        "pre",
        "retry_queue",
        "9retry",
        " ",
        "  ",
        "\n",
        ".",
        ",",
        "-",
        "(",
        "é",
        "İ",
        "policy",
        "policies",
    ]
)
_BODY = st.lists(_PIECES, max_size=80).map("".join)
_WORDS = st.lists(
    st.sampled_from(["retry", "queue", "policy", "re", "x", "Retries", "pre"]),
    min_size=1,
    max_size=4,
)


def _regex_starts(body: str, words: list[str]) -> list[tuple[int, str]]:
    prefixes = _prefixes(words)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, prefixes)) + ")", re.IGNORECASE)
    return [
        (m.start(), m.group(1).lower())
        for m in itertools.islice(pattern.finditer(body), _MAX_MATCHES)
    ]


@settings(max_examples=400, deadline=None)
@given(_BODY, _WORDS)
def test_word_starts_match_the_regex(body: str, words: list[str]) -> None:
    assert _word_starts(body, _prefixes(words)) == _regex_starts(body, words)


def test_snippet_shows_the_densest_window() -> None:
    filler = "Unrelated words about other things entirely. " * 20
    body = filler + "The retry queue drains slowly; the retry policy backs off. " + filler
    snippet = make_snippet(body, ["retry", "queue", "policy"])
    assert "retry queue" in snippet and "policy" in snippet
    assert len(snippet) <= 200
    assert make_snippet("# Heading\n\nFirst line of text.", []) == "First line of text."
