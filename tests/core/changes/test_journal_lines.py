"""The journal's lines: one readable line per step, by a change and by the recovery that
finishes it, whatever the root's path.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import application_repository, assert_clean, git

from contextfs import ContextManager, faults
from contextfs.versioning import GitStore

#: Opens ``argv[1]`` with the fault ``argv[2]`` armed to kill, then calls ``argv[3]`` (if
#: given) with the arguments after it.
_KILLED = (
    "import sys\n"
    "from contextfs import ContextManager, faults\n"
    "faults.arm(sys.argv[2], 'kill')\n"
    "ctx = ContextManager(sys.argv[1], actor='agent:crash', index=False)\n"
    "if len(sys.argv) > 3:\n"
    "    getattr(ctx, sys.argv[3])(*sys.argv[4:])\n"
)


def _killed(root: Path | str, point: str, *call: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, os.fspath(root), point, *call],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode(errors="replace")


def _locks(root: Path) -> list[str]:
    return sorted(str(p) for p in (root / ".git").rglob("*.lock"))


@pytest.mark.parametrize("call", [("move", "tools/run.sh", "bin/run.sh"), ("delete", "tools")])
def test_a_move_killed_midway_is_moved_back(tmp_path: Path, call: tuple[str, ...]) -> None:
    """The journal names the rename, so recovery moves the file back (rather than writing its
    bytes again): it keeps its mode, and the tree is as it was."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("tools/run.sh", "#!/bin/sh\necho run\n")
    script = root / "tools" / "run.sh"
    script.chmod(0o755)
    with ContextManager(root, index=False) as ctx:
        ctx.sync()  # the mode is committed
    ino, head = script.stat().st_ino, git(root, "rev-parse", "HEAD")
    _killed(root, "change.renamed", *call)
    assert not script.exists()
    with ContextManager(root, index=False) as ctx:
        assert ctx.list() == ["tools/run.sh"]
    assert script.stat().st_ino == ino and script.stat().st_mode & 0o777 == 0o755
    assert git(root, "rev-parse", "HEAD") == head
    assert_clean(root)


#: In a transaction: write ``notes/plan.md``; a person saves it; take a conflict copy's text
#: over it; killed once the files are in place, before the commit.
_TAKEN = (
    "import pathlib, sys\n"
    "from contextfs import ContextManager, faults\n"
    "ctx = ContextManager(sys.argv[1], actor='agent:crash', index=False)\n"
    "path = pathlib.Path(sys.argv[1], 'notes', 'plan.md')\n"
    "faults.arm('change.published', 'kill')\n"
    "with ctx.transaction('take their plan'):\n"
    "    ctx.write('notes/plan.md', 'a draft')\n"
    "    path.write_text('the person saves\\n', 'utf-8')\n"
    "    ctx.remote.resolve(sys.argv[2], keep='copy')\n"
)


