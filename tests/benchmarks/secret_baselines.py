"""The previous scanners of the secret benchmark (``bench_secrets.py``): contextfs as of a git
ref, imported from ``git archive`` in a subprocess of its own, asked the same texts as the
scanner of this tree; and the table cells both fill.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from contextfs.gate.secrets import scan

REPO = Path(__file__).resolve().parents[2]
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
        tree = folder / re.sub(r"[^A-Za-z0-9._-]", "_", ref)
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


def flags(texts: Texts) -> list[bool]:
    """This tree's verdict on each text."""
    return [bool(scan(text, path=path)) for text, path in texts]


class Baselines(list[Baseline]):
    """The previous scanners, one column each in every table."""

    def header(self) -> str:
        return " | ".join(f"at {b.ref}" for b in self)

    def rule(self) -> str:
        return "|".join("---:" for _ in self)

    def flags(self, texts: Texts) -> list[list[bool]]:
        return [b.flags(texts) for b in self]

    @staticmethod
    def cells(olds: list[list[bool]], idx: list[int]) -> str:
        return " | ".join(pct(*rate(old[i] for i in idx)) for old in olds)


def rate(hits: Iterable[bool]) -> tuple[int, int]:
    items = list(hits)
    return sum(items), len(items)


def pct(found: int, total: int) -> str:
    return f"{found}/{total} ({found / total:.1%})" if total else "-"
