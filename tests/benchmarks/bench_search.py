"""Benchmark contextfs search against a substring scan of every file and SQLite FTS5.

Run: ``python tests/benchmarks/bench_search.py [--quick]`` (``--quick``: 1,000 notes only).
Prints a markdown table; every ratio is against a baseline measured in the same run on
the same synthetic notes (1-8 KB of markdown with frontmatter, Zipf-distributed vocabulary,
nested folders).

Measured:
* query latency p50/p95 for 2-3 word queries, top 10 with snippets: contextfs
  (``ctx.search``, snippets cut from the files) vs a substring scan of every file vs FTS5 with
  ``snippet()`` vs a default Whoosh index with its highlighter;
* full rebuild time and index size: contextfs ``rebuild()`` vs a default Whoosh build
  (stored body, one writer) vs FTS5;
* write-path cost: 100 writes followed by one search, with the index on vs off;
* quoted two-word phrases (vs FTS5 phrase queries), and the plain-word queries again after
  the 1,000 writes of the write-path runs (more segments; then repeated, words already decoded);
* questions that name a month ("... in March 2026?": notes dated then count double),
  against the same questions without the month.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from whoosh import index as windex
from whoosh.analysis import StemmingAnalyzer
from whoosh.fields import ID, KEYWORD, TEXT, Schema
from whoosh.highlight import ContextFragmenter
from whoosh.qparser import MultifieldParser, OrGroup

from contextfs import ContextManager
from contextfs.search import rank as search_rank
from contextfs.search.snippets import strip_frontmatter

_COMMON = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "they",
    "you",
    "were",
    "her",
    "she",
    "there",
    "been",
    "one",
    "all",
    "we",
    "their",
    "has",
    "would",
    "when",
    "if",
    "so",
    "no",
    "what",
    "up",
    "out",
    "who",
    "them",
    "some",
    "could",
    "more",
    "into",
    "its",
    "than",
    "then",
    "only",
    "other",
    "new",
    "also",
    "these",
    "two",
    "may",
    "first",
    "any",
    "like",
    "our",
    "over",
    "such",
    "very",
    "through",
    "most",
    "after",
]
_TECH = [
    "webhook",
    "retry",
    "backoff",
    "jitter",
    "queue",
    "broker",
    "partition",
    "tenant",
    "postgres",
    "redis",
    "kafka",
    "outbox",
    "invoice",
    "billing",
    "stripe",
    "proration",
    "cluster",
    "node",
    "pod",
    "deployment",
    "rollout",
    "canary",
    "latency",
    "throughput",
    "shard",
    "replica",
    "index",
    "schema",
    "migration",
    "rollback",
    "incident",
    "alert",
    "runbook",
    "dashboard",
    "grafana",
    "metric",
    "tracing",
    "span",
    "sampler",
    "token",
    "budget",
    "session",
    "agent",
    "context",
    "memory",
    "archive",
    "summary",
    "decision",
    "rationale",
    "tradeoff",
    "risk",
    "owner",
    "milestone",
    "subtask",
    "ticket",
    "release",
    "deploy",
    "terraform",
    "karpenter",
    "autoscaling",
    "spot",
    "instance",
    "eviction",
    "cache",
    "ttl",
    "lease",
    "lock",
    "mutex",
    "deadlock",
    "timeout",
    "certificate",
    "oidc",
    "auth0",
    "login",
    "dashboard",
    "role",
    "permission",
    "audit",
    "encryption",
    "secret",
    "rotation",
    "compliance",
    "gdpr",
    "vat",
    "shipment",
    "carrier",
    "tracking",
    "eta",
    "forecast",
    "model",
    "feature",
    "training",
    "drift",
    "validation",
    "dataset",
    "pipeline",
    "batch",
    "stream",
    "consumer",
    "producer",
    "offset",
    "commit",
    "snapshot",
    "restore",
    "backup",
    "replication",
    "failover",
    "region",
    "zone",
    "latency",
    "budget",
    "quota",
]


def vocabulary(rng: random.Random) -> list[str]:
    """About 6,000 words: common English, technical terms, and generated rarer words."""
    syll = [
        "ka",
        "lo",
        "mi",
        "ren",
        "tor",
        "vex",
        "shi",
        "pan",
        "dor",
        "qua",
        "zel",
        "mur",
        "tin",
        "gar",
        "bel",
    ]
    made = {"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(8000)}
    return _COMMON + _TECH + sorted(made)[:5500]


def make_note(
    rng: random.Random, vocab: list[str], weights: list[float], i: int
) -> tuple[str, str]:
    folder = rng.choice(
        [
            "project",
            "project/decisions",
            "task/subtasks",
            "task/history",
            "memory/archive",
            f"topics/t{rng.randrange(40):02d}",
            "skills",
        ]
    )
    rel = f"{folder}/note-{i:05d}.md"
    size = rng.randint(1000, 8000)
    words: list[str] = []
    total = 0
    title = " ".join(rng.choices(_TECH, k=4)).capitalize()
    while total < size:
        sentence = rng.choices(vocab, weights=weights, k=rng.randint(8, 20))
        text = " ".join(sentence).capitalize() + "."
        words.append(text)
        total += len(text) + 1
        if rng.random() < 0.08:
            words.append("\n\n## " + " ".join(rng.choices(_TECH, k=3)).capitalize() + "\n\n")
    tags = ", ".join(rng.sample(_TECH, 3))
    day = 1 + i % 28
    body = f"# {title}\n\n" + " ".join(words) + "\n"
    front = f'---\ntitle: "{title}"\ntags: [{tags}]\nupdated: 2026-{1 + i % 12:02d}-{day:02d}T10:00:00Z\n---\n\n'
    return rel, front + body


def make_corpus(root: Path, n: int, seed: int = 1) -> dict[str, str]:
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocab))]
    notes = dict(make_note(rng, vocab, weights, i) for i in range(n))
    for rel, text in notes.items():
        full = root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text, "utf-8")
    return notes


def make_queries(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.sample(_TECH, rng.choice((2, 3)))) for _ in range(count)]


def make_phrases(rng: random.Random, notes: dict[str, str], count: int) -> list[str]:
    """Quoted two-word phrases taken from the notes' bodies (words of 4+ letters, no stop words)."""
    bodies = [strip_frontmatter(text) for text in notes.values()]
    out: list[str] = []
    while len(out) < count:
        words = rng.choice(bodies).split()
        i = rng.randrange(len(words) - 1)
        a, b = words[i].strip(".,"), words[i + 1].strip(".,")
        if (
            len(a) >= 4
            and len(b) >= 4
            and a.isalpha()
            and b.isalpha()
            and a not in _COMMON
            and b not in _COMMON
        ):
            out.append(f'"{a} {b}"')
    return out


