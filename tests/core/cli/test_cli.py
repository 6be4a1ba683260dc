"""The CLI over a real root: every core command, errors as one line, lazy command loading."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import application_repository, assert_clean, git, modules_after

from contextfs import ContextManager
from contextfs.cli import COMMANDS, cli, walk


@pytest.fixture
def run(tmp_path: Path):
    root = tmp_path / "ctx"
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, ok: bool = True):
        result = runner.invoke(
            cli, ["--root", str(root), *args], input=input, catch_exceptions=False
        )
        if ok:
            assert result.exit_code == 0, result.output
        return result

    invoke.root = root  # type: ignore[attr-defined]
    return invoke


def test_write_read_edit_ls(run) -> None:
    run("init")
    out = run(
        "write", "memory/facts.md", "--meta", "title=Facts", input="- Database: PostgreSQL 16\n"
    ).output
    assert "wrote memory/facts.md" in out
    assert run("read", "memory/facts.md").output == "- Database: PostgreSQL 16\n"
    data = json.loads(run("read", "memory/facts.md", "--json").output)
    assert data["metadata"]["title"] == "Facts" and data["metadata"]["author"] == "human"
    run("edit", "memory/facts.md", "PostgreSQL 16", "PostgreSQL 17")
    assert "PostgreSQL 17" in run("read", "memory/facts.md").output
    assert json.loads(run("ls", "--json").output) == ["memory/facts.md"]
    assert run("ls", "memory").output.strip() == "memory/facts.md"
    assert run("ls", "memory/facts.md").output == "memory/facts.md\n"  # a file lists itself
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
    assert len(json.loads(run("log", "memory/facts.md", "-n", "1", "--json").output)) == 1
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


def test_an_empty_listing_prints_nothing(run) -> None:
    run("init")
    assert run("ls").output == ""
    (run.root / "drafts").mkdir()  # an empty folder exists: nothing to list, not an error
    assert run("ls", "drafts").output == ""


# ------------------------------------------------------------------ reading commands only read
READERS = [
    ("read", "memory/facts.md"),
    ("ls",),
    ("ls", "memory"),
    ("log",),
    ("log", "memory/facts.md"),
    ("diff", "memory/facts.md", "HEAD"),
    ("show", "memory/facts.md", "--at", "HEAD"),
    ("trash",),
    ("search", "postgres"),
]


def _snapshot(repo: Path) -> tuple[str, bytes, str]:
    return (
        git(repo, "rev-parse", "HEAD"),
        (repo / ".git" / "index").read_bytes(),
        git(repo, "status", "--porcelain", "--untracked-files=all"),
    )


@pytest.mark.parametrize(
    "args", [("read", "memory/facts.md"), ("ls",), ("log",), ("search", "x"), ("trash",)]
)
def test_reading_commands_never_create_a_root(run, args, tmp_path: Path) -> None:
    line = _one_error_line(run(*args, ok=False))
    assert "contextfs init" in line and not run.root.exists()


def test_reading_commands_leave_an_application_repository_as_it_was(tmp_path: Path) -> None:
    app = application_repository(tmp_path)
    runner = CliRunner()
    root = app / "context"
    with ContextManager(root, index=False) as ctx:
        ctx.write("memory/facts.md", "- Database: PostgreSQL 16\n")
    (app / "main.py").write_text("print('work in progress')\n", "utf-8")  # the developer's own edit
    (root / "memory" / "facts.md").write_text("- edited in an editor, not yet committed\n", "utf-8")
    before = _snapshot(app)
    for args in READERS:
        result = runner.invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
        assert result.exit_code == 0, (args, result.output)
    assert _snapshot(app) == before  # HEAD, the git index and the work tree: byte-identical


# ------------------------------------------------------------------ errors
def _one_error_line(result, code: int = 1) -> str:
    """The promised form: exit ``code``, nothing on stdout, one ``error: ...`` line on stderr."""
    assert result.exit_code == code, result.output
    assert result.stdout == "", result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


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
    _one_error_line(run(*args, ok=False))


def test_show_at_a_revision_without_the_file(run) -> None:
    run("write", "memory/facts.md", input="one\n")
    line = _one_error_line(run("show", "memory/other.md", "--at", "HEAD", ok=False))
    assert "memory/other.md did not exist at HEAD" in line and "contextfs log" in line


@pytest.mark.parametrize("args", [("ls", "nope"), ("ls", "memory/nope.md"), ("log", "nope.md")])
def test_a_missing_path_is_an_error_naming_it(run, args) -> None:
    run("write", "memory/facts.md", input="one\n")
    line = _one_error_line(run(*args, ok=False))
    assert args[1] in line and "contextfs ls" in line


@pytest.mark.parametrize("limit", ["0", "-1", "many"])
def test_log_refuses_a_limit_out_of_range(run, limit) -> None:
    run("init")
    line = _one_error_line(run("log", "-n", limit, ok=False), code=2)
    assert "'-n' / '--limit'" in line and "contextfs log --help" in line
    if limit != "many":
        assert "x>=1" in line


@pytest.mark.parametrize(
    "args, words",
    [
        (("nosuchcommand",), "No such command"),
        (("write", "a.md", "--meta", "novalue"), "is not KEY=VALUE"),
        (("revert", "a.md"), "give PATH and --to REV"),
        (("trash", "--purge", "-5"), "x>=0"),
        (("--bogus-option", "ls"), "No such option"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(run, args, words) -> None:
    line = _one_error_line(run(*args, input="x", ok=False), code=2)
    assert words in line and "--help'" in line


def test_demo_errors_are_one_line(run, tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "x.md").write_text("taken\n", "utf-8")
    assert "is not empty" in _one_error_line(run("demo", "--dir", str(full), ok=False))
    empty = tmp_path / "empty-source"
    empty.mkdir()
    line = _one_error_line(
        run("demo", "--source", str(empty), "--dir", str(tmp_path / "d"), ok=False)
    )
    assert "no project/ folder" in line


def test_mcp_without_its_extra_prints_the_install_hint(
    run, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a missing package looks like to the import system (submodules a test here may
    # already have imported included).
    for name in ["mcp", *[n for n in sys.modules if n.startswith("mcp.")]]:
        monkeypatch.setitem(sys.modules, name, None)
    line = _one_error_line(run("mcp", ok=False))
    assert "pip install 'contextfs-git[mcp]'" in line


# ------------------------------------------------------------------ the command table
def test_every_command_has_an_example() -> None:
    runner = CliRunner()
    seen = 0
    for path, _command in walk():
        result = runner.invoke(cli, [*path[1:], "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Example" in result.output, f"contextfs {' '.join(path)} --help has no example"
        seen += 1
    assert seen >= 20


def test_the_table_help_is_each_commands_own_short_help() -> None:
    """The line ``contextfs --help`` shows without importing a command is the command's own."""
    ctx = click.Context(cli)
    assert [e.name for e in COMMANDS] == cli.list_commands(ctx)[: len(COMMANDS)]
    for entry in COMMANDS:
        command = cli.get_command(ctx, entry.name)
        assert command is not None and command.name == entry.name, entry
        assert entry.help == command.get_short_help_str(limit=1000), (
            f"COMMANDS says {entry.help!r} for {entry.name}; its docstring says "
            f"{command.get_short_help_str(limit=1000)!r}"
        )


