"""The CLI's one error path: a short usage for a bare group, "did you mean" for typos of
commands and options, and errors as JSON on stderr when the command line asks for --json."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from contextfs.cli import COMMANDS, cli


@pytest.fixture
def run(tmp_path: Path):
    root = tmp_path / "ctx"

    def invoke(*args: str, input: str | None = None):
        return CliRunner().invoke(cli, ["--root", str(root), *args], input=input, catch_exceptions=False,
                                  prog_name="contextfs")

    invoke.root = root  # type: ignore[attr-defined]
    return invoke


def test_bare_contextfs_prints_a_short_usage_with_every_command() -> None:
    done = subprocess.run([sys.executable, "-m", "contextfs.cli"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0].startswith("Usage: ") and lines[-1].startswith("error: no command given")
    assert len(lines) <= 6 and all(len(line) <= 120 for line in lines), done.stderr
    listed = " ".join(lines[1:-1])
    assert all(entry.name in listed for entry in COMMANDS)
    assert "--help" in lines[-1]


def test_a_bare_subgroup_lists_its_own_commands(run) -> None:
    result = run("topic")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Usage: contextfs topic") and "switch" in " ".join(lines[1:-1])
    assert lines[-1] == "error: no command given; see 'contextfs topic --help' for what each command does"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("reed", "x.md"), "error: No such command 'reed'; did you mean 'read' or 'revert'? See 'contextfs --help'"),
        (("topic", "swich", "x"),
         "error: No such command 'swich'; did you mean 'switch'? See 'contextfs topic --help'"),
        (("xyzzy",), "error: No such command 'xyzzy'; see 'contextfs --help'"),
        (("ls", "--jsn"), "error: No such option '--jsn'; did you mean '--json'? See 'contextfs ls --help'"),
    ],
)
def test_typos_get_a_suggestion_in_one_clean_line(run, args, line) -> None:
    result = run(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [line]


def test_an_option_typo_before_the_command_reads_cleanly() -> None:
    result = CliRunner().invoke(cli, ["--rot", "x", "ls"], prog_name="contextfs")
    assert result.exit_code == 2
    assert result.stderr == "error: No such option '--rot'; did you mean '--root'? See 'contextfs --help'\n"
    assert "?;" not in result.stderr


def test_json_errors_have_one_shape_on_stderr(run) -> None:
    run("init")
    missing = run("read", "nothing.md", "--json")
    assert missing.exit_code == 1 and missing.stdout == ""
    assert json.loads(missing.stderr) == {"error": {
        "type": "NotFoundError", "path": "nothing.md", "exit_code": 1,
        "message": "nothing.md does not exist; list what is there with `contextfs ls`"}}
    usage = run("read", "--json")
    assert usage.exit_code == 2
    assert json.loads(usage.stderr) == {"error": {
        "type": "UsageError", "exit_code": 2, "message": "Missing argument 'PATH'; see 'contextfs read --help'"}}
    bad_query = run("search", "AND", "--json")
    error = json.loads(bad_query.stderr)["error"]
    assert bad_query.exit_code == 1 and error["type"] == "SearchIndexError" and error["message"]


def test_without_json_the_same_error_is_one_text_line(run) -> None:
    run("init")
    missing = run("read", "nothing.md")
    assert missing.exit_code == 1
    assert missing.stderr == "error: nothing.md does not exist; list what is there with `contextfs ls`\n"


def test_a_json_word_after_double_dash_is_not_the_option(run) -> None:
    run("init")
    result = run("read", "--", "--json")
    assert result.exit_code == 1 and result.stderr.startswith("error: ")


def test_the_json_error_shown_in_the_cli_reference_is_what_the_cli_prints(run) -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text("utf-8")
    shown = re.search(r"```json\n\s*(\{\"error\".*?)\n\s*```", page, re.S)
    assert shown is not None, "docs/cli.md shows the JSON error shape"
    run("init")
    assert json.loads(run("read", "nothing.md", "--json").stderr) == json.loads(shown.group(1))
