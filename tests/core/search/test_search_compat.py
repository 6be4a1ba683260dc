"""The Whoosh coupling is pinned, stamped and tested: hooks exist, and a switch turns them off."""

from __future__ import annotations

import importlib
import inspect
import json
import logging
import shutil
from pathlib import Path

import pytest
import whoosh
import whoosh.util
from helpers import SAMPLE

from contextfs import ContextManager
from contextfs.search import compat
from contextfs.search.stamp import STAMP_FILE
from contextfs.search.upkeep import INDEX_DIR


@pytest.mark.parametrize("hook", compat.HOOKS, ids=lambda h: f"{h[1] or h[0]}.{h[2]}")
def test_every_private_hook_still_exists_with_its_parameters(hook: tuple) -> None:
    module, cls, name, params = hook
    owner = importlib.import_module(module)
    if cls is not None:
        owner = getattr(owner, cls)
    target = getattr(owner, name)
    if params is not None:
        assert tuple(inspect.signature(target).parameters)[: len(params)] == params


def test_private_attributes_read_on_instances_exist(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    shutil.copytree(SAMPLE, root)
    with ContextManager(root) as ctx:
        assert ctx.search("webhook")
        reader = ctx.index.searcher.reader()
        leaf = next(r for r, _ in reader.leaf_readers())
        matcher = leaf.postings("body", leaf.schema["body"].to_bytes("webhook"))
        for attr in compat.INSTANCE_ATTRIBUTES["W3LeafMatcher"]:
            assert hasattr(matcher, attr), attr
        # The length column is read through its private layout; the helper returns None (and
        # callers take Whoosh's own per-document path) when that layout is not as expected.
        from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield

        perdoc = leaf._perdoc  # noqa: SLF001
        column = perdoc._cached_reader(_lenfield("body"), LENGTHS_COLUMN)  # noqa: SLF001
        for attr in compat.INSTANCE_ATTRIBUTES["column reader"]:
            assert hasattr(column, attr), attr
        from contextfs.search.codec import length_bytes

        assert length_bytes(perdoc, "body", leaf.doc_count_all()) is not None


def _stamp(ctx: ContextManager) -> dict:
    return json.loads((ctx.parts.state.file(INDEX_DIR) / STAMP_FILE).read_text())


def test_the_native_switch_uses_whooshs_own_codec_and_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ctx"
    shutil.copytree(SAMPLE, root)
    queries = ("webhook retry backoff", "postgres", "karpenter spot instances")
    with ContextManager(root) as ctx:
        packed = {q: [(h.path, round(h.score, 6)) for h in ctx.search(q)] for q in queries}
        assert _stamp(ctx)["codec"] == compat.CODEC_ID
    monkeypatch.setenv("CONTEXTFS_SEARCH_NATIVE", "1")
    with ContextManager(root) as ctx:
        assert ctx.index.rebuilds == 1  # another codec: rebuilt, never misread
        assert _stamp(ctx)["codec"] == compat.NATIVE_CODEC_ID
        native = {q: [(h.path, round(h.score, 6)) for h in ctx.search(q)] for q in queries}
    assert native == packed  # the fast ranker's scores are Whoosh's own
    monkeypatch.delenv("CONTEXTFS_SEARCH_NATIVE")
    with ContextManager(root) as ctx:
        assert ctx.index.rebuilds == 1


def test_an_untested_whoosh_falls_back_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(whoosh, "versionstring", lambda: "2.9.0")
    monkeypatch.setattr(compat, "_warned", [])
    caplog.set_level(logging.WARNING, logger="contextfs")
    assert (
        compat.native() and compat.codec() is None and compat.codec_id() == compat.NATIVE_CODEC_ID
    )
    assert "outside the range" in caplog.text
    monkeypatch.setattr(whoosh, "versionstring", lambda: "2.7.5")
    assert not compat.native()


def test_the_pin_matches_the_tested_range() -> None:
    from helpers import REPO

    text = (REPO / "pyproject.toml").read_text()
    low, high = (".".join(map(str, v)) for v in compat.TESTED)
    assert f'"Whoosh-Reloaded>={low},<{high[:3]}"' in text
    assert compat.TESTED[0] <= compat.installed() < compat.TESTED[1]


def test_every_writer_draws_names_from_the_generator_of_its_own(ctx: ContextManager) -> None:
    """Whoosh's name-drawing modules are given contextfs's generator before a writer runs."""
    ctx.write("notes/a.md", "a note\n")
    assert ctx.search("note")
    drawers = {importlib.import_module(name).random_name for name in compat.NAME_USERS}
    assert len(drawers) == 1 and whoosh.util.random_name not in drawers
