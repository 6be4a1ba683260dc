"""Benchmark: the secret scanner's recall, false-positive rate and cost per write.

    python tests/benchmarks/bench_secrets.py [--quick]

1. Recall on generated secrets: every kind in ``tests/secret_samples.py`` (28 kinds), in
   every context a note carries it (prose, frontmatter, code fence, JSON, ``.env`` line),
   several examples each, made in this run.
2. False positives: files of ``sample-context/`` and ~1,000 generated notes holding commit
   ids, digests, UUIDs, URLs, base64, code and placeholders (none holds a secret).
3. Cost: one scan of a 7 KB note and of a 1 MB file against one atomic write of the same
   bytes (``RootFiles.write``: tmp + fsync + replace) measured in this run.

Baseline for 1 and 2: detect-secrets' own defaults (every plugin, default filters) through
its documented API (``default_settings`` + ``SecretsCollection.scan_file``) on the same
texts written as ``.md`` files. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from secret_samples import CONTEXTS, EXPECTED_KIND, NOT_EXPECTED, SECRET_KINDS, ordinary_note  # noqa: E402

from contextfs.files import RootFiles  # noqa: E402
from contextfs.secrets import scan  # noqa: E402


def _baseline_scan(texts: list[str], folder: Path) -> list[bool]:
    """detect-secrets with its defaults: does it flag each text?"""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    flagged = []
    with default_settings():
        for number, text in enumerate(texts):
            path = folder / f"note-{number}.md"
            path.write_text(text, "utf-8", errors="surrogatepass")
            collection = SecretsCollection()
            collection.scan_file(str(path))
            flagged.append(bool(collection.data))
    return flagged


def recall(examples: int, folder: Path) -> tuple[list[tuple[str, int, int, int]], int, int, int]:
    rows = []
    texts_all: list[str] = []
    kinds_all: list[str] = []
    ours_all: list[bool] = []
    for kind, make in SECRET_KINDS.items():
        hits = total = 0
        for context_name, context in CONTEXTS.items():
            if context_name in NOT_EXPECTED.get(kind, set()):
                continue
            for seed in range(examples):
                rng = random.Random(f"bench/{kind}/{context_name}/{seed}")
                note = context(make(rng), rng)
                found = EXPECTED_KIND[kind] in {f.kind for f in scan(note, path="notes/n.md")}
                hits += found
                total += 1
                texts_all.append(note)
                kinds_all.append(kind)
                ours_all.append(found)
        rows.append((kind, total, hits, 0))
    base = _baseline_scan(texts_all, folder)
    per_kind = Counter(k for k, b in zip(kinds_all, base, strict=True) if b)
    rows = [(kind, total, hits, per_kind[kind]) for kind, total, hits, _ in rows]
    return rows, len(texts_all), sum(ours_all), sum(base)


def false_positives(notes: int, folder: Path) -> list[tuple[str, int, int, int, Counter[str]]]:
    sample = [p.read_text("utf-8") for p in sorted((REPO / "sample-context").rglob("*.md"))]
    generated = [ordinary_note(random.Random(f"bench/ordinary/{i}")) for i in range(notes)]
    out = []
    for name, texts in (("sample-context", sample), ("generated notes", generated)):
        kinds: Counter[str] = Counter()
        flagged = 0
        for number, text in enumerate(texts):
            findings = scan(text, path=f"notes/{number}.md")
            flagged += bool(findings)
            kinds.update(f.kind for f in findings)
        base = sum(_baseline_scan(texts, folder))
        out.append((name, len(texts), flagged, base, kinds))
    return out


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def cost(repeat: int, folder: Path) -> list[tuple[str, float, float]]:
    rng = random.Random("bench/cost")
    corpus = ""
    while len(corpus) < 1_100_000:
        corpus += ordinary_note(rng) + "\n"
    sample = "\n".join(p.read_text("utf-8") for p in sorted((REPO / "sample-context").rglob("*.md")))
    sample_mb = (sample * (1_100_000 // len(sample) + 1))
    scan("warm up")  # the first scan imports detect-secrets (~0.1 s), once per process
    rows = []
    for name, text in (
        ("7 KB note (generated)", corpus[:7_000]),
        ("7 KB note (sample-context)", sample[:7_000]),
        ("1 MB file (generated)", corpus[:1_000_000]),
        ("1 MB file (sample-context)", sample_mb[:1_000_000]),
    ):
        data = text.encode("utf-8")
        target = folder / "target.md"
        files = RootFiles(target.parent)
        write_ms = _median_ms(lambda data=data, files=files, name=target.name: files.write(name, data), repeat)
        scan_ms = _median_ms(lambda text=text: scan(text, path="notes/n.md"), repeat)
        rows.append((name, scan_ms, write_ms))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer examples and notes")
    args = parser.parse_args()
    examples, notes, repeat = (2, 200, 5) if args.quick else (4, 1000, 15)
    print(f"# Secret scanner benchmark, {datetime.date.today().isoformat()}")
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}\n")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows, total, ours, base = recall(examples, folder)
        print("## Recall on generated secrets\n")
        print("| kind | planted | found | detect-secrets defaults |")
        print("|---|---:|---:|---:|")
        for kind, planted, found, base_found in rows:
            print(f"| {kind} | {planted} | {found} | {base_found} |")
        print(f"| **all {len(rows)} kinds** | **{total}** | **{ours} ({ours / total:.1%})** | **{base} ({base / total:.1%})** |\n")

        print("## False positives (texts flagged, none holds a secret)\n")
        print("| corpus | texts | flagged | rate | detect-secrets defaults | kinds flagged |")
        print("|---|---:|---:|---:|---:|---|")
        for name, count, flagged, base_flagged, kinds in false_positives(notes, folder):
            shown = ", ".join(f"{k} x{n}" for k, n in kinds.most_common()) or "-"
            print(
                f"| {name} | {count} | {flagged} | {flagged / count:.1%} | "
                f"{base_flagged} ({base_flagged / count:.1%}) | {shown} |"
            )

        print("\n## Cost per write (median)\n")
        print("| text | scan | atomic write of the same bytes | scan / write | scan / 15 ms write+commit |")
        print("|---|---:|---:|---:|---:|")
        for name, scan_ms, write_ms in cost(repeat, folder):
            print(f"| {name} | {scan_ms:.2f} ms | {write_ms:.2f} ms | {scan_ms / write_ms:.1f}x | {scan_ms / 15:.0%} |")


if __name__ == "__main__":
    main()
