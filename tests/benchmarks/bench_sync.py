"""Benchmark: sharing a context through one git remote.

    python tests/benchmarks/bench_sync.py [--quick]

1. **A fleet** of N machines (clones), each an agent process writing and syncing every
   3 operations (appends to a shared note, files of its own, appends to one facts file,
   deletes against edits of shared task files), N = 2, 4, 8, 16: writes per second,
   rejected pushes, sync latency p50/p95, and the fleet oracle after a final sync round.
2. **Sync against plain git**, same run: two machines write 5 files each and sync in
   turn, 15 rounds; contextfs's ``sync`` against ``git fetch && git merge && git push`` on
   a twin pair doing the same writes. Goal: at most 1.5x.
3. **The index after a pull**: a 10,000-note root pulls k changed files; its next search
   (which indexes what the pull changed) against a full rebuild. Goal: proportional to k.
4. **A machine joining**: ``git clone`` of a 10,000-note context, then the first search and
   the first scoped view; the time beyond the clone.

The machine may be shared: compare the ratios, which come from the same run.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fleet helpers live in tests/

from fleet import check_oracle, make_fleet, records, run_fleet, settle  # noqa: E402
from sync_support import bare_remote, first_machine, join_machine, run_git  # noqa: E402

from contextfs import ContextManager  # noqa: E402

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# ---------------------------------------------------------------- 1. the fleet
def fleet_rows(base: Path, sizes: list[int], ops: int) -> list[str]:
    rows = [
        "| N | ops per machine | acknowledged writes | wall s | writes/s | syncs | rejected pushes | "
        "sync p50 ms | sync p95 ms | conflict copies | oracle |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for n in sizes:
        fleet = make_fleet(base / f"fleet{n}", n)
        started = time.perf_counter()
        procs = run_fleet(fleet, ops=ops, every=3, seed=n)
        for proc in procs:
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(err.decode()[-2000:])
        wall = time.perf_counter() - started
        settle(fleet)
        counts = check_oracle(fleet)
        logged = records(fleet)
        syncs = [r for r in logged if r["op"] in ("sync", "sync-failed")]
        latency = [float(r["latency"]) * 1000 for r in syncs]
        rejected = sum(int(r.get("rejected", 0)) for r in syncs)
        rows.append(
            f"| {n} | {ops} | {counts['acknowledged']} | {wall:.1f} | {counts['acknowledged'] / wall:.1f} | "
            f"{len(syncs)} | {rejected} | {pct(latency, 0.5):.0f} | {pct(latency, 0.95):.0f} | "
            f"{counts['copies']} | ok |"
        )
        print(f"  (N={n} done in {wall:.0f} s)", flush=True)
    return rows


# ---------------------------------------------------------------- 2. against plain git
def plain_git_sync(root: Path) -> None:
    for args in (
        ("fetch", "-q", "origin"),
        ("merge", "-q", "--no-edit", "origin/master"),
        ("push", "-q", "origin", "HEAD:master"),
    ):
        subprocess.run(["git", "-C", str(root), *args], env=ENV, check=True, capture_output=True)


def against_git(base: Path, rounds: int, files: int) -> tuple[float, float]:
    ours_remote = bare_remote(base / "c.git")
    theirs_remote = bare_remote(base / "g.git")
    a = first_machine(base / "ca", ours_remote.as_uri(), "ca")
    a.write("seed.md", "seed\n")
    a.remote.sync()
    b = join_machine(base / "cb", ours_remote.as_uri(), "cb")
    ga, gb = base / "ga", base / "gb"
    run_git("init", "-q", "-b", "main", str(ga))
    run_git("-C", str(ga), "remote", "add", "origin", theirs_remote.as_uri())
    (ga / "seed.md").write_text("seed\n")
    subprocess.run(["git", "-C", str(ga), "add", "-A"], env=ENV, check=True)
    subprocess.run(["git", "-C", str(ga), "commit", "-qm", "seed"], env=ENV, check=True)
    subprocess.run(
        ["git", "-C", str(ga), "push", "-q", "origin", "HEAD:master"], env=ENV, check=True
    )
    run_git("clone", "-q", theirs_remote.as_uri(), str(gb))
    ours: list[float] = []
    plain: list[float] = []
    for r in range(rounds):
        for name, ctx, groot in (("a", a, ga), ("b", b, gb)):
            for i in range(files):
                text = f"# {name} {r} {i}\n\nA note written in round {r}.\n"
                ctx.write(f"notes/{name}-{r}-{i}.md", text)
                (groot / "notes").mkdir(exist_ok=True)
                (groot / "notes" / f"{name}-{r}-{i}.md").write_text(text)
            subprocess.run(["git", "-C", str(groot), "add", "-A"], env=ENV, check=True)
            subprocess.run(
                ["git", "-C", str(groot), "commit", "-qm", f"{name} {r}"], env=ENV, check=True
            )
        for ctx, groot in ((a, ga), (b, gb), (a, ga)):
            started = time.perf_counter()
            ctx.remote.sync()
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            plain_git_sync(groot)
            plain.append(time.perf_counter() - started)
    return statistics.median(ours) * 1000, statistics.median(plain) * 1000


# ---------------------------------------------------------------- 3 and 4. a large context
def large_context(base: Path, notes: int) -> tuple[Path, ContextManager]:
    remote = bare_remote(base / "big.git")
    root = base / "big"
    run_git("init", "-q", "-b", "main", str(root))
    for i in range(notes):
        full = root / f"area{i // 1000:02d}" / f"topic{(i // 50) % 20:02d}" / f"note{i:05d}.md"
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(
            f"---\ntitle: Note {i}\n---\n# Note {i}\n\nRemembered fact number {i} about "
            f"service{i % 97} and region{i % 13}.\n"
        )
    run_git("-C", str(root), "remote", "add", "origin", remote.as_uri())
    ctx = ContextManager(root, index=False, durable=False)
    ctx.remote.sync()
    return remote, ctx


def index_after_pull(
    base: Path, remote: Path, writer: ContextManager, ks: list[int]
) -> list[tuple[int, float]]:
    reader = join_machine(base / "reader", remote.as_uri(), "reader")
    reader.search("fact")  # the full build, once
    out = []
    for k in ks:
        with writer.transaction(f"change {k}"):
            for i in range(k):
                writer.append(
                    f"area00/topic{i % 20:02d}/note{i:05d}.md", f"\nUpdated with marker{k}x{i}.\n"
                )
        writer.remote.sync()
        reader.remote.sync()
        started = time.perf_counter()
        hits = reader.search(f"marker{k}x0")
        out.append((k, time.perf_counter() - started))
        assert hits, "the pulled change is searchable"
    started = time.perf_counter()
    reader.index.rebuild()
    out.append((-1, time.perf_counter() - started))
    return out


def joining(base: Path, remote: Path) -> tuple[float, float, float]:
    from contextfs.scopes import ScopedContext

    started = time.perf_counter()
    run_git("clone", "-q", remote.as_uri(), str(base / "joiner"))
    clone = time.perf_counter() - started
    started = time.perf_counter()
    ctx = ContextManager(base / "joiner", index=False)
    hits = ctx.search("service7 region3")
    search = time.perf_counter() - started
    assert hits
    started = time.perf_counter()
    view = ScopedContext(ctx, budget=2000).assemble("task")
    first_view = time.perf_counter() - started
    assert view.tokens <= 2000
    return clone, search, first_view


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="N = 2, 4; fewer operations; 1,000 notes"
    )
    args = parser.parse_args()
    sizes = [2, 4] if args.quick else [2, 4, 8, 16]
    notes = 1_000 if args.quick else 10_000
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores (may be shared), Python "
        f"{platform.python_version()}, {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}\n"
    )
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        base = Path(tmp)
        print("### 1. A fleet writing and syncing through one remote\n")
        rows = fleet_rows(base, sizes, ops=12 if args.quick else 30)
        print("\n" + "\n".join(rows))
        print("\n### 2. One sync against plain git fetch, merge and push (same run)\n")
        ours, plain = against_git(base, rounds=5 if args.quick else 15, files=5)
        ratio = ours / plain
        print(
            "| contextfs sync (median ms) | git fetch + merge + push (median ms) | ratio | goal |"
        )
        print("|---:|---:|---:|---|")
        print(
            f"| {ours:.0f} | {plain:.0f} | {ratio:.2f}x | <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'} |"
        )
        print(f"\n### 3. The search index after a pull ({notes:,} notes)\n")
        remote, writer = large_context(base, notes)
        timings = index_after_pull(base, remote, writer, [10, 100])
        rebuild = timings[-1][1]
        print(
            "| files changed by the pull | first search after the pull (ms) | full rebuild (ms) | share of a rebuild |"
        )
        print("|---:|---:|---:|---:|")
        for k, seconds in timings[:-1]:
            print(
                f"| {k} | {seconds * 1000:.0f} | {rebuild * 1000:.0f} | {seconds / rebuild:.1%} |"
            )
        per10, per100 = timings[0][1], timings[1][1]
        print(
            f"\ngoal (proportional to the changed files): 100 files cost {per100 / per10:.1f}x 10 files; "
            f"{'met' if per100 < rebuild / 2 and per10 < per100 else 'NOT met'}"
        )
        print(f"\n### 4. A machine joining a {notes:,}-note context\n")
        clone, search, first_view = joining(base, remote)
        print(
            "| git clone (s) | open + first search (s) | first scoped view (s) | beyond the clone (s) |"
        )
        print("|---:|---:|---:|---:|")
        print(f"| {clone:.2f} | {search:.2f} | {first_view:.2f} | {search + first_view:.2f} |")


if __name__ == "__main__":
    main()
