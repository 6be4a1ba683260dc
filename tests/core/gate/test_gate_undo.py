"""A person's version committed on the undo path passes the same check as on the normal path.

When a change is undone after somebody saved over what it wrote (in this process, or by
recovery after the writer was killed), the version the change had found there — a person's
save, to be committed first — would be in no commit, so it is committed on its own
(:func:`contextfs.changes.recovery.commit_outside`). Like every version a person saved
(sync, the outside versions a change commits first), it passes
:meth:`~contextfs.gate.guard.WriteGuard.check_outside` first: one holding a secret, in its
bytes or its name, is held back — never committed, reported in the log with the kind and
fingerprint (never the value), and what is on disk is left as it is.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import assert_clean, git
from secret_samples import SECRET_KINDS

from contextfs import ContextManager, faults
from contextfs.changes.recovery import commit_outside

GH = SECRET_KINDS["GitHub classic token"](random.Random(11)).payload
FIRST = f"- the person's first save\n- deploy token {GH}\n".encode()
SECOND = b"- the person's second save, over the agent's bytes\n"


def _history(root: Path) -> str:
    return git(root, "log", "--all", "-p", "--format=%an%n%B") + git(
        root, "log", "--all", "--name-only", "--format="
    )


def _not_echoed(text: str) -> None:
    assert not any(GH[i : i + 10] in text for i in range(len(GH) - 9)), text


def _held_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "not committing" in r.getMessage()]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ctx"
    with ContextManager(path, actor="agent:undo", index=False) as ctx:
        ctx.write("memory/facts.md", "- committed\n")
    return path


def test_an_undone_change_holds_back_the_secret_bearing_save_it_found(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    facts = root / "memory" / "facts.md"
    with ContextManager(root, actor="agent:next", index=False) as ctx:
        facts.write_bytes(FIRST)  # a person's save, not committed yet

        def person_saves_then_the_call_fails() -> None:
            facts.write_bytes(SECOND)
            raise RuntimeError("the agent's task failed")

        faults.arm("change.written", person_saves_then_the_call_fails)
        try:
            with caplog.at_level(logging.WARNING), pytest.raises(RuntimeError):
                ctx.write("memory/facts.md", "- the agent's version\n")
        finally:
            faults.disarm()
        assert facts.read_bytes() == SECOND  # what is on disk is left as they saved it
        assert GH not in _history(root)
        held = _held_lines(caplog)
        assert len(held) == 1 and "GitHub token" in held[0] and "fingerprint" in held[0], held
        assert "memory/facts.md" in held[0]
        for record in caplog.records:
            _not_echoed(record.getMessage())
        ctx.sync()  # their next save is committed as theirs, as any save is
    assert git(root, "show", "HEAD:memory/facts.md").encode() == SECOND
    assert git(root, "log", "-1", "--format=%an").strip() == "human"
    assert GH not in _history(root)
    assert_clean(root)


def test_the_version_held_back_stays_in_git_objects(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Held back is not lost: the log names the blob that holds the version."""
    facts = root / "memory" / "facts.md"
    with ContextManager(root, actor="agent:next", index=False) as ctx:
        facts.write_bytes(FIRST)
        with (
            caplog.at_level(logging.WARNING),
            pytest.raises(RuntimeError),
            ctx.transaction("tidy"),
        ):
            ctx.write("memory/facts.md", "- the agent's version\n")
            facts.write_bytes(SECOND)
            raise RuntimeError("the agent's next step failed")
    (line,) = _held_lines(caplog)
    blob = line.rsplit("blob ", 1)[1].split(")")[0]
    assert (
        subprocess.run(
            ["git", "-C", str(root), "cat-file", "-p", blob], capture_output=True, check=True
        ).stdout
        == FIRST
    )
    assert GH not in _history(root)


WRITER = """
import sys
from contextfs import ContextManager
ctx = ContextManager(sys.argv[1], actor="agent:crash", session="s-crash", index=False)
open(sys.argv[1] + "/memory/facts.md", "wb").write(FIRST)
ctx.write("memory/facts.md", "- the agent's version\\n")
"""


def test_recovery_holds_back_the_secret_bearing_save_a_killed_writer_found(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The person saves; an agent's write finds it (to commit first) and is killed after
    writing; the person saves again over the agent's bytes; the next open undoes the dead
    change and holds their first version back instead of committing it."""
    env = {**os.environ, "CONTEXTFS_FAULTS": "change.written=kill"}
    script = WRITER.replace("FIRST", repr(FIRST))
    proc = subprocess.run(
        [sys.executable, "-c", script, str(root)], env=env, capture_output=True, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    facts = root / "memory" / "facts.md"
    facts.write_bytes(SECOND)
    with caplog.at_level(logging.WARNING), ContextManager(root, index=False) as ctx:
        assert ctx.read("memory/facts.md") == SECOND.decode()
    assert facts.read_bytes() == SECOND
    assert GH not in _history(root)
    held = _held_lines(caplog)
    assert len(held) == 1 and "GitHub token" in held[0], held
    for record in caplog.records:
        _not_echoed(record.getMessage())
    assert git(root, "show", "HEAD:memory/facts.md").encode() == SECOND
    assert_clean(root)


def test_a_secret_bearing_name_is_held_back_without_naming_it(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with ContextManager(root, index=False) as ctx:
        git_store = ctx.parts.git
        head = git_store.head()
        blob = git_store.store_blob(b"an ordinary note\n")
        clean = git_store.store_blob(b"another ordinary note\n")
        check = ctx.parts.guard().check_outside
        with caplog.at_level(logging.WARNING):
            held = commit_outside(
                git_store,
                [{f"notes/{GH}.md": blob, "notes/fine.md": clean}],
                "human",
                time.time(),
                check=lambda rel, data: check(rel, data, actor="human"),
            )
        assert list(held) == [f"notes/{GH}.md"]
        _not_echoed(held[f"notes/{GH}.md"])
        for record in caplog.records:
            _not_echoed(record.getMessage())
        assert git_store.head() != head  # the clean version is committed...
    assert git(root, "show", "HEAD:notes/fine.md") == "another ordinary note\n"
    assert GH not in _history(root)  # ...the other one is not
