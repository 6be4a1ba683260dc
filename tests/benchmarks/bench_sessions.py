"""Benchmark: listing sessions on a long history, against git reading the same history.

    python tests/benchmarks/bench_sessions.py [--quick]

A root with N commits (10,000; 2,000 with --quick) in 500 sessions, written with
``git fast-import`` (each commit as contextfs makes them: one file, ``Contextfs-*``
trailers), then:

1. the first ``Sessions(ctx).list()`` (every commit read once and cached) against
   ``git log --numstat`` of the same history, the least any listing with line counts must
   read. Goal: at most 1.5x.
2. a listing after one more commit (the cache answers, git reads the new commit and the
   commits since the last listing's head) against the first listing. Goal: at most 0.5x.
3. ``Sessions(ctx).get(id)`` and ``changes(id)`` of one session on that history.

Prints a markdown table (median of runs) with the machine it ran on.
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
from collections.abc import Callable
from pathlib import Path

from contextfs import ContextManager
from contextfs.review.sessions import Sessions

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def history(root: Path, commits: int, sessions: int) -> None:
    """``commits`` commits of contextfs's shape, made by git fast-import in one go."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=ENV)
    lines: list[bytes] = []
    start = 1_780_000_000
    for n in range(commits):
        session = f"s-bench-{n * sessions // commits:04d}"
        actor = f"agent:a{n % 7}"
        front = f"---\nauthor: {actor}\nsession: {session}\n---\n"
        body = f"{front}# Note {n % 800}\n\n- fact {n}\n".encode()
        rel = f"memory/area{n % 40:02d}/note{n % 800:04d}.md"
        message = (
            f"write: {rel}\n\n- write: {rel}\n\nContextfs-Op: write\n"
            f"Contextfs-Session: {session}\nContextfs-Turn: {n % 13}\n"
        ).encode()
        who = (
            f"{actor} <{actor.replace(':', '-')}@contextfs.invalid> {start + n * 60} +0000".encode()
        )
        lines += [
            b"commit refs/heads/main",
            b"mark :%d" % (n + 1),
            b"author " + who,
            b"committer " + who,
            b"data %d" % len(message),
            message,
        ]
        if n:
            lines.append(b"from :%d" % n)
        lines += [b"M 100644 inline " + rel.encode(), b"data %d" % len(body), body, b""]
    subprocess.run(
        ["git", "-C", str(root), "fast-import", "--quiet"],
        input=b"\n".join(lines) + b"\n",
        check=True,
        env=ENV,
    )
    subprocess.run(["git", "-C", str(root), "reset", "-q", "--hard", "main"], check=True, env=ENV)


def timed(fn: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t) * 1000)
    return statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 commits instead of 10,000")
    args = parser.parse_args()
    commits = 2_000 if args.quick else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ctx"
        history(root, commits, 500)
        ctx = ContextManager(root, actor="human", index=False)
        cache = ctx.parts.state.file("session-log.jsonl")

        def baseline() -> None:
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(root),
                    "log",
                    "--numstat",
                    "--format=%H%x1f%an%x1f%at%x1f%(trailers:only)",
                ],
                check=True,
                capture_output=True,
                env=ENV,
            )

        def first() -> None:
            cache.unlink(missing_ok=True)
            Sessions(ctx).list()

        git_ms = timed(baseline, 3)
        first_ms = timed(first, 3)
        listed = Sessions(ctx).list()
        n = [0]

        def after_one_commit() -> None:
            n[0] += 1
            ctx.write(f"memory/new-{n[0]}.md", "- one more\n")
            t = time.perf_counter()
            Sessions(ctx).list()
            after.append((time.perf_counter() - t) * 1000)

        after: list[float] = []
        for _ in range(5):
            after_one_commit()
        later_ms = statistics.median(after)
        one = listed[len(listed) // 2].id
        get_ms = timed(lambda: Sessions(ctx).get(one), 3)
        changes_ms = timed(lambda: Sessions(ctx).changes(one), 3)
        ctx.close()

    rows = [
        ("`git log --numstat` of the history (baseline)", git_ms, "", ""),
        (
            "first `Sessions.list()` (reads and caches every commit)",
            first_ms,
            f"{first_ms / git_ms:.2f}x",
            "≤ 1.5x the baseline: " + ("met" if first_ms <= 1.5 * git_ms else "NOT met"),
        ),
        (
            "`Sessions.list()` after one more commit",
            later_ms,
            f"{later_ms / first_ms:.2f}x of first",
            "≤ 0.5x the first: " + ("met" if later_ms <= 0.5 * first_ms else "NOT met"),
        ),
        ("`Sessions.get(id)`", get_ms, "", ""),
        ("`Sessions.changes(id)` (20 commits, diffs)", changes_ms, "", ""),
    ]
    print(f"## Sessions on {commits:,} commits in {len(listed)} sessions\n")
    print(
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores "
        f"(shared machine: ratios hold, absolute times move)\n"
    )
    print("| operation | median ms | ratio | goal |\n|---|---:|---:|---|")
    for name, ms, ratio, goal in rows:
        print(f"| {name} | {ms:.1f} | {ratio} | {goal} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
