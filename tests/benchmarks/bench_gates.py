"""Benchmark: what the commit gate, whole-file judging and the fence cost, same run.

    python tests/benchmarks/bench_gates.py [--quick]

Each figure is measured against the same operation with the mechanism switched off in the
same process, the two run alternately, so the ratio holds on a busy machine:

1. a write + commit of a 7 KB note: with the commit gate (names, message, author) against
   ``Writes`` without it. Goal: at most 1.15x;
2. an append of one line to a note of 100 KB, judged on the whole file (secret scan and
   poisoning guard), against writing the same file. Goal: at most 1.1x (an append costs
   what a write of its result costs). Also reported: against judging the new line alone,
   as before;
3. ``read_context`` and ``list_context`` answers, sealed against unsealed (the same tool
   without :func:`contextfs.fencing.seal`). Goal: the seal adds at most 5 ms to a 20 KB answer;
4. a 4,000-token scoped view, each part and passage sealed against unsealed. Goal: at most 1.2x.

Prints a markdown table (median milliseconds) and each goal's status.
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import contextfs.integrations.toolkit as toolkit_module
import contextfs.scopes.packing as packing
import contextfs.scopes.tiers as tiers
from contextfs import ContextManager
from contextfs.integrations import make_tools
from contextfs.scopes import ScopedContext

WORDS = ["the", "staging", "database", "runs", "PostgreSQL", "and", "deploy", "train", "leaves", "on", "Thursday",
         "after", "review", "of", "migration", "scripts", "retries", "webhooks", "billing", "invoices", "customers",
         "export", "nightly", "cache", "redis"]


def prose(rng: random.Random, chars: int) -> str:
    lines, size = [], 0
    while size < chars:
        line = "- " + " ".join(rng.choice(WORDS) for _ in range(12)) + "."
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


def paired_ms(with_it: Callable[[int], object], without: Callable[[int], object],
              repeat: int) -> tuple[float, float]:
    """Median milliseconds of both sides, run alternately (so a busy machine slows both alike)."""
    for i in range(2):
        with_it(-1 - i)
        without(-1 - i)
    times: tuple[list[float], list[float]] = ([], [])
    for i in range(repeat):
        for side, fn in enumerate((with_it, without) if i % 2 == 0 else (without, with_it)):
            start = time.perf_counter()
            fn(i)
            times[side if i % 2 == 0 else 1 - side].append((time.perf_counter() - start) * 1000)
    return statistics.median(times[0]), statistics.median(times[1])


def patched(fn: Callable[[int], object], *patches: Any) -> Callable[[int], object]:
    """``fn`` with ``patches`` (``mock.patch.object`` calls) applied while it runs."""
    def run(i: int) -> object:
        with contextlib.ExitStack() as stack:
            for patch in patches:
                stack.enter_context(patch)
            return fn(i)
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    repeat = 7 if parser.parse_args().quick else 25
    rng = random.Random(1)
    rows: list[tuple[str, float, float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ContextManager(Path(tmp) / "ctx", index=False, durable=False)
        note = prose(rng, 7000)
        writes = ctx._writes  # noqa: SLF001 - the benchmark switches the gate off to measure it
        assert writes is not None
        gated, plain = paired_ms(lambda i: ctx.write(f"notes/a{i}.md", note + str(i)),
                                 patched(lambda i: ctx.write(f"notes/b{i}.md", note + str(i)),
                                         mock.patch.object(writes, "_gate", None)), repeat)
        rows.append(("write + commit, 7 KB note", gated, plain, gated / plain, "<= 1.15x"))

        big = prose(rng, 100_000)
        ctx.write("notes/big.md", big)
        whole, rewrite = paired_ms(lambda i: ctx.append("notes/big.md", f"- appended line {i}"),
                                   lambda i: ctx.write("notes/big3.md", big + f"- appended line {i}"), repeat)
        ctx.write("notes/big2.md", big)
        guard = ctx.guard()
        original = guard.check

        def new_part_only(rel: str, text: str, **kw: object) -> object:
            return original(rel, text[-40:], **kw)  # type: ignore[arg-type]  # the appended line alone

        whole2, part = paired_ms(lambda i: ctx.append("notes/big.md", f"- appended line b{i}"),
                                 patched(lambda i: ctx.append("notes/big2.md", f"- appended line {i}"),
                                         mock.patch.object(guard, "check", new_part_only)), repeat)
        rows.append(("append 1 line to a 100 KB note, against writing the same file", whole, rewrite,
                     whole / rewrite, "<= 1.1x"))
        rows.append(("the same append, against judging the new line alone (before)", whole2, part, whole2 / part,
                     "(reported)"))

        tools = {t.name: t for t in make_tools(ctx)}
        ctx.write("notes/read.md", prose(rng, 19_000))
        for name, args in (("read_context", {"path": "notes/read.md"}), ("list_context", {})):
            sealed, bare = paired_ms(lambda i, n=name, a=args: tools[n].invoke(a),
                                     patched(lambda i, n=name, a=args: tools[n].invoke(a),
                                             mock.patch.object(toolkit_module, "seal", lambda text, source: text)),
                                     repeat)
            rows.append((f"{name} answer (20 KB / {len(ctx.list())} names)", sealed, bare, sealed / bare,
                         "seal adds <= 5 ms"))

        for i in range(30):
            ctx.write(f"project/part{i}.md", prose(rng, 1500))
        scoped = ScopedContext(ctx)
        sealed, bare = paired_ms(lambda i: scoped.assemble("project", budget=4000, query=f"database {i}"),
                                 patched(lambda i: scoped.assemble("project", budget=4000, query=f"database {i}"),
                                         mock.patch.object(packing, "seal", lambda text, source: text),
                                         mock.patch.object(tiers, "sealed", lambda text, source: text)), repeat)
        rows.append(("scoped view, 4,000 tokens", sealed, bare, sealed / bare, "<= 1.2x"))
        ctx.close()

    print(f"machine: {platform.machine()}, Python {platform.python_version()}, {platform.system()} (shared machine: "
          "read the ratios, not the milliseconds)\n")
    print("| operation | with the mechanism (ms) | without, same run (ms) | ratio | goal |")
    print("|---|---:|---:|---:|---|")
    for label, a, b, ratio, goal in rows:
        print(f"| {label} | {a:.2f} | {b:.2f} | {ratio:.2f}x | {goal} |")
    goals = [rows[0][3] <= 1.15, rows[1][3] <= 1.1, rows[3][1] - rows[3][2] <= 5, rows[4][1] - rows[4][2] <= 5,
             rows[5][3] <= 1.2]
    print(f"\ngoals met: {sum(goals)} of {len(goals)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
