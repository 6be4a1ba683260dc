"""The block-at-a-time ranker must rank exactly as Whoosh's own matcher tree does.

Plain-word queries that touch enough postings take ``contextfs.search.rank``; everything
else goes through Whoosh (``contextfs.search.planning`` decides). These tests run the same
queries both ways on a real index (several segments, deleted documents, trash, folder
filters) and require identical paths and scores.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from helpers import SAMPLE
from hypothesis import given, settings
from hypothesis import strategies as st

from contextfs import ContextManager
from contextfs.search import planning
from contextfs.search.language import parse_query
from contextfs.search.planning import plain_terms

QUERIES = [
    "dead letter queue",
    "webhook retries backoff",
    "postgres",
    "how do we scale the cluster",
    "redis eviction policy",
    "karpenter spot instances",
    "tenant isolation row level security",
]


def _both(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch, query: str, **kw: object
) -> tuple[list, list]:
    with monkeypatch.context() as m:
        m.setattr(planning, "block_terms", lambda terms, _searcher: terms)  # the block ranker
        fast = [(h.path, round(h.score, 9)) for h in ctx.search(query, **kw)]
    with monkeypatch.context() as m:
        m.setattr(planning, "block_terms", lambda _terms, _searcher: None)  # Whoosh's matchers
        slow = [(h.path, round(h.score, 9)) for h in ctx.search(query, **kw)]
    return fast, slow


def test_fast_ranking_equals_whoosh_across_segments_and_deletions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ctx"
    shutil.copytree(SAMPLE, root)
    ctx = ContextManager(root, actor="agent")
    try:
        # New segments with deletions: edits re-index (delete + add), a delete trashes a note.
        ctx.search("warm")
        ctx.append(
            "project/glossary.md", "\nDead letter queue: where poisoned webhook deliveries wait.\n"
        )
        ctx.search("warm")
        ctx.write(
            "topics/scaling.md", "# Scaling\n\nKarpenter scales the cluster on spot instances.\n"
        )
        ctx.delete("project/decisions/0004-arq-over-celery.md")
        for query in QUERIES:
            assert plain_terms(parse_query(query).query) is not None, query
            fast, slow = _both(ctx, monkeypatch, query)
            assert fast == slow, query
            assert fast, query
            for kw in (
                {"path": "project"},
                {"include_trash": True},
                {"limit": 3},
                {"tag": "webhooks"},
            ):
                assert (
                    _both(ctx, monkeypatch, query, **kw)[0]
                    == _both(ctx, monkeypatch, query, **kw)[1]
                ), (query, kw)
        assert all(not p.startswith(".trash/") for p, _ in _both(ctx, monkeypatch, "celery arq")[0])
        assert (
            len(ctx.index.searcher.reader().leaf_readers()) > 1
        )  # the multi-segment case was exercised
    finally:
        ctx.close()


def test_other_query_shapes_use_whoosh(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", actor="agent")
    try:
        for query in (
            '"dead letter"',
            "kafka AND brokers",
            "letter NOT dead",
            "webho*",
            "tag:adr",
            "*",
            "postgres tag:adr",
        ):
            assert plain_terms(parse_query(query).query) is None, query
    finally:
        ctx.close()


def test_postings_decode_across_blocks_and_segment_cache(tmp_path: Path) -> None:
    """Terms spanning many 128-posting blocks decode to Whoosh's own ids and weights."""
    from whoosh import index as windex
    from whoosh.fields import ID, TEXT, Schema

    from contextfs.search import rank as search_rank

    schema = Schema(path=ID(stored=True), body=TEXT)
    ix = windex.create_in(str(tmp_path), schema)
    writer = ix.writer()
    for i in range(700):  # "common" in every third note (several blocks), "every" in all
        writer.add_document(
            path=f"n{i}", body="every " + ("common " * (1 + i % 4) if i % 3 == 0 else "rare")
        )
    writer.commit()
    with ix.searcher() as searcher:
        ((reader, _base),) = searcher.reader().leaf_readers()
        for word in ("common", "every"):
            btext = schema["body"].to_bytes(word)
            ids, weights = search_rank._read_postings(reader, "body", btext, schema["body"])
            m = reader.postings("body", btext)
            want_ids, want_weights = [], []
            while m.is_active():
                want_ids.append(m.id())
                want_weights.append(m.weight())
                m.next()
            assert len(want_ids) > 128  # more than one block
            assert ids.tolist() == want_ids and weights.tolist() == want_weights
        # The process-wide cache is keyed by segment and bounded in bytes.
        cache = search_rank._SegmentCache(limit=10_000)
        first = search_rank._read_postings(
            reader, "body", schema["body"].to_bytes("every"), schema["body"]
        )
        cache.put(("seg", "a"), first)
        cache.put(("seg", "b"), first)
        assert (
            cache.get(("seg", "a")) is None and cache.get(("seg", "b")) is first
        )  # oldest evicted
        assert cache.size == sum(arr.nbytes for arr in first) <= 10_000


