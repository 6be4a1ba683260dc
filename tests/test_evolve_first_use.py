"""The evolving agent as a newcomer meets it: without a model it names the offline path, any
model your code builds can be passed by name, cleanup says what it would do in words, a dry
run of named files is allowed, and summaries of record logs and of people are sensible."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLE, commit_count
from contextfs import ContextManager
from contextfs.cli import cli
from contextfs.errors import EvolveError
from contextfs.evolve import EvolvingAgent
from contextfs.evolve.llm import resolve_llm
from contextfs.evolve.summaries import record_headings, summarize_all


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CONTEXTFS_LLM", raising=False)
    r = tmp_path / "ctx"
    with ContextManager(r, index=False) as ctx:
        ctx.write("task/current.md", "# Ship retries\n")
    return r


def run(root: Path, *args: str, code: int = 0):
    result = CliRunner().invoke(cli, ["--root", str(root), *args], prog_name="contextfs")
    assert result.exit_code == code, result.output
    return result


def test_without_a_model_the_offline_path_is_named(root: Path) -> None:
    refused = run(root, "evolve", "complete", "--task", "T", "--result", "R", "--failed", code=1).stderr
    assert "needs a language model" in refused and "--archive-only" in refused
    assert "python:MODULE:NAME" in refused and "huggingface:" in refused
    with ContextManager(root, index=False) as ctx, pytest.raises(EvolveError) as info:
        EvolvingAgent(ctx).complete_task_sync("T", "R", success=False)
    assert "agent.archive_task(task, result, success)" in str(info.value) and "--" not in str(info.value)


def test_a_model_your_code_builds_is_passed_by_name(root: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "pkg" / "team_models.py"
    module.parent.mkdir()
    module.write_text(textwrap.dedent('''
        from langchain_core.language_models.fake_chat_models import FakeListChatModel

        scripted = FakeListChatModel(responses=[
            '{"title": "Batch big backfills", "lesson": "Backfill 40M rows in batches of 10k, not one UPDATE."}',
            '{"facts": [{"text": "webhook_delivery holds about 40 million rows.", "same_as": null, "supersedes": null}]}',
        ])
        not_a_model = 42
    '''), "utf-8")
    monkeypatch.syspath_prepend(str(module.parent))
    out = run(root, "evolve", "complete", "--task", "Backfill", "--result", "One UPDATE locked the table",
              "--failed", "--llm", "python:team_models:scripted").output
    assert "lesson added" in out and "fact added" in out
    for spec, words in (("python:team_models:not_a_model", "not a chat model"),
                        ("python:team_models:missing", "has no 'missing'"),
                        ("python:no_such_module_here:x", "cannot import"), ("python:team_models", "python:MODULE:NAME")):
        with pytest.raises(EvolveError, match=words):
            resolve_llm(spec)


def test_cleanup_says_what_it_would_do_in_words(root: Path) -> None:
    assert run(root, "evolve", "cleanup", "--dry-run").output.startswith("nothing to do: no file has gone unread")
    assert "0 action" not in run(root, "evolve", "cleanup", "--dry-run").output


def test_cleanup_dry_run_with_work_counts_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import datetime, timedelta, timezone

    from contextfs.evolve.cleanup import track_access

    t0 = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    monkeypatch.setattr("contextfs.clock.now", lambda: t0)
    with ContextManager(tmp_path / "c", index=False) as ctx:
        ctx.write("project/old.md", "# Old\n")
        track_access(ctx)
    monkeypatch.setattr("contextfs.clock.now", lambda: t0 + timedelta(days=40))
    out = run(tmp_path / "c", "evolve", "cleanup", "--dry-run").output
    assert out.startswith("dry run, nothing written: would archive 1 file (files unread since ")
    assert "  archive project/old.md -> " in out


def test_summarize_named_files_dry_run_writes_nothing(root: Path) -> None:
    before = commit_count(root)
    out = run(root, "evolve", "summarize", "task/current.md", "--dry-run").output
    assert out == "would summarize task/current.md\n" and commit_count(root) == before
    assert run(root, "evolve", "summarize", "nothing.md", "--dry-run", code=1).stderr.startswith("error: ")


def test_all_keeps_a_persons_summary_and_record_logs_are_summarized_by_their_items(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "s")
    with ContextManager(tmp_path / "s", index=False) as ctx:
        own = ctx.get("topics/billing-migration/decisions.md").metadata["abstract"]
        done = {s.path: s for s in summarize_all(ctx, stale_only=False)}
        assert "topics/billing-migration/decisions.md" not in done  # a person wrote its summary
        assert ctx.get("topics/billing-migration/decisions.md").metadata["abstract"] == own
        ctx.update_metadata("topics/billing-migration/decisions.md", {"abstract": None, "overview": None})
        [summary] = summarize_all(ctx, paths=["topics/billing-migration/decisions.md"])
    assert summary.abstract.startswith("Billing migration: decisions: D1: Move billing to Stripe Billing; D2: ")
    assert "text:" not in summary.abstract and "reason:" not in summary.overview


def test_record_headings() -> None:
    log = "# Decisions\n\n## D1: One\n- text: a\n- reason: b\n\n## D2: Two\n- text: c\n"
    assert record_headings(log) == ["D1: One", "D2: Two"]
    assert record_headings("## A\nprose here\n## B\n- x: y\n") == []
    assert record_headings("## Only one\n- x: y\n") == []
