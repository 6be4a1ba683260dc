"""Under mutmut (``make mutate``), a test that runs far past its clean time fails.

A mutant that makes a loop endless (``run -= 1`` written ``run += 1`` in a scan of a line)
hangs the first test that reaches the loop. mutmut stops the whole child only when it has
used its CPU allowance: four times the clean time of *every* test of the function, plus
20 s, twice over, which is minutes for a function hundreds of tests reach. Here each test
gets its own allowance, ten times its clean duration (mutmut's ``mutmut-stats.json``) and
at least 10 s of wall time; past it the test fails with :class:`MutantHang`, so the mutant
counts as noticed and its child moves on. A test with no clean duration keeps mutmut's
limit alone. Outside a mutation run nothing here does anything.

A mutant that only makes code ten times slower is noticed too: contextfs promises its
costs (the scanner's bounded patterns, a view's budget search), so that is a defect, not
an equivalent change.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Generator
from types import FrameType

import pytest
from mutant_order import durations, mutant_under_test

#: A test's allowance: this many times its clean duration, and never less than FLOOR seconds.
FACTOR = 10.0
FLOOR = 10.0


class MutantHang(Exception):
    """A test ran past its allowance under a mutant."""


def allowance(took: float) -> float:
    return max(FLOOR, FACTOR * took)


@functools.cache
def clean_durations() -> dict[str, float]:
    """Read once per session: mutmut runs each mutant's tests in a fresh process."""
    return durations()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    took = clean_durations().get(item.nodeid) if mutant_under_test() else None
    # A signal handler can only be set from the main thread.
    if took is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    limit = allowance(took)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise MutantHang(
            f"{item.nodeid} ran past {limit:.0f} s ({FACTOR:.0f} times its clean "
            f"{took:.2f} s): the mutant made it hang"
        )

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