# ------------------------------------------------------------------ baselines
def substring_scan(root: Path, query: str) -> list[tuple[str, str]]:
    """Search without an index: read every file, case-insensitive substring, 100-char snippet."""
    results = []
    q = query.lower()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".contextfs", ".trash")]
        for name in filenames:
            if not name.endswith(".md"):
                continue
            content = strip_frontmatter(Path(dirpath, name).read_text("utf-8"))
            low = content.lower()
            if q in low:
                idx = low.index(q)
                results.append(
                    (
                        os.path.relpath(os.path.join(dirpath, name), root),
                        content[max(0, idx - 50) : idx + len(q) + 50],
                    )
                )
    return results


def fts_build(notes: dict[str, str], db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, body, tokenize='porter')"
    )
    with conn:
        conn.executemany(
            "INSERT INTO notes VALUES (?, ?, ?)",
            ((rel, text.split("\n", 3)[1], strip_frontmatter(text)) for rel, text in notes.items()),
        )
    return conn


def fts_query(conn: sqlite3.Connection, query: str) -> list[tuple[str, str]]:
    match = query if query.startswith('"') else " OR ".join(query.split())
    return conn.execute(
        "SELECT path, snippet(notes, 2, '', '', '...', 24) FROM notes WHERE notes MATCH ? "
        "ORDER BY bm25(notes, 0, 3.0, 1.0) LIMIT 10",
        (match,),
    ).fetchall()


def whoosh_default_build(notes: dict[str, str], folder: Path) -> object:
    schema = Schema(
        path=ID(unique=True, stored=True),
        title=TEXT(stored=True),
        tags=KEYWORD(commas=True, stored=True),
        body=TEXT(analyzer=StemmingAnalyzer(), stored=True),
    )
    ix = windex.create_in(str(folder), schema)
    writer = ix.writer()
    for rel, text in notes.items():
        writer.add_document(path=rel, title=text.split("\n", 3)[1], body=strip_frontmatter(text))
    writer.commit()
    return ix


