"""The files contextfs manages in a root, and adopting a folder as a root.

``.gitignore`` keeps temporary files out of commits; ``.gitattributes`` stores bytes
exactly as written (so blob ids match what contextfs hashes) and merges JSON Lines logs
by keeping both sides' lines. Opening a folder for writing makes sure both are there; in
a folder with no commit yet, whatever is already in it becomes the first commit.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..document import blob_version
from ..errors import InvalidPathError, VersioningError
from ..files import scratch
from ..files.fileerrors import typed_io
from ..fixes import Fix
from .outside import gate_check, ignore_rules, log_report, scan_outside_edits

if TYPE_CHECKING:
    from ..parts import RootParts

__all__ = ["GITATTRIBUTES", "GITIGNORE", "MANAGED", "check_not_ignored", "ensure_root"]

GITIGNORE = (
    """# managed by contextfs: temporary files, never committed
*.cfs-tmp
# derived state kept here by earlier versions (it now lives under .git/contextfs/)
.contextfs/index/
.contextfs/cache/
.contextfs/logs/
.contextfs/lock
.contextfs/*.lock
.contextfs/active-vocabulary.txt
"""
    + scratch.GITIGNORE
)
GITATTRIBUTES = """# managed by contextfs
# Store bytes exactly as written so blob ids match what contextfs hashes.
* -text
# Append-only logs merge by keeping both sides' lines.
*.jsonl merge=union
"""
MANAGED = {".gitignore": GITIGNORE, ".gitattributes": GITATTRIBUTES}


def check_not_ignored(parts: RootParts) -> None:
    """Refuse a root whose folder the enclosing repository ignores (VersioningError with the fix).

    ``git status`` skips ignored folders, so files made there by hand would never be found,
    and committing into a repository that asked to leave the folder out goes against it.
    """
    rule = ignore_rules(parts.git, [""])[""] if parts.git.prefix else None
    if rule is not None:
        raise VersioningError(
            f"{parts.root} is inside the repository {parts.git.workdir}, which ignores it ({rule}): files made "
            "there by hand would never be found or committed",
            fix=Fix("own-repository"),
        )


def ensure_root(parts: RootParts) -> None:
    """Write the managed files where they differ, adopting a new root's files.

    Files already in a folder with no commit yet become the first commit, authored by the
    outside author; the managed files follow in a commit of their own.
    """
    check_not_ignored(parts)
    with parts.write_lock(), typed_io(str(parts.root)):
        parts.git.ensure_split_index()
        with contextlib.suppress(InvalidPathError):  # a '.contextfs' link is refused on read
            parts.files.mkdir(".contextfs")  # where committed settings go (config.toml)
        adopted: dict[str, bytes | None] = {}
        if parts.git.head() is None:
            # Adopting a folder: what is already in it becomes the first commit.
            edits, report = scan_outside_edits(
                parts.files, parts.git, skip=scratch.is_scratch, check=gate_check(parts)
            )
            log_report(report)
            adopted = {rel: data for rel, data in edits.items() if rel not in MANAGED}
        missing = {
            name: text.encode()
            for name, text in MANAGED.items()
            if parts.files.read(name) != text.encode()
        }
        if not missing and not adopted:
            return  # nothing to write (and a root mid-merge still opens)
        with parts.change("init", "contextfs root") as change:
            change.adoption_op, change.adoption_subject = "init", f"adopt {len(adopted)} file(s)"
            for rel, found in adopted.items():
                change.adopt(rel, found, executable=parts.is_executable(rel))
                if found is not None:  # scanned above (names too) like every edit made outside
                    change.vetted.add(blob_version(found))
            for name, data in missing.items():
                change.write(name, data)
                change.vetted.add(blob_version(data))
