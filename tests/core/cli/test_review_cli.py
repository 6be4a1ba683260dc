"""``contextfs sessions``: coloured on a terminal, plain when piped; a person's decisions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from contextfs import ContextManager
from contextfs.cli import cli

ANSI = "\x1b["


@pytest.fixture
def root(tmp_path: Path) -> Path:
    person = ContextManager(tmp_path / "ctx", actor="human", index=False)
    person.write("memory/facts.md", "- one\n- two\n")
    person.delete("memory/facts.md")
    person.restore("memory/facts.md")
    scout = ContextManager(
        person.root, actor="agent:scout", session="s-scout", review=True, index=False
    )
    scout.append("memory/facts.md", "- three\n")
    return person.root


def run(
    root: Path, *args: str, color: bool = False, env: dict[str, str] | None = None
) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(root), *args], color=color, env=env or {})
    return result.exit_code, result.output


def test_coloured_on_a_terminal_plain_when_piped(root: Path) -> None:
    code, plain = run(root, "sessions")
    assert code == 0 and ANSI not in plain and plain.splitlines()[0].startswith("pending")
    code, coloured = run(root, "sessions", color=True)
    assert code == 0 and ANSI in coloured and "s-scout" in coloured
    code, diff = run(root, "sessions", "show", "s-scout", color=True)
    assert code == 0 and "\x1b[32m+- three" in diff  # an added line in green
    code, diff = run(root, "sessions", "show", "s-scout", color=True, env={"NO_COLOR": "1"})
    assert ANSI not in diff and "+- three" in diff
    listed = json.loads(run(root, "sessions", "--json", "--status", "pending")[1])
    assert [s["id"] for s in listed] == ["s-scout"]


def test_a_person_decides_and_an_agent_cannot(root: Path) -> None:
    code, out = run(root, "--actor", "agent:scout", "sessions", "approve", "s-scout")
    assert code == 1 and out.startswith("error: agent:scout cannot approve")
    code, out = run(root, "sessions", "discard", "s-scout")
    assert code == 0 and "contextfs sessions recover s-scout" in out
    assert run(root, "sessions", "--status", "discarded")[1].startswith("discarded")
    code, out = run(root, "sessions", "recover", "s-scout")
    assert code == 0 and "1 commit(s) wait for review again" in out
    code, out = run(root, "sessions", "approve", "s-scout")
    assert code == 0 and "approved s-scout" in out
    assert (
        ContextManager(root, read_only=True, index=False)
        .read("memory/facts.md")
        .endswith("- three\n")
    )
    code, out = run(root, "sessions", "undo", "s-scout")
    assert code == 0 and "undid 1 commit(s) of s-scout" in out
    code, out = run(root, "sessions", "show", "s-nobody")
    assert code == 1 and "no commit of session 's-nobody'" in out and "contextfs log" in out
