"""CLI latency benchmark: what an agent pays each time it shells out to ``contextfs``.

Measures, in one run, the wall time of whole processes on a copy of ``sample-context/``:

* the baseline ``python -c pass`` (a bare start of the same interpreter, the same venv);
* ``contextfs --help``, ``read``, ``ls``, ``log``, ``diff``, ``show``, ``search`` and ``context``.

Each round runs every command once in a shuffled order (so a noisy neighbour on the
machine spreads over all of them), after two warm-up runs of each (the first ``search``
builds the index, the first ``context`` fills the token-count cache). Medians are
reported with their ratio to the baseline's median, against the goals: ``read`` and ``ls``
at most 4x a bare interpreter start, ``search`` and ``context`` at most 8x.

Python caches compiled bytecode as in any installation: ``PYTHONDONTWRITEBYTECODE`` is
cleared for the commands, so the warm-up runs write ``__pycache__`` for a source checkout
(a wheel install compiles at install time). ``--uncached`` measures the other case, a
checkout where ``PYTHONDONTWRITEBYTECODE=1`` is set and no cache was ever written: the
checkout's ``__pycache__`` folders are removed first and every call compiles each
contextfs module it imports again.

``--importtime`` also runs each command once with ``python -X importtime`` and prints
the packages whose imports cost the most (self time summed per top-level package), and
``--phases`` times the steps of a ``read`` and the extra steps of ``log``, ``search``,
``context`` and a writing command inside fresh processes (medians): what the CLI costs
and what the core does. Usage::

    python tests/benchmarks/bench_cli.py [--rounds 21] [--importtime] [--phases] [--uncached]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample-context"

#: (label, arguments after ``contextfs --root ROOT``, goal as a multiple of the baseline).
COMMANDS: tuple[tuple[str, tuple[str, ...], float | None], ...] = (
    ("--help", ("--help",), None),
    ("read", ("read", "memory/facts.md"), 4.0),
    ("ls", ("ls", "memory"), 4.0),
    ("log", ("log", "-n", "5"), None),
    ("diff", ("diff", "memory/facts.md", "HEAD"), None),
    ("show", ("show", "memory/facts.md", "--at", "HEAD"), None),
    ("search", ("search", "webhook retry backoff"), 8.0),
    ("context", ("context", "--scope", "task", "--budget", "2000"), 8.0),
)


def _contextfs() -> list[str]:
    """The installed console script next to this interpreter (what a user runs)."""
    script = Path(sys.executable).with_name("contextfs")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from contextfs.cli import main; main(sys.argv[1:])"]


def _argv(label: str, root: Path) -> list[str]:
    if label == "python -c pass":
        return [sys.executable, "-c", "pass"]
    args = next(a for name, a, _ in COMMANDS if name == label)
    return [*_contextfs(), "--root", str(root), *args]


def _run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr.decode(errors='replace')}")
    return elapsed


def _importtime(argv: list[str], env: dict[str, str], top: int) -> list[tuple[str, float]]:
    """Self import time (ms) summed per top-level package, the largest first."""
    proc = subprocess.run(
        argv,
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    per_package: dict[str, float] = defaultdict(float)
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line[len("import time:") :].split("|")
        per_package[name.strip().split(".")[0]] += int(self_us) / 1000
    return sorted(per_package.items(), key=lambda kv: -kv[1])[:top]


#: Steps timed in one fresh process by ``--phases``, in the order the commands meet them
#: (each step pays only for what the steps before it did not already load).
_PHASES = """
import sys, time
root = sys.argv[1]
marks = [("start", time.perf_counter())]
def mark(label):
    marks.append((label, time.perf_counter()))
import click
mark("import click")
import contextfs.cli, contextfs.cli.store
mark("import the CLI (contextfs.cli, cli_core)")
from contextfs.manager import ContextManager
mark("import contextfs.manager (what a read-only open needs)")
ctx = ContextManager(root, actor="human", index=False, read_only=True)
mark("open the root read-only (what reading commands do)")
ctx.get("memory/facts.md")
mark("read: get memory/facts.md (PyYAML import + parse)")
ctx.history(limit=5)
mark("log: import GitPython, open the repository, git log")
import contextfs.search
mark("search: import Whoosh and contextfs.search")
ctx.search("webhook retry backoff", limit=10)
mark("search: open the index (current: no lock) + query")
from contextfs.scopes.scoped import ScopedContext
mark("context: import the view assembly (contextfs.scopes.scoped)")
from contextfs.text.tokens import get_counter, persistent_counts
with persistent_counts(ctx.parts.state):
    ScopedContext(ctx).assemble("task", budget=2000)