def test_segment_cache_survives_a_new_searcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a write the old segments' postings are reused and ranking still equals Whoosh's."""
    from contextfs.search import rank as search_rank

    root = tmp_path / "ctx"
    shutil.copytree(SAMPLE, root)
    ctx = ContextManager(root, actor="agent")
    monkeypatch.setattr(
        planning, "block_terms", lambda terms, _searcher: terms
    )  # the sample is small
    try:
        search_rank._SEGMENTS.clear()
        ctx.search("webhook retries backoff")
        cached = set(search_rank._SEGMENTS.items)
        assert any(key[1] == "postings" for key in cached)
        ctx.write("topics/retries.md", "# Retries\n\nWebhook retries use exponential backoff.\n")
        fast, slow = _both(ctx, monkeypatch, "webhook retries backoff")
        assert fast == slow and "topics/retries.md" in [p for p, _ in fast]
        assert cached <= set(search_rank._SEGMENTS.items)  # old segments' entries were kept
        space = str(ctx.index.dir)
        live = {
            search_rank._segment_key(r, space)
            for r, _ in ctx.index.searcher.reader().leaf_readers()
        }
        assert len(live) > 1 and any(key[0] in live for key in cached)  # ... and are still in use
    finally:
        ctx.close()


def test_field_lengths_read_whole_equal_whoosh_per_document(tmp_path) -> None:
    """The whole-column reads (ranker and codec) give exactly what Whoosh decodes, per field."""
    import shutil

    from helpers import SAMPLE
    from whoosh.codec.whoosh3 import W3PerDocReader

    from contextfs import ContextManager
    from contextfs.search.rank import _raw_lengths

    root = tmp_path / "lengths"
    shutil.copytree(SAMPLE, root)
    ctx = ContextManager(root)
    ctx.write("notes/extra.md", "# Extra\n\nwebhook retries " * 30)
    ctx.search("webhook")  # applies the queued write: a second segment
    searcher = ctx.index.searcher
    checked = 0
    for reader, _offset in searcher.leafreaders:
        n = reader.doc_count_all()
        for field in ("title", "meta", "body", "tags"):
            fast = _raw_lengths(reader, field, n)
            if fast is None:
                continue
            # Whoosh's own one-document-at-a-time decode, bypassing the codec's cached table.
            whoosh = [
                W3PerDocReader.doc_field_length(reader._perdoc, d, field, 1) or 0 for d in range(n)
            ]
            ours = [reader.doc_field_length(d, field, 1) or 0 for d in range(n)]
            assert fast.tolist() == [float(x) for x in whoosh] == [float(x) for x in ours]
            checked += 1
    assert checked >= 6  # three scored text fields and tags, in both segments
    ctx.close()


def test_the_ranker_is_chosen_by_what_numpy_would_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rent or buy: Whoosh for small queries in a process without numpy, until it has cost the import."""
    import sys

    ctx = ContextManager(tmp_path / "ctx", actor="agent", durable=False)
    try:
        with ctx.transaction("notes"):
            for i in range(120):
                ctx.write(
                    f"notes/n{i}.md",
                    f"# Note {i}\n\nThe webhook queue retries delivery {i}.\n"
                    + ("A rare zebra sighting.\n" if i == 7 else ""),
                )
        ctx.search("warm")  # the index takes in the transaction's files
        searcher = ctx.index.searcher
        rare = plain_terms(parse_query("zebra").query)
        common = plain_terms(parse_query("webhook queue retries delivery").query)
        assert rare is not None and common is not None
        assert plain_terms(parse_query('"webhook queue"').query) is None  # a phrase: always Whoosh
        # numpy already imported (as in this test process): the block ranker costs nothing more
        assert planning.block_terms(rare, searcher) == rare
        monkeypatch.delitem(sys.modules, "numpy")  # a process that has not imported it
        monkeypatch.setattr(planning, "_spent", 0.0)
        monkeypatch.setattr(planning, "BLOCK_RANKER_POSTINGS", 100)
        assert planning.block_terms(rare, searcher) is None  # 1 posting: Whoosh
        assert planning.block_terms(common, searcher) == common  # 480 postings: worth the import
        planning.spent_in_whoosh(
            planning.NUMPY_IMPORT_SECONDS
        )  # Whoosh has cost what the import would
        assert planning.block_terms(rare, searcher) == rare
    finally:
        ctx.close()
    fresh = ContextManager(tmp_path / "ctx", actor="agent", durable=False)
    try:
        fast, slow = _both(fresh, monkeypatch, "webhook queue retries delivery zebra")
        assert fast == slow and fast[0][0] == "notes/n7.md"
    finally:
        fresh.close()


