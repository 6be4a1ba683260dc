"""Commands that only read never create, sync or commit anything, wherever they run.

The CLI's command table (:data:`contextfs.cli.READING`) says which commands, or which
forms of a command (``evolve cleanup --dry-run``, ``memory core`` without a change), only
read; :func:`contextfs.cliutil.open_manager` opens the root read-only for each of them.
Every one runs here in an application's repository that has no context root, from a
subfolder, and must fail with one ``error:`` line and leave the repository byte for byte
as it was (HEAD, git's index, the work tree, no root created); then again in a repository
whose root exists, where it must succeed and still change nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import application_repository, git
from contextfs import ContextManager

#: Every reading form in the table, with the argument lists it is run with.
EXAMPLES: dict[str, list[list[str]]] = {
    "read": [["read", "memory/facts.md"], ["read", "memory/facts.md", "--json"]],
    "ls": [["ls"], ["ls", "memory", "--json"]],
    "trash": [["trash"], ["trash", "--json"]],
    "log": [["log"], ["log", "memory/facts.md", "--json"]],
    "diff": [["diff", "memory/facts.md", "HEAD"]],
    "show": [["show", "memory/facts.md", "--at", "HEAD"]],
    "search": [["search", "database"], ["search", "database", "--json"]],
    "reindex": [["reindex"], ["reindex", "--verify"], ["reindex", "--verify", "--json"]],
    "conflicts": [["conflicts"], ["conflicts", "--json"]],
    "context": [["context"], ["context", "--scope", "project", "--json"]],
    "topic list": [["topic", "list"]],
    "topic show": [["topic", "show", "billing"]],
    "topic chain": [["topic", "chain", "billing", "D1"]],
    "topic block": [["topic", "block"]],
    "topic detect": [["topic", "detect", "database"], ["topic", "detect", "database", "--json"]],
    "topic vocab": [["topic", "vocab", "billing"]],
    "memory core": [["memory", "core"], ["memory", "core", "human", "--json"]],
    "memory search": [["memory", "search", "database"]],
    "memory recall": [["memory", "recall", "database"]],
    "evolve cleanup": [["evolve", "cleanup", "--dry-run"], ["evolve", "cleanup", "--dry-run", "--json"]],
    "evolve summarize": [["evolve", "summarize", "--dry-run"], ["evolve", "summarize", "--dry-run", "--json"]],
    "sessions": [["sessions"], ["sessions", "--json"]],
    "sessions show": [["sessions", "show", "setup"]],
    "ui": [["ui", "--port", "0"]],
    "mcp": [["mcp", "--read-only"]],
}
#: Servers: run here only where they stop at once (no root); their reading is tested with their own suites.
SERVERS = {"ui", "mcp"}
#: Forms that need the root to exist but are not reading ones: they must not create one either.
NEEDS_A_ROOT = [["watch", "--once"]]


def snapshot(app: Path) -> dict[str, str]:
    """HEAD, git's index and every file of the work tree (untracked included), by content hash."""
    out = {"HEAD": git(app, "rev-parse", "HEAD").strip(), "status": git(app, "status", "--porcelain", "-uall")}
    index = app / ".git" / "index"
    out[".git/index"] = hashlib.sha256(index.read_bytes()).hexdigest() if index.exists() else "-"
    for path in sorted(app.rglob("*")):
        rel = path.relative_to(app)
        if rel.parts[0] == ".git":
            continue
        out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return out


def _run(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("CONTEXTFS_ROOT", raising=False)
    from contextfs.cli import cli

    result = CliRunner().invoke(cli, args, catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def test_the_table_and_the_examples_name_the_same_commands() -> None:
    from contextfs.cli import READING

    assert {r.path for r in READING} == set(EXAMPLES)


@pytest.mark.parametrize("args", [a for forms in EXAMPLES.values() for a in forms] + NEEDS_A_ROOT,
                         ids=lambda a: " ".join(a))
def test_without_a_root_nothing_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    app = application_repository(tmp_path)
    sub = app / "src"
    sub.mkdir()
    (sub / "app.py").write_text("print('x')\n", "utf-8")
    before = snapshot(app)
    code, output = _run(args, sub, monkeypatch)
    # One error line: plain, or the JSON form --json asks for.
    assert code != 0 and output.count("\n") == 1, output
    assert output.startswith("error: ") or "error" in json.loads(output), output
    assert snapshot(app) == before


@pytest.fixture(scope="module")
def app_with_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One application repository with a root, shared: each reading command must leave it as it was."""
    app = application_repository(tmp_path_factory.mktemp("with-root"))
    ctx = ContextManager(app / "context", actor="human", session="setup")
    ctx.write("memory/facts.md", "- Database: PostgreSQL 16\n")
    ctx.write("project/README.md", "# Project\n\nA shop on PostgreSQL.\n")
    from contextfs.scopes import Memory, Topics

    topics = Topics(ctx)
    topics.create("Billing", "invoices", name="billing")
    topics.decisions.decide("billing", "Use Stripe", reason="it is what finance uses")
    Memory(ctx).core_memory_append("human", "Prefers short answers")
    ctx.close()
    git(app, "status")
    return app


@pytest.mark.parametrize("args", [a for forms in EXAMPLES.values() for a in forms if a[0] not in SERVERS],
                         ids=lambda a: " ".join(a))
def test_with_a_root_reading_changes_nothing(app_with_root: Path, monkeypatch: pytest.MonkeyPatch,
                                             args: list[str]) -> None:
    before = snapshot(app_with_root)
    code, output = _run(args, app_with_root, monkeypatch)
    assert code == 0, output
    assert snapshot(app_with_root) == before


def test_a_reading_command_that_tried_to_write_would_fail_loudly(app_with_root: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # The table, not each command's decorator, decides: a reading form gets a root that refuses writes.
    from contextfs.cli import Reading, reads_only

    assert reads_only("contextfs evolve cleanup", {"dry_run": True})
    assert not reads_only("contextfs evolve cleanup", {"dry_run": False})
    assert not reads_only("contextfs memory core", {"append_": "x", "replace": None, "rethink": None})
    assert reads_only("contextfs memory core", {"append_": None, "replace": None, "rethink": None})
    assert isinstance(Reading("x"), tuple)
