"""Date clauses and filters at the edges of their periods.

A period (a year, a month, a day) runs from its first instant to its last; ``>`` starts
after the last, ``<`` stops before the first. One note sits on each side of each edge,
so a bound that is one day, one month or one instant off changes what comes back.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

import contextfs.clock as clock
from contextfs import ContextManager
from contextfs.errors import SearchIndexError

UTC = timezone.utc
WHEN = {
    "a.md": datetime(2025, 12, 31, 23, 59, 59, tzinfo=UTC),
    "b.md": datetime(2026, 1, 1, tzinfo=UTC),
    "c.md": datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC),
    "d.md": datetime(2026, 2, 1, tzinfo=UTC),
    "e.md": datetime(2026, 2, 2, tzinfo=UTC),
    "f.md": datetime(2026, 12, 1, tzinfo=UTC),
    "g.md": datetime(2027, 1, 1, tzinfo=UTC),
    "h.md": datetime(2027, 1, 2, tzinfo=UTC),
}


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> ContextManager:
    # Only read by the tests below: one root for all of them.
    manager = ContextManager(tmp_path_factory.mktemp("dates") / "ctx", actor="agent:test")
    with pytest.MonkeyPatch.context() as patch:
        for name, when in WHEN.items():
            patch.setattr(clock, "now", lambda when=when: when)
            manager.write(name, "calendar entry")
    # A person's note whose time is the very last instant of 31 January.
    (Path(manager.root) / "z.md").write_text(
        "---\nupdated: 2026-01-31T23:59:59.999999Z\n---\ncalendar entry\n"
    )
    manager.sync()
    yield manager
    manager.close()


def found(ctx: ContextManager, query: str = "calendar", **filters: object) -> str:
    return "".join(sorted(h.path[0] for h in ctx.search(query, limit=50, **filters)))


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("updated:2026", "bcdefz"),
        ("updated:2026-01", "bcz"),
        ("updated:2026-12", "f"),
        ("updated:2026-01-31", "cz"),
        ("updated:>2026-01-31", "defgh"),
        ("updated:>=2026-02-01", "defgh"),
        ("updated:<2026-02-01", "abcz"),
        ("updated:<=2026-01-31", "abcz"),
        ("updated:>2026-01-31T23:59:59", "defghz"),
        ("updated:[2026-01-31 TO 2026-12-31]", "cdefz"),
        ("updated:[2026-01-02 TO 2026-01-31]", "cz"),
        ("updated:[* TO 2026-01-31]", "abcz"),
        ("updated:[2026-12 TO *]", "fgh"),
        # Months and days may be written with one digit; a year is any four digits.
        ("updated:2026-1-31", "cz"),
        ("updated:2026-2", "de"),
        ("updated:[0999-01-01 TO 2025-12-31]", "a"),
    ],
)
def test_a_clause_takes_whole_periods(ctx: ContextManager, clause: str, expected: str) -> None:
    assert found(ctx, f"calendar {clause}") == expected


def test_since_and_until_take_dates_strings_and_times(ctx: ContextManager) -> None:
    assert found(ctx, since=date(2026, 1, 31), until=date(2026, 1, 31)) == "cz"
    assert found(ctx, since="2026-01-31", until="2026-01-31") == "cz"
    assert found(ctx, since=date(2026, 2, 1), until="2026-12") == "def"
    # A time with an offset is the same instant in UTC: 05:00 at +05:00 is midnight UTC.
    five = timezone(timedelta(hours=5))
    assert found(ctx, since=datetime(2026, 2, 1, 5, 0, tzinfo=five)) == "defgh"
    assert found(ctx, until=datetime(2026, 1, 1, 4, 59, 59, tzinfo=five)) == "a"


@pytest.mark.parametrize("bad", ["updated:2026-13", "updated:2026-02-30", "updated:[x TO 2026]"])
def test_a_date_that_does_not_exist_is_refused(ctx: ContextManager, bad: str) -> None:
    with pytest.raises(SearchIndexError, match="write dates as 2026, 2026-09 or 2026-09-14"):
        ctx.search(f"calendar {bad}")
