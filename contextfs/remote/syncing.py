"""``contextfs sync``: fetch, merge with contextfs's rules, update the work tree and index, push.

One sync, step by step (``ctx.remote.sync()``):

1. the root's sync lock is taken (one sync at a time per clone; other writers go on);
2. edits made outside contextfs are committed as ``human`` (:func:`contextfs.changes.outside.sync`), so the merge
   never overwrites bytes nobody committed;
3. the branch is fetched into its remote-tracking ref (no lock held: writers go on);
4. under the write lock: if the remote has commits this clone lacks, their tree is merged
   with ours against the merge base (:mod:`contextfs.merging`), incoming content passes
   the gate (:mod:`.incoming`), and the result is written and committed through one
   journaled change — a fast-forward when nothing here needs merging, else a merge commit
   authored ``remote`` — so a kill at any point is finished or undone by the next writer.
   The search index is told exactly the paths that changed;
5. the result is pushed; a push the remote rejects because it moved meanwhile goes back
   to step 3, up to ``attempts`` times, after a random pause that doubles each time.

A root inside an application repository syncs only what is inside the root: when the
remote branch changed files outside it, sync stops and says to pull with git (and
``contextfs sync`` run during that git merge resolves the context files, see
:mod:`.gitmerge`); it pushes only when every commit the remote lacks touches the root
alone, unless asked (``push_application_commits``).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..changes.outside import sync as sync_outside_edits
from ..document import blob_version
from ..errors import ContextFSError, VersioningError
from ..files.durability import fsync_path, sync_filesystem
from ..merging import MergeNote, merge_trees
from ..provenance import email_of
from ..versioning.graph import commit_time, existing, merge_base, write_commit
from ..versioning.objects import TREE_MODE
from ..versioning.refs import operation_in_progress
from .incoming import gate_incoming, note_line
from .result import SyncResult
from .transport import Target, fetch, push, resolve_target

if TYPE_CHECKING:
    from ..parts import RootParts

__all__ = ["sync"]

#: How long a sync waits for another sync of the same clone to finish.
SYNC_LOCK_TIMEOUT = 300.0


def _subtree(parts: RootParts, commit: str | None) -> bytes | None:
    if commit is None:
        return None
    objects = parts.git.objects
    tree = objects.commit_tree(commit)
    if not parts.git.prefix:
        return tree
    entry = objects.lookup(tree, parts.git.prefix.rstrip("/"))
    return entry[0] if entry is not None and entry[1] == TREE_MODE else None


def _outside(parts: RootParts, a: str | None, b: str) -> list[str]:
    """Paths outside the root that differ between two commits (all of b's when a is None)."""
    if a is None:
        out = parts.git.git("ls-tree", "-r", "--name-only", "-z", b)
    else:
        out = parts.git.git("diff-tree", "-r", "--no-renames", "--name-only", "-z", a, b)
    return [p for p in out.split("\0") if p and not p.startswith(parts.git.prefix)]


def _check_unseen(parts: RootParts, changes: dict[str, Any], ours: str | None) -> None:
    """Refuse to overwrite bytes that differ from our commit (nothing committed them)."""
    objects = parts.git.objects
    tree = objects.commit_tree(ours) if ours else None
    for rel in changes:
        entry = objects.lookup(tree, parts.git.prefix + rel) if tree is not None else None
        expected = entry[0].hex() if entry is not None and entry[1] != TREE_MODE else None
        try:
            data = parts.files.read(rel)
        except ContextFSError:
            data = b"\0unreadable"
        if (None if data is None else blob_version(data)) != expected:
            why = parts.last_sync.held.get(rel, "it changed after the last commit")
            raise VersioningError(
                f"{rel} has changes contextfs has not committed ({why}); sync would overwrite "
                "them: fix or commit them first, then run contextfs sync again"
            )


def _message(subject: str, notes: list[MergeNote], parts: RootParts, merged: str) -> str:
    body = "\n".join(f"- {note_line(n, parts.guard())}" for n in notes[:50])
    trailers = {"Contextfs-Op": "merge", "Contextfs-Machine": parts.git.machine}
    if parts.session:
        trailers["Contextfs-Session"] = parts.session
    trailers["Contextfs-Merged"] = merged
    text = " ".join(subject.split())[:200] + "\n\n" + (body + "\n\n" if body else "")
    return text + "".join(f"{k}: {v}\n" for k, v in trailers.items())


@contextlib.contextmanager
def _one_flush(parts: RootParts, paths: list[str]) -> Iterator[None]:
    """Write a merge's files without an fsync each, then flush them all with one ``syncfs``.

    The write lock is held, so no other writer of this root runs meanwhile; the journal
    already names every path, so a power cut before the flush is undone by recovery.
    Where the platform has no ``syncfs`` (or for a few files) each file is flushed itself.
    """
    files = parts.files
    if len(paths) < 3 or not files.durable:
        yield
        return
    files.durable = False
    try:
        yield
    finally:
        files.durable = True
    if not sync_filesystem(parts.root):
        for rel in paths:
            full = parts.root.joinpath(*rel.split("/"))
            with contextlib.suppress(FileNotFoundError):
                fsync_path(full)
            fsync_path(full.parent)


def integrate(parts: RootParts, target: Target, theirs: str | None, result: SyncResult) -> None:
    """Bring the fetched commit ``theirs`` into this clone (fast-forward or merge)."""
    if theirs is None:
        return
    git = parts.git
    with parts.write_lock():
        ours = git.head()
        if ours == theirs:
            return
        base = merge_base(git, ours, theirs) if ours is not None else None
        if base == theirs:
            return  # we have everything the remote has
        if git.prefix and _outside(parts, base, theirs):
            raise VersioningError(
                f"{target.remote}/{target.branch} changed files outside the context root {git.prefix.rstrip('/')}; "
                "contextfs sync never writes outside the root: pull them with `git pull` (then run contextfs sync "
                "to resolve the context files if git stops on conflicts)"
            )
        when = (commit_time(git, ours) if ours else 0.0, commit_time(git, theirs))
        merged = merge_trees(
            git.objects,
            _subtree(parts, base),
            _subtree(parts, ours),
            _subtree(parts, theirs),
            when=when,
        )
        gate_incoming(parts, merged)
        _check_unseen(parts, merged.changes, ours)
        full = {git.prefix + rel: change for rel, change in merged.changes.items()}
        ours_tree = git.objects.commit_tree(ours) if ours else None
        tree = (git.objects.rewrite(ours_tree, full) if full else ours_tree) or git.objects.store(
            b"tree", b""
        )
        forward = base == ours
        label = f"{target.remote}/{target.branch}"
        if forward and tree == git.objects.commit_tree(theirs):
            prepared = existing(theirs, head=ours)
            result.state = "fast-forward"
        else:
            parents = [theirs] if forward or ours is None else [ours, theirs]
            subject = (
                f"sync: gate what came from {label}"
                if len(parents) == 1
                else f"sync: merge {label} ({len(merged.changes)} file(s))"
            )
            prepared = write_commit(
                git,
                tree,
                parents,
                _message(subject, merged.notes, parts, theirs),
                "remote",
                email_of("remote"),
                head=ours,
            )
            result.state = "merged" if len(parents) == 2 else "fast-forward"
        with (
            parts.provenance(actor="remote"),
            parts.change("merge", label, trailers={"Contextfs-Merged": theirs}) as change,
            _one_flush(parts, sorted(merged.changes)),
        ):
            for rel, entry in sorted(merged.changes.items()):
                if entry is None:
                    if parts.files.kind(rel) is not None:
                        change.remove(rel)
                else:
                    kind, data = git.objects.read(entry[0])
                    change.write(rel, data)
            change.prepared = prepared
        result.changed += sorted(merged.changes)
        result.notes += merged.notes


def sync(
    parts: RootParts,
    *,
    remote: str | None = None,
    branch: str | None = None,
    push_: bool = True,
    attempts: int = 8,
    push_application_commits: bool = False,
) -> SyncResult:
    """One sync with the remote (see the module docstring)."""
    from .gitmerge import resolve_git_merge  # only for a git merge a person started: rare

    git = parts.git
    target = resolve_target(git, remote, branch)
    result = SyncResult(target.remote, target.branch, target.shown)
    with parts.state.lock("sync.lock", timeout=SYNC_LOCK_TIMEOUT).held():
        busy = operation_in_progress(git.git_dir)
        if busy is not None:
            if busy[0] != "a merge":
                raise VersioningError(
                    f"{busy[0]} is in progress in {git.workdir}; finish it first: {busy[1]}"
                )
            resolve_git_merge(parts, result)
            result.head = git.head()
            return result
        result.committed_outside = sync_outside_edits(parts)
        pause = random.Random()
        for attempt in range(max(1, attempts)):
            theirs = fetch(git, target)
            integrate(parts, target, theirs, result)
            head = git.head()
            if not push_ or head is None or head == theirs:
                break  # after integrate, a head that is not theirs has commits the remote lacks
            if git.prefix and not push_application_commits:
                outside = _outside(parts, theirs, head)
                if outside:
                    result.push_skipped = (
                        f"not pushed: {len(outside)} file(s) outside the context root ({', '.join(outside[:3])}) "
                        f"differ from {target.remote}/{target.branch}; push them yourself, or sync with "
                        "--push-application-commits"
                    )
                    break
            pushed = push(git, target, head)
            if pushed.ok:
                result.pushed = True
                break
            result.rejected_pushes += 1
            time.sleep(pause.uniform(0.0, min(2.0, 0.02 * 2**attempt)))
        else:
            raise VersioningError(
                f"{target.remote}/{target.branch} kept moving: {result.rejected_pushes} pushes were rejected; "
                "everything is committed here, nothing is lost: run contextfs sync again"
            )
        result.head = git.head()
    return result