def whoosh_default_query(searcher: object, parser: object, query: str) -> list[tuple[str, str]]:
    results = searcher.search(parser.parse(query), limit=10)  # type: ignore[attr-defined]
    results.fragmenter = ContextFragmenter(maxchars=200, surround=50)
    return [(hit["path"], hit.highlights("body")) for hit in results]


# ------------------------------------------------------------------ measuring
def timed(fn, *args) -> float:  # noqa: ANN001
    start = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - start) * 1000


def latency(fn, queries: list[str]) -> tuple[float, float]:  # noqa: ANN001
    for q in queries[:3]:
        fn(q)  # warm caches
    samples = sorted(timed(fn, q) for q in queries)
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def write_stream(root: Path, index: bool, tag: str, n: int = 100) -> float:
    ctx = ContextManager(root, index=index, sync=False)
    if index:
        ctx.search("warmup")
    rng = random.Random(hash(tag) & 0xFFFF)
    start = time.perf_counter()
    for i in range(n):
        words = " ".join(rng.sample(_TECH, 40))
        ctx.write(f"stream/{tag}/n{i:03d}.md", f"# Stream note {i}\n\n{words}\n" * 20)
    if index:
        hits = ctx.search(f"stream {_TECH[0]}", limit=10)
        assert hits, "the stream's notes must be found"
    elapsed = time.perf_counter() - start
    ctx.close()
    return elapsed * 1000


