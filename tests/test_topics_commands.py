"""Topics from the command line as a newcomer uses them: recording exchanges and splitting
them off, switching to the topic already active, and where-are-we sections that a typo
cannot create."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import commit_count
from contextfs import ContextManager, TopicError
from contextfs.cli import cli
from contextfs.scopes.topics import Topics


@pytest.fixture
def run(tmp_path: Path):
    root = tmp_path / "ctx"

    def invoke(*args: str, code: int = 0):
        result = CliRunner().invoke(cli, ["--root", str(root), *args], prog_name="contextfs")
        assert result.exit_code == code, result.output
        return result

    invoke.root = root  # type: ignore[attr-defined]
    invoke("topic", "new", "GPU cluster", "--description", "The lab's GPU nodes; relevant when jobs fail")
    return invoke


def test_switching_to_the_active_topic_commits_nothing(run) -> None:
    run("topic", "switch", "gpu-cluster")
    before = commit_count(run.root)
    view = run("topic", "switch", "gpu-cluster").output
    assert "GPU cluster" in view and commit_count(run.root) == before
    with ContextManager(run.root) as ctx:
        assert Topics(ctx).switch("gpu-cluster").tokens > 0 and commit_count(run.root) == before


def test_exchanges_are_recorded_listed_and_split_off_from_the_cli(run) -> None:
    assert "no active topic" in run("topic", "record", "hi", "hello", code=1).stderr
    run("topic", "switch", "gpu-cluster")
    out = run("topic", "record", "Why did the job fail?", "The driver is too old").output
    assert out.startswith("recorded exchange 1 in gpu-cluster")
    run("topic", "record", "How do we upgrade it?", "Roll out driver 550 node by node")
    run("topic", "record", "--topic", "gpu-cluster", "Which nodes first?", "The two idle ones")
    listing = run("topic", "exchanges", "gpu-cluster").output
    assert listing.startswith("1. [") and "\n2. [" in listing and "\n3. [" in listing
    assert "user: How do we upgrade it?" in listing
    spawned = run("topic", "spawn", "Driver upgrade", "--from-line", "2").output
    assert spawned.startswith("spawned driver-upgrade: moved 2 exchange(s)")
    assert run("topic", "exchanges", "gpu-cluster").output.count("user:") == 1


def test_a_mistyped_section_is_refused_with_the_close_name(run) -> None:
    refused = run("topic", "state", "gpu-cluster", "append", "In Progres", "Fix proration", code=1).stderr
    assert "there is no section 'In Progres'; did you mean 'In Progress'?" in refused
    assert refused.strip().endswith("to start a new section, add --new-section")
    assert "In Progres\n" not in (run.root / "topics" / "gpu-cluster" / "where-are-we.md").read_text("utf-8")
    run("topic", "state", "gpu-cluster", "append", "in-progress", "Fix proration")  # case and dashes aside
    run("topic", "state", "gpu-cluster", "append", "Blockers", "Waiting on ops", "--new-section")
    run("topic", "state", "gpu-cluster", "append", "blockers", "And on the vendor")  # now it exists
    shown = run("topic", "show", "gpu-cluster", "--section", "Blockers").output
    assert shown == "- Waiting on ops\n- And on the vendor\n"


def test_the_python_call_has_the_same_rule(tmp_path: Path) -> None:
    with ContextManager(tmp_path / "ctx") as ctx:
        topics = Topics(ctx)
        topics.create("Billing", "Invoices; relevant when invoices come up", name="billing")
        with pytest.raises(TopicError, match="pass new_section=True"):
            topics.where.append("billing", "Risks", "Proration rounding")
        topics.where.append("billing", "Risks", "Proration rounding", new_section=True)
        assert topics.where.state("billing").section("Risks") == ["- Proration rounding"]


def test_the_demo_says_what_its_isolation_check_shows(tmp_path: Path) -> None:
    from contextfs.scopes.cli_topics import demo

    lines: list[str] = []
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        demo(ctx, lines.append)
    assert "boot context holds its own fact ('gate B') and not the other topic's ('channel 149')" in lines[0]
    assert lines[1].endswith("holds its own fact ('channel 149') and not the other topic's ('gate B')")
    assert not any("True" in line or "False" in line for line in lines)
