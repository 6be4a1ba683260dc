"""Review mode through real processes: an agent writes, others do not see it, a person approves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import assert_clean, git

AGENT = """
import sys
from contextfs import ContextManager
ctx = ContextManager(sys.argv[1], actor="agent:scout", session="s-review-1", review=True,
                     index=False)
for line in sys.argv[2:]:
    op, _, rest = line.partition(":")
    if op == "append":
        ctx.append("memory/facts.md", rest + "\\n")
    elif op == "edit":
        old, new = rest.split("=>")
        ctx.edit("task/current.md", old, new)
print(ctx.read("memory/facts.md") + ctx.read("task/current.md"), end="")
"""


def run_agent(root: Path, *ops: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", AGENT, str(root), *ops], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def cli(root: Path, *args: str) -> str:
    env = {**os.environ, "CONTEXTFS_ROOT": str(root), "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "contextfs.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def read_as_other_agent(root: Path, path: str) -> str:
    """What another agent's process, not in review mode, reads."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sys; from contextfs import ContextManager;"
                "c = ContextManager(sys.argv[1], actor='agent:other', index=False);"
                "print(c.read(sys.argv[2]), end='')"
            ),
            str(root),
            path,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_an_agent_in_review_mode_waits_for_a_person(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    cli(root, "init")
    cli_input = subprocess.run(
        [sys.executable, "-m", "contextfs.cli", "write", "memory/facts.md"],
        input="- Database: PostgreSQL 16\n- Queue: RabbitMQ\n- Cache: Redis 7\n",
        env={**os.environ, "CONTEXTFS_ROOT": str(root)},
        capture_output=True,
        text=True,
    )
    assert cli_input.returncode == 0, cli_input.stderr
    task = subprocess.run(
        [sys.executable, "-m", "contextfs.cli", "write", "task/current.md"],
        input="# Move the queue\n\n- Queue: RabbitMQ\n- Owner: Dana\n",
        env={**os.environ, "CONTEXTFS_ROOT": str(root)},
        capture_output=True,
        text=True,
    )
    assert task.returncode == 0, task.stderr

    seen = run_agent(root, "append:- Search: OpenSearch 2", "edit:- Queue: RabbitMQ=>- Queue: SQS")
    assert "OpenSearch" in seen and "SQS" in seen  # the agent reads its own writes

    # Nobody else sees them: the person's CLI, and another agent's process without review.
    assert "OpenSearch" not in cli(root, "read", "memory/facts.md")
    other = read_as_other_agent(root, "task/current.md")
    assert "SQS" not in other and "RabbitMQ" in other
    assert_clean(root)

    (pending,) = json.loads(cli(root, "sessions", "--pending", "--json"))
    assert (
        pending["id"] == "s-review-1"
        and pending["agents"] == ["agent:scout"]
        and pending["pending"] == 2
    )

    # Meanwhile a person changes the same line on the main branch.
    cli(root, "edit", "--", "task/current.md", "Queue: RabbitMQ", "Queue: RabbitMQ 3.13")
    out = cli(root, "sessions", "approve", "s-review-1")
    assert "approved s-review-1" in out and "conflict" in out

    current = cli(root, "read", "task/current.md")
    copies = [p for p in cli(root, "ls", "task").split() if ".conflict-" in p]
    assert len(copies) == 1
    copy = cli(root, "read", copies[0])
    # Not a line lost: the person's line stays in place, the agent's version beside it.
    assert "RabbitMQ 3.13" in current and "SQS" in copy and "<<<<<<<" not in current + copy
    assert "OpenSearch 2" in cli(root, "read", "memory/facts.md")  # the rest merged

    # Another process now sees what was approved, with the right authors.
    assert "OpenSearch" in read_as_other_agent(root, "memory/facts.md")
    assert "SQS" in read_as_other_agent(root, copies[0])
    log = git(root, "log", "--format=%an|%s", "-6")
    assert "human|approve: session s-review-1" in log.splitlines()[0]
    assert (
        "agent:scout|append: memory/facts.md" in log and "agent:scout|edit: task/current.md" in log
    )
    assert cli(root, "sessions", "--json").count("s-review-1") == 1
    (approved,) = [
        s for s in json.loads(cli(root, "sessions", "--json")) if s["id"] == "s-review-1"
    ]
    assert approved["status"] == "approved" and approved["approved_by"] == "human"
    assert_clean(root)