def run(n: int, queries: list[str], rows: list[str], work: Path) -> None:
    root = work / f"ctx{n}"
    root.mkdir()
    t0 = time.perf_counter()
    notes = make_corpus(root, n)
    mb = sum(len(t) for t in notes.values()) / 1e6
    ctx = ContextManager(root, index=False)  # adopts the corpus as the first commit
    print(
        f"[{n}] corpus {mb:.1f} MB written and committed in {time.perf_counter() - t0:.1f}s",
        file=sys.stderr,
    )

    # Full rebuild: contextfs vs default Whoosh vs FTS5.
    t = time.perf_counter()
    ix_default = whoosh_default_build(notes, Path(tempfile.mkdtemp(dir=work)))
    default_build = time.perf_counter() - t
    default_dir = Path(ix_default.storage.folder)  # type: ignore[attr-defined]
    print(f"[{n}] default whoosh build {default_build:.1f}s", file=sys.stderr)
    t = time.perf_counter()
    index = ctx.index  # opens: finds no index and builds it
    count = index.doc_count()
    ours_build = time.perf_counter() - t
    assert count == n, (count, n)
    print(f"[{n}] contextfs build {ours_build:.1f}s", file=sys.stderr)
    t = time.perf_counter()
    conn = fts_build(notes, work / f"fts{n}.db")
    fts_build_s = time.perf_counter() - t

    # Query latency.
    scan = latency(lambda q: substring_scan(root, q), queries[: max(5, len(queries) // 4)])
    ours = latency(lambda q: ctx.search(q, limit=10), queries)
    fts = latency(lambda q: fts_query(conn, q), queries)
    searcher = ix_default.searcher()  # type: ignore[attr-defined]
    parser = MultifieldParser(["title", "body"], ix_default.schema, group=OrGroup.factory(0.9))  # type: ignore[attr-defined]
    hl = latency(lambda q: whoosh_default_query(searcher, parser, q), queries)
    rows.append(
        f"| {n:,} | query p50 / p95, top 10 with snippets (ms) | {ours[0]:.1f} / {ours[1]:.1f} | "
        f"substring scan {scan[0]:.1f} / {scan[1]:.1f} | **{scan[0] / ours[0]:.0f}x faster** than the scan |"
    )
    rows.append(
        f"| {n:,} | same vs SQLite FTS5 + snippet() (ms) | {ours[0]:.1f} / {ours[1]:.1f} | "
        f"FTS5 {fts[0]:.2f} / {fts[1]:.2f} | {ours[0] / fts[0]:.1f}x FTS5's time |"
    )
    rows.append(
        f"| {n:,} | same vs default Whoosh + highlighter (ms) | {ours[0]:.1f} / {ours[1]:.1f} | "
        f"Whoosh {hl[0]:.1f} / {hl[1]:.1f} | {hl[0] / ours[0]:.1f}x faster |"
    )
    rows.append(
        f"| {n:,} | full rebuild (s) | {ours_build:.1f} | default Whoosh {default_build:.1f}; "
        f"FTS5 {fts_build_s:.2f} | {ours_build / default_build:.2f}x the default build's time |"
    )
    rows.append(
        f"| {n:,} | index size on disk (MB) | {folder_size(index.dir) / 1e6:.1f} | "
        f"default Whoosh {folder_size(default_dir) / 1e6:.1f}; FTS5 "
        f"{(work / f'fts{n}.db').stat().st_size / 1e6:.1f} | {folder_size(index.dir) / folder_size(default_dir):.2f}x |"
    )
    phrases = make_phrases(random.Random(7), notes, max(10, len(queries) // 2))
    ours_ph = latency(lambda q: ctx.search(q, limit=10), phrases)
    fts_ph = latency(lambda q: fts_query(conn, q), phrases)
    rows.append(
        f"| {n:,} | quoted two-word phrase p50 / p95 (ms) | {ours_ph[0]:.1f} / {ours_ph[1]:.1f} | "
        f"FTS5 {fts_ph[0]:.2f} / {fts_ph[1]:.2f} | {ours_ph[0] / fts_ph[0]:.1f}x FTS5's time |"
    )
    months = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ]
    rng = random.Random(11)
    plain_q = [f"How do we handle the {q}?" for q in queries]
    dated_q = [f"How did we handle the {q} in {rng.choice(months)} 2026?" for q in queries]
    ours_plain = latency(lambda q: ctx.search(q, limit=10), plain_q)
    ours_dated = latency(lambda q: ctx.search(q, limit=10), dated_q)
    rows.append(
        f"| {n:,} | questions naming a month p50 / p95 (ms) | {ours_dated[0]:.1f} / {ours_dated[1]:.1f} | "
        f"same questions, no month {ours_plain[0]:.1f} / {ours_plain[1]:.1f} | "
        f"{ours_dated[0] / ours_plain[0]:.1f}x |"
    )
    searcher.close()
    conn.close()
    ctx.close()

    # Write path: 100 writes + one search, index on vs off (alternated, median of 5 pairs:
    # single runs vary by a few hundred milliseconds on this machine).
    off, on = [], []
    for r in range(5):
        off.append(write_stream(root, False, f"off{r}"))
        on.append(write_stream(root, True, f"on{r}"))
    off_ms, on_ms = statistics.median(off), statistics.median(on)
    print(
        f"[{n}] write stream ms, index off {[round(x) for x in off]}, on {[round(x) for x in on]}",
        file=sys.stderr,
    )
    rows.append(
        f"| {n:,} | 100 writes + 1 search (ms) | {on_ms:.0f} (index on) | {off_ms:.0f} (index off) | "
        f"indexing adds {100 * (on_ms - off_ms) / off_ms:+.0f}% |"
    )

    # Queries again after those 1,000 writes (new segments, merged by the index's policy), in a
    # fresh process state: the same words, but every segment's postings are read anew.
    ctx = ContextManager(root, sync=False)
    ctx.search("warmup")
    segments = len(ctx.index.searcher.reader().leaf_readers())
    search_rank._SEGMENTS.clear()
    after = latency(lambda q: ctx.search(q, limit=10), queries)
    again = latency(lambda q: ctx.search(q, limit=10), queries)
    ctx.close()
    rows.append(
        f"| {n:,} | query p50 / p95 after the 1,000 writes, {segments} segments (ms) | "
        f"{after[0]:.1f} / {after[1]:.1f} | same queries repeated: {again[0]:.1f} / {again[1]:.1f} | "
        f"{after[0] / ours[0]:.1f}x the first measurement |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 notes only")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument(
        "--sizes", type=int, nargs="*", help="corpus sizes to measure (default 1000 10000)"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("GIT_CONFIG_GLOBAL", "/dev/null")
    sizes = args.sizes or ([1000] if args.quick else [1000, 10000])
    queries = make_queries(random.Random(42), args.queries)
    rows = [
        "| notes | measure | contextfs | baseline (same run) | ratio |",
        "|---|---|---|---|---|",
    ]
    work = Path(tempfile.mkdtemp(prefix="bench-search-"))
    try:
        for n in sizes:
            run(n, queries, rows, work)
            print("\n".join(rows), flush=True)  # each size's rows as soon as they are measured
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
