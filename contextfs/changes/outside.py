"""Edits made behind the store's back (an editor, a script, a pull) become ``human`` commits.

``git status`` says which paths differ from HEAD; each is read through the confined file
layer and committed — as an outside version, through the commit cycle's one adoption step
(:meth:`contextfs.changes.transaction.Change.adopt`), authored by the outside author — unless it
must not be:

* symlinks, and anything reached through a symlinked folder, are never followed — a
  tracked folder swapped for a link to ``/etc`` is reported, not committed (neither its
  target's bytes nor the deletion of the files it hid);
* while git is in the middle of a merge, rebase, cherry-pick, revert or bisect nothing is
  committed (a person is resolving something), and files holding conflict markers or
  unmerged index entries are never committed;
* files the write gate refuses (a secret, say) stay uncommitted and are reported;
* files git ignores are never committed and are reported, with the rule that ignores them
  (a folder the application's ``.gitignore`` lists, say), except contextfs's own temporary
  files and editor scratch files, which are skipped silently.

What was held back, and why, is in :attr:`SyncReport.held` and in the log; ``contextfs
watch --once`` prints it and exits non-zero.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from ..document import blob_version
from ..errors import ContextFSError, InvalidPathError, VersioningError
from ..files import scratch
from ..files.confined import TMP_SUFFIX, RootFiles
from ..files.fileerrors import typed_io
from ..versioning import operation_in_progress  # HEAD and refs only: no GitPython
from .adoption import SyncReport
from .markers import conflict_markers

if TYPE_CHECKING:
    from ..parts import RootParts
    from ..versioning import GitStore

__all__ = ["gate_check", "ignore_rules", "log_report", "scan_outside_edits", "sync"]

log = logging.getLogger(__name__)

#: Files contextfs used to keep in the work tree; never committed even where still present.
_LEGACY_STATE = (
    ".contextfs/index/",
    ".contextfs/cache/",
    ".contextfs/logs/",
    ".contextfs/lock",
    ".contextfs/index.lock",
    ".contextfs/active-vocabulary.txt",
)


def _skipped(rel: str, skip: Callable[[str], bool] | None) -> bool:
    if (
        rel.endswith(TMP_SUFFIX)
        or rel.startswith(_LEGACY_STATE)
        or rel.startswith(".contextfs/index.")
    ):
        return True
    return skip is not None and skip(rel)


def scan_outside_edits(
    files: RootFiles,
    git: GitStore,
    *,
    check: Callable[[str, bytes], None] | None = None,
    skip: Callable[[str], bool] | None = None,
) -> tuple[dict[str, bytes | None], SyncReport]:
    """The changes a sync would commit (path -> bytes, None for a deletion) and a report.

    ``check(rel, data)`` is the write gate's content check; a ContextFSError from it holds
    the file back. ``skip(rel)`` names scratch files to ignore silently.
    """
    report = SyncReport()
    busy = operation_in_progress(git.git_dir)
    if busy is not None:
        what, finish = busy
        report.held["*"] = (
            f"{what} is in progress ({finish}); nothing is committed until it is finished"
        )
        return {}, report
    changes: dict[str, bytes | None] = {}
    dirty = git.dirty(ignored=True)
    ignored = sorted(rel for rel, code in dirty.items() if code == "!!" and not _skipped(rel, skip))
    for rel, rule in (ignore_rules(git, ignored) if ignored else {}).items():
        if rule is not None:
            report.held[rel] = (
                f"git ignores it ({rule}), so it is never committed; drop that rule, or give "
                "the root a repository of its own (contextfs init --own-repository)"
            )
    for rel, code in sorted(dirty.items()):
        if code == "!!" or _skipped(rel, skip):
            continue
        if "U" in code or code in ("AA", "DD"):
            report.held[rel] = "it has unresolved merge conflicts; resolve them and commit with git"
            continue
        try:
            kind = files.kind(rel)
            if kind is None:
                changes[rel] = None
                continue
            if kind == "link":
                report.held[rel] = (
                    "it is (or lies under) a symlink, and symlinks are never followed"
                )
                continue
            if kind != "file":
                report.held[rel] = "it is not a regular file"
                continue
            data = files.read(rel)
        except InvalidPathError:
            report.held[rel] = "it is (or lies under) a symlink, and symlinks are never followed"
            continue
        except ContextFSError as exc:
            report.held[rel] = str(exc)
            continue
        if data is None:
            changes[rel] = None
            continue
        if conflict_markers(data):
            report.held[rel] = "it holds git conflict markers; resolve the conflict first"
            continue
        if check is not None:
            try:
                check(rel, data)
            except ContextFSError as exc:
                report.held[rel] = str(exc)
                continue
        changes[rel] = data
    return changes, report


def gate_check(parts: RootParts) -> Callable[[str, bytes], None]:
    """The write gate's check of an edit made outside: its name and its bytes, for secrets only."""
    guard = parts.guard()
    return lambda rel, data: guard.check_outside(rel, data, actor=parts.outside_actor)


def ignore_rules(git: GitStore, paths: Collection[str]) -> dict[str, str | None]:
    """For root-relative paths: the rule that makes git ignore each ('<file>:<line> <pattern>').

    ``""`` stands for the root's folder itself (in an enclosing repository). Paths no rule
    ignores, and those the root's own ``.gitignore`` ignores (contextfs's temporary and
    scratch files, meant to stay out of history), give None.
    """
    full = {(git.prefix + rel if rel else git.prefix): rel for rel in paths if rel or git.prefix}
    rules: dict[str, str | None] = dict.fromkeys(paths)
    if not full:
        return rules
    data = "".join(p + "\0" for p in full).encode("utf-8", "surrogateescape")
    try:
        out = git.git(
            "check-ignore", "--no-index", "--verbose", "--non-matching", "-z", "--stdin", input=data
        )
    except VersioningError:
        return rules  # exit status 1: none of them is ignored
    fields = out.split("\0")
    for start in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[start : start + 4]
        if (
            path in full
            and source
            and source != git.prefix + ".gitignore"
            and not pattern.startswith("!")
        ):
            rules[full[path]] = f"{source}:{line} '{pattern}'"
    return rules


def log_report(report: SyncReport) -> None:
    for rel, why in sorted(report.held.items()):
        log.warning("not committing %s: %s", rel, why)


def sync(parts: RootParts) -> list[str]:
    """Commit what changed behind the store's back as the outside author; the paths committed.

    The scan runs under the write lock, so a writer's change in flight (its files written,
    its commit not yet made) is never mistaken for an edit. What was held back, and why,
    is in ``ctx.parts.last_sync``.
    """
    with parts.write_lock(), typed_io("sync"):
        changes, report = scan_outside_edits(
            parts.files, parts.git, skip=scratch.is_scratch, check=gate_check(parts)
        )
        log_report(report)
        parts.last_sync = report
        if not changes:
            return []
        head = parts.git.head()
        with parts.change("sync", f"{len(changes)} file(s) edited outside contextfs") as change:
            for rel, data in changes.items():
                change.adopt(rel, data, executable=data is not None and parts.is_executable(rel))
                if data is not None:  # scanned above, name and bytes
                    change.vetted.add(blob_version(data))
        if parts.git.head() == head:
            return []
        report.committed = sorted(changes)
        log.info("committed %d file(s) edited outside contextfs", len(changes))
        return report.committed
