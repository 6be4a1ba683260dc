"""Dates and filters: ``updated:`` clauses in a query, and the keyword filters of ``search()``.

Dates are read as whole periods (``2026``, ``2026-09``, ``2026-09-14``) or ISO times, and
compared with the ``updated`` field (the frontmatter's ``updated``, else ``created``, else
the file's mtime; a conversation turn's own time).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from whoosh import query as wq

from ..errors import SearchIndexError
from .schema import parse_when

__all__ = ["FILTERS", "build_filter", "date_bound", "date_query"]


def date_bound(text: str, *, end: bool) -> datetime:
    """'2026', '2026-09', '2026-09-14' or a full ISO time, as the start (or end) of that period."""
    text = text.strip()
    try:
        if re.fullmatch(r"\d{4}", text):
            start = datetime(int(text), 1, 1)
            stop = datetime(int(text) + 1, 1, 1)
        elif re.fullmatch(r"\d{4}-\d{1,2}", text):
            y, m = (int(x) for x in text.split("-"))
            start = datetime(y, m, 1)
            stop = datetime(y + (m == 12), m % 12 + 1, 1)
        elif re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", text):
            start = datetime.fromisoformat(
                "-".join(f"{int(x):02d}" if i else x for i, x in enumerate(text.split("-")))
            )
            stop = start + timedelta(days=1)
        else:
            moment = parse_when(text)
            if moment is None:
                raise ValueError(text)
            return moment
    except ValueError:
        raise SearchIndexError(
            f"cannot read the date {text!r} in the query; write dates as 2026, 2026-09 or 2026-09-14"
        ) from None
    return stop - timedelta(microseconds=1) if end else start


def date_query(match: re.Match[str]) -> wq.Query:
    if match.group("a") is not None:
        a, b = match.group("a"), match.group("b")
        low = date_bound(a, end=False) if a and a != "*" else None
        high = date_bound(b, end=True) if b and b != "*" else None
        return wq.DateRange("updated", low, high)
    op, value = match.group("op"), match.group("v")
    if not op:
        return wq.DateRange("updated", date_bound(value, end=False), date_bound(value, end=True))
    if op == ">":
        return wq.DateRange("updated", date_bound(value, end=True), None, startexcl=True)
    if op == ">=":
        return wq.DateRange("updated", date_bound(value, end=False), None)
    if op == "<":
        return wq.DateRange("updated", None, date_bound(value, end=False), endexcl=True)
    return wq.DateRange("updated", None, date_bound(value, end=True))


def _as_list(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise SearchIndexError(f"the {name} filter must be a string or a list of strings")


def _moment(value: Any, name: str, *, end: bool) -> datetime:
    if isinstance(value, datetime):
        return parse_when(value) or value
    if isinstance(value, date):
        return date_bound(value.isoformat(), end=end)
    if isinstance(value, str):
        return date_bound(value, end=end)
    raise SearchIndexError(
        f"the {name} filter must be a date, a datetime or an ISO string like 2026-09-14"
    )


FILTERS = (
    "author",
    "folder",
    "include_trash",
    "kind",
    "role",
    "since",
    "speaker",
    "tag",
    "tags",
    "trust",
    "until",
)


def build_filter(path_rel: str, filters: dict[str, Any]) -> tuple[wq.Query | None, bool]:
    """The filter query for ``path=`` and keyword filters, and whether trash is included."""
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise SearchIndexError(
            f"unknown search filter {sorted(unknown)[0]!r}; use one of {', '.join(FILTERS)}"
        )
    parts: list[wq.Query] = []
    if path_rel:
        parts.append(wq.Term("path", path_rel))
    for name in ("tag", "tags"):
        if filters.get(name) is not None:
            for tag in _as_list(filters[name], name):
                parts.append(wq.Term("tags", tag.strip().lower()))
    if filters.get("kind") is not None:
        parts.append(wq.Or([wq.Term("kind", k) for k in _as_list(filters["kind"], "kind")]))
    if filters.get("folder") is not None:
        folders = [f.strip("/") for f in _as_list(filters["folder"], "folder")]
        parts.append(wq.Or([wq.Term("path", f) for f in folders if f]))
    if filters.get("author") is not None:
        options: list[wq.Query] = []
        for who in _as_list(filters["author"], "author"):
            options.append(wq.Term("author", who))
            if who == "agent":  # 'agent' means any agent, named or not
                options.append(wq.Prefix("author", "agent:"))
        parts.append(wq.Or(options))
    for name in ("role", "speaker"):  # conversation turns
        if filters.get(name) is not None:
            parts.append(wq.Or([wq.Term(name, v) for v in _as_list(filters[name], name)]))
    if filters.get("trust") is not None:
        parts.append(wq.Or([wq.Term("trust", t) for t in _as_list(filters["trust"], "trust")]))
    since, until = filters.get("since"), filters.get("until")
    if since is not None or until is not None:
        parts.append(
            wq.DateRange(
                "updated",
                _moment(since, "since", end=False) if since is not None else None,
                _moment(until, "until", end=True) if until is not None else None,
            )
        )
    include_trash = bool(filters.get("include_trash", False))
    if not parts:
        return None, include_trash
    return (parts[0] if len(parts) == 1 else wq.And(parts)), include_trash