mark("context: assemble the view (token counts kept by earlier runs)")
get_counter().count("a text no earlier run counted")
mark("context: load the tiktoken encoding (a view with new text)")
ContextManager(root, actor="human", index=False).close()
mark("write commands: open for writing (filelock, write side, managed files, sync)")
import numpy
mark("search on a large tree: import numpy (the block ranker, 1,000+ postings)")
print("\\n".join(f"{label}\\t{(t - marks[i][1]) * 1000:.2f}" for i, (label, t) in enumerate(marks[1:])))
"""


#: Prints the folders the packages are imported from (finding them imports only ``contextfs``).
_FOLDERS = (
    "import importlib.util as u\n"
    "for n in ('contextfs', 'contextfs.scopes', 'contextfs.evolve', 'contextfs.integrations'):\n"
    "    print(*(u.find_spec(n).submodule_search_locations or ()), sep='\\n')"
)


def _source_folders(env: dict[str, str]) -> list[Path]:
    """The folders contextfs is imported from, when they are a checkout (never an installed wheel's)."""
    out = subprocess.run(
        [sys.executable, "-c", _FOLDERS],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    ).stdout
    return [Path(line) for line in out.splitlines() if line and "-packages" not in line]


def _phases(root: Path, env: dict[str, str], runs: int) -> list[tuple[str, float]]:
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", _PHASES, str(root)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for line in out.splitlines():
            label, ms = line.split("\t")
            samples.setdefault(label, []).append(float(ms))
    return [(label, statistics.median(values)) for label, values in samples.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=21, help="measured runs of each command")
    parser.add_argument(
        "--importtime", action="store_true", help="also break down import time per command"
    )
    parser.add_argument(
        "--phases", action="store_true", help="also time the steps inside one process"
    )
    parser.add_argument(
        "--uncached",
        action="store_true",
        help="as with PYTHONDONTWRITEBYTECODE=1 and no bytecode cache for the checkout's modules",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="contextfs-bench-cli-") as tmp:
        root = Path(tmp) / "context"
        shutil.copytree(SAMPLE, root)
        env = {
            **os.environ,
            "HOME": tmp,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        env.pop("CONTEXTFS_ROOT", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode is cached, as in any installation
        if args.uncached:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            for folder in _source_folders(env):
                for cache in list(folder.rglob("__pycache__")):
                    shutil.rmtree(cache, ignore_errors=True)
        subprocess.run(
            [*_contextfs(), "--root", str(root), "init"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        labels = ["python -c pass", *(name for name, _, _ in COMMANDS)]
        for label in labels:  # warm-up: bytecode, index build, kept token counts, OS file cache
            for _ in range(2):
                _run(_argv(label, root), env)
        time.sleep(2.5)  # index files settle (see contextfs.search.stamp): later opens hash none
        _run(_argv("search", root), env)
        samples: dict[str, list[float]] = {label: [] for label in labels}
        rng = random.Random(14)
        for _ in range(args.rounds):
            order = labels[:]
            rng.shuffle(order)
            for label in order:
                samples[label].append(_run(_argv(label, root), env))

        base = statistics.median(samples["python -c pass"])
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(
            f"CLI latency, {args.rounds} rounds; Python {platform.python_version()}; "
            f"{os.cpu_count()} cores; load average {load:.2f}"
            + ("; no bytecode cache for contextfs's modules" if args.uncached else "")
        )
        print()
        print("| command | median | min | vs `python -c pass` | goal | status |")
        print("|---|---:|---:|---:|---:|---|")
        for label in labels:
            med = statistics.median(samples[label])
            goal = next((g for name, _, g in COMMANDS if name == label), None)
            ratio = med / base
            status = "" if goal is None else ("met" if ratio <= goal else "not met")
            goal_text = "" if goal is None else f"<= {goal:g}x"
            print(
                f"| `{label}` | {med * 1000:.0f} ms | {min(samples[label]) * 1000:.0f} ms "
                f"| {ratio:.1f}x | {goal_text} | {status} |"
            )

        if args.phases:
            print()
            print("| step (fresh process, median of 9) | ms |")
            print("|---|---:|")
            for label, ms in _phases(root, env, 9):
                print(f"| {label} | {ms:.1f} |")

        if args.importtime:
            print()
            print("Import time per command (self time summed per top-level package, one run):")
            for label in labels[1:]:
                parts = ", ".join(
                    f"{name} {ms:.0f} ms" for name, ms in _importtime(_argv(label, root), env, 8)
                )
                print(f"- `{label}`: {parts}")


if __name__ == "__main__":
    main()
