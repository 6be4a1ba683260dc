"""A fleet of machines writing and syncing through one remote, and its oracle.

Shared by ``tests/reliability/test_sync_fleet.py`` (short runs in ``make test``, long ones under
``CONTEXTFS_STRESS``) and ``tests/benchmarks/bench_sync.py`` (the figures).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from sync_support import (
    bare_remote,
    committed_markers,
    first_machine,
    fsck,
    join_machine,
    run_git,
    tree_of,
)

from contextfs import ContextManager

WORKER = Path(__file__).with_name("sync_worker.py")


@dataclass
class Fleet:
    remote: Path
    url: str
    roots: list[Path]
    logs: list[Path] = field(default_factory=list)


def make_fleet(base: Path, n: int, *, url: str | None = None, remote: Path | None = None) -> Fleet:
    """A remote with a seeded root and ``n`` clones of it."""
    remote = remote or bare_remote(base / "remote.git")
    url = url or remote.as_uri()
    seed = first_machine(base / "seed", url, "seed")
    seed.write("project/shared.md", "# Shared notes\n\n")
    seed.write("memory/facts.md", "# Facts\n\n")
    for k in range(4):
        seed.write(f"task/t{k}.md", f"# Task {k}\n\n")
    seed.remote.sync()
    seed.close()
    roots = []
    for i in range(n):
        root = base / f"m{i:02d}"
        join_machine(root, url, f"m{i:02d}").close()
        roots.append(root)
    return Fleet(remote, url, roots)


def run_fleet(
    fleet: Fleet, ops: int, every: int, *, seed: int = 0
) -> list[subprocess.Popen[bytes]]:
    """Start one worker process per machine; the caller waits for them."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(WORKER.parent), os.environ.get("PYTHONPATH", "")]),
    }
    procs = []
    fleet.logs = []
    for i, root in enumerate(fleet.roots):
        log = root.parent / f"{root.name}.log"
        fleet.logs.append(log)
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    str(WORKER),
                    str(root),
                    str(log),
                    str(seed * 1000 + i),
                    str(ops),
                    str(every),
                ],
                env=env,
                stderr=subprocess.PIPE,
            )
        )
    return procs


def records(fleet: Fleet) -> list[dict[str, object]]:
    out = []
    for log in fleet.logs:
        if log.exists():
            out += [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return out


def settle(fleet: Fleet, rounds: int = 4) -> None:
    """Sync every machine until a whole round changes nothing (the final sync round)."""
    for _ in range(rounds):
        heads = []
        for root in fleet.roots:
            with ContextManager(root, index=False) as ctx:
                ctx.remote.sync()
                heads.append(ctx.parts.git.head())
        tip = run_git("--git-dir", str(fleet.remote), "rev-parse", "refs/heads/master").strip()
        if all(h == tip for h in heads):
            return
    raise AssertionError("the fleet did not settle")


def check_oracle(fleet: Fleet) -> dict[str, int]:
    """The fleet's invariants; returns counts for the report."""
    tip = run_git("--git-dir", str(fleet.remote), "rev-parse", "refs/heads/master").strip()
    trees = {tree_of(root) for root in fleet.roots}
    remote_tree = run_git(
        "--git-dir", str(fleet.remote), "rev-parse", "refs/heads/master^{tree}"
    ).strip()
    assert trees == {remote_tree}, "every clone holds the remote's tree"
    reachable = set(run_git("--git-dir", str(fleet.remote), "rev-list", tip).split())
    acked = [
        r for r in records(fleet) if r.get("op") in ("shared", "own", "facts", "task", "delete")
    ]
    lost = [r for r in acked if r["commit"] not in reachable]
    assert lost == [], f"acknowledged writes not reachable from the remote: {lost[:3]}"
    root = fleet.roots[0]
    facts = (root / "memory" / "facts.md").read_text()
    missing = [
        r["token"] for r in acked if r["op"] == "facts" and f"fact {r['token']}" not in facts
    ]
    assert missing == [], f"lines of the append-only facts file lost: {missing[:5]}"
    shared_texts = [p.read_text() for p in (root / "project").glob("shared*.md")]
    gone = [
        r["token"]
        for r in acked
        if r["op"] == "shared" and not any(r["token"] in t for t in shared_texts)
    ]
    assert gone == [], f"shared-note lines in neither the note nor a conflict copy: {gone[:5]}"
    latest: dict[str, dict[str, object]] = {}
    for r in acked:
        if r["op"] == "own" and (
            r["path"] not in latest or float(r["t"]) > float(latest[r["path"]]["t"])
        ):
            latest[str(r["path"])] = r
    own = [r for path, r in latest.items() if str(r["token"]) not in (root / path).read_text()]
    assert own == [], own[:3]
    for machine in fleet.roots:
        assert committed_markers(machine) == []
        fsck(machine)
        assert run_git("-C", str(machine), "status", "--porcelain") == ""
    run_git("--git-dir", str(fleet.remote), "fsck", "--strict", "--no-progress")
    return {
        "acknowledged": len(acked),
        "facts": sum(1 for r in acked if r["op"] == "facts"),
        "copies": len(list((root / "project").glob("shared.conflict-*.md"))),
    }