def test_a_save_found_again_is_what_recovery_puts_back(tmp_path: Path) -> None:
    """The snapshot taken again when somebody saved journals the bytes the change was about
    to leave, so recovery knows them for its own and puts the person's save back."""
    root = tmp_path / "ctx"
    copy = "notes/plan.conflict-0123abcd.md"
    with ContextManager(root, index=False) as ctx:
        ctx.write("notes/plan.md", "our plan")
        ctx.write(copy, "their plan")
    head = git(root, "rev-parse", "HEAD")
    proc = subprocess.run(
        [sys.executable, "-c", _TAKEN, str(root), copy], capture_output=True, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode(errors="replace")
    assert (root / "notes" / "plan.md").read_text("utf-8").endswith("their plan")  # in place
    with ContextManager(root, index=False) as ctx:
        assert ctx.read("notes/plan.md") == "the person saves\n"
        assert ctx.read(copy) == "their plan"
    # opening commits the person's save (an edit made outside), on the commit before the kill
    assert git(root, "rev-parse", "HEAD~1") == head
    assert git(root, "show", "HEAD:notes/plan.md") == "the person saves\n"
    assert git(root, "log", "-1", "--format=%an").strip() == "human"


def test_recovery_reads_past_what_it_cannot_read(tmp_path: Path) -> None:
    """A torn last line is a step that never started; a journal without a readable header is
    removed, and a folder named like a journal is left alone: the change journaled beside
    them is still finished."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        folder = ctx.parts.state.file("journal")
    _killed(root, "commit.ready", "write", "notes/a.md", "finished by recovery")
    [journal] = list(folder.glob("*.jsonl"))
    with journal.open("ab") as fh:
        fh.write(b'{"touch":"notes/b.md","blo')  # the line a kill tore
    (folder / "0-stray.jsonl").mkdir()  # names that sort before the journal, and after it
    for i in range(8):  # more than one open's recoveries: each must read on past them
        (folder / f"1-{i}-garbage.jsonl").write_bytes(b"not a journal\n")
    (folder / "2-header.jsonl").write_bytes(b'{"begin":"not a mapping"}\n')
    with ContextManager(root, index=False) as ctx:
        assert git(root, "show", "HEAD:notes/a.md").endswith("finished by recovery")
        assert ctx.read("notes/a.md") == "finished by recovery"
    assert sorted(p.name for p in folder.iterdir()) == ["0-stray.jsonl"]
    assert_clean(root)


def test_an_unreadable_journal_that_cannot_be_removed_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A journal without a readable header that cannot be removed either (a read-only
    mount, another process removing it first) is left where it is: the root still opens,
    and the change journaled beside it is still finished."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        folder = ctx.parts.state.file("journal")
    _killed(root, "commit.ready", "write", "notes/a.md", "finished by recovery")
    garbage = folder / "1-garbage.jsonl"
    garbage.write_bytes(b"not a journal\n")
    real = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if self == garbage:
            raise OSError(30, "Read-only file system", str(self))
        real(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    with ContextManager(root, index=False) as ctx:
        assert ctx.read("notes/a.md") == "finished by recovery"
    assert garbage.exists()
    assert_clean(root)


def test_a_change_leaves_no_descriptor_open_and_its_journal_private(tmp_path: Path) -> None:
    fds = Path("/proc/self/fd")
    if not fds.exists():
        pytest.skip("needs /proc to count open descriptors")
    modes: list[int] = []
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        folder = ctx.parts.state.file("journal")
        ctx.write("notes/a.md", "the first write opens what stays open")
        before = len(list(fds.iterdir()))
        faults.arm(
            "change.touched",
            lambda: modes.extend(p.stat().st_mode & 0o777 for p in folder.glob("*.jsonl")),
        )
        try:
            for i in range(3):
                ctx.write(f"notes/{i}.md", f"note {i}")
                ctx.move(f"notes/{i}.md", f"notes/moved-{i}.md")
        finally:
            faults.disarm()
        assert len(list(fds.iterdir())) == before
    assert modes and set(modes) == {0o600}


def test_a_recovery_killed_holding_the_branch_is_finished_by_the_next(
    tmp_path: Path, monkeypatch
) -> None:
    """The lines recovery appends (the locks it takes) are read back like the change's own:
    the next open proves the locks are contextfs's, removes them and finishes the change."""
    root = tmp_path / "ctx"
    ContextManager(root, index=False).close()
    _killed(
        root, "commit.ready", "write", "notes/a.md", "never acknowledged"
    )  # ready, the branch not moved
    _killed(root, "publish.locked")  # the recovery that finishes it, killed holding the branch
    assert _locks(root)
    monkeypatch.setattr(GitStore, "lock_wait", 0.2)  # a lock nobody can prove is ours fails fast
    with ContextManager(root, index=False) as ctx:
        assert ctx.read("notes/a.md") == "never acknowledged"
    assert git(root, "show", "HEAD:notes/a.md").endswith("never acknowledged")
    assert git(root, "log", "-1", "--format=%an").strip() == "agent:crash"
    assert _locks(root) == []
    assert_clean(root)


@pytest.mark.parametrize("inside", [False, True], ids=["own-repository", "in-an-application"])
def test_a_root_whose_path_is_not_utf8_is_written_and_recovered(
    tmp_path: Path, inside: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A folder name is bytes: one that is not UTF-8 (an old archive, a Latin-1 file system)
    still holds a root, and its journal lines, which name git's lock files by path, stay
    one line each."""
    # Recovery logs the lock files it removes by path; pytest-xdist cannot send a captured
    # line holding such a path from its worker (it encodes reports as strict UTF-8).
    caplog.set_level(logging.CRITICAL, logger="contextfs")
    parent = application_repository(tmp_path) if inside else tmp_path
    root = os.fsdecode(os.fsencode(parent) + b"/notes-\xe9t\xe9")
    with ContextManager(root, index=False) as ctx:
        ctx.write("notes/b.md", "written in place")
    _killed(root, "commit.ready", "write", "notes/a.md", "first")
    _killed(root, "publish.locked")
    with ContextManager(root, index=False) as ctx:
        assert ctx.read("notes/a.md") == "first"
        ctx.write("notes/a.md", "second")
    assert git(Path(root), "show", "HEAD:./notes/a.md").endswith("second")
    assert _locks(Path(root)) == []
    assert_clean(Path(root))
