"""The index reads text exactly as every other ranker does (contextfs.text.analysis), and its
postings formats write what Whoosh's own formats would.

The analyzer is a thin Whoosh face over :mod:`contextfs.text.analysis`: its tokens, per-term counts
and positions must be the text module's terms, or a word the index holds would not be the
word page-in, memory search and topic detection match on. ``StemFrequency`` and
``StemPositions`` are speed-ups only: the postings they encode must be the bytes Whoosh's
``Frequency`` and ``Positions`` encode from the same analyzer.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh.formats import Frequency, Positions

from contextfs.search.analyzers import FormsAnalyzer, StemFrequency, StemPositions, TextAnalyzer
from contextfs.text import analysis as text

_WORDS = st.sampled_from(
    [
        "the",
        "and",
        "Policies",
        "policy",
        "retry",
        "RETRYING",
        "retries",
        "a",
        "x",
        "é",
        "naïve",
        "v1.2.3",
        "foo_bar",
        "under_score",
        "42",
        "3.14",
        "e.g.",
        "don't",
        "webhooks",
        "Webhook",
        "ab" * 25,
        "Ünïcödé",
        "日本語",
        "running",
        "runs",
        "ran",
        "What",
        "did",
        "when",
        "7",
        "ＦＵＬＬ",
        "Straße",
    ]
)
_SEPARATORS = st.sampled_from(
    [" ", "  ", "\n", ", ", ". ", " - ", "\t", "/", "(", ")", "#", "**", "?", ":"]
)
_TEXT = st.lists(st.tuples(_WORDS, _SEPARATORS), max_size=60).map(
    lambda parts: "".join(w + s for w, s in parts)
)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_analyzer_yields_the_text_modules_terms(value: str) -> None:
    ana = TextAnalyzer()
    expected = text.terms(value)
    assert [(t.text, t.pos) for t in ana(value, positions=True)] == [
        (w, i) for i, w in enumerate(expected)
    ]
    assert ana.stems(value) == expected
    assert ana.stem_counts(value) == dict(Counter(expected))
    assert text.term_counts(value) == dict(Counter(expected))


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.sampled_from([1.0, 2.0, 3.0]), st.sampled_from([TextAnalyzer, FormsAnalyzer]))
def test_fast_formats_write_the_same_postings(
    value: str, boost: float, kind: type[TextAnalyzer]
) -> None:
    ana = kind()
    assert sorted(StemFrequency(field_boost=boost).word_values(value, ana)) == sorted(
        Frequency(field_boost=boost).word_values(value, ana)
    )
    if (
        kind is TextAnalyzer
    ):  # the fields with words as written (body, neighbours) keep no positions
        assert sorted(StemPositions(field_boost=boost).word_values(value, ana)) == sorted(
            Positions(field_boost=boost).word_values(value, ana)
        )


def test_question_words_and_function_words_are_stop_words() -> None:
    assert text.terms("What did Melanie paint? When did she go, and how?") == [
        "melani",
        "paint",
        "go",
    ]
    assert text.terms("Caroline's 7 May 2023 notes, v1.2.3 and 4.5 LPA") == [
        "carolin",
        "7",
        "may",
        "2023",
        "note",
        "v1.2.3",
        "4.5",
        "lpa",
    ]


def test_words_are_folded_the_same_way_everywhere() -> None:
    assert text.terms("ＦＵＬＬ width") == text.terms("full WIDTH")
    assert text.terms("retries nightly") == text.terms("retry night")
    assert text.fingerprint("Port 5433, is open!") == text.fingerprint("port 5433 is   open")


def test_words_as_written_sit_beside_their_stems_in_the_body() -> None:
    assert text.forms("I visited Mexico, then visiting again; visit!") == ["=visited", "=visiting"]
    assert text.term_counts("visited visit", with_forms=True) == {"visit": 2, "=visited": 1}
    assert FormsAnalyzer.stems("visited visit") == ["visit", "visit"]  # phrases see the terms alone
