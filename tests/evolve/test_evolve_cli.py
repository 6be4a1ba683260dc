"""``contextfs evolve ...`` on a real root: offline paths, one-line errors, examples in --help."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import SAMPLE, assert_clean

from contextfs import ContextManager
from contextfs.evolve.cli import compact_cmd, demo, evolve


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ctx"
    ctx = ContextManager(r, index=False)
    ctx.write("task/current.md", "# Ship retries\n")
    ctx.write("notes/a.md", "# Notes\n\nRetries use jitter.\n")
    return r


def _run(root: Path, *args: str, ok: bool = True):
    result = CliRunner().invoke(evolve, list(args), obj={"root": str(root)}, catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def test_complete_archive_only_and_refusal_without_model(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONTEXTFS_LLM", raising=False)
    out = _run(
        root, "complete", "--task", "Ship retries", "--result", "done", "--archive-only"
    ).output
    assert "archived task/current.md -> task/history/" in out and "no model configured" in out
    failed = _run(root, "complete", "--task", "T", "--result", "R", "--failed", ok=False)
    assert failed.exit_code == 1
    assert failed.output.startswith("error: ") and "needs a language model" in failed.output
    assert len(failed.output.strip().splitlines()) == 1
    assert_clean(root)


def test_llm_flag_without_langchain_gives_install_hint(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The [llm] extra is installed in the dev environment: hide it as a plain install would.
    monkeypatch.setitem(sys.modules, "langchain", None)
    monkeypatch.setitem(sys.modules, "langchain.chat_models", None)
    out = _run(
        root, "complete", "--task", "T", "--result", "R", "--llm", "openai:gpt-4o-mini", ok=False
    ).output
    assert out.startswith("error: ") and "pip install 'contextfs-git[llm]' langchain-openai" in out
    bad = _run(root, "cleanup", "--llm", "nocolon", ok=False).output
    assert "is not provider:model" in bad


@pytest.mark.skipif(
    importlib.util.find_spec("langchain") is None, reason="the [llm] extra is not installed"
)
@pytest.mark.skipif(
    importlib.util.find_spec("langchain_openai") is not None, reason="langchain-openai is installed"
)
def test_llm_flag_without_the_provider_package_names_it(root: Path) -> None:
    out = _run(
        root, "complete", "--task", "T", "--result", "R", "--llm", "openai:gpt-4o-mini", ok=False
    ).output
    assert out.startswith("error: ") and "pip install langchain-openai" in out
    assert_clean(root)


def test_summarize_cleanup_and_json(root: Path) -> None:
    assert "would summarize notes/a.md" in _run(root, "summarize", "--dry-run").output
    out = _run(root, "summarize").output
    assert "summarized notes/a.md (extractive)" in out
    assert _run(root, "summarize").output.strip() == "every summary is current"
    data = json.loads(_run(root, "cleanup", "--dry-run", "--json").output)
    assert data["dry_run"] is True and data["actions"] == []
    assert (
        ContextManager(root, sync=False, index=False)
        .parts.state.file("cache/access.json")
        .is_file()
    )


def test_compact_reads_a_session_log_and_refuses_without_model(root: Path) -> None:
    ctx = ContextManager(root, index=False)
    lines = "".join(
        json.dumps({"role": "user", "content": f"message {i} about billing"}) + "\n"
        for i in range(30)
    )
    with ctx.provenance(actor="human"):  # a log a person brought in (agents log through memory)
        ctx.write("sessions/s1.jsonl", lines)
    fits = CliRunner().invoke(compact_cmd, ["--session", "s1"], obj={"root": str(root)})
    assert fits.exit_code == 0 and "nothing to compact" in fits.output
    over = CliRunner().invoke(
        compact_cmd, ["--session", "s1", "--budget", "5"], obj={"root": str(root)}
    )
    assert over.exit_code == 1 and "compaction needs a language model" in over.output
    missing = CliRunner().invoke(compact_cmd, ["--session", "nope"], obj={"root": str(root)})
    assert missing.exit_code == 1 and "does not exist" in missing.output


def test_every_command_help_has_an_example() -> None:
    for name in evolve.commands:
        text = CliRunner().invoke(evolve, [name, "--help"]).output
        assert "Example:" in text and f"contextfs evolve {name}" in text, name


def test_demo_turns_a_failed_task_into_a_lesson(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    shutil.copytree(SAMPLE, dest)
    ctx = ContextManager(dest, index=False)
    lines: list[str] = []
    demo(ctx, lines.append)
    text = "\n".join(lines)
    assert "SCRIPTED MODEL" in text and "lesson added" in text and "revert_session" in text
    lessons = (dest / "memory/lessons.md").read_text()
    assert "### L-" in lessons and "backfill in batches" in lessons
    assert "Ignore all previous" not in (dest / "memory/facts.md").read_text()
