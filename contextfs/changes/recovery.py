"""Finishing or undoing what a killed writer left, without touching anybody else's work.

The caller holds the root's write lock, so every journal found (:mod:`contextfs.changes.journal`)
belongs to a process that died. Its change is

* **rolled forward** when the journal says ``ready``: the recorded commit (with the commit
  of outside versions under it, if there was one) is published, or rebuilt on top of
  whatever HEAD became, with its original author, session and message. No file is written:
  a path somebody saved since differs from the new HEAD afterwards and is committed as
  their edit;
* **rolled back** otherwise, but only where the dead writer's bytes still are: every
  snapshot in the journal carries the blob id the writer was about to leave at that path,
  and a path is given its old bytes back only while it holds one of those (or nothing, if
  the writer was removing it). A path a person saved after the kill — or that the writer
  never reached — is left as it is, for the next change to adopt as their edit.

A ``ready`` commit whose objects a power cut did not let reach the disk (they are flushed
before the branch moves) was never acknowledged, and is rolled back instead. A torn git index
is rebuilt from HEAD, and empty loose objects a power cut left are removed.

Git lock files are removed only when the journal's marks prove the dead process made them
(:mod:`contextfs.versioning.locks`); a lock of a live git is waited for, never removed.
Temporary files of atomic writes, private lock files and temporary git objects of dead
processes are removed. Running this twice is harmless: a handled journal is deleted last.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ContextFSError, InvalidPathError, NotFoundError, VersioningError
from ..files import paths
from ..files.confined import TMP_SUFFIX, RootFiles
from ..provenance import check_actor, email_of
from ..versioning.locks import LockMark, release_if_ours, remove_leftover_scratch
from . import adoption
from .journal import Journal, Pending
from .undoing import undo

if TYPE_CHECKING:
    from ..versioning import GitStore, Prepared

__all__ = ["OutsideCheck", "commit_outside", "heal_index", "recover"]

log = logging.getLogger(__name__)


#: The commit gate's check of a version a person saved outside contextfs, its name and bytes
#: (:meth:`~contextfs.gate.guard.WriteGuard.check_outside`): a ContextFSError holds it back.
OutsideCheck = Callable[[str, bytes], None]


def commit_outside(
    git: GitStore,
    layers: list[dict[str, str | None]],
    author: str,
    when: float,
    *,
    check: OutsideCheck | None,
    journal: Callable[[list[LockMark]], None] | None = None,
) -> dict[str, str]:
    """Commit outside versions (path -> blob id) that a change saw but never committed.

    A change undone after somebody saved over what it wrote leaves their newest bytes in
    place; the version the change had found there (and was to commit first) would then be
    in no commit. Each layer becomes a commit of its own, oldest first, on HEAD.

    Each version passes ``check`` first, as every version a person saved does before it is
    committed (sync, the outside versions a change commits first): one it refuses is held
    back (never committed; what is on disk is left as it is, and the bytes stay in git's
    object store) and reported in the log and in what is returned (path -> why, the reason
    naming kinds and fingerprints, never the value).
    """
    held: dict[str, str] = {}
    if check is not None:
        layers = [_passed(git, layer, check, held) for layer in layers]
    base = git.head()
    top: Prepared | None = None
    for layer in layers:
        if layer:
            made = git.prepare(
                layer,
                adoption.message(layer, machine=git.machine),
                author,
                email_of(author),
                when=when,
                parent=top.sha if top is not None else False,
            )
            top = made or top
    if top is None:
        return held
    git.publication(
        dataclasses.replace(top, parent=base), sorted(set().union(*layers)), journal=journal
    ).commit()
    log.warning(
        "committed %d version(s) saved outside contextfs that an undone change had found",
        sum(len(layer) for layer in layers),
    )
    return held


def _passed(
    git: GitStore, layer: dict[str, str | None], check: OutsideCheck, held: dict[str, str]
) -> dict[str, str | None]:
    """The versions of ``layer`` that ``check`` lets through; the others go into ``held``."""
    kept: dict[str, str | None] = {}
    for rel, blob in layer.items():
        if blob is not None:
            try:
                check(rel, git.read_blob(blob))
            except ContextFSError as exc:
                # The check names the path only once its name passed (the name goes first).
                held[rel] = f"{exc} (its bytes stay in git's object store as blob {blob})"
                log.warning(
                    "not committing a version saved outside contextfs that an undone change had "
                    "found: %s",
                    held[rel],
                )
                continue
        kept[rel] = blob
    return kept


def _gated(files: RootFiles, rel: object) -> str | None:
    """A path read back from a journal, only if it passes the path gate."""
    try:
        return paths.check(files.root, rel, allow_internal=True)
    except InvalidPathError:
        log.error("the journal names an invalid path %r; ignoring it", rel)
        return None


def recover(
    files: RootFiles, git: GitStore, journal: Journal, *, check: OutsideCheck | None
) -> list[str]:
    """Finish or undo every change a dead process left; returns a line per change handled.

    A git command holding git's index is waited for before anything is published (a
    VersioningError naming the lock when it takes too long): nothing is committed under a
    person's running ``git commit``. ``check`` judges the outside versions an undone change
    had found before they are committed (see :func:`commit_outside`).
    """
    done: list[str] = []
    pendings = journal.pending()
    for pending in pendings:  # first, so that a person's git waiting on one of them can go on
        _release_own_locks(pending)
    for pending in pendings:
        ready = pending.ready
        if ready is not None:
            git.wait_for_index()  # raises while a live git holds it: the journal stays for the next call
        try:
            heal_index(git)
            if ready is not None and git.head() != ready.get("sha") and not _complete(git, ready):
                log.warning(
                    "the objects of %s did not all reach the disk; undoing it", pending.path
                )
                ready = None
            if ready is not None:
                sha = _roll_forward(files, git, pending, ready)
                done.append(f"finished {pending.header.get('subject', '?')} as {sha[:12]}")
            else:
                held = _roll_back(files, git, pending, check)
                done.append(
                    f"undid {pending.header.get('subject', '?')}"
                    + (
                        f"; held back {len(held)} version(s) saved outside it had found"
                        if held
                        else ""
                    )
                )
            _remove_temporaries(files, pending)
        except ContextFSError as exc:
            log.error("could not recover the change journaled in %s: %s", pending.path, exc)
            continue
        with contextlib.suppress(OSError):
            pending.path.unlink()
    if done:
        git.objects.remove_leftovers()
        git.objects.remove_empty()
        for folder in {git.git_dir, git.common_dir}:
            remove_leftover_scratch(folder)
        for line in done:
            log.warning("recovered an interrupted change: %s", line)
    return done


def heal_index(git: GitStore) -> bool:
    """Rebuild git's index from HEAD when it cannot be read; True when it was rebuilt.

    A power cut before the flush that covers a new index can leave it torn. This runs
    ``git read-tree`` (recovery only, never on the write path), and whatever was staged is
    lost with the torn file; the paths of the change being recovered are recorded after.
    """
    if git.index.readable():
        return False
    log.warning("git's index in %s cannot be read; rebuilding it from HEAD", git.git_dir)
    with contextlib.suppress(OSError):
        os.unlink(git.git_dir / "index")
    if git.head() is not None:
        git.git("read-tree", "HEAD")
    return True


def _complete(git: GitStore, ready: dict[str, Any]) -> bool:
    """Whether every object the journaled commit needs is there and intact.

    The commit's objects are flushed before the branch moves, so a power cut before that
    flush can leave them empty or missing while the journal line survived: such a change
    was never acknowledged, and is undone instead.
    """
    objects = git.objects
    try:
        commit = bytes.fromhex(str(ready["sha"]))
        if not objects.intact(commit):
            return False
        tree = objects.commit_tree(commit.hex())
        if not objects.intact(tree):
            return False
        layers = [e for e in (ready.get("adopted") or []) if isinstance(e, dict)]
        for layer in layers:
            for blob in dict(layer.get("changes") or {}).values():
                if blob is not None and not objects.intact(bytes.fromhex(blob)):
                    return False
        for rel, blob in dict(ready["changes"]).items():
            if blob is not None and not objects.intact(bytes.fromhex(blob)):
                return False
            current: bytes | None = tree
            for name in (git.prefix + str(rel)).split("/")[:-1]:
                entry = (
                    next((e for e in objects.tree(current) if e[2] == name), None)
                    if current
                    else None
                )
                if entry is None:
                    break
                if not objects.intact(entry[0]):
                    return False
                current = entry[0]
    except (ValueError, KeyError, TypeError, ContextFSError):
        return False
    return True


def _release_own_locks(pending: Pending) -> None:
    """Remove the git lock files this journal's dead process made (never anyone else's)."""
    for entry in pending.marks("locks"):
        for raw in entry.get("locks") or ():
            mark = LockMark.from_json(raw)
            if mark is not None and release_if_ours(mark):
                log.warning("removed %s, left by a contextfs process that was killed", mark.path)


def _changes(files: RootFiles, raw: object) -> dict[str, str | None]:
    """path -> blob id (None: removed) read back from a journal, every path gated."""
    out: dict[str, str | None] = {}
    for rel, blob in raw.items() if isinstance(raw, dict) else ():
        gated = _gated(files, rel)
        if gated is not None and (blob is None or isinstance(blob, str)):
            out[gated] = blob
    return out


def _layers(files: RootFiles, raw: object) -> list[tuple[dict[str, str | None], dict[str, Any]]]:
    """The commits of outside versions a ready change put under its own, oldest first."""
    entries = [raw] if isinstance(raw, dict) else raw if isinstance(raw, list) else []
    return [(_changes(files, e.get("changes")), e) for e in entries if isinstance(e, dict)]


def _roll_forward(files: RootFiles, git: GitStore, pending: Pending, ready: dict[str, Any]) -> str:
    header = pending.header
    changes = _changes(files, ready["changes"])
    layers = _layers(files, ready.get("adopted"))
    paths_ = sorted(set(changes).union(*(layer for layer, _entry in layers)))
    sha, parent = ready["sha"], ready.get("parent")
    head = git.head()
    if head != sha and not (head is not None and _is_ancestor(git, sha, head)):
        if head == parent:
            # Here, not at the top: the repository module brings GitPython (~37 ms), which a
            # root opened read-only imports this module without needing.
            from ..versioning import Prepared

            top = Prepared(
                parent=parent,
                sha=sha,
                paths=tuple(paths_),
                subject=str(ready["message"]).splitlines()[0][:200],
                signature=f"{header['actor']} <{header['email']}> {int(ready['when'])} +0000".encode(),
            )
        else:
            rebuilt = _rebuild(git, header, ready, layers, changes)
            if rebuilt is None:
                git.record(paths_)
                return head or sha
            top = rebuilt
        git.publication(
            top,
            paths_,
            journal=lambda marks: pending.record({"locks": [m.to_json() for m in marks]}),
        ).commit()
        sha = top.sha
    else:
        git.record(paths_)
    return sha


def _rebuild(
    git: GitStore,
    header: dict[str, Any],
    ready: dict[str, Any],
    layers: list[tuple[dict[str, str | None], dict[str, Any]]],
    changes: dict[str, str | None],
) -> Prepared | None:
    """The dead change's commits made again on top of HEAD (which moved since); None if nothing is left."""
    execs = set(ready.get("executable") or ())
    head = git.head()
    top: Prepared | None = None
    for layer, entry in layers:
        if not layer:
            continue
        author = check_actor(entry.get("author") or "human")
        made = git.prepare(
            layer,
            str(entry.get("message") or "sync"),
            author,
            email_of(author),
            when=ready["when"],
            executable=execs,
            parent=top.sha if top is not None else False,
        )
        top = made or top
    if changes:
        ours = git.prepare(
            changes,
            ready["message"],
            header["actor"],
            header["email"],
            when=ready["when"],
            executable=execs,
            parent=top.sha if top is not None else False,
        )
        top = ours or top
    # The branch moves from HEAD to the top commit, whichever commit that one is built on.
    return None if top is None else dataclasses.replace(top, parent=head)


