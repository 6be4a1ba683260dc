"""A binary (or non-UTF-8) file a person puts in the root is kept and listed, like any file:
committed, moved, deleted, restored, diffed as bytes. It is not a document, and every
command that reads text says so in the same words instead of "contextfs stores text only"."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import assert_clean, git
from contextfs import ContentError, ContextManager
from contextfs.cli import cli
from contextfs.integrations import make_tools
from contextfs.scopes import ScopedContext

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
KEPT = "contextfs keeps it as it is"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ctx"
    with ContextManager(r) as ctx:
        ctx.write("project/architecture.md", "# Architecture\n\n![flow](diagram.png)\n")
    (r / "project" / "diagram.png").write_bytes(PNG)
    (r / "project" / "latin.txt").write_bytes(b"caf\xe9\n")
    return r


def test_a_binary_file_is_kept_listed_and_handled_like_any_file(root: Path) -> None:
    with ContextManager(root) as ctx:  # opening commits what a person put there
        tracked = git(root, "ls-files").split()
        assert {"project/diagram.png", "project/latin.txt"} <= set(tracked)
        assert ctx.list("project") == ["project/architecture.md", "project/diagram.png", "project/latin.txt"]
        assert ctx.read_raw("project/diagram.png") == PNG
        ctx.move("project/diagram.png", "project/flow.png")
        ctx.delete("project/flow.png")
        ctx.restore("project/flow.png")
        assert (root / "project" / "flow.png").read_bytes() == PNG
        (root / "project" / "flow.png").write_bytes(PNG + b"\x01")
        ctx.sync()
        assert ctx.diff("project/flow.png", "HEAD~1") == (
            "Binary files a/project/flow.png@HEAD~1 and b/project/flow.png@working differ\n")
        assert ctx.diff("project/flow.png", "HEAD") == ""
    assert_clean(root)


def test_reading_it_says_it_is_kept_but_not_text_in_every_interface(root: Path) -> None:
    with ContextManager(root) as ctx:
        for call in (lambda: ctx.read("project/diagram.png"), lambda: ctx.get("project/latin.txt"),
                     lambda: ctx.show_at("project/diagram.png", "HEAD")):
            with pytest.raises(ContentError, match=KEPT):
                call()
        read = {t.name: t for t in make_tools(ctx)}["read_context"]
        out = read.invoke({"type": "tool_call", "id": "1", "name": "read_context",
                           "args": {"path": "project/diagram.png"}})
        assert out.status == "error" and KEPT in out.content
    result = CliRunner().invoke(cli, ["--root", str(root), "read", "project/diagram.png"])
    assert result.exit_code == 1 and result.stderr.startswith("error: project/diagram.png is a binary file (")
    assert "stores UTF-8 text only" not in result.stderr


def test_search_and_views_leave_it_out_quietly(root: Path, caplog: pytest.LogCaptureFixture) -> None:
    (root / ".contextfs").mkdir(exist_ok=True)
    (root / ".contextfs" / "config.toml").write_text('[[scopes.project]]\npath = "project/*"\n', "utf-8")
    with ContextManager(root) as ctx, caplog.at_level(logging.WARNING, logger="contextfs"):
        hits = [path for path, _ in ctx.search("architecture diagram")]
        assert hits == ["project/architecture.md"]
        view = ScopedContext(ctx, budget=2000).assemble("project")  # the glob matches the binary files too
        assert [item.path for item in view.items] == ["project/architecture.md"] and not view.dropped
    assert not [r for r in caplog.records if "diagram.png" in r.getMessage() or "latin.txt" in r.getMessage()]