def _sample_words() -> list[str]:
    from contextfs.text.analysis import content_words

    return sorted(set(content_words((SAMPLE / "project" / "README.md").read_text())))


@settings(max_examples=40, deadline=None)
@given(words=st.lists(st.sampled_from(_sample_words()), min_size=1, max_size=64, unique=True))
def test_long_questions_rank_the_same_both_ways(
    sample_ctx: ContextManager, words: list[str]
) -> None:
    """Queries of up to 64 words (an archival dedupe check is one): same order, scores equal
    but for the order of the floating-point sum."""
    query = " ".join(words)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(planning, "block_terms", lambda terms, _searcher: terms)
        fast = [(h.path, h.score) for h in sample_ctx.search(query, limit=25)]
        m.setattr(planning, "block_terms", lambda _terms, _searcher: None)
        slow = [(h.path, h.score) for h in sample_ctx.search(query, limit=25)]
    assert [p for p, _ in fast] == [p for p, _ in slow]
    assert all(math.isclose(a, b, rel_tol=1e-12) for (_, a), (_, b) in zip(fast, slow, strict=True))


def test_two_indexes_never_share_cached_postings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoosh draws segment ids from ``random``: two indexes in one process can get the same
    ids (a seeded ``random`` makes them equal), and the segment cache must still keep them apart."""
    import random

    monkeypatch.setattr(planning, "block_terms", lambda terms, _searcher: terms)
    found = []
    for n, words in enumerate(("alpha beta", "alpha gamma delta epsilon")):
        random.seed(1234)
        ctx = ContextManager(tmp_path / f"ctx{n}", actor="agent", durable=False)
        try:
            with ctx.transaction("notes"):
                for i in range(n + 1):
                    ctx.write(f"n{i}.md", f"{words} {i}\n")
            random.seed(1234)
            ctx.index.rebuild()
            found.append(sorted(h.path for h in ctx.search("alpha", limit=10)))
        finally:
            ctx.close()
    assert found == [["n0.md"], ["n0.md", "n1.md"]]
