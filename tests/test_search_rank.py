"""The block-at-a-time ranker must rank exactly as Whoosh's own matcher tree does.

Plain-word queries take ``contextfs.search_rank``; everything else goes through Whoosh.
These tests run the same queries both ways on a real index (several segments, deleted
documents, trash, folder filters) and require identical paths and scores.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import contextfs.search as search_mod
from contextfs import ContextManager
from contextfs.search_query import parse_query
from contextfs.search_rank import fast_terms

SAMPLE = Path(__file__).resolve().parent.parent / "sample-context"

QUERIES = [
    "dead letter queue", "webhook retries backoff", "postgres", "how do we scale the cluster",
    "redis eviction policy", "karpenter spot instances", "tenant isolation row level security",
]


def _both(ctx: ContextManager, monkeypatch: pytest.MonkeyPatch, query: str, **kw: object) -> tuple[list, list]:
    fast = [(h.path, round(h.score, 9)) for h in ctx.search(query, **kw)]
    with monkeypatch.context() as m:
        m.setattr(search_mod, "fast_terms", lambda q: None)
        slow = [(h.path, round(h.score, 9)) for h in ctx.search(query, **kw)]
    return fast, slow


def test_fast_ranking_equals_whoosh_across_segments_and_deletions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ctx"
    shutil.copytree(SAMPLE, root)
    ctx = ContextManager(root, actor="agent")
    try:
        # New segments with deletions: edits re-index (delete + add), a delete trashes a note.
        ctx.search("warm")
        ctx.append("project/glossary.md", "\nDead letter queue: where poisoned webhook deliveries wait.\n")
        ctx.search("warm")
        ctx.write("topics/scaling.md", "# Scaling\n\nKarpenter scales the cluster on spot instances.\n")
        ctx.delete("project/decisions/0004-arq-over-celery.md")
        for query in QUERIES:
            assert fast_terms(parse_query(query, ctx.index.schema).query) is not None, query
            fast, slow = _both(ctx, monkeypatch, query)
            assert fast == slow, query
            assert fast, query
            for kw in ({"path": "project"}, {"include_trash": True}, {"limit": 3}, {"tag": "webhooks"}):
                assert _both(ctx, monkeypatch, query, **kw)[0] == _both(ctx, monkeypatch, query, **kw)[1], (query, kw)
        assert all(not p.startswith(".trash/") for p, _ in _both(ctx, monkeypatch, "celery arq")[0])
        assert len(ctx.index._searcher.reader().leaf_readers()) > 1  # the multi-segment case was exercised
    finally:
        ctx.close()


def test_other_query_shapes_use_whoosh(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", actor="agent")
    try:
        schema = ctx.index.schema
        for query in ('"dead letter"', "kafka AND brokers", "letter NOT dead", "webho*", "tag:adr", "*",
                      "postgres tag:adr"):
            assert fast_terms(parse_query(query, schema).query) is None, query
    finally:
        ctx.close()
