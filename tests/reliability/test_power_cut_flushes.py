"""Fewer flushes lose nothing: the power-cut harness on any mix of lost operations.

A change now flushes at most three times (before bytes on disk are replaced, before the
branch moves, after it moved) instead of once per file, journal line, object and folder.
On the same recorded workload as ``test_power_cut.py`` (git's own processes included:
there are none on the write path any more), this checks, at every cut point:

* the flushes each acknowledged operation issued, **counted in the trace**: at most three;
* with each unflushed operation lost or kept at random (the states between a plain kill
  and the worst case), after recovery: every acknowledged operation's bytes are in the
  files and in HEAD, attributed to the worker, git's objects intact; the operation in
  flight left each path it touched holding its old or its new bytes (all old, or all new
  and committed), never a torn or empty file, and git's status clean.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import git
from powercut import crash_states, materialize
from powercut_worker import ACTOR, PLAN
from test_power_cut import (
    BEFORE_BOOT,
    CAUSES,
    SEED,
    STRESS,
    Run,
    _cuts,
    _digest,
    _progress,
    _record,
)

from contextfs import ContextManager


def _flushes_per_operation(run: Run) -> list[int]:
    counts: list[int] = []
    current = 0
    for op in run.ops:
        if op.kind in ("fsync", "syncfs"):
            current += 1
        elif op.kind == "mark" and op.name.startswith("intent:"):
            current = 0
        elif op.kind == "mark" and op.name.startswith("ack:"):
            counts.append(current)
    return counts


def _check(dest: Path, acked: list[int], flight: int | None) -> None:
    expected: dict[str, str | None] = dict(SEED)
    for i in acked:
        expected.update(PLAN[i][2])
    in_flight = PLAN[flight][2] if flight is not None else {}
    touched = set(expected) | {rel for _, _, after in PLAN for rel in after}
    with ContextManager(dest, index=False, sync=False) as ctx:
        with ctx.parts.write_lock():  # recovery: finish or undo what the cut interrupted
            pass
        bodies = {rel: ctx.read(rel) for rel in touched}
    done = flight is not None and all(bodies[rel] == body for rel, body in in_flight.items())
    undone = all(bodies[rel] == expected.get(rel) for rel in in_flight)
    assert done or undone, f"operation {flight} half done: {bodies}"
    for rel in touched:
        allowed = {expected.get(rel)} | ({in_flight[rel]} if done and rel in in_flight else set())
        assert bodies[rel] in allowed, f"{rel} holds {bodies[rel]!r}, expected one of {allowed}"
    committed = dict(expected)
    if done:
        committed.update(in_flight)
    for rel, body in committed.items():
        if rel in in_flight:
            continue
        shown = subprocess.run(["git", "-C", str(dest), "show", f"HEAD:{rel}"], capture_output=True)
        if body is None:
            assert shown.returncode != 0, f"{rel} is still in HEAD"
        else:
            assert shown.returncode == 0 and shown.stdout == (dest / rel).read_bytes(), (
                f"{rel} lost from HEAD"
            )
    status = git(dest, "status", "--porcelain", "--untracked-files=all", "--", ".", ":!.contextfs")
    assert status == "", f"uncommitted after recovery:\n{status}"
    authors = set(git(dest, "log", "--format=%an").split())
    assert authors <= {ACTOR}, f"recorded as someone else: {authors}"
    fsck = subprocess.run(
        ["git", "-C", str(dest), "fsck", "--no-progress", "--no-dangling"],
        capture_output=True,
        text=True,
    )
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_each_acknowledged_operation_flushed_at_most_three_times(tmp_path: Path) -> None:
    run = _record(tmp_path)
    counts = _flushes_per_operation(run)
    assert len(counts) == len(PLAN)
    assert all(1 <= n <= 3 for n in counts), dict(
        zip((kind for kind, _a, _b in PLAN), counts, strict=True)
    )


@pytest.mark.skipif(BEFORE_BOOT is None, reason="needs the boot time (/proc/stat)")
def test_acknowledged_writes_survive_any_mix_of_lost_operations(tmp_path: Path) -> None:
    run = _record(tmp_path)
    rng = random.Random(STRESS)
    seen: set[str] = set()
    found: list[str] = []
    rounds = max(2, STRESS // 10)
    for cut in _cuts(run.ops):
        acked, flight = _progress(run.ops, cut)
        for _ in range(rounds):
            model = crash_states(run.before, run.ops, cut, drop=0.5, rng=rng)
            key = _digest(model)
            if key in seen:
                continue
            seen.add(key)
            shutil.rmtree(run.root)
            materialize(model, run.root, mtime=BEFORE_BOOT)
            try:
                _check(run.root, acked, flight)
            except CAUSES as exc:
                found.append(
                    f"cut before op {cut} (acked {acked}, in flight {flight}): {type(exc).__name__}: {exc}"
                )
    assert len(seen) > len(PLAN)
    assert found == []
    assert os.path.isdir(run.root)
