"""Benchmark: the secret scanner's recall, false positives and cost, against the previous scanner.

    python tests/benchmarks/bench_secrets.py [--quick] [--noseyparker DIR] [--kingfisher DIR]
                                             [--locomo DIR] [--baseline-ref REF]

Every table compares the scanner of this tree with the **previous scanner** (contextfs as of
``--baseline-ref``, default ``4a00d85``: detect-secrets' plugins and keyword detector plus a few
hand-written formats), run in the same process tree on the same texts (a subprocess imports
the old package from ``git archive``).

1. **Public corpora the scanner was not tuned on** (``tests/secret_corpora.py``): the example
   strings of Nosey Parker's rules and of Kingfisher's earlier YAML rules, one file per vendor
   or family. Folders from ``--noseyparker`` / ``CONTEXTFS_NOSEYPARKER_RULES`` (the
   ``crates/noseyparker/data/default/builtin/rules`` folder of praetorian-inc/noseyparker) and
   ``--kingfisher`` / ``CONTEXTFS_KINGFISHER_RULES`` (``data/rules`` of mongodb/kingfisher,
   mid-2025, before its SDK bundled the Betterleaks catalogue); without them, the sample in
   ``tests/data/secret_corpus``. Counted: examples of credential rules (not ids, hosts or
   hashes) whose secret is not an evident placeholder, as written; and their secrets under a
   credential-like name in 14 syntaxes. "Covered" vendor families are those a rule of the
   vendor rule set or a named kind of the scanner names; the "generic" family (passwords and
   keys of no vendor's format) has a row of its own.
2. **Generated secrets** (``tests/secret_samples.py``): 28 kinds in 5 contexts.
3. **False positives**: ``sample-context/``, ``docs/``, generated notes, and LoCoMo's
   conversation turns (``--locomo``, default ``../shared/data/locomo``; snap-research/locomo).
4. **Cost**: one scan of a 7 KB note and of a 1 MB file, old and new, in this run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from secret_corpora import SAMPLE, assigned_notes, evident_placeholder, rule_examples, values_of  # noqa: E402
from secret_samples import CONTEXTS, NOT_EXPECTED, SECRET_KINDS, ordinary_note  # noqa: E402

from contextfs.gate.secrets import KINDS, scan  # noqa: E402

DEFAULT_BASELINE = "4a00d85"
#: Families that are no vendor's format: values people chose, found only by the name they are
#: assigned to and their shape; reported on a row of their own.
GENERIC = frozenset({"generic"})
DEFAULT_LOCOMO = REPO / ".." / "shared" / "data" / "locomo"
Texts = list[tuple[str, str]]  # (text, path)

_WORKER = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import contextfs
assert contextfs.__file__.startswith(sys.argv[1]), contextfs.__file__
# Trees from before the package was split into folders by concern keep the scanner at the
# top; asking for contextfs.gate there would reach the installed (editable) tree instead.
if os.path.isdir(os.path.join(sys.argv[1], "contextfs", "gate")):
    from contextfs.gate import secrets
else:
    from contextfs import secrets
assert secrets.__file__.startswith(sys.argv[1]), secrets.__file__
scan = secrets.scan
for line in sys.stdin:
    text, path = json.loads(line)
    if text == "\0timing":
        import time
        sample, n = path
        scan(sample)
        start = time.perf_counter()
        for _ in range(n):
            scan(sample, path="notes/n.md")
        print(json.dumps((time.perf_counter() - start) / n * 1000), flush=True)
        continue
    print(json.dumps(bool(scan(text, path=path))), flush=True)
"""


class Baseline:
    """The previous scanner in a subprocess: the package of ``ref`` from ``git archive``."""

    def __init__(self, ref: str, folder: Path) -> None:
        tree = folder / "baseline"
        tree.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", ref, "contextfs"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        self.ref = ref
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tree)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, text: str, path: object) -> str:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps([text, path]) + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline()

    def flags(self, texts: Texts) -> list[bool]:
        return [bool(json.loads(self._ask(text, path))) for text, path in texts]

    def scan_ms(self, text: str, repeat: int) -> float:
        return float(json.loads(self._ask("\0timing", [text, repeat])))

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _flags(texts: Texts) -> list[bool]:
    return [bool(scan(text, path=path)) for text, path in texts]


def _rate(hits: Iterable[bool]) -> tuple[int, int]:
    items = list(hits)
    return sum(items), len(items)


def _pct(found: int, total: int) -> str:
    return f"{found}/{total} ({found / total:.1%})" if total else "-"


# -- 1. public corpora ---------------------------------------------------------------------


