"""Finishing the context part of a merge a person started with git (``git pull``, ``git merge``).

In an application repository people pull with git, and git merges the context's files
with its own line rules: a frontmatter both sides touched conflicts, and the file is left
with conflict markers. Run during that merge, ``contextfs sync`` resolves every conflicted
file under the root from git's three versions (the index's stages 1, 2 and 3) with
contextfs's rules (:mod:`contextfs.merging`), writes the result (and any conflict copy),
and stages it. It never commits the person's merge and never touches a path outside the
root; a conflicted file that no longer holds conflict markers was resolved by hand and is
left alone. The person finishes with ``git commit`` (or gives up with ``git merge --abort``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..changes.markers import conflict_markers
from ..files.staged import replacing_only
from ..merging import MergeNote, TreeMerge, merge_file
from ..versioning import FILE_MODE
from .incoming import gate_incoming

if TYPE_CHECKING:
    from ..parts import RootParts
    from .result import SyncResult

__all__ = ["resolve_git_merge", "unmerged"]


def unmerged(parts: RootParts) -> dict[str, dict[int, str]]:
    """Root-relative paths git left unmerged, with their stages (1 base, 2 ours, 3 theirs) -> blob id."""
    git = parts.git
    out = git.git("ls-files", "--unmerged", "-z", "--", git.prefix.rstrip("/") or ".")
    found: dict[str, dict[int, str]] = {}
    for record in out.split("\0"):
        info, tab, path = record.partition("\t")
        fields = info.split()
        if not tab or len(fields) != 3 or not path.startswith(git.prefix):
            continue
        found.setdefault(path[len(git.prefix) :], {})[int(fields[2])] = fields[1]
    return found


def resolve_git_merge(parts: RootParts, result: SyncResult) -> None:
    """Resolve the root's conflicted files of the merge in progress (see the module docstring)."""
    git = parts.git
    result.state = "resolved"
    todo = unmerged(parts)
    staged: list[str] = []
    with parts.write_lock():
        for rel, stages in sorted(todo.items()):
            current = parts.files.read(rel) if parts.files.kind(rel) == "file" else None
            if current is not None and not conflict_markers(current):
                result.notes.append(
                    MergeNote(
                        rel,
                        "conflict-copy",
                        "resolved by hand (no conflict markers left); stage it with git add",
                    )
                )
                continue
            blobs = {n: git.read_blob(sha) for n, sha in stages.items()}
            done = merge_file(rel, blobs.get(1), blobs.get(2), blobs.get(3))
            merged = TreeMerge(notes=list(done.notes))
            if done.data is not None:
                merged.changes[rel] = (git.objects.store(b"blob", done.data), FILE_MODE)
                merged.incoming.add(rel)
            if done.copy is not None:
                merged.changes[done.copy[0]] = (git.objects.store(b"blob", done.copy[1]), FILE_MODE)
                merged.incoming.add(done.copy[0])
            gate_incoming(parts, merged)
            for path, entry in merged.changes.items():
                if entry is None:
                    continue
                looked = current if path == rel else parts.files.read_stat(path)[0]
                if _put(parts, path, git.read_blob(entry[0].hex()), looked):
                    staged.append(path)
                else:
                    result.notes.append(_saved_by_hand(path))
            if done.data is None:
                if _take(parts, rel, current):
                    staged.append(rel)
                else:
                    result.notes.append(_saved_by_hand(rel))
            result.notes += merged.notes
            result.changed.append(rel)
        if staged:
            git.record(sorted(set(staged)))
    left = [p for p in unmerged(parts)]
    if left:
        result.push_skipped = (
            f"{len(left)} file(s) of the root are still unmerged ({', '.join(left[:3])}); "
            "resolve them, then finish the merge with git commit"
        )
    else:
        result.push_skipped = (
            "the context files are resolved and staged; finish the merge with git commit"
        )


def _put(parts: RootParts, path: str, data: bytes, looked: bytes | None) -> bool:
    """Write ``data`` at ``path`` unless somebody saved it since it was ``looked`` at (their
    save stays): False then."""
    saved: list[bool] = []
    parts.files.write(path, data, before_replace=replacing_only(looked, lambda: saved.append(True)))
    return not saved


def _take(parts: RootParts, rel: str, looked: bytes | None) -> bool:
    """Remove ``rel`` unless somebody saved it since it was ``looked`` at: their save is put
    back, and False."""
    if parts.files.kind(rel) is None:
        return True
    taken = parts.files.remove(rel)[0]
    if taken is None or taken == looked:
        return True
    parts.files.write(rel, taken, before_replace=replacing_only(None, lambda: None))
    return False


def _saved_by_hand(path: str) -> MergeNote:
    return MergeNote(
        path, "conflict-copy", "saved by hand while sync resolved it: left as saved, not staged"
    )
