"""Bringing an approved review branch into the main branch: a three-way merge, path by path.

The merge is decided here from git's three versions of each path (the branches' common
ancestor, main, and the review branch), never by git's own merge machinery or a merge
driver a repository configures: nothing a clone brings can run a program. Paths only
one side changed take that side; a path both sides changed goes to one *file merge
function* (:class:`MergeFile`), the same rule a sync between machines applies, which
returns the merged bytes and, where the two versions cannot both stay in place, a
conflict copy to put beside the file. So an approval never writes a conflict marker and
never drops a line: what cannot be merged is kept as a copy and reported.

:func:`text_merge` is the file merge used until the per-kind rules of a sync are plugged
in through the same signature: identical results, one side's change, a clean line merge
(``git merge-file``), and otherwise main's version in place and the review branch's as a
copy; a deletion against an edit keeps the edit.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from . import paths
from .document import blob_version
from .errors import InvalidPathError

if TYPE_CHECKING:
    from pathlib import Path

    from .versioning import GitStore

__all__ = ["FileMerge", "MergeFile", "MergePlan", "conflict_copy_path", "plan_merge", "text_merge"]


@dataclass(frozen=True)
class FileMerge:
    """What one file merge decided: the bytes to keep in place, a copy to add, and why."""

    #: The merged bytes (None: the path is deleted).
    data: bytes | None
    #: A conflict copy to add beside the file: (root-relative path, bytes).
    copy: tuple[str, bytes] | None = None
    #: What a person should know (a conflict, a deletion that lost to an edit); str() each.
    notes: Sequence[object] = ()


class MergeFile(Protocol):
    """``merge(path, base, ours, theirs, when=(our time, their time))``: bytes or None
    (absent) for each version; the times are the two commits', for tie-breaks. The result
    has ``data``, ``copy`` and ``notes`` as :class:`FileMerge` has."""

    def __call__(self, rel: str, base: bytes | None, ours: bytes | None, theirs: bytes | None, *,
                 when: tuple[float, float] = ...) -> Any: ...


@dataclass
class MergePlan:
    """The writes that bring ``theirs`` into ``ours`` (path -> bytes, None to delete)."""

    writes: dict[str, bytes | None] = field(default_factory=dict)
    #: Conflict copies among ``writes``: copy path -> the path it belongs to.
    copies: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def conflict_copy_path(rel: str, data: bytes) -> str:
    """``memory/facts.md`` -> ``memory/facts.conflict-<first 8 hex digits of the copy's blob
    id>.md``: the same name wherever the same copy is made, never one for two copies."""
    folder, _, name = rel.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    copy = f"{stem}.conflict-{blob_version(data)[:8]}" + (f".{ext}" if ext else "")
    return f"{folder}/{copy}" if folder else copy


def _merge_lines(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """A clean three-way line merge by ``git merge-file``, or None when lines conflict."""
    with tempfile.TemporaryDirectory(prefix="contextfs-merge-") as tmp:
        names = []
        for label, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, label)
            with open(path, "wb") as fh:
                fh.write(data)
            names.append(path)
        # merge-file reads three plain files and runs no driver, hook or filter.
        proc = subprocess.run(["git", "merge-file", "-p", "-q", *names], capture_output=True, check=False,
                              env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"})
    return proc.stdout if proc.returncode == 0 else None


def text_merge(rel: str, base: bytes | None, ours: bytes | None, theirs: bytes | None, *,
               when: tuple[float, float] = (0.0, 0.0)) -> FileMerge:
    """The generic file merge: see the module's docstring (``when`` is not needed by it)."""
    if ours == theirs or theirs == base:
        return FileMerge(ours)
    if ours == base:
        return FileMerge(theirs)
    if theirs is None:
        return FileMerge(ours, notes=(f"{rel}: deleted on the review branch but changed on main; the change is kept",))
    if ours is None:
        return FileMerge(theirs, notes=(f"{rel}: deleted on main but changed on the review branch; the change is kept",))
    merged = _merge_lines(base or b"", ours, theirs)
    if merged is not None:
        return FileMerge(merged)
    copy = conflict_copy_path(rel, theirs)
    return FileMerge(ours, (copy, theirs), (f"{rel}: both sides changed the same lines; main's version stays, "
                                            f"the review branch's is kept beside it as {copy}",))


def _free(rel: str, taken: Callable[[str], bool]) -> str:
    if not taken(rel):
        return rel
    stem, dot, ext = rel.rpartition(".")
    if not dot or "/" in ext:
        stem, ext = rel, ""
    n = 2
    while taken(f"{stem}-{n}" + (f".{ext}" if ext else "")):
        n += 1
    return f"{stem}-{n}" + (f".{ext}" if ext else "")


def plan_merge(git: GitStore, root: Path, base: str | None, ours: str, theirs: str,
               merge: MergeFile = text_merge) -> MergePlan:
    """What merging commit ``theirs`` into ``ours`` (common ancestor ``base``) writes."""
    plan = MergePlan()
    when = (_commit_time(git, ours), _commit_time(git, theirs))
    ours_changed = set(git.changed(base, ours))
    for rel in git.changed(base, theirs):
        try:
            paths.check(root, rel, allow_internal=True)
        except InvalidPathError as exc:
            plan.notes.append(f"{rel}: not merged ({exc.message})")
            continue
        if rel.rpartition("/")[2] in paths.MANAGED_FILES:
            continue  # contextfs keeps these itself on each side
        b = git.blob_at(rel, base) if base else None
        o = git.blob_at(rel, ours)
        t = git.blob_at(rel, theirs)
        if rel not in ours_changed:
            if t != o:
                plan.writes[rel] = t
            continue
        result = merge(rel, b, o, t, when=when)
        if result.data != o:
            plan.writes[rel] = result.data
        plan.notes.extend(str(note) for note in result.notes)
        if result.copy is not None:
            copy, data = result.copy
            if git.blob_at(copy, ours) != data:  # the same copy made before is not made twice
                where = _free(copy, lambda p: p in plan.writes or git.blob_at(p, ours) is not None)
                plan.writes[where] = data
                plan.copies[where] = rel
    return plan


def _commit_time(git: GitStore, rev: str) -> float:
    return float(git.resolve(rev).committed_date)