def _covered_families() -> Callable[[str], bool]:
    """A family is covered when a rule of the vendor rule set or a named kind names it."""
    from contextfs.gate.secrets_rules import kind_of, load

    names = {
        re.sub(r"[^a-z0-9]", "", kind_of(m["id"]).removeprefix("rule ").lower())
        for m in load().rules.metadata()
        if m["visible"]
    }
    names |= {re.sub(r"[^a-z0-9]", "", k.lower()) for k in KINDS}

    def covered(family: str) -> bool:
        key = re.sub(r"[^a-z0-9]", "", family.lower())
        return key not in GENERIC and len(key) >= 3 and any(name.startswith(key) for name in names)

    return covered


def corpus(name: str, folder: Path, baseline: Baseline, quick: bool) -> None:
    examples = [e for e in rule_examples(folder) if e.credential]
    realistic = [e for e in examples if any(not evident_placeholder(v) for v in values_of(e))]
    covered = _covered_families()
    texts = [(e.text, "notes/n.md") for e in realistic]
    new, old = _flags(texts), baseline.flags(texts)
    families = Counter(e.family for e in realistic)
    print(
        f"### {name}: {len(examples)} examples of credential rules, {len(realistic)} with a realistic secret, "
        f"{len(families)} families ({sum(1 for f in families if covered(f))} vendor families covered)\n"
    )
    print("| as written | examples | this scanner | previous scanner |")
    print("|---|---:|---:|---:|")
    generic = lambda f: f in GENERIC  # noqa: E731
    for label, keep in (
        ("all families", lambda f: True),
        ("vendor families covered", covered),
        ("generic (no vendor format)", generic),
        ("vendor families not covered", lambda f: not covered(f) and not generic(f)),
    ):
        idx = [i for i, e in enumerate(realistic) if keep(e.family)]
        print(
            f"| {label} | {len(idx)} | {_pct(*_rate(new[i] for i in idx))} | {_pct(*_rate(old[i] for i in idx))} |"
        )
    missed = Counter(
        e.family for e, hit in zip(realistic, new, strict=True) if not hit and covered(e.family)
    )
    if missed:
        print(
            f"\nMissed in covered families: {', '.join(f'{f} x{n}' for f, n in missed.most_common())}"
        )

    values: dict[str, str] = {}
    for e in realistic:
        for value in values_of(e):
            if not evident_placeholder(value):
                values.setdefault(value, e.family)
    items = sorted(values.items())
    if quick:
        items = items[::4]
    notes = [
        (family, template, note)
        for value, family in items
        for template, note in assigned_notes(family, value)
    ]
    texts = [(note, "notes/setup.md") for _, _, note in notes]
    new, old = _flags(texts), baseline.flags(texts)
    print(
        f"\n| assigned to a credential-like name ({len(items)} secrets) | notes | this scanner | previous scanner |"
    )
    print("|---|---:|---:|---:|")
    for label, keep in (
        ("all families", lambda f: True),
        ("vendor families covered", covered),
        ("generic (no vendor format)", lambda f: f in GENERIC),
    ):
        idx = [i for i, (f, _, _) in enumerate(notes) if keep(f)]
        print(
            f"| **{label}** | {len(idx)} | **{_pct(*_rate(new[i] for i in idx))}** | {_pct(*_rate(old[i] for i in idx))} |"
        )
    for template in dict.fromkeys(t for _, t, _ in notes):
        idx = [i for i, (_, t, _) in enumerate(notes) if t == template]
        print(
            f"| {template} | {len(idx)} | {_pct(*_rate(new[i] for i in idx))} | {_pct(*_rate(old[i] for i in idx))} |"
        )
    print()


# -- 2. generated secrets ------------------------------------------------------------------


def generated(baseline: Baseline, examples: int) -> None:
    texts: Texts = []
    for kind, make in SECRET_KINDS.items():
        for context_name, context in CONTEXTS.items():
            if context_name in NOT_EXPECTED.get(kind, set()):
                continue
            for seed in range(examples):
                rng = random.Random(f"bench/{kind}/{context_name}/{seed}")
                texts.append((context(make(rng), rng), "notes/n.md"))
    print(
        f"| generated secrets ({len(SECRET_KINDS)} kinds x 5 contexts) | {len(texts)} | "
        f"{_pct(*_rate(_flags(texts)))} | {_pct(*_rate(baseline.flags(texts)))} |\n"
    )


# -- 3. false positives ----------------------------------------------------------------------


def locomo_turns(folder: Path) -> list[str]:
    turns = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        for key, session in data.items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [t["text"] for t in session if isinstance(t, dict) and t.get("text")]
    return turns


