"""Checking the index against the files: what it lacks, holds stale, or should not hold.

:meth:`~.index.SearchIndex.verify` brings the index up to date first (queued writes and
commits since the stamp are upkeep, not drift), then :func:`compare` reads every
indexable file and the index's stored fields and fills a :class:`VerifyReport`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..document import blob_version
from ..errors import ContextFSError
from . import segments
from .schema import walk_indexable

if TYPE_CHECKING:
    from ..files.confined import RootFiles

__all__ = ["VerifyReport", "compare"]


@dataclass
class VerifyReport:
    """What ``verify`` found: files the index lacked, had stale, or should not have had."""

    checked: int = 0
    missing: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    rebuilt: bool = False
    fixed: bool = False

    @property
    def ok(self) -> bool:
        return not (self.missing or self.stale or self.extra or self.duplicates or self.rebuilt)

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "missing": self.missing,
            "stale": self.stale,
            "extra": self.extra,
            "duplicates": self.duplicates,
            "rebuilt": self.rebuilt,
            "fixed": self.fixed,
            "ok": self.ok,
        }


def compare(files: RootFiles, reader: Any, report: VerifyReport) -> None:
    """Fill ``report`` with the files missing from the index, stale in it (another content
    hash), in it but gone from disk, or in it twice."""
    on_disk = walk_indexable(files)
    indexed, twice = segments.indexed_stats(reader)
    report.checked = len(on_disk)
    for rel in sorted(on_disk):
        info = indexed.get(rel)
        if info is None:
            report.missing.append(rel)
            continue
        try:
            data = files.read(rel)
        except ContextFSError:
            data = None
        if data is not None and blob_version(data) != info[1]:
            report.stale.append(rel)
    report.extra = sorted(rel for rel in indexed if rel not in on_disk)
    report.duplicates = sorted(twice)
