"""Power cuts: every acknowledged write survives the loss of everything not yet flushed.

``powercut_worker.py`` writes, appends, runs a transaction, moves and deletes, under
``strace -f`` (its git subprocesses included). The harness (``powercut.py``) replays the
recorded operations from the tree as it was before, and at every point where the disk's
durable state can change (before each flush, after each acknowledgement) builds the tree
a power cut may leave: the worst case drops every operation no completed flush covers,
others drop a random part of them. Each tree is then opened (recovery runs) and must show

* every acknowledged operation's bytes, committed (``git status`` clean; ``git fsck``
  clean under ``CONTEXTFS_STRESS``) and attributed to the worker (never ``human``);
* the operation in flight done completely or not at all.

A plain kill (no operation lost) and the worst case are checked at every cut point, and
the states in between (a random part of the unflushed operations lost):
``test_recovery_heals_any_mix_of_lost_operations``.

The self-tests run the same workload with one kind of flush turned off (a file, its
folder, the journal, the git objects, the branch) and require the check to fail: the
harness sees each missing flush. It judges by what was flushed, not by how many flush
calls were made.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import TESTS, git
from powercut import Model, Op, crash_states, materialize, ops_of, record, strace_missing
from powercut_worker import ACTOR, PLAN, SESSION

from contextfs import ContextFSError, ContextManager
from contextfs.versioning.locks import boot_time

WORKER = TESTS / "powercut_worker.py"
STRESS = int(os.environ.get("CONTEXTFS_STRESS", "0"))
SEED = {"notes/seed.md": "seed note"}
CAUSES = (AssertionError, ContextFSError, subprocess.CalledProcessError)
#: A crash state is a disk after a power cut: every file on it predates the boot that follows.
_BOOTED = boot_time()
BEFORE_BOOT = None if _BOOTED is None else _BOOTED - 60


@dataclass
class Run:
    before: Model
    ops: list[Op]
    root: Path


def _record(tmp: Path, skip: str | None = None) -> Run:
    missing = strace_missing()
    if missing:
        pytest.fail(f"the power-cut harness needs strace: {missing}")
    root = tmp / "ctx"
    with ContextManager(root, actor=ACTOR, session=SESSION, index=False) as ctx:
        for rel, body in SEED.items():
            ctx.write(rel, body)
    os.sync()  # the starting tree is on disk: the model begins with all of it durable
    before = Model(root)
    log = tmp / "acks.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("CONTEXTFS_FAULTS", "POWERCUT_SKIP")}
    if skip:
        env["POWERCUT_SKIP"] = skip
    done = record([sys.executable, str(WORKER), str(root), str(log)], tmp / "trace.txt", env=env)
    assert done.returncode == 0, done.stderr[-3000:]

    def mark(path: str, data: bytes) -> str | None:
        if path != str(log):
            return None
        entry = json.loads(data)
        return f"ack:{entry['ack']}" if "ack" in entry else f"intent:{entry['intent']}"

    ops = ops_of(tmp / "trace.txt", before, mark=mark)
    assert [op.name for op in ops if op.kind == "mark"] == [
        f"{what}:{i}" for i in range(len(PLAN)) for what in ("intent", "ack")
    ]
    return Run(before, ops, root)


def _cuts(ops: list[Op]) -> list[int]:
    """Every point where what a power cut can leave changes: before each flush completes,
    and right after each acknowledgement."""
    return [i for i, op in enumerate(ops) if op.kind in ("fsync", "syncfs")] + [
        i + 1 for i, op in enumerate(ops) if op.kind == "mark" and op.name.startswith("ack")
    ]


def _progress(ops: list[Op], cut: int) -> tuple[list[int], int | None]:
    """(acknowledged operations, the one in flight) before ``cut``."""
    acked: list[int] = []
    flight: int | None = None
    for op in ops[:cut]:
        if op.kind == "mark":
            what, _, n = op.name.partition(":")
            if what == "intent":
                flight = int(n)
            else:
                acked.append(int(n))
                flight = None
    return acked, flight


def _digest(model: Model) -> str:
    h = hashlib.sha256()
    for number in sorted(model.nodes):
        node = model.nodes[number]
        h.update(repr((number, node.is_dir, sorted(node.entries.items()))).encode())
        h.update(bytes(node.data))
    return h.hexdigest()


def _check_state(dest: Path, acked: list[int], flight: int | None) -> None:
    expected: dict[str, str | None] = dict(SEED)
    for i in acked:
        expected.update(PLAN[i][2])
    touched = set(expected) | {rel for _, _, after in PLAN for rel in after}
    with ContextManager(dest, index=False) as ctx:
        with ctx.parts.write_lock():  # recovery: finish or undo what the cut interrupted
            pass
        bodies = {rel: ctx.read(rel) for rel in touched}
    if flight is not None:
        after = PLAN[flight][2]
        done = all(bodies[rel] == body for rel, body in after.items())
        undone = all(bodies[rel] == expected.get(rel) for rel in after)
        assert done or undone, f"operation {flight} half done: {bodies}"
        if done:
            expected.update(after)
    wrong = {
        rel: (bodies[rel], expected.get(rel)) for rel in touched if bodies[rel] != expected.get(rel)
    }
    assert not wrong, f"acknowledged bytes lost (found, expected): {wrong}"
    status = git(dest, "status", "--porcelain", "--untracked-files=all", "--", ".", ":!.contextfs")
    assert status == "", f"uncommitted after recovery:\n{status}"
    authors = set(git(dest, "log", "--format=%an").split())
    assert authors <= {ACTOR}, f"recorded as someone else: {authors}"
    if STRESS:  # git status above already reads HEAD's commit and tree
        fsck = subprocess.run(
            ["git", "-C", str(dest), "fsck", "--no-progress"], capture_output=True, text=True
        )
        assert fsck.returncode == 0, fsck.stderr


def violations(
    run: Run, *, drops: tuple[float, ...], seed: int = 0, first: bool = False
) -> list[str]:
    """What goes wrong in the crash states of ``run``; [] when every one recovers
    (``first``: stop at the first that does not)."""
    found: list[str] = []
    seen: set[str] = set()
    rng = random.Random(seed)
    n = 0
    for cut in _cuts(run.ops):
        acked, flight = _progress(run.ops, cut)
        for drop in drops:
            model = crash_states(run.before, run.ops, cut, drop=drop, rng=rng)
            key = _digest(model)
            if key in seen:
                continue
            seen.add(key)
            n += 1
            # At the root's own path: the journal names git's lock files by absolute path.
            shutil.rmtree(run.root)
            materialize(model, run.root, mtime=BEFORE_BOOT)
            try:
                _check_state(run.root, acked, flight)
            except CAUSES as exc:
                found.append(
                    f"cut before op {cut} (acked {acked}, in flight {flight}, "
                    f"drop {drop}): {type(exc).__name__}: {exc}"
                )
                if first:
                    return found
    assert n > len(PLAN), "the harness built too few crash states to mean anything"
    return found


def test_acknowledged_writes_survive_every_power_cut(tmp_path: Path) -> None:
    """The worst case (every unflushed operation lost); with CONTEXTFS_STRESS a plain kill
    (none lost) at every cut point too."""
    run = _record(tmp_path)
    assert violations(run, drops=(1.0, 0.0) if STRESS else (1.0,)) == []


def test_recovery_heals_any_mix_of_lost_operations(tmp_path: Path) -> None:
    """States between the two: each unflushed operation lost or kept at random."""
    run = _record(tmp_path)
    assert violations(run, drops=(0.5,) * max(1, STRESS // 20), seed=STRESS, first=True) == []


@pytest.mark.parametrize("skip", ["file", "folder", "journal", "objects", "branch", "syncfs"])
def test_the_harness_sees_a_missing_flush(tmp_path: Path, skip: str) -> None:
    """With one kind of flush turned off, some power cut loses an acknowledged write."""
    run = _record(tmp_path, skip=skip)
    assert violations(run, drops=(1.0,), first=True) != []