def false_positives(baseline: Baseline, notes: int, locomo: Path) -> None:
    corpora: dict[str, Texts] = {
        "sample-context": [
            (p.read_text("utf-8"), p.relative_to(REPO).as_posix())
            for p in sorted((REPO / "sample-context").rglob("*.md"))
        ],
        "docs (README, docs/*.md)": [
            (p.read_text("utf-8"), "docs/" + p.name)
            for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        ],
        "generated notes": [
            (ordinary_note(random.Random(f"bench/ordinary/{i}")), "memory/n.md")
            for i in range(notes)
        ],
    }
    turns = locomo_turns(locomo)
    if turns:
        corpora["LoCoMo turns"] = [(t, "memory/recall/turn.md") for t in turns]
    else:
        print(
            f"(no LoCoMo data in {locomo}: pass --locomo; from snap-research/locomo, data/locomo10.zip)\n"
        )
    print("| corpus | texts | flagged by this scanner | previous scanner | kinds flagged |")
    print("|---|---:|---:|---:|---|")
    for name, texts in corpora.items():
        kinds: Counter[str] = Counter()
        flagged = 0
        for text, path in texts:
            found = scan(text, path=path)
            flagged += bool(found)
            kinds.update(f.kind for f in found)
        old = sum(baseline.flags(texts))
        shown = ", ".join(f"{k} x{n}" for k, n in kinds.most_common()) or "-"
        print(
            f"| {name} | {len(texts)} | {_pct(flagged, len(texts))} | {_pct(old, len(texts))} | {shown} |"
        )
    print()


# -- 4. cost -----------------------------------------------------------------------------------


def _mean_ms(fn: Callable[[], object], repeat: int) -> float:
    """The mean of ``repeat`` runs, measured as the previous scanner's worker measures it."""
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1000


def cost(baseline: Baseline, repeat: int) -> None:
    sample = "\n".join(
        p.read_text("utf-8") for p in sorted((REPO / "sample-context").rglob("*.md"))
    )
    rng = random.Random("bench/cost")
    generated = ""
    while len(generated) < 1_100_000:
        generated += ordinary_note(rng) + "\n"
    scan("warm up")
    print("| text | this scanner (mean) | previous scanner (mean) | ratio |")
    print("|---|---:|---:|---:|")
    for name, text, n in (
        ("7 KB note (sample-context)", sample[:7000], repeat * 20),
        ("7 KB note (generated)", generated[:7000], repeat * 20),
        ("1 MB file (generated)", generated[:1_000_000], repeat),
    ):
        new = _mean_ms(lambda text=text: scan(text, path="notes/n.md"), n)
        old = baseline.scan_ms(text, n)
        print(f"| {name} | {new:.2f} ms | {old:.2f} ms | {new / old:.2f}x |")
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from contextfs.gate.secrets import scan; scan('x')"], check=True
    )
    print(
        f"\nFirst scan in a fresh process (imports and rule set load, cache warm): "
        f"{time.perf_counter() - start:.2f} s including interpreter start.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer texts and repeats")
    parser.add_argument(
        "--noseyparker",
        default=os.environ.get("CONTEXTFS_NOSEYPARKER_RULES"),
        help="Nosey Parker's rules folder (default: the sample in tests/data/secret_corpus)",
    )
    parser.add_argument(
        "--kingfisher",
        default=os.environ.get("CONTEXTFS_KINGFISHER_RULES"),
        help="Kingfisher's earlier data/rules folder (skipped without it)",
    )
    parser.add_argument(
        "--locomo", default=str(DEFAULT_LOCOMO), help="folder of LoCoMo's JSON files"
    )
    parser.add_argument(
        "--baseline-ref", default=DEFAULT_BASELINE, help="git ref of the previous scanner"
    )
    args = parser.parse_args()
    quick = args.quick
    print(f"# Secret scanner benchmark, {datetime.date.today().isoformat()}")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"previous scanner: contextfs at {args.baseline_ref}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        baseline = Baseline(args.baseline_ref, Path(tmp))
        try:
            print("## 1. Public corpora (not tuned on)\n")
            corpus(
                "Nosey Parker rules" + ("" if args.noseyparker else " (committed sample)"),
                Path(args.noseyparker) if args.noseyparker else SAMPLE,
                baseline,
                quick,
            )
            if args.kingfisher:
                corpus("Kingfisher's earlier YAML rules", Path(args.kingfisher), baseline, quick)
            else:
                print(
                    "(Kingfisher's earlier rules skipped: pass --kingfisher DIR, data/rules of mongodb/kingfisher)\n"
                )
            print("## 2. Generated secrets\n")
            print("| corpus | texts | this scanner | previous scanner |")
            print("|---|---:|---:|---:|")
            generated(baseline, 1 if quick else 4)
            print("## 3. False positives (texts flagged; none holds a secret)\n")
            false_positives(baseline, 200 if quick else 1000, Path(args.locomo))
            print("## 4. Cost per scan\n")
            cost(baseline, 3 if quick else 10)
        finally:
            baseline.close()


if __name__ == "__main__":
    main()
