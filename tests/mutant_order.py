"""Under mutmut (``make mutate``), the order a mutant's tests run in.

mutmut hands each mutant the tests that reached its function, in no particular order, and
stops at the first failure; so a mutant costs the time of every test that runs before the
one that notices it. Three things decide the order here:

1. the tests that noticed this very mutant in an earlier run of its group come first:
   ``tests/mutate.py`` keeps the record when it stages a group afresh, so a second full run
   of unchanged code starts every killed mutant with the test that killed it, the way
   PIT's history file or Stryker's incremental report do;
2. then the tests that noticed other mutants of the same function, most mutants first:
   the mutants of a function are tested one after another, and what noticed one change to
   ``Change._intend`` (a crash test, which takes seconds) usually notices the next, where
   the quick tests that only pass through the function never do;
3. then the rest, fastest first, by the durations of mutmut's clean run
   (``mutmut-stats.json``), so a mutant a quick test kills does not wait behind the
   power-cut tests.

The order only decides how soon a mutant is noticed, never whether it is: every test that
reached the function still runs until one fails. Each failure is written to
``mutmut-kills.tsv`` beside the stats (mutant, test): one short line appended at a time,
so the children of a run share the file safely. Outside a mutation run
(``MUTANT_UNDER_TEST`` names no mutant) nothing here does anything.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

STATS = Path("mutmut-stats.json")
KILLS = Path("mutmut-kills.tsv")


def mutant_under_test() -> str | None:
    name = os.environ.get("MUTANT_UNDER_TEST", "")
    return name if "__mutmut_" in name else None


def function_of(mutant: str) -> str:
    """``pkg.mod.xǁChangeǁ_intend__mutmut_7`` -> ``pkg.mod.xǁChangeǁ_intend``."""
    return mutant.rsplit("__mutmut_", 1)[0]


def read_kills() -> list[tuple[str, str]]:
    """Every (mutant, test) written down, in the order they were noticed. A line of the
    older form names the function instead of the mutant; it counts for the function."""
    try:
        lines = KILLS.read_text("utf-8").splitlines()
    except OSError:
        return []
    return [(name, test) for line in lines for name, _, test in [line.partition("\t")] if test]


def kills_of(mutant: str) -> tuple[set[str], Counter[str]]:
    """The tests that noticed ``mutant`` before, and for each test how many distinct
    mutants of its function it noticed (tests by node id)."""
    function = function_of(mutant)
    this: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for name, test in read_kills():
        if name == mutant:
            this.add(test)
        if function_of(name) == function:
            pairs.add((name, test))
    return this, Counter(test for _, test in pairs)


def durations() -> dict[str, float]:
    try:
        return dict(json.loads(STATS.read_text("utf-8"))["duration_by_test"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # no clean run yet: every test counts as slow


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mutant = mutant_under_test()
    if mutant is None:
        return
    this, kills, took = *kills_of(mutant), durations()
    items.sort(
        key=lambda item: (
            item.nodeid not in this,
            -kills[item.nodeid],
            took.get(item.nodeid, float("inf")),
        )
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    mutant = mutant_under_test()
    if mutant is None or not report.failed:
        return
    line = f"{mutant}\t{report.nodeid}\n"
    # One write of a short line to a file opened for appending lands whole, whichever child
    # of the run writes at the same time.
    fd = os.open(KILLS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)