# Modules each command must never import: the heavy libraries of the other layers.
HEAVY = (
    "langchain_core",
    "whoosh",
    "numpy",
    "tiktoken",
    "watchdog",
    "contextfs.evolve",
    "contextfs.integrations",
)


def test_help_imports_no_command(tmp_path: Path) -> None:
    loaded = modules_after(tmp_path, "--help")
    commands = {entry.target.partition(":")[0] for entry in COMMANDS}
    assert not commands & set(loaded), commands & set(loaded)
    assert "contextfs.manager" not in loaded and "git" not in loaded
    assert not [m for m in loaded if m.split(".")[0] in {"yaml", "langchain_core", "whoosh"}]


@pytest.mark.parametrize(
    "args, allowed",
    [
        (("read", "memory/facts.md"), ("yaml",)),
        (("ls", "memory"), ()),
        (("log", "-n", "2"), ()),
        (("context", "--scope", "task"), ("contextfs.scopes", "yaml")),
        (("search", "webhook"), ("whoosh", "numpy", "yaml")),
    ],
)
def test_commands_import_only_what_they_use(
    sample_root: Path, tmp_path: Path, args, allowed
) -> None:
    ContextManager(
        sample_root, index=False
    ).close()  # a root: the reading commands never create one
    loaded = modules_after(tmp_path, "--root", str(sample_root), *args)
    layers = (*HEAVY, "contextfs.scopes", "yaml")
    unexpected = sorted(
        {
            m
            for m in loaded
            for h in layers
            if (m == h or m.startswith(h + "."))
            and not any(m == a or m.startswith(a + ".") for a in allowed)
        }
    )
    assert unexpected == [], f"contextfs {' '.join(args)} imported {unexpected}"
