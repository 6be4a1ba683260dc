"""Short forms people type find the word they stand for, through the one text analyser."""

from __future__ import annotations

import pytest

from contextfs import ContextManager, text


@pytest.fixture
def tech(tmp_path) -> ContextManager:  # type: ignore[no-untyped-def]
    ctx = ContextManager(tmp_path / "ctx")
    ctx.write("db/engine.md", "# Engine\n\nWe run PostgreSQL 16 for billing.\n")
    ctx.write("db/team.md", "# Team\n\nThe Database team owns backups.\n")
    ctx.write("ops/cluster.md", "# Cluster\n\nThe staging DB lives on k8s; auth goes through SSO.\n")
    ctx.write("ops/authz.md", "# Access\n\nAuthorization rules for the admin console.\n")
    yield ctx
    ctx.close()


@pytest.mark.parametrize(("query", "expected"), [
    ("postgres", {"db/engine.md"}),
    ("pg", {"db/engine.md"}),
    ("PostgreSQL", {"db/engine.md"}),
    ("DB", {"db/team.md", "ops/cluster.md"}),
    ("databases", {"db/team.md", "ops/cluster.md"}),
    ("kubernetes", {"ops/cluster.md"}),
    ("postg*", {"db/engine.md"}),  # a prefix is asked for with the wildcard
])
def test_a_short_form_finds_the_word_it_stands_for_and_back(tech: ContextManager, query: str,
                                                             expected: set[str]) -> None:
    assert {h.path for h in tech.search(query)} == expected


def test_what_is_not_a_variant_stays_as_written(tech: ContextManager) -> None:
    # Two meanings: "auth" is not read as authorization (or authentication).
    assert {h.path for h in tech.search("auth")} == {"ops/cluster.md"}
    # A compound stays one word; a bare prefix is not a match.
    assert tech.search("sql") == [] and tech.search("postgre") == []


def test_every_ranker_reads_variants_alike() -> None:
    assert text.terms("the DB on k8s") == text.terms("the database on kubernetes")
    assert text.query_terms("Which postgres version?") == text.query_terms("Which PostgreSQL version?")
    # Every variant maps to a word of its own (no chains), which is not itself a variant.
    assert not set(text.VARIANTS.values()) & set(text.VARIANTS)
