"""A test that a mutant makes hang fails once past its own allowance under ``make mutate``
(``tests/mutant_hangs.py``), instead of holding the mutant's child for minutes."""

from __future__ import annotations

import json
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import mutant_hangs
import pytest

MUTANT = "contextfs.gate.secrets_detectors.x__glued__mutmut_7"


@dataclass
class Item:
    nodeid: str


@pytest.fixture
def run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    durations = {"t.py::quick": 0.01, "t.py::slow": 3.0}
    (tmp_path / "mutmut-stats.json").write_text(json.dumps({"duration_by_test": durations}))
    mutant_hangs.clean_durations.cache_clear()
    yield tmp_path
    mutant_hangs.clean_durations.cache_clear()


def test_the_allowance_is_ten_times_the_clean_time_and_never_under_the_floor() -> None:
    assert mutant_hangs.allowance(0.01) == mutant_hangs.FLOOR == 10.0
    assert mutant_hangs.allowance(3.0) == 30.0


def test_a_hang_under_a_mutant_fails_the_test_and_the_alarm_is_put_back(
    run_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUTANT_UNDER_TEST", MUTANT)
    monkeypatch.setattr(mutant_hangs, "FLOOR", 0.2)
    before = signal.getsignal(signal.SIGALRM)
    hook = mutant_hangs.pytest_runtest_call(Item("t.py::quick"))  # type: ignore[arg-type]
    next(hook)
    start = time.monotonic()
    with pytest.raises(mutant_hangs.MutantHang, match=r"t\.py::quick ran past 0 s"):
        while True:  # what the mutant made of a bounded loop
            pass
    assert time.monotonic() - start < 5
    hook.close()
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("mutant", "test"),
    [
        ("", "t.py::quick"),  # not a mutation run
        ("stats", "t.py::quick"),  # mutmut's stats and clean runs name no mutant
        (MUTANT, "t.py::unmeasured"),  # no clean time: mutmut's own limit applies
    ],
)
def test_no_alarm_is_set_without_a_mutant_or_a_clean_time(
    run_folder: Path, monkeypatch: pytest.MonkeyPatch, mutant: str, test: str
) -> None:
    monkeypatch.setenv("MUTANT_UNDER_TEST", mutant)
    before = signal.getsignal(signal.SIGALRM)
    hook = mutant_hangs.pytest_runtest_call(Item(test))  # type: ignore[arg-type]
    next(hook)
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    hook.close()
