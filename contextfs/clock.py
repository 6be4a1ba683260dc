"""The one clock contextfs reads, so tests can fake time by patching :func:`now`."""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["iso", "now"]


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


def iso(moment: datetime | None = None) -> str:
    """An ISO-8601 UTC timestamp with second precision and a 'Z', as written in frontmatter."""
    moment = moment or now()
    return moment.astimezone(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
