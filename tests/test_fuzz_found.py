"""Defects the surface fuzzer found, each pinned by the smallest call that showed it.

``tests/test_fuzz_surfaces.py`` generates arguments and file contents for every public
surface; what it found is kept here as plain tests so each stays fixed without relying on
Hypothesis finding it again.
"""

from __future__ import annotations

import pytest

from contextfs import ContextFSError, ContextManager, InvalidArgumentError
from contextfs.integrations import ContextRetriever


def test_retriever_filters_that_are_not_a_mapping_are_a_typed_error(ctx: ContextManager) -> None:
    ctx.write("notes/a.md", "The staging database.\n")
    with pytest.raises(InvalidArgumentError):
        ContextRetriever(ctx).invoke("database", filters="0")
    with pytest.raises(InvalidArgumentError):
        ContextRetriever(ctx).invoke("database", filters={1: "x"})
    assert ContextRetriever(ctx).invoke("database", filters={})


def test_a_cloned_frontmatter_number_too_long_to_print_is_typed_on_every_read(ctx: ContextManager) -> None:
    (ctx.root / "notes").mkdir()
    (ctx.root / "notes" / "n.md").write_text("---\nn: " + "1" * 4400 + "\n---\nbody\n", "utf-8")
    with pytest.raises(ContextFSError):
        ctx.get("notes/n.md")
    assert ctx.search("body") == [] or all(hit.path != "notes/n.md" for hit in ctx.search("body"))


@pytest.mark.parametrize("days", [1e9, -1, float("nan"), float("inf")])
def test_purging_the_trash_with_an_absurd_age_is_a_typed_error(ctx: ContextManager, days: float) -> None:
    ctx.write("notes/a.md", "x\n")
    ctx.delete("notes/a.md")
    with pytest.raises(InvalidArgumentError):
        ctx.purge_trash(older_than=days)
    assert len(ctx.trash()) == 1


@pytest.mark.parametrize("meta", [[], (), "title: x", 7])
def test_metadata_that_is_not_a_mapping_is_a_typed_error_even_when_the_body_is_unchanged(
        ctx: ContextManager, meta: object) -> None:
    ctx.write("notes/a.md", "same body\n")
    with pytest.raises(ContextFSError):
        ctx.write("notes/a.md", "same body\n", meta)  # type: ignore[arg-type]


def test_undoing_a_session_without_naming_one_is_a_typed_error(ctx: ContextManager) -> None:
    with pytest.raises(InvalidArgumentError):
        ctx.revert_session(None)  # type: ignore[arg-type]


def test_a_caller_seeding_random_never_makes_two_index_segments_share_a_name(ctx: ContextManager) -> None:
    import random

    before = ctx.index.rebuilds
    for i in range(4):
        random.seed(0)  # what evaluation scripts do for reproducible runs
        ctx.write(f"notes/n{i}.md", f"note number {i}\n")
        random.seed(0)
        report = ctx.index.verify(fix=True)
        assert report.ok and not report.rebuilt
    assert sorted(hit.path for hit in ctx.search("note")) == [f"notes/n{i}.md" for i in range(4)]
    assert ctx.index.rebuilds == before
