"""The CLI over a real root: every core command, errors as one line, examples in --help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import assert_clean, git
from contextfs import cli as cli_module
from contextfs.cli import cli


@pytest.fixture
def run(tmp_path: Path):
    root = tmp_path / "ctx"
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, ok: bool = True):
        result = runner.invoke(cli, ["--root", str(root), *args], input=input, catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    invoke.root = root  # type: ignore[attr-defined]
    return invoke


def test_write_read_edit_ls(run) -> None:
    run("init")
    out = run("write", "memory/facts.md", "--meta", "title=Facts", input="- Database: PostgreSQL 16\n").output
    assert "wrote memory/facts.md" in out
    assert run("read", "memory/facts.md").output == "- Database: PostgreSQL 16\n"
    data = json.loads(run("read", "memory/facts.md", "--json").output)
    assert data["metadata"]["title"] == "Facts" and data["metadata"]["author"] == "human"
    run("edit", "memory/facts.md", "PostgreSQL 16", "PostgreSQL 17")
    assert "PostgreSQL 17" in run("read", "memory/facts.md").output
    assert json.loads(run("ls", "--json").output) == ["memory/facts.md"]
    assert run("ls", "memory").output.strip() == "memory/facts.md"
    assert_clean(run.root)


def test_write_from_file(run, tmp_path: Path) -> None:
    source = tmp_path / "note.md"
    source.write_text("# From a file\n", encoding="utf-8")
    run("write", "notes/a.md", "--file", str(source))
    assert run("read", "notes/a.md").output.startswith("# From a file")


def test_rm_trash_restore_mv(run) -> None:
    run("write", "task/current.md", input="Ship retries\n")
    assert "moved task/current.md to the trash" in run("rm", "task/current.md").output
    listing = json.loads(run("trash", "--json").output)
    assert listing[0]["original_path"] == "task/current.md" and listing[0]["actor"] == "human"
    run("restore", "task/current.md")
    run("mv", "task/current.md", "task/history/done.md")
    assert json.loads(run("ls", "--json").output) == ["task/history/done.md"]
    assert "purged 0 entries" in run("trash", "--purge", "30").output
    assert_clean(run.root)


def test_log_diff_show_revert(run) -> None:
    run("write", "memory/facts.md", input="one\n")
    run("write", "memory/facts.md", input="two\n")
    history = json.loads(run("log", "memory/facts.md", "--json").output)
    assert [h["op"] for h in history] == ["write", "write"]
    first = history[-1]["commit"]
    diff = run("diff", "memory/facts.md", first).output
    assert "-one" in diff and "+two" in diff
    shown = run("show", "memory/facts.md", "--at", first).output
    assert shown.startswith("---\n") and "one" in shown
    run("revert", "memory/facts.md", "--to", first)
    assert run("read", "memory/facts.md").output.startswith("one")
    assert "revert: memory/facts.md" in git(run.root, "log", "-1", "--format=%s")


def test_revert_session(run) -> None:
    run("--session", "s-cli-1", "write", "notes/a.md", input="agent text\n")
    out = run("revert", "--session", "s-cli-1").output
    assert "reverted 1 commit(s) of s-cli-1" in out
    assert json.loads(run("ls", "--json").output) == []


@pytest.mark.parametrize(
    "args",
    [
        ("read", "../etc/passwd"),
        ("read", ".git/config"),
        ("read", "missing.md"),
        ("edit", "missing.md", "a", "b"),
        ("show", "x.md", "--at", "--upload-pack=evil"),
        ("rm", "/etc/passwd"),
    ],
)
def test_errors_are_one_line_and_exit_1(run, args) -> None:
    run("init")
    result = run(*args, ok=False)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output


def test_every_command_has_an_example() -> None:
    cli_module._register_layers()
    runner = CliRunner()

    def walk(group, prefix):
        for name, command in group.commands.items():
            yield [*prefix, name], command
            if hasattr(command, "commands"):
                yield from walk(command, [*prefix, name])

    seen = 0
    for path, _command in walk(cli, []):
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Example" in result.output, f"contextfs {' '.join(path)} --help has no example"
        seen += 1
    assert seen >= 20
