"""A change that moves a file and then edits it is undone whole: the file goes back to its
old name with its old bytes.

Undoing moves the file back first, so the old name then holds the change's edit. That edit
is the change's own (it left it under the new name), not a person's save: the old bytes go
back. Both when a transaction fails and when recovery rolls back a writer killed after its
files were in place.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import assert_clean, git

from contextfs import ContextManager

ORIGINAL = "- the first plan\n"

#: Three ways to carry ``notes/a.md`` somewhere and edit it there: (moves, the file edited).
WAYS = {
    "a file moved": ([("notes/a.md", "notes/b.md")], "notes/b.md"),
    "its folder moved": ([("notes", "archive")], "archive/a.md"),
    "moved twice": ([("notes/a.md", "notes/b.md"), ("notes/b.md", "done/c.md")], "done/c.md"),
}


class _Failed(Exception):
    pass


@pytest.mark.parametrize("way", list(WAYS))
def test_a_failed_transaction_that_moved_and_edited_a_file_puts_it_back_as_it_was(
    tmp_path: Path, way: str
) -> None:
    moves, edited = WAYS[way]
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("notes/a.md", ORIGINAL)
        head = git(ctx.root, "rev-parse", "HEAD")
        with pytest.raises(_Failed), ctx.transaction("move and edit"):
            for src, dst in moves:
                ctx.move(src, dst)
            ctx.append(edited, "- an edit made after the move\n")
            ctx.list()  # what is staged goes in place: the undo finds the edit on disk
            raise _Failed
        assert ctx.read("notes/a.md").endswith(ORIGINAL)
        assert ctx.list() == ["notes/a.md"]
        assert git(ctx.root, "rev-parse", "HEAD") == head
    assert_clean(tmp_path / "ctx")


#: In a transaction: the moves, an append to the file, then killed once the files are in place.
_KILLED = (
    "import json, sys\n"
    "from contextfs import ContextManager, faults\n"
    "moves, edited = json.loads(sys.argv[2])\n"
    "faults.arm('change.published', 'kill')\n"
    "ctx = ContextManager(sys.argv[1], actor='agent:crash', index=False)\n"
    "with ctx.transaction('move and edit'):\n"
    "    for src, dst in moves:\n"
    "        ctx.move(src, dst)\n"
    "    ctx.append(edited, '- an edit made after the move\\n')\n"
)


@pytest.mark.parametrize("way", list(WAYS))
def test_recovery_of_a_writer_killed_after_moving_and_editing_puts_the_file_back(
    tmp_path: Path, way: str
) -> None:
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("notes/a.md", ORIGINAL)
    head = git(root, "rev-parse", "HEAD")
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(root), json.dumps(WAYS[way])],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode(errors="replace")
    with ContextManager(root, index=False) as ctx:
        assert ctx.list() == ["notes/a.md"]
        assert ctx.read("notes/a.md").endswith(ORIGINAL)
    assert git(root, "rev-parse", "HEAD") == head
    assert_clean(root)
