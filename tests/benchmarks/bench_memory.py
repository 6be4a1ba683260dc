"""Benchmark memory tiers: archival search over 10,000 notes, buffer eviction per turn.

Baselines are measured in the same run: a shared-word count over a Python list (a note's
score is the number of query words it shares) and a message-count cap that pops the
oldest message into a list. Besides latency it reports hit@1, because the point of BM25 is
that rare words outrank common ones.

    python tests/benchmarks/bench_memory.py [--quick]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from contextfs import ContextManager
from contextfs.scopes.memory import ConversationBuffer, Memory, fingerprint
from contextfs.serializing import serialize

COMMON = [
    "priya",
    "the",
    "company",
    "offer",
    "drive",
    "interview",
    "round",
    "test",
    "practice",
    "problem",
    "placement",
    "batch",
    "student",
    "college",
    "campus",
    "result",
    "prep",
    "week",
    "mock",
    "session",
    "topic",
    "question",
    "answer",
]


def _vocab(rng: random.Random, n: int) -> list[str]:
    letters = "bcdfghklmnprstvz"
    vowels = "aeiou"
    out = set()
    while len(out) < n:
        out.add("".join(rng.choice(letters) + rng.choice(vowels) for _ in range(rng.randint(2, 4))))
    return sorted(out)


def make_notes(n: int, rng: random.Random) -> list[str]:
    rare = _vocab(rng, 4000)
    notes = []
    for i in range(n):
        words = [rng.choice(COMMON) for _ in range(rng.randint(6, 12))] + rng.sample(rare, 3)
        rng.shuffle(words)
        notes.append(" ".join(words) + f" note{i}")
    return notes


def build_root(root: Path, notes: list[str]) -> None:
    folder = root / "memory" / "archive"
    folder.mkdir(parents=True)
    for i, text in enumerate(notes):
        meta = {
            "created": f"2026-10-{1 + i % 28:02d}T09:00:00Z",
            "tags": ["bench"],
            "trust": "trusted",
            "source": f"session:bench turn:{i}",
            "status": "active",
            "fingerprint": fingerprint(text),
            "session": "bench",
            "turn": str(i),
        }
        (folder / f"n{i:05d}.md").write_text(serialize(meta, text + "\n"), "utf-8")


def shared_word_search(
    archive: list[tuple[int, str]], query: str, top_k: int = 5
) -> list[tuple[int, int, str]]:
    """The list baseline: count the query words each note shares, sort, take top_k."""
    words = set(query.lower().split())
    scored = [(len(words & set(t.lower().split())), n, t) for n, t in archive]
    scored = [s for s in scored if s[0] > 0]
    scored.sort(reverse=True)
    return scored[:top_k]


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def bench_search(n_notes: int, n_queries: int, rng: random.Random) -> list[str]:
    notes = make_notes(n_notes, rng)
    tmp = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    build_root(tmp / "ctx", notes)
    t0 = time.perf_counter()
    ctx = ContextManager(tmp / "ctx", session="bench")
    mem = Memory(ctx)
    mem.archival_memory_search("warm up the index", top_k=5)
    setup = time.perf_counter() - t0
    archive = list(enumerate(notes))
    queries = []
    for _ in range(n_queries):
        target = rng.randrange(n_notes)
        words = notes[target].split()
        rare = [w for w in words if w not in COMMON and not w.startswith("note")]
        common = [w for w in words if w in COMMON]
        q = rng.sample(rare, 2) + rng.sample(common, min(3, len(common))) + rng.sample(COMMON, 2)
        rng.shuffle(q)
        queries.append((target, " ".join(q)))
    ours, base = [], []
    ours_hit = base_hit = 0
    for target, q in queries:
        t = time.perf_counter()
        hits = mem.archival_memory_search(q, top_k=5)
        ours.append((time.perf_counter() - t) * 1000)
        ours_hit += bool(hits) and hits[0].path == f"memory/archive/n{target:05d}.md"
        t = time.perf_counter()
        got = shared_word_search(archive, q, 5)
        base.append((time.perf_counter() - t) * 1000)
        base_hit += bool(got) and got[0][1] == target
    ctx.close()
    first = bench_first_search(tmp / "ctx", n_notes)
    rows = [
        f"| archival search, {n_notes:,} notes, p50 (ms) | {statistics.median(ours):.2f} | {statistics.median(base):.2f} | {statistics.median(ours) / statistics.median(base):.2f}x |",
        f"| archival search, {n_notes:,} notes, p95 (ms) | {pct(ours, 95):.2f} | {pct(base, 95):.2f} | {pct(ours, 95) / pct(base, 95):.2f}x |",
        f"| right note first (hit@1, {n_queries} queries) | {ours_hit / n_queries:.0%} | {base_hit / n_queries:.0%} | |",
        *first,
    ]
    print(f"(index build on open for {n_notes:,} notes: {setup:.1f} s)", file=sys.stderr)
    return rows


#: A new process: open the root, run one archival search, print how long that search took.
_FIRST_SEARCH = """
import sys, time
from contextfs import ContextManager
from contextfs.scopes.memory import Memory
ctx = ContextManager(sys.argv[1], session="bench")
t = time.perf_counter()
Memory(ctx).archival_memory_search("priya offer drive interview", top_k=5)
print((time.perf_counter() - t) * 1000)
ctx.close()
"""


def bench_first_search(root: Path, n_notes: int, runs: int = 3) -> list[str]:
    """The first archival search of a new process, which ranks with page-in: with the
    statistics an earlier process kept in the state folder, and reading every note (the
    same search after the kept file is removed), alternated, median of ``runs`` each."""

    def once() -> float:
        out = subprocess.run(
            [sys.executable, "-c", _FIRST_SEARCH, str(root)],
            check=True,
            capture_output=True,
            text=True,
        )
        return float(out.stdout.strip().splitlines()[-1])

    ctx = ContextManager(root, session="bench")
    state = ctx.parts.state.path
    ctx.close()
    kept, reading = [], []
    for _ in range(runs):
        for stale in state.glob("pagein-*.log"):
            stale.unlink()
        reading.append(once())  # reads every note, and keeps what it read
        kept.append(once())
    a, b = statistics.median(kept), statistics.median(reading)
    return [
        f"| first archival search of a new process, {n_notes:,} notes (ms) | {a:.0f} | {b:.0f} "
        f"(reading every note) | {a / b:.2f}x |"
    ]


def bench_buffer(turns: int) -> list[str]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-buffer-"))
    ctx = ContextManager(tmp / "ctx", session="buf", index=False)
    mem = Memory(ctx)
    buf = ConversationBuffer(mem, max_tokens=400)
    texts = [
        f"Turn {i}: Priya asks about dynamic programming problem {i * 7} and the TCS drive on day {i % 30}"
        for i in range(turns)
    ]
    fit_ms, evict_fit_ms, add_ms, evict_add_ms = [], [], [], []
    for i, text in enumerate(texts):
        # the in-memory part of a turn (stamp, count, evict, summarise), without the commit
        with ctx.provenance(turn=i):
            msg = mem.make_message("user", text)
        t = time.perf_counter()
        buf._messages.append(msg)
        buf._tokens.append(buf.counter.count(msg.render()))
        evicted = buf._fit()
        (evict_fit_ms if evicted else fit_ms).append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        with ctx.transaction("bench turn"):
            mem.log_messages([msg])
            if evicted:
                buf._save_summary()
        (evict_add_ms if evicted else add_ms).append((time.perf_counter() - t) * 1000)
    ctx.close()
    cap_ms = []
    messages: list[str] = []
    archive: list[tuple[int, str]] = []
    for i, text in enumerate(texts):
        t = time.perf_counter()
        messages.append(f"user: {text}")
        while len(messages) > 4:
            archive.append((i, messages.pop(0)))
        cap_ms.append((time.perf_counter() - t) * 1000)
    cap = statistics.median(cap_ms)
    return [
        f"| buffer turn with eviction, in-memory part p50 (ms) | {statistics.median(evict_fit_ms):.3f} | {cap:.4f} | {statistics.median(evict_fit_ms) / cap:.0f}x |",
        f"| buffer turn without eviction, in-memory part p50 (ms) | {statistics.median(fit_ms):.3f} | {cap:.4f} | {statistics.median(fit_ms) / cap:.0f}x |",
        f"| the one commit of a turn with eviction, p50 (ms) | {statistics.median(evict_add_ms):.1f} | – | |",
        f"| the one commit of a turn without eviction, p50 (ms) | {statistics.median(add_ms):.1f} | – | |",
        f"| turns that evicted | {len(evict_fit_ms)} of {turns} | every turn past 4 | |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1,000 notes and fewer turns")
    args = parser.parse_args()
    rng = random.Random(7)
    n_notes, n_queries, turns = (1000, 50, 40) if args.quick else (10_000, 200, 150)
    rows = bench_search(n_notes, n_queries, rng) + bench_buffer(turns)
    print("| measure | contextfs memory | list baseline | ratio |")
    print("|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
