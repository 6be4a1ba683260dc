"""One reading of a time as logged or written in frontmatter, used for ordering (moment_of),
for days (day_of) and by the index (parse_when)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from contextfs.search.schema import parse_when
from contextfs.text.periods import aware_moment, day_of, moment_of

ZONES = st.sampled_from(
    [None, timezone.utc, timezone(timedelta(hours=-5)), timezone(timedelta(hours=9, minutes=30))]
)
MOMENTS = st.builds(
    lambda naive, zone: naive if zone is None else naive.replace(tzinfo=zone),
    st.datetimes(min_value=datetime(1971, 1, 2), max_value=datetime(2999, 12, 30)),
    ZONES,
)


@given(MOMENTS, st.booleans())
def test_text_and_datetime_are_read_alike(moment: datetime, as_text: bool) -> None:
    value: object = moment.isoformat() if as_text else moment
    utc = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment
    assert aware_moment(value) == utc
    assert moment_of(value) == utc.timestamp()
    assert day_of(value) == utc.astimezone(timezone.utc).date()
    assert parse_when(value) == utc.astimezone(timezone.utc).replace(tzinfo=None)


def test_forms_written_by_hand() -> None:
    assert aware_moment("2026-03-01T10:00:00Z") == datetime(2026, 3, 1, 10, tzinfo=timezone.utc)
    assert aware_moment(" 2026-03-01t10:00:00z ") == datetime(2026, 3, 1, 10, tzinfo=timezone.utc)
    assert day_of("2026-03-01T23:30:00-05:00") == date(2026, 3, 2)  # the UTC day
    assert day_of(date(2026, 3, 1)) == date(2026, 3, 1)
    assert parse_when(date(2026, 3, 1)) == datetime(2026, 3, 1)


def test_what_names_no_time() -> None:
    for value in (None, "", "   ", "yesterday", "2026-13-01", 20260301, ["2026-03-01"]):
        assert aware_moment(value) is None
        assert day_of(value) is None
        assert parse_when(value) is None
        assert moment_of(value) == 0.0
