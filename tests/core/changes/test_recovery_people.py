"""Recovery next to people: a killed writer's leftovers never cost a person their edit or their git.

* Recovery puts back only the paths that still hold what the dead writer left there; a
  path a person saved since (or that the writer never reached) is theirs, and is committed
  as their edit.
* A git lock file is removed only when contextfs can prove it made it (the marker it
  journaled: device, inode and content); a lock held by a live git — a person's
  ``git commit -a`` waiting for its message — is waited for, for a bounded time, and then
  reported by a typed error that names it.
* A rebuild of the search index killed half way leaves nothing behind after the next open.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import assert_clean, git

from contextfs import ContextManager, VersioningError

PERSON = b"- typed by the person after the agent died\n"

WRITER = """
import sys
from contextfs import ContextManager
ctx = ContextManager(sys.argv[1], actor="agent:crash", session="s-crash", index=False)
ctx.write("memory/facts.md", "- the agent's version\\n")
"""


def _prepare(tmp_path: Path) -> Path:
    root = tmp_path / "ctx"
    with ContextManager(root, actor="agent:crash", session="s-crash", index=False) as ctx:
        ctx.write("memory/facts.md", "- committed\n")
    return root


def _kill_writer(root: Path, fault: str, script: str = WRITER) -> None:
    env = {**os.environ, "CONTEXTFS_FAULTS": fault}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(root)], env=env, capture_output=True, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()


def _journals(root: Path) -> list[Path]:
    return sorted((root / ".git" / "contextfs").rglob("journal/*.jsonl"))


@pytest.mark.parametrize(
    "fault",
    ["change.touched", "change.written", "commit.prepared", "commit.ready", "commit.recorded"],
)
def test_recovery_keeps_an_edit_saved_after_the_writer_died(tmp_path: Path, fault: str) -> None:
    root = _prepare(tmp_path)
    _kill_writer(root, fault)
    (root / "memory" / "facts.md").write_bytes(
        PERSON
    )  # the person saves before anything reopens the root
    with ContextManager(root, actor="agent:next", index=False) as ctx:
        assert ctx.read("memory/facts.md") == PERSON.decode()
    authors = git(root, "log", "--format=%an", "--", "memory/facts.md").split()
    assert authors[0] == "human"
    assert git(root, "show", "HEAD:memory/facts.md").encode() == PERSON
    assert _journals(root) == []
    assert_clean(root)


def test_recovery_still_undoes_what_the_dead_writer_left(tmp_path: Path) -> None:
    root = _prepare(tmp_path)
    _kill_writer(root, "change.published")  # the change's file is in place, its commit not made
    assert (root / "memory" / "facts.md").read_text().endswith("- the agent's version\n")
    with ContextManager(root, index=False) as ctx:
        assert ctx.read("memory/facts.md") == "- committed\n"
    assert "human" not in git(root, "log", "--format=%an")
    assert_clean(root)


EDITOR = """#!/bin/sh
: > "$(dirname "$0")/editing"
i=0
while [ ! -e "$(dirname "$0")/release" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
echo "the person's commit" > "$1"
"""

AGENT = """
import logging, sys
from contextfs import ContextManager
from contextfs.versioning import GitStore
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
GitStore.lock_wait = float(sys.argv[2])
ctx = ContextManager(sys.argv[1], actor="agent:next", index=False)
ctx.write("memory/after.md", "- written after the restart\\n")
print("acknowledged", flush=True)
"""


def _person_commits(root: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    """``git commit -a`` whose editor stays open (git holds index.lock) until 'release' exists."""
    tools = tmp_path / "tools"
    tools.mkdir()
    editor = tools / "editor.sh"
    editor.write_text(EDITOR)
    editor.chmod(0o755)
    proc = subprocess.Popen(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "user.name=human",
            "-c",
            "user.email=human@example.invalid",
            "commit",
            "-a",
        ],
        env={**os.environ, "GIT_EDITOR": str(editor)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not (tools / "editing").exists():
        assert proc.poll() is None and time.monotonic() < deadline, (
            proc.stderr.read() if proc.stderr else b""
        )
        time.sleep(0.02)
    assert (root / ".git" / "index.lock").exists()
    return proc


def _wait_for_line(proc: subprocess.Popen[str], needle: str, timeout: float = 30) -> bool:
    """True once the process printed ``needle`` on stderr; False when it exited first."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if needle in line:
            return True
        if not line and proc.poll() is not None:
            return False
    return False


def test_recovery_waits_for_a_live_gits_index_lock(tmp_path: Path) -> None:
    root = _prepare(tmp_path)
    # Killed with its commit journaled 'ready' (git's index and the branch are locked together
    # just after, and a person's git cannot start while they are): recovery must publish it.
    _kill_writer(root, "commit.ready")
    (root / "memory" / "facts.md").write_bytes(PERSON)
    person = _person_commits(root, tmp_path)
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(root), "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert _wait_for_line(agent, "index.lock"), (
            "the restarted agent did not wait for git's index lock"
        )
        assert (
            root / ".git" / "index.lock"
        ).exists()  # never removed while the person's git holds it
        assert agent.poll() is None
    finally:
        (tmp_path / "tools" / "release").touch()
    assert person.wait(timeout=60) == 0, person.stderr.read() if person.stderr else b""
    out, err = agent.communicate(timeout=60)
    assert agent.returncode == 0 and out.strip() == "acknowledged", err
    log = git(root, "log", "--format=%an|%s").splitlines()
    assert "human|the person's commit" in log
    assert log[0] == "agent:next|write: memory/after.md"
    assert not list((root / ".git").rglob("*.lock"))
    assert _journals(root) == []
    assert_clean(root)


