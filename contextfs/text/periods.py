"""The days, months and years a text names: "on 13 October 2023", "in May 2023", "in 2023".

A question that names a period asks about what was said or written then ("What did
Melanie paint on October 13, 2023?"), so rankers let a passage dated within that period
count more (see :data:`contextfs.text.scoring.PRIOR`). The words stay ordinary words as well:
this only reads which periods are named, it never changes what a query matches.

Recognised, in English, case-insensitively:

* a day: ``13 October 2023``, ``13th of October, 2023``, ``October 13, 2023``,
  ``Oct 13 2023``, ``2023-10-13``;
* a month: ``October 2023``, ``Oct, 2023``, ``2023-10``;
* a year: a four-digit number from 1900 to 2099 standing on its own.

A month or day without a year ("in June", "on the 13th") names nothing: which year it
means depends on when it was said, and a wrong guess would mislead the ranking.

A named day *reaches* the :data:`DAY_REACH` days after it: a question names the day
something happened, and a chat talks about it then and in the days after ("yesterday",
"last night", "on Sunday"). In real messaging-app chats, 12 of 32 evidence messages for a
question naming a day were sent on that day, and the misses were sent just after it (the
answer to "Where was Kate on 31 Dec 2023?" was sent on 1 January); in LoCoMo, 43 of 55
were sent on the day, 5 in the two days after. Months and years reach no further: they
are long enough to hold what is said about them. Days before a named day are not
reached: a message can announce a plan, but a question about a day asks what happened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

__all__ = ["DAY_REACH", "Period", "aware_moment", "day_of", "moment_of", "periods", "within"]

_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = (
    r"(?P<{name}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR = r"(?P<{name}>(?:19|20)\d\d)"
_DAY = r"(?P<{name}>[0-3]?\d)(?:st|nd|rd|th)?"
_FORMS = (
    (
        "day",
        rf"\b{_DAY.format(name='d')}(?:\s+of)?\s+{_MONTH.format(name='m')},?\s+{_YEAR.format(name='y')}\b",
    ),
    (
        "day",
        rf"\b{_MONTH.format(name='m')}\s+{_DAY.format(name='d')},?\s+{_YEAR.format(name='y')}\b",
    ),
    ("day", rf"\b{_YEAR.format(name='y')}-(?P<mn>[01]\d)-{_DAY.format(name='d')}\b"),
    ("month", rf"\b{_MONTH.format(name='m')},?\s+{_YEAR.format(name='y')}\b"),
    ("month", rf"\b{_YEAR.format(name='y')}-(?P<mn>[01]\d)\b(?!-\d)"),
    ("year", rf"(?<![\w.-]){_YEAR.format(name='y')}(?![\w-]|\.\d)"),
)
_PATTERNS = tuple((kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _FORMS)


#: How many days after a named day the rankers still read as that day (see the module doc).
DAY_REACH = 2


@dataclass(frozen=True)
class Period:
    """A named period: from ``start`` (inclusive) to ``end`` (exclusive), and the text that named it."""

    start: date
    end: date
    text: str

    @property
    def until(self) -> date:
        """The end of what the period reaches (exclusive): a day reaches :data:`DAY_REACH` more days."""
        return (
            self.end + timedelta(days=DAY_REACH)
            if self.end - self.start == timedelta(days=1)
            else self.end
        )

    def holds(self, moment: date) -> bool:
        return self.start <= moment < self.end

    def reaches(self, moment: date) -> bool:
        return self.start <= moment < self.until


def _month(m: re.Match[str]) -> int:
    groups = m.groupdict()
    if groups.get("mn"):
        return int(groups["mn"])
    word = m.group("m").lower().rstrip(".")
    return next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(word[:3]))


def _period(kind: str, m: re.Match[str]) -> Period | None:
    try:
        year = int(m.group("y"))
        if kind == "year":
            return Period(date(year, 1, 1), date(year + 1, 1, 1), m.group())
        month = _month(m)
        if kind == "month":
            return Period(
                date(year, month, 1), date(year + (month == 12), month % 12 + 1, 1), m.group()
            )
        start = date(year, month, int(m.group("d")))
    except ValueError:  # "31 February 2023", month 13: not a date, so not a period
        return None
    return Period(start, start + timedelta(days=1), m.group())


def periods(text: str | None) -> tuple[Period, ...]:
    """The periods ``text`` names, in the order they appear (each span read once, the most
    precise reading first: "13 October 2023" is a day, not also a month and a year)."""
    if not text or not any(ch.isdigit() for ch in text):
        return ()
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            got = _period(kind, m)
            if got is not None:
                found.append((m.start(), got))
                taken.append((m.start(), m.end()))
    return tuple(p for _, p in sorted(found, key=lambda item: item[0]))


def aware_moment(value: object) -> datetime | None:
    """A time as logged or written in frontmatter (ISO text, a date or a datetime) as an aware
    datetime (UTC when it names no zone), or None when it names no time."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" else text)
        except ValueError:
            return None
    else:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def moment_of(value: object) -> float:
    """A time as a POSIX timestamp, for ordering (0.0, the oldest, when it names no time)."""
    moment = aware_moment(value)
    return moment.timestamp() if moment is not None else 0.0


def day_of(value: object) -> date | None:
    """The calendar day of a time as logged or written in frontmatter (ISO text, a date or a
    datetime; the day in UTC when the time has a zone), or None when it names no day."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    moment = aware_moment(value)
    return moment.astimezone(timezone.utc).date() if moment is not None else None


def within(moment: date | datetime | None, named: tuple[Period, ...]) -> bool:
    """True when ``moment`` falls in what one of the ``named`` periods reaches (never for no moment)."""
    if moment is None or not named:
        return False
    day = moment.date() if isinstance(moment, datetime) else moment
    return any(p.reaches(day) for p in named)
