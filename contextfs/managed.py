"""The files contextfs manages in a root, and adopting a folder as a root.

``.gitignore`` keeps temporary files out of commits; ``.gitattributes`` stores bytes
exactly as written (so blob ids match what contextfs hashes) and merges JSON Lines logs
by keeping both sides' lines. Opening a folder for writing makes sure both are there; in
a folder with no commit yet, whatever is already in it becomes the first commit.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from . import scratch
from .document import blob_version
from .errors import InvalidPathError, VersioningError
from .files import typed_io
from .fixes import Fix
from .sync import gate_check, ignore_rules, log_report, scan_outside_edits

if TYPE_CHECKING:
    from .manager import ContextManager

__all__ = ["GITATTRIBUTES", "GITIGNORE", "MANAGED", "check_not_ignored", "ensure_root"]

GITIGNORE = """# managed by contextfs: temporary files, never committed
*.cfs-tmp
# derived state kept here by earlier versions (it now lives under .git/contextfs/)
.contextfs/index/
.contextfs/cache/
.contextfs/logs/
.contextfs/lock
.contextfs/*.lock
.contextfs/active-vocabulary.txt
""" + scratch.GITIGNORE
GITATTRIBUTES = """# managed by contextfs
# Store bytes exactly as written so blob ids match what contextfs hashes.
* -text
# Append-only logs merge by keeping both sides' lines.
*.jsonl merge=union
"""
MANAGED = {".gitignore": GITIGNORE, ".gitattributes": GITATTRIBUTES}


def check_not_ignored(ctx: ContextManager) -> None:
    """Refuse a root whose folder the enclosing repository ignores (VersioningError with the fix).

    ``git status`` skips ignored folders, so files made there by hand would never be found,
    and committing into a repository that asked to leave the folder out goes against it.
    """
    rule = ignore_rules(ctx.git, [""])[""] if ctx.git.prefix else None
    if rule is not None:
        raise VersioningError(
            f"{ctx.root} is inside the repository {ctx.git.workdir}, which ignores it ({rule}): files made "
            "there by hand would never be found or committed", fix=Fix("own-repository"))


def ensure_root(ctx: ContextManager) -> None:
    """Write the managed files where they differ, adopting a new root's files.

    Files already in a folder with no commit yet become the first commit, authored by the
    outside author; the managed files follow in a commit of their own.
    """
    check_not_ignored(ctx)
    with ctx.write_lock(), typed_io(str(ctx.root)):
        ctx.git.ensure_split_index()
        with contextlib.suppress(InvalidPathError):  # a '.contextfs' link is refused on read
            ctx.files.mkdir(".contextfs")  # where committed settings go (config.toml)
        adopted: dict[str, bytes | None] = {}
        if ctx.git.head() is None:
            # Adopting a folder: what is already in it becomes the first commit.
            edits, report = scan_outside_edits(ctx.files, ctx.git, skip=scratch.is_scratch, check=gate_check(ctx))
            log_report(report)
            adopted = {rel: data for rel, data in edits.items() if rel not in MANAGED}
        missing = {name: text.encode() for name, text in MANAGED.items() if ctx.files.read(name) != text.encode()}
        if not missing and not adopted:
            return  # nothing to write (and a root mid-merge still opens)
        with ctx.change("init", "contextfs root") as change:
            change.adoption_op, change.adoption_subject = "init", f"adopt {len(adopted)} file(s)"
            for rel, found in adopted.items():
                change.adopt(rel, found, executable=ctx.is_executable(rel))
                if found is not None:  # scanned above (names too) like every edit made outside
                    change.vetted.add(blob_version(found))
            for name, data in missing.items():
                change.write(name, data)
                change.vetted.add(blob_version(data))
