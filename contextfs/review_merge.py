"""Bringing an approved review branch into the main branch: a three-way merge, path by path.

The merge is decided here from git's three versions of each path (the branches' common
ancestor, main, and the review branch), never by git's own merge machinery or a merge
driver a repository configures: nothing a clone brings can run a program. Paths only
one side changed take that side; a path both sides changed goes to one *file merge
function* (:data:`MergeFile`), the same rule a sync between machines applies, which
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import paths
from .errors import InvalidPathError

if TYPE_CHECKING:
    from pathlib import Path

    from .versioning import GitStore

__all__ = ["FileMerge", "MergeFile", "MergePlan", "conflict_copy_path", "plan_merge", "text_merge"]


@dataclass(frozen=True)
class FileMerge:
    """What one file merge decided: the bytes to keep in place, copies to add, and why."""

    #: The merged bytes (None: the path is deleted).
    data: bytes | None
    #: Conflict copies to add beside the file: root-relative path -> bytes.
    copies: Mapping[str, bytes] = field(default_factory=dict)
    #: What a person should know (a conflict, a deletion that lost to an edit).
    notes: tuple[str, ...] = ()


#: ``merge(path, base, ours, theirs, label) -> FileMerge``: bytes or None (absent) for each
#: version; ``label`` names the other side in conflict copies (the review session).
MergeFile = Callable[[str, "bytes | None", "bytes | None", "bytes | None", str], FileMerge]


@dataclass
class MergePlan:
    """The writes that bring ``theirs`` into ``ours`` (path -> bytes, None to delete)."""

    writes: dict[str, bytes | None] = field(default_factory=dict)
    #: Conflict copies among ``writes``: copy path -> the path it belongs to.
    copies: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def conflict_copy_path(rel: str, label: str) -> str:
    """``memory/facts.md`` -> ``memory/facts.conflict-<label>.md`` (the label made path-safe)."""
    folder, _, name = rel.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    safe = paths.slugify(label, max_len=60, default="review")
    copy = f"{stem}.conflict-{safe}" + (f".{ext}" if ext else "")
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


def text_merge(rel: str, base: bytes | None, ours: bytes | None, theirs: bytes | None, label: str) -> FileMerge:
    """The file merge of an approval: see the module's docstring."""
    if ours == theirs:
        return FileMerge(ours)
    if ours == base:
        return FileMerge(theirs)
    if theirs == base:
        return FileMerge(ours)
    if theirs is None:
        return FileMerge(ours, notes=(f"{rel}: deleted by {label} but changed on main; the change is kept",))
    if ours is None:
        return FileMerge(theirs, notes=(f"{rel}: deleted on main but changed by {label}; the change is kept",))
    merged = _merge_lines(base or b"", ours, theirs)
    if merged is not None:
        return FileMerge(merged)
    copy = conflict_copy_path(rel, label)
    return FileMerge(ours, copies={copy: theirs},
                     notes=(f"{rel}: changed on main and by {label}; main's version stays, {label}'s is in {copy}",))


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


def plan_merge(git: GitStore, root: Path, base: str | None, ours: str, theirs: str, label: str,
               merge: MergeFile = text_merge) -> MergePlan:
    """What merging commit ``theirs`` into ``ours`` (common ancestor ``base``) writes."""
    plan = MergePlan()
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
        result = merge(rel, b, o, t, label)
        if result.data != o:
            plan.writes[rel] = result.data
        plan.notes.extend(result.notes)
        for copy, data in result.copies.items():
            where = _free(copy, lambda p: p in plan.writes or git.blob_at(p, ours) is not None)
            plan.writes[where] = data
            plan.copies[where] = rel
    return plan
