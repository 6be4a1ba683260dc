"""Frontmatter merged key by key, from the three versions of a document's metadata.

A key only one side changed takes that side's value; a key both sides changed to the same
value keeps it. Where both changed it differently:

* the keys contextfs manages resolve the same way on every machine: ``created`` the
  earliest, ``updated`` and ``last_active`` the latest, ``author``/``session``/``turn``
  from the newer side (the one whose ``updated`` is later), ``trust`` the most cautious
  level and ``flagged`` the union of both;
* lists of plain values are merged as sets, three-way: what either side added is in,
  what either side removed is out, in the order ours had them, then theirs' additions;
* mappings are merged key by key the same way;
* any other value (a person's key) keeps the newer side's value, and the other value is
  reported (:class:`KeyConflict`), never dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..gate.poisoning import TRUST_LEVELS

__all__ = ["KeyConflict", "merge_metadata"]

_EARLIEST = frozenset({"created"})
_LATEST = frozenset({"updated", "last_active"})
_FROM_NEWER = frozenset({"author", "session", "turn"})
_MISSING = object()


@dataclass(frozen=True)
class KeyConflict:
    """A key both sides set to different values: the value kept and the one reported."""

    key: str
    kept: Any
    other: Any


def _hashable_list(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, (str, int, float, bool)) or v is None for v in value
    )


def _merge_lists(base: Any, ours: list[Any], theirs: list[Any]) -> list[Any]:
    before = list(base) if _hashable_list(base) else []
    removed = {v for v in before if v not in ours or v not in theirs}
    out = [v for v in ours if v not in removed]
    out += [v for v in theirs if v not in removed and v not in out]
    return out


def _lowest_trust(*values: Any) -> Any:
    """The most cautious of the trust levels given; a value that is not a level counts as
    ``untrusted`` (as :func:`contextfs.gate.poisoning.trust_of` reads it)."""
    ranked = [
        TRUST_LEVELS.index(v if v in TRUST_LEVELS else "untrusted")
        for v in values
        if v is not _MISSING
    ]
    return TRUST_LEVELS[max(ranked)] if ranked else _MISSING


def _resolve(
    key: str,
    base: Any,
    ours: Any,
    theirs: Any,
    ours_newer: bool,
    conflicts: list[KeyConflict],
    path: str,
) -> Any:
    """One key's value (``_MISSING`` to leave the key out) when both sides changed it."""
    present = [v for v in (ours, theirs) if v is not _MISSING]
    if key in _EARLIEST and all(isinstance(v, str) for v in present):
        return min(present)
    if key in _LATEST and all(isinstance(v, str) for v in present):
        return max(present)
    if key in _FROM_NEWER:
        return ours if ours_newer else theirs
    if key == "trust":
        return _lowest_trust(ours, theirs)
    if key == "flagged" and all(_hashable_list(v) for v in present):
        return _merge_lists(base, *(v if v is not _MISSING else [] for v in (ours, theirs)))
    if _hashable_list(ours) and _hashable_list(theirs):
        return _merge_lists(base, ours, theirs)
    if isinstance(ours, dict) and isinstance(theirs, dict):
        sub, inner = merge_mapping(
            base if isinstance(base, dict) else {},
            ours,
            theirs,
            ours_newer=ours_newer,
            path=f"{path}{key}.",
        )
        conflicts.extend(inner)
        return sub
    kept, other = (ours, theirs) if ours_newer else (theirs, ours)
    conflicts.append(
        KeyConflict(
            path + key, None if kept is _MISSING else kept, None if other is _MISSING else other
        )
    )
    return kept


def merge_mapping(
    base: Mapping[str, Any],
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
    *,
    ours_newer: bool,
    path: str = "",
) -> tuple[dict[str, Any], list[KeyConflict]]:
    """The three-way merge of one mapping (see the module docstring) and its conflicts."""
    conflicts: list[KeyConflict] = []
    out: dict[str, Any] = {}
    for key in [
        *ours,
        *(k for k in theirs if k not in ours),
        *(k for k in base if k not in ours and k not in theirs),
    ]:
        b, o, t = (m.get(key, _MISSING) for m in (base, ours, theirs))
        if o == t and type(o) is type(t):
            value = o
        elif b == o and type(b) is type(o):
            value = t
        elif b == t and type(b) is type(t):
            value = o
        else:
            value = _resolve(key, b, o, t, ours_newer, conflicts, path)
        if value is not _MISSING:
            out[key] = value
    return out, conflicts


def merge_metadata(
    base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any], *, ours_newer: bool
) -> tuple[dict[str, Any], list[KeyConflict]]:
    """The merged frontmatter of one document and the person's keys that conflicted."""
    return merge_mapping(base, ours, theirs, ours_newer=ours_newer)
