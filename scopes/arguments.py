"""Argument checks for the public calls of the scopes layer, in one place.

Arguments arrive from language models and JSON tool calls, so a wrong type or value is
ordinary input, not a programming error: every check raises a typed
:class:`~contextfs.errors.ContextFSError` whose message names the argument, shows what
it got and ends with the fix. The error class is :class:`InvalidArgumentError` unless a
call already documents another one for that argument (``BudgetError`` for the
conversation window's shares, ``ContentError`` for memory text, ``ConfigError`` for
packer options), so callers keep catching what they always caught.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from contextfs.errors import ContextFSError, InvalidArgumentError

__all__ = [
    "check_choice",
    "check_int",
    "check_mapping",
    "check_number",
    "check_strings",
    "check_text",
]

ErrorType = type[ContextFSError]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(error: ErrorType, name: str, expect: str, value: Any, fix: str) -> ContextFSError:
    return error(f"{name} must be {expect}, got {_shown(value)}; {fix}")


def check_choice(
    value: Any, name: str, choices: Collection[str], *, error: ErrorType = InvalidArgumentError
) -> str:
    """``value`` when it is one of ``choices``; the message lists them all."""
    if not isinstance(value, str) or value not in choices:
        raise error(f"unknown {name} {_shown(value)}; use one of {', '.join(choices)}")
    return value


def check_int(
    value: Any,
    name: str,
    *,
    minimum: int | None = None,
    fix: str,
    expect: str | None = None,
    error: ErrorType = InvalidArgumentError,
) -> int:
    """A whole number (``True``/``False`` are not numbers here), at least ``minimum`` when given."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or (minimum is not None and value < minimum)
    ):
        wanted = expect or (
            "a whole number" + (f" of at least {minimum}" if minimum is not None else "")
        )
        raise _fail(error, name, wanted, value, fix)
    return value


def check_number(
    value: Any,
    name: str,
    *,
    low: float,
    high: float,
    low_open: bool = False,
    high_open: bool = False,
    fix: str,
    error: ErrorType = InvalidArgumentError,
) -> float:
    """A real number in the range from ``low`` to ``high`` (``*_open``: that end excluded)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        ok = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high
        )
    if not ok:
        span = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise _fail(error, name, f"a number in {span}", value, fix)
    return float(value)


def check_text(
    value: Any,
    name: str,
    *,
    optional: bool = False,
    fix: str,
    error: ErrorType = InvalidArgumentError,
) -> str | None:
    """A string (or None when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _fail(error, name, "text" + (" or None" if optional else ""), value, fix)
    return value


def check_strings(
    value: Any, name: str, *, fix: str, error: ErrorType = InvalidArgumentError
) -> list[str]:
    """A list of strings from a string (one item) or any iterable of strings."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Iterable):
        raise _fail(error, name, "a list of strings", value, fix)
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise error(f"{name} must be strings, got {type(item).__name__} {_shown(item)}; {fix}")
    return items


def check_mapping(
    value: Any,
    name: str,
    *,
    optional: bool = False,
    fix: str,
    error: ErrorType = InvalidArgumentError,
) -> Mapping[str, Any] | None:
    """A mapping (or None when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, Mapping):
        raise _fail(error, name, "a mapping", value, fix)
    return value
