"""The order a mutant's tests run in under ``make mutate`` (``tests/mutant_order.py``):
what noticed this mutant in an earlier run first, then what noticed other mutants of the
same function, then the rest fastest first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import mutant_order
import pytest

TESTS = Path(__file__).resolve().parent.parent
INTEND = "contextfs.changes.transaction.xǁChangeǁ_intend"


@dataclass
class Item:
    nodeid: str


@dataclass
class Report:
    nodeid: str
    failed: bool


@pytest.fixture
def run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder mutmut runs a mutant's tests from, with its clean run's durations."""
    monkeypatch.chdir(tmp_path)
    durations = {"t.py::quick": 0.1, "t.py::middle": 1.0, "t.py::crash": 9.0, "t.py::slow": 5.0}
    (tmp_path / "mutmut-stats.json").write_text(json.dumps({"duration_by_test": durations}))
    return tmp_path


def _order(names: list[str]) -> list[str]:
    items = [Item(f"t.py::{n}") for n in names]
    mutant_order.pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    return [i.nodeid.removeprefix("t.py::") for i in items]


def test_outside_a_mutation_run_nothing_is_reordered_or_written(
    run_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    assert _order(["slow", "quick", "crash"]) == ["slow", "quick", "crash"]
    mutant_order.pytest_runtest_logreport(Report("t.py::crash", failed=True))  # type: ignore[arg-type]
    # mutmut's clean run and its stats run name no mutant either.
    monkeypatch.setenv("MUTANT_UNDER_TEST", "stats")
    assert _order(["slow", "quick"]) == ["slow", "quick"]
    mutant_order.pytest_runtest_logreport(Report("t.py::slow", failed=True))  # type: ignore[arg-type]
    assert not (run_folder / "mutmut-kills.tsv").exists()


def test_without_kills_the_tests_run_fastest_first_and_unmeasured_ones_last(
    run_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{INTEND}__mutmut_1")
    assert _order(["new", "crash", "slow", "quick", "middle"]) == [
        "quick",
        "middle",
        "slow",
        "crash",
        "new",
    ]


def test_what_noticed_a_mutant_of_the_function_runs_first_for_the_next(
    run_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{INTEND}__mutmut_1")
    mutant_order.pytest_runtest_logreport(Report("t.py::quick", failed=False))  # type: ignore[arg-type]
    mutant_order.pytest_runtest_logreport(Report("t.py::crash", failed=True))  # type: ignore[arg-type]
    assert (run_folder / "mutmut-kills.tsv").read_text("utf-8") == (
        f"{INTEND}__mutmut_1\tt.py::crash\n"
    )
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{INTEND}__mutmut_2")
    mutant_order.pytest_runtest_logreport(Report("t.py::slow", failed=True))  # type: ignore[arg-type]
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{INTEND}__mutmut_3")
    mutant_order.pytest_runtest_logreport(Report("t.py::slow", failed=True))  # type: ignore[arg-type]
    # Another function's kills say nothing about this one's mutants, nor these about its.
    monkeypatch.setenv("MUTANT_UNDER_TEST", "contextfs.changes.journal.x_flush__mutmut_1")
    mutant_order.pytest_runtest_logreport(Report("t.py::middle", failed=True))  # type: ignore[arg-type]
    monkeypatch.setenv("MUTANT_UNDER_TEST", "contextfs.changes.journal.x_flush__mutmut_2")
    assert _order(["quick", "middle", "slow", "crash"]) == ["middle", "quick", "slow", "crash"]

    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{INTEND}__mutmut_4")
    # Most mutants noticed first (slow: 2, crash: 1), then the rest fastest first.
    assert _order(["quick", "middle", "slow", "crash"]) == ["slow", "crash", "quick", "middle"]


def test_what_noticed_this_very_mutant_before_runs_first_of_all(
    run_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record carried over from the last run: mutant 1 was noticed by the crash test,
    mutants 2 and 3 by the slow one; mutant 1 starts with its own killer all the same."""
    (run_folder / "mutmut-kills.tsv").write_text(
        f"{INTEND}__mutmut_1\tt.py::crash\n"
        f"{INTEND}__mutmut_2\tt.py::slow\n"
        f"{INTEND}__mutmut_3\tt.py::slow\n"
        # The same pair twice counts once: a test is weighed by the mutants it noticed.
        f"{INTEND}__mutmut_1\tt.py::middle\n"
        f"{INTEND}__mutmut_1\tt.py::middle\n"
        f"{INTEND}__mutmut_1\tt.py::middle\n",
        "utf-8",
    )
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{INTEND}__mutmut_1")
    assert _order(["quick", "middle", "slow", "crash"]) == ["middle", "crash", "slow", "quick"]
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{INTEND}__mutmut_3")
    assert _order(["quick", "middle", "slow", "crash"]) == ["slow", "middle", "crash", "quick"]


def test_a_line_naming_only_the_function_counts_for_every_mutant_of_it(
    run_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (run_folder / "mutmut-kills.tsv").write_text(f"{INTEND}\tt.py::crash\nbroken line\n")
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{INTEND}__mutmut_9")
    assert _order(["quick", "crash"]) == ["crash", "quick"]


def test_a_real_session_records_its_kill_and_the_next_runs_that_test_first(
    tmp_path: Path,
) -> None:
    """Through pytest itself: the hooks are found as a plugin, a failure of the first
    session is written down, and the second session runs the failing test first."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["mutant_order"]\n')
    (tmp_path / "test_t.py").write_text(
        "def test_a_quick():\n    pass\n\n"
        "def test_b_also_quick():\n    pass\n\n"
        "def test_c_notices():\n    assert False\n"
    )
    (tmp_path / "mutmut-stats.json").write_text(json.dumps({"duration_by_test": {}}))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        MUTANT_UNDER_TEST=f"{INTEND}__mutmut_1",
    )

    def run() -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-v", "-p", "no:cacheprovider", "test_t.py"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        return [line.split()[0] for line in out.splitlines() if line.startswith("test_t.py::")]

    assert run() == [
        "test_t.py::test_a_quick",
        "test_t.py::test_b_also_quick",
        "test_t.py::test_c_notices",
    ]
    assert (tmp_path / "mutmut-kills.tsv").read_text("utf-8") == (
        f"{INTEND}__mutmut_1\ttest_t.py::test_c_notices\n"
    )
    env["MUTANT_UNDER_TEST"] = f"{INTEND}__mutmut_2"
    assert run() == ["test_t.py::test_c_notices"]  # first, and -x stops there
