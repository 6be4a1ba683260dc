"""The fused analyzer and postings formats must index what Whoosh's stock ones do.

They are speed-ups only: a document indexed through them has to produce the same terms,
frequencies and encoded bytes as Whoosh's StemmingAnalyzer (with contextfs's 40-character
word limit and word pattern, which leaves out Whoosh-Reloaded's '*') and its Frequency and Positions formats, or search results would quietly
differ from Whoosh's. One deliberate difference: positions skip stop words ("the retry"
puts "retri" at 0, Whoosh at 1); queries are analysed the same way, so phrases still match.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh.analysis import StemmingAnalyzer
from whoosh.formats import Frequency, Positions

from contextfs.search.schema import WORD, FusedStemmingAnalyzer, StemFrequency, StemPositions

_WORDS = st.sampled_from([
    "the", "and", "Policies", "policy", "retry", "RETRYING", "retries", "a", "x", "é", "naïve",
    "v1.2.3", "foo_bar", "under_score", "42", "3.14", "e.g.", "don't", "webhooks", "Webhook",
    "ab" * 25, "Ünïcödé", "日本語", "running", "runs", "ran",
])
_SEPARATORS = st.sampled_from([" ", "  ", "\n", ", ", ". ", " - ", "\t", "/", "(", ")", "#", "**"])
_TEXT = st.lists(st.tuples(_WORDS, _SEPARATORS), max_size=60).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_fused_analyzer_matches_whoosh(text: str) -> None:
    fused, stock = FusedStemmingAnalyzer(), StemmingAnalyzer(expression=WORD, maxsize=40)
    expected = [t.text for t in stock(text)]
    assert [(t.text, t.pos) for t in fused(text, positions=True)] == [(w, i) for i, w in enumerate(expected)]
    assert fused.stems(text) == expected
    assert fused.stem_counts(text) == dict(Counter(expected))


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.sampled_from([1.0, 2.0, 3.0]))
def test_fast_formats_write_the_same_postings(text: str, boost: float) -> None:
    fused = FusedStemmingAnalyzer()
    stock = StemmingAnalyzer(expression=WORD, maxsize=40)
    assert sorted(StemFrequency(field_boost=boost).word_values(text, fused)) == \
        sorted(Frequency(field_boost=boost).word_values(text, stock))
    # Positions: Whoosh's own format driving the fused analyzer gives the same bytes.
    assert sorted(StemPositions(field_boost=boost).word_values(text, fused)) == \
        sorted(Positions(field_boost=boost).word_values(text, fused))
