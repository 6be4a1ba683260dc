"""Topic switch benchmark: 12 topics of 10-85 KB each.

Those are the per-topic sizes the authors of Topic-Scoped Virtual Context (TSVC), the
topics-as-processes design contextfs's topics follow, report from a production assistant.

Measures, in one run on one generated root:

* ``switch``: page out the active topic, activate the target (one git commit), build and
  pack its boot context — what an agent waits for between two topics;
* ``boot`` alone (no commit) and ``detect`` (which topic owns a message);
* two baselines measured in the same run: ``load-topic`` reads the target topic's files
  raw (TSVC's "load the context file", no budget, no commit), and ``load-all`` reads and
  token-counts every topic's files (one mixed context: no isolation at all);
* sizes: the boot context against all topics' files together (goal: at most 1/20).

The 31 s end-to-end median TSVC reports includes a session reset and the model's first
reply; it is quoted for scale, not re-measured. Usage::

    python tests/benchmarks/bench_topics.py [--quick] [--index]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from contextfs import ContextManager
from contextfs.scopes.topics import Topics
from contextfs.text.tokens import get_counter

#: The end-to-end topic switch median TSVC's authors report (session reset and model reply included).
TSVC_MEDIAN_S = 31.0
SIZES_KB = [10, 17, 23, 30, 37, 43, 50, 57, 64, 71, 78, 85]
WORDS = [
    "invoice",
    "proration",
    "tenant",
    "webhook",
    "retry",
    "backoff",
    "cluster",
    "node",
    "spot",
    "image",
    "build",
    "deploy",
    "rollout",
    "canary",
    "schedule",
    "holiday",
    "school",
    "rota",
    "router",
    "mesh",
    "firmware",
    "budget",
    "forecast",
    "contract",
    "renewal",
    "migration",
    "schema",
    "index",
    "latency",
    "queue",
    "worker",
    "partition",
    "replica",
    "snapshot",
    "audit",
    "review",
    "decision",
    "owner",
]


def _sentence(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_topic(root: Path, i: int, size_kb: int, rng: random.Random) -> str:
    name = f"topic-{i:02d}"
    folder = root / "topics" / name
    folder.mkdir(parents=True)
    fact = f"FACT-{i:02d}-{rng.randrange(10**6):06d}"
    (folder / "topic.md").write_text(
        f'---\nname: {name}\ntitle: "Topic {i}: {" ".join(rng.sample(WORDS, 3))}"\n'
        f'description: "Benchmark topic {i}; relevant when {", ".join(rng.sample(WORDS, 4))} come up."\n'
        f'status: paged\nopen: {str(i % 3 == 0).lower()}\nlast_active: "2026-11-{i + 1:02d}T10:00:00Z"\n'
        f'summary: "{_sentence(rng, 12)}"\nvocabulary: [{", ".join(rng.sample(WORDS, 5))}]\n---\n\n'
        + "\n".join(_sentence(rng) for _ in range(6))
        + "\n"
    )
    where = ["# Where are we", "", "## Key Facts", "", f"- Distinctive fact of {name}: {fact}"]
    where += [f"- {_sentence(rng)}" for _ in range(8)]
    for section in ("In Progress", "Pending Notifications", "Recently Completed", "Next Actions"):
        where += ["", f"## {section}", ""] + [f"- {_sentence(rng)}" for _ in range(5)]
    (folder / "where-are-we.md").write_text("\n".join(where) + "\n")
    decisions = ["# Decisions", ""]
    for d in range(1, 4 + size_kb // 6):
        deps = f"[D{rng.randrange(1, d)}]" if d > 1 else "[]"
        decisions += [
            f"## D{d}: {_sentence(rng, 6)[:-1]}",
            f"- text: {_sentence(rng)}",
            f"- reason: {_sentence(rng)}",
            f"- depends_on: {deps}",
            "- supersedes: null",
            f"- time: 2026-10-{d % 28 + 1:02d}T09:00:00Z",
            "",
        ]
    (folder / "decisions.md").write_text("\n".join(decisions))
    used = sum(p.stat().st_size for p in folder.iterdir())
    lines = []
    while used < size_kb * 1024:
        line = json.dumps(
            {
                "time": "2026-11-01T10:00:00Z",
                "user": _sentence(rng, 30),
                "agent": _sentence(rng, 60),
                "session": "s-bench",
            }
        )
        lines.append(line)
        used += len(line) + 1
    (folder / "exchanges.jsonl").write_text("\n".join(lines) + "\n")
    return fact


def build_root(base: Path) -> tuple[Path, dict[str, str]]:
    rng = random.Random(7)
    root = base / "ctx"
    (root / "memory" / "core").mkdir(parents=True)
    (root / "memory" / "facts.md").write_text(
        "# Facts\n\n" + "\n".join(f"- {_sentence(rng)}" for _ in range(40)) + "\n"
    )
    (root / "memory" / "core" / "persona.md").write_text("I am the household and work assistant.\n")
    facts = {f"topic-{i:02d}": make_topic(root, i, kb, rng) for i, kb in enumerate(SIZES_KB)}
    return root, facts


def timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument(
        "--index", action="store_true", help="keep the Whoosh index on (updated after each commit)"
    )
    args = parser.parse_args()
    rounds = 2 if args.quick else 5
    base = Path(tempfile.mkdtemp(prefix="bench-topics-"))
    try:
        root, facts = build_root(base)
        ctx = ContextManager(root, actor="agent:bench", index=args.index)
        topics = Topics(ctx)
        names = topics.names()
        counter = get_counter()
        all_bytes = sum((root / p).stat().st_size for p in ctx.list("topics"))

        # cold: the first switch in a fresh process pays token counting of the target files
        start = time.perf_counter()
        topics.switch(names[0])
        cold = time.perf_counter() - start

        order = [n for _ in range(rounds) for n in names]
        switch_times, boot_bytes, boot_tokens, leaks = [], [], [], 0
        for name in order:
            start = time.perf_counter()
            view = topics.switch(name)
            switch_times.append(time.perf_counter() - start)
            boot_bytes.append(len(view.text.encode()))
            boot_tokens.append(view.tokens)
            leaks += sum(1 for other, fact in facts.items() if other != name and fact in view.text)
            assert facts[name] in view.text, f"{name}'s own state is missing from its boot context"

        boot_times = [t for n in names for t in timed(lambda n=n: topics.boot(n), 1)] * 1
        detect_times = timed(
            lambda: topics.detect("what about the invoice proration for the tenant?"), 20 * rounds
        )

        def load_topic(name: str) -> None:
            text = "".join((root / p).read_text() for p in ctx.list(f"topics/{name}"))
            counter.count(text)

        def load_all() -> None:
            text = "".join((root / p).read_text() for p in ctx.list("topics"))
            counter.count(
                text + "x"
            )  # defeat the count cache: a mixed context is never the same twice

        commit_times = timed(
            lambda: ctx.update_metadata("memory/facts.md", {"bench": time.perf_counter()}),
            5 * rounds,
        )
        load_topic_times = [t for n in order for t in timed(lambda n=n: load_topic(n), 1)]
        load_all_times = timed(load_all, rounds)
        ctx.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)

    med = statistics.median

    def p95(xs: list[float]) -> float:
        return sorted(xs)[min(len(xs) - 1, max(0, math.ceil(len(xs) * 0.95) - 1))]

    sw = med(switch_times)
    rows = [
        ("switch (save + commit + boot context)", sw, p95(switch_times)),
        ("boot context only (no commit)", med(boot_times), p95(boot_times)),
        ("detect (names, then BM25)", med(detect_times), p95(detect_times)),
        (
            "baseline: one core metadata write (one file, one git commit)",
            med(commit_times),
            p95(commit_times),
        ),
        (
            "baseline: load-topic (raw read of the target's files)",
            med(load_topic_times),
            p95(load_topic_times),
        ),
        (
            "baseline: load-all (every topic's files, one mixed context)",
            med(load_all_times),
            p95(load_all_times),
        ),
    ]
    print(
        f"12 topics, {min(SIZES_KB)}-{max(SIZES_KB)} KB each, {all_bytes / 1024:.0f} KB of topic files in all; "
        f"{len(switch_times)} switches{' (Whoosh index on)' if args.index else ''}; Python {sys.version.split()[0]}\n"
    )
    print("| operation | median | p95 | median vs switch |")
    print("|---|---:|---:|---:|")
    for label, m, p in rows:
        print(f"| {label} | {m * 1000:.1f} ms | {p * 1000:.1f} ms | {m / sw:.2f}x |")
    print(
        f"| first switch in a fresh process (cold token counts) | {cold * 1000:.1f} ms | | {cold / sw:.2f}x |"
    )
    print(
        f"| TSVC end-to-end median (reported, includes a session reset and a model reply) | {TSVC_MEDIAN_S * 1000:.0f} ms"
        f" | | {TSVC_MEDIAN_S / sw:.0f}x |"
    )
    print()
    print("| size | value |")
    print("|---|---:|")
    print(f"| all topics' files | {all_bytes / 1024:.0f} KB |")
    print(
        f"| boot context, median | {med(boot_bytes) / 1024:.1f} KB ({med(boot_tokens):.0f} tokens) |"
    )
    print(
        f"| boot context / all topics (goal <= 1/20 = 0.050) | {med(boot_bytes) / all_bytes:.3f} (1/{all_bytes / med(boot_bytes):.0f}) |"
    )
    print(f"| other topics' distinctive facts found in boot contexts | {leaks} |")
    print(
        f"| goal: switch under 100 ms | {'met' if sw < 0.1 else 'NOT met'} ({sw * 1000:.1f} ms) |"
    )


if __name__ == "__main__":
    main()
