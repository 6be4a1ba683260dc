"""Revisions: any name git accepts for one commit (id, HEAD~N, branch, tag, remote branch),
and nothing that could read as an option, a range or a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from conftest import git
from contextfs import ContextManager, NotFoundError
from contextfs.cli import cli
from contextfs.versioning.gitcmd import check_rev


@pytest.mark.parametrize("rev", ["HEAD", "HEAD~3", "HEAD^^", "abc123", "main", "main~2^1", "origin/main",
                                 "v1.2", "release/2026-11", "refs/heads/main", "feature_x-2"])
def test_names_git_accepts_for_a_commit_are_accepted(rev: str) -> None:
    assert check_rev(rev) == rev


@pytest.mark.parametrize("rev", ["", "-x", "--output=/tmp/x", "a..b", "HEAD@{1}", "@", "a b", "x:y", ":/fix",
                                 ".hidden", "a/.b", "x.lock", "a/", "a//b", "main~x", "HEAD\n", "a\tb",
                                 "x*", "x?", "x[1]", "a\\b", "main.", 7, None])
def test_anything_else_is_refused(rev: object) -> None:
    with pytest.raises(NotFoundError, match="is not accepted"):
        check_rev(rev)


@given(st.text(max_size=40))
def test_an_accepted_revision_is_never_an_option_a_range_or_a_path(text: str) -> None:
    try:
        check_rev(text)
    except NotFoundError:
        return
    assert not text.startswith("-") and ".." not in text and ":" not in text
    assert not any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text)


def test_show_takes_a_branch_a_tag_and_a_remote_branch(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    ctx = ContextManager(root)
    ctx.write("memory/facts.md", "- one\n")
    git(root, "tag", "v1")
    ctx.write("memory/facts.md", "- two\n")
    git(root, "update-ref", "refs/remotes/origin/main", "HEAD~1")
    branch = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    assert ctx.read_at("memory/facts.md", "v1") == "- one\n"
    assert ctx.read_at("memory/facts.md", "origin/main") == "- one\n"
    assert ctx.read_at("memory/facts.md", branch) == "- two\n"
    ctx.close()

    def show(*args: str) -> str:
        result = CliRunner().invoke(cli, ["--root", str(root), "show", "memory/facts.md", *args])
        assert result.exit_code == 0, result.output
        return result.output

    assert show("--at", "origin/main").endswith("- one\n")
    assert show("--at", "v1").endswith("- one\n")
    assert show("--at", branch).endswith("- two\n")
    assert show().endswith("- two\n")  # HEAD when --at is left out
    missing = CliRunner().invoke(cli, ["--root", str(root), "show", "memory/facts.md", "--at", "nobranch"])
    assert missing.exit_code == 1 and "revision 'nobranch' does not exist" in missing.stderr