def _is_ancestor(git: GitStore, ancestor: str, head: str) -> bool:
    try:
        git.git("merge-base", "--is-ancestor", ancestor, head)
        return True
    except VersioningError:
        return False


def _roll_back(
    files: RootFiles, git: GitStore, pending: Pending, check: OutsideCheck | None
) -> dict[str, str]:
    """Undo a dead change's files; the outside versions it found that were held back (path -> why)."""
    renames = []
    for mark in pending.marks("rename"):
        src, dst = _gated(files, mark["rename"][0]), _gated(files, mark["rename"][1])
        if src is not None and dst is not None:
            renames.append((src, dst))
    before: dict[str, bytes | None] = {}
    left: dict[str, set[str | None]] = {}
    unknown: set[str] = set()
    for mark in pending.marks("touch"):
        rel, blob = _gated(files, mark["touch"]), mark.get("blob")
        if rel is None:
            continue
        if "after" in mark:
            left.setdefault(rel, set()).add(mark["after"])
        else:
            unknown.add(rel)  # written by an older contextfs: what it left is not known
        # The latest snapshot wins: a path is snapshotted again when somebody saved it
        # while the change was under way, and then their version is what goes back.
        try:
            before[rel] = git.read_blob(blob) if blob else None
        except (ContextFSError, ValueError):
            log.error(
                "the journal names a blob %s for %s that git does not have; leaving the file as it is",
                blob,
                rel,
            )
    for mark in pending.marks("wrote"):
        rel = _gated(files, mark["wrote"])
        if rel is not None:
            left.setdefault(rel, set()).add(mark.get("after"))
    for rel in unknown:
        left.pop(rel, None)
    kept = undo(files, renames, before, left)
    # Outside versions the dead change found on the paths somebody saved over since.
    layers: list[dict[str, str | None]] = [{}]
    author = "human"
    for mark in pending.marks("outside"):
        rel = _gated(files, mark["touch"]) if "touch" in mark else None
        if rel is None or rel not in kept or not isinstance(mark.get("blob"), str):
            continue
        author = check_actor(mark["outside"]) if isinstance(mark["outside"], str) else author
        if rel in layers[-1]:
            layers.append({})
        layers[-1][rel] = mark["blob"]
    if not layers[0]:
        return {}
    return commit_outside(
        git,
        layers,
        author,
        time.time(),
        check=check,
        journal=lambda marks: pending.record({"locks": [m.to_json() for m in marks]}),
    )


def _remove_temporaries(files: RootFiles, pending: Pending) -> None:
    """Temporary files of atomic writes the dead process was in the middle of."""
    folders = {
        rel.rpartition("/")[0] for m in pending.marks("touch") if (rel := _gated(files, m["touch"]))
    }
    for folder in folders:
        try:
            names = files.listdir(folder)
        except (ContextFSError, NotFoundError):
            continue
        for name in names:
            if name.startswith(".") and name.endswith(TMP_SUFFIX):
                with contextlib.suppress(ContextFSError):
                    files.remove(f"{folder}/{name}" if folder else name)
