"""Git's conflict markers: telling a file a merge left half-done, and refusing to read it as content.

A file holding a complete ``<<<<<<< ... ======= ... >>>>>>>`` block while git is in the
middle of a merge is not a version anybody chose: reading it through the store raises
:class:`~contextfs.ConflictError` with the way to finish the merge; the search index
strips the marker lines so both sides stay findable.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import ConflictError
from ..fixes import Fix
from ..versioning import operation_in_progress  # HEAD and refs only: no GitPython

__all__ = ["conflict_markers", "refuse_conflicted", "strip_conflict_markers"]

_MARKERS = re.compile(rb"^<{7}(?: |$).*?^={7}\r?$.*?^>{7}(?: |$)", re.MULTILINE | re.DOTALL)


def conflict_markers(data: bytes) -> bool:
    """True when ``data`` holds a complete git conflict block (<<<<<<< ... ======= ... >>>>>>>)."""
    return b"<<<<<<<" in data and _MARKERS.search(data) is not None


_MARKER_LINE = re.compile(rb"^(?:<{7}|\|{7}|>{7})(?: .*)?\r?\n?|^={7}\r?\n?", re.MULTILINE)


def strip_conflict_markers(data: bytes) -> bytes:
    """``data`` without git's conflict marker lines (both sides' text stays), for indexing."""
    return _MARKER_LINE.sub(b"", data)


def refuse_conflicted(git_dir: Path, rel: str, data: bytes) -> bytes:
    """``data``, unless git left it with conflict markers in a merge still going on: then a
    ConflictError that says so and how to finish the merge."""
    if b"<<<<<<<" in data and conflict_markers(data):
        busy = operation_in_progress(git_dir)
        if busy is not None:
            raise ConflictError(
                f"{rel} is in conflict: {busy[0]} is in progress and git left conflict markers in it",
                fix=Fix("merge", rel),
            )
    return data