def test_a_live_gits_index_lock_held_too_long_is_a_typed_error_naming_it(tmp_path: Path) -> None:
    root = _prepare(tmp_path)
    (root / "memory" / "facts.md").write_bytes(PERSON)
    person = _person_commits(root, tmp_path)
    try:
        agent = subprocess.run(
            [sys.executable, "-c", AGENT, str(root), "0.3"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert agent.returncode == 1
        last = agent.stderr.strip().splitlines()[-1]
        assert "VersioningError" in last and "index.lock" in last and "retry" in last
        assert (root / ".git" / "index.lock").exists()
    finally:
        (tmp_path / "tools" / "release").touch()
    assert person.wait(timeout=60) == 0
    assert git(root, "log", "-1", "--format=%an|%s").strip() == "human|the person's commit"
    assert_clean(root)


def test_a_write_waits_for_the_index_lock_then_names_it(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", index=False)
    ctx.write("a.md", "old")
    ctx.parts.git.lock_wait = 0.2
    lock = ctx.root / ".git" / "index.lock"
    lock.write_text("")  # a git process we cannot tell apart from a live one
    with pytest.raises(VersioningError, match=r"index\.lock"):
        ctx.write("a.md", "new")
    assert lock.exists() and (ctx.root / "a.md").read_text().endswith("old")
    lock.unlink()
    ctx.write("a.md", "new")
    assert ctx.read("a.md") == "new"


# ------------------------------------------------------------------ the search index
REBUILD = """
import sys
from contextfs import ContextManager
ctx = ContextManager(sys.argv[1], index=False)
ctx.index.rebuild()
"""


def test_a_killed_rebuild_leaves_no_half_built_index(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    with ContextManager(root) as ctx:
        for i in range(5):
            ctx.write(f"notes/{i}.md", f"note {i} about webhooks\n")
        state = ctx.parts.state.path
    for _ in range(2):
        _kill_writer(root, "index.filling", REBUILD)
    assert list(state.glob("index.new-*"))  # each killed rebuild left its half-built folder
    with ContextManager(root) as ctx:  # the index is current: opened without its lock
        assert [hit.path for hit in ctx.search("webhooks")]
    assert list(state.glob("index.*-*")) == []
    _kill_writer(root, "index.filling", REBUILD)
    with ContextManager(root, index=False) as ctx:
        assert ctx.index.verify(fix=False).ok
    assert list(state.glob("index.*-*")) == []


def _versions_by(root: Path, rel: str, author: str) -> list[bytes]:
    shas = git(root, "log", f"--author={author}", "--format=%H", "--", rel).split()
    return [
        subprocess.run(
            ["git", "-C", str(root), "show", f"{sha}:{rel}"], capture_output=True, check=False
        ).stdout
        for sha in shas
    ]


def test_a_save_the_dead_writer_found_survives_a_later_save_over_its_bytes(tmp_path: Path) -> None:
    """Person saves V1; an agent's write finds it (to commit first) and dies after writing;
    the person saves V2 over the agent's bytes; both V1 and V2 end in history as the person's."""
    root = _prepare(tmp_path)
    first = b"- the person's first save\n"
    # The agent opened the root before the person saved (a long-lived process).
    _kill_writer(
        root,
        "change.written",
        WRITER.replace(
            "ctx.write(",
            f'open(sys.argv[1] + "/memory/facts.md", "wb").write({first!r})\nctx.write(',
            1,
        ),
    )
    second = (root / "memory" / "facts.md").read_bytes() + b"- the person's second save\n"
    (root / "memory" / "facts.md").write_bytes(second)
    with ContextManager(root, index=False):
        assert (root / "memory" / "facts.md").read_bytes() == second
    saved = _versions_by(root, "memory/facts.md", "human")
    assert first in saved and second in saved
    assert_clean(root)


def test_an_undone_change_commits_the_save_it_found_when_another_save_replaced_its_bytes(
    tmp_path: Path,
) -> None:
    from contextfs import faults

    root = _prepare(tmp_path)
    first, second = b"- first save\n", b"- second save, over the agent's bytes\n"
    with ContextManager(root, actor="agent:next", index=False) as ctx:
        (root / "memory" / "facts.md").write_bytes(first)

        def person_saves_then_the_call_fails() -> None:
            (root / "memory" / "facts.md").write_bytes(second)
            raise RuntimeError("the agent's task failed")

        faults.arm("change.written", person_saves_then_the_call_fails)
        try:
            with pytest.raises(RuntimeError):
                ctx.write("memory/facts.md", "- the agent's version\n")
        finally:
            faults.disarm()
        assert (root / "memory" / "facts.md").read_bytes() == second
        ctx.sync()
    saved = _versions_by(root, "memory/facts.md", "human")
    assert first in saved and second in saved
    assert_clean(root)
