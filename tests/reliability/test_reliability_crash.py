"""Crash consistency: kill a writer anywhere and nothing acknowledged is lost.

A child process (``crash_worker.py``) writes, appends, moves, deletes, restores and runs
transactions and index rebuilds, logging each operation's plan before it starts and an
acknowledgement after it returns. It is killed with SIGKILL, either at a named fault
point (``contextfs.faults``) or at a random moment. Reopening the root must then show:

* every acknowledged operation's bytes in the tree, and in history with its true author
  and session (never ``human``);
* the operation in flight either completely done or not at all (transactions included);
* no torn file, no residue (temporary files, journals, git locks, half-built indexes),
  ``git status`` clean and ``git fsck`` clean, the search index matching the files;
* recovery run twice converges (the second open changes nothing).

``make test`` runs one kill per fault point plus a few random kills; ``make stress``
sets ``CONTEXTFS_STRESS`` and runs thousands.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from helpers import TESTS, git

from contextfs import ContextManager, VersioningError
from contextfs.faults import POINTS
from contextfs.versioning import GitStore

WORKER = TESTS / "crash_worker.py"
STRESS = int(os.environ.get("CONTEXTFS_STRESS", "0"))


def _spawn(
    root: Path,
    log: Path,
    seed: int,
    count: int,
    fault: str | None = None,
    trace: Path | None = None,
) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop("CONTEXTFS_FAULTS", None)
    env.pop("CONTEXTFS_FAULTS_TRACE", None)
    if fault:
        env["CONTEXTFS_FAULTS"] = fault
    if trace:
        env["CONTEXTFS_FAULTS_TRACE"] = str(trace)
    return subprocess.Popen(
        [sys.executable, str(WORKER), str(root), str(log), str(seed), str(count)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _read_log(log: Path) -> tuple[dict[str, str | None], dict | None, set[str]]:
    """(expected bytes per path after the acknowledged ops, the op in flight, touched paths)."""
    expected: dict[str, str | None] = {}
    pending: dict | None = None
    touched: set[str] = set()
    for line in log.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the last line can be torn by the kill
        if "intent" in entry:
            pending = entry
            touched |= set(entry["plan"])
        elif "ack" in entry:
            expected.update(entry["plan"])
            pending = None
        elif "refused" in entry:
            pending = None
    return expected, pending, touched


def _residue(root: Path, state: Path) -> list[str]:
    # contextfs's own lock files (flock, released by the kernel when a holder dies) stay.
    found = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if (
            p.name.endswith(".cfs-tmp")
            or p.name.endswith(".lock")
            or p.name.startswith(("tmp_obj_", "cfs-lock-"))
        )
        and not p.is_relative_to(state)
    ]
    found += [p.name for p in state.glob("index.*-*")]
    found += [p.name for p in (state / "journal").glob("*")] if (state / "journal").exists() else []
    return found


def _check(root: Path, log: Path) -> None:
    expected, pending, touched = _read_log(log)
    with ContextManager(root) as ctx:
        state = ctx.parts.state.path
        head = ctx.parts.git.head()
        bodies = {rel: ctx.read(rel) for rel in touched}
        # The operation in flight: all of it or none of it.
        if pending is not None:
            after = {rel: body for rel, body in pending["plan"].items()}
            done = all(bodies.get(rel) == body for rel, body in after.items())
            undone = all(bodies.get(rel) == expected.get(rel) for rel in after)
            assert done or undone, (pending, {rel: bodies.get(rel) for rel in after})
            if done:
                expected.update(after)
            # Later rounds continue from what recovery decided.
            with open(log, "a") as fh:
                fh.write(
                    json.dumps(
                        {"ack": pending["intent"], "kind": pending["kind"], "plan": after}
                        if done
                        else {"refused": pending["intent"], "error": "rolled back"}
                    )
                    + "\n"
                )
        for rel in touched:
            assert bodies[rel] == expected.get(rel), rel
        for rel in ctx.list("n"):
            doc = ctx.get(rel)  # parses: no torn file
            assert doc.metadata.get("author") == "agent:crash", rel
        report = ctx.index.verify(fix=False)
        assert report.ok, report.to_dict()
    authors = set(git(root, "log", "--format=%an").split())
    assert authors <= {"agent:crash", "agent"}, (
        authors
    )  # never 'human': nothing recovered as an edit
    sessions = [
        s
        for s in git(root, "log", "--format=%(trailers:key=Contextfs-Session,valueonly)").split()
        if s
    ]
    assert set(sessions) <= {"s-crash"}, set(sessions)
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    fsck = subprocess.run(
        ["git", "-C", str(root), "fsck", "--strict", "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert fsck.returncode == 0 and "error" not in fsck.stderr.lower(), fsck.stderr
    assert _residue(root, state) == []
    # A second recovery finds nothing left to do.
    with ContextManager(root) as again:
        assert again.parts.git.head() == head
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""


def _prepare(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ctx"
    log = tmp_path / "log.jsonl"
    with ContextManager(root, actor="agent:crash", session="s-crash") as ctx:
        ctx.write("n/00.md", "first note")
    log.write_text(
        json.dumps({"ack": -1, "kind": "write", "plan": {"n/00.md": "first note"}}) + "\n"
    )
    return root, log


_FAULTS = [f"{point}@{nth}=kill" for point in POINTS for nth in (1, 3)]


def _seed(fault: str) -> int:
    """The worker's seed for a fault: the same in every run and on every machine
    (``hash()`` of a string changes with each process), so a failure can be replayed."""
    return zlib.crc32(fault.encode()) % 1000


@pytest.mark.parametrize("fault", _FAULTS)
def test_kill_at_every_fault_point(tmp_path: Path, fault: str) -> None:
    root, log = _prepare(tmp_path)
    trace = tmp_path / "faults.trace"
    seed = _seed(fault)
    print(f"fault {fault}: worker seed {seed}")
    # Enough operations that every point is passed three times (a reindex is one draw in
    # eight); the child dies at the fault, so the count costs nothing after it.
    proc = _spawn(root, log, seed=seed, count=200, fault=fault, trace=trace)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, (
        f"seed {seed}: the worker was to die at {fault} but exited with {proc.returncode}: "
        f"{err.decode(errors='replace')[-2000:]}"
    )
    assert trace.read_text().splitlines() == [fault], f"seed {seed}: fired {trace.read_text()!r}"
    _check(root, log)


def test_kill_while_git_holds_the_index_and_the_branch(tmp_path: Path) -> None:
    """A lock contextfs made (the branch's, marked) is reclaimed; one it cannot prove is its own is not.

    A writer killed holding the branch's lock: the next open removes it (its journal's mark
    proves it is contextfs's) and finishes the change. A writer killed while an
    ``index.lock`` was there (as a git killed together with it would leave one): nothing
    proves whose it is, so the next write waits for it, then fails with a typed error
    naming it and changes nothing; once a person removes it, the change is finished.
    """
    root, log = _prepare(tmp_path)
    for point in ("publish.locked", "record.locked"):
        script = (
            "import os, signal, sys\n"
            "from contextfs import ContextManager, faults\n"
            "ctx = ContextManager(sys.argv[1], actor='agent:crash', session='s-crash')\n"
            "def die():\n"
            "    if sys.argv[2] == 'record.locked':\n"
            "        open(os.path.join(sys.argv[1], '.git', 'index.lock'), 'w').close()\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "faults.arm(sys.argv[2], die)\n"
            "ctx.write('n/locked.md', 'never acknowledged ' + sys.argv[2])\n"
        )
        proc = subprocess.run(
            [sys.executable, "-c", script, str(root), point], capture_output=True, check=False
        )
        assert proc.returncode == -signal.SIGKILL
        index_lock = root / ".git" / "index.lock"
        if point == "record.locked":
            head = git(root, "rev-parse", "HEAD")
            GitStore.lock_wait, saved = 0.2, GitStore.lock_wait
            try:
                with pytest.raises(VersioningError, match="index.lock"):
                    ContextManager(root, actor="agent:crash", session="s-crash")
            finally:
                GitStore.lock_wait = saved
            assert index_lock.exists() and git(root, "rev-parse", "HEAD") == head
            index_lock.unlink()  # the person, once sure no git is running
        with ContextManager(root, actor="agent:crash", session="s-crash") as ctx:
            body = f"written after the kill at {point}"
            ctx.write("n/after.md", body)
            locked = f"never acknowledged {point}"
            assert ctx.read("n/locked.md") == locked  # rolled forward: it was ready
        with open(log, "a") as fh:
            fh.write(
                json.dumps(
                    {"ack": 0, "kind": "write", "plan": {"n/locked.md": locked, "n/after.md": body}}
                )
                + "\n"
            )
    _check(root, log)


@pytest.mark.parametrize("seed", range(max(3, STRESS)))
def test_random_kills(tmp_path: Path, seed: int) -> None:
    root, log = _prepare(tmp_path)
    rng = random.Random(seed)
    for _round in range(3 if not STRESS else 6):
        proc = _spawn(root, log, seed=rng.randrange(1 << 30), count=200)
        time.sleep(rng.uniform(0.4, 2.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        _check(root, log)
