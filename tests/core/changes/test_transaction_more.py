"""A move cut short: the journal names the rename, so the next process to open the root moves
the file back (keeping the file itself), or leaves both names alone when somebody has made a
file at the source since.

The disk a kill leaves is taken as a copy of the root made at the fault point, in this process:
everything written is in the copy (a kill loses nothing the system has accepted), and the
copy is then opened as the next process would open the root.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers import assert_clean, commit_as_person, git

from contextfs import ContextFSError, ContextManager, VersioningError, faults
from contextfs.changes import transaction
from contextfs.files import durability


def _left_by_a_kill(point: str, root: Path, call: Callable[[], object]) -> tuple[Path, int]:
    """A copy of ``root`` as ``call`` leaves it at ``point``, and the inode of ``run.sh``
    under ``bin/`` there (the moved file)."""
    copy = root.parent / "killed"
    found: list[int] = []

    def cut() -> None:
        shutil.copytree(root, copy, symlinks=True)
        found.append((copy / "bin" / "run.sh").stat().st_ino)

    faults.arm(point, cut)
    try:
        call()
    finally:
        faults.disarm()
    assert found, f"the call never passed {point}"
    return copy, found[0]


@pytest.fixture
def script_root(tmp_path: Path) -> Path:
    """A root holding an executable ``tools/run.sh``, its mode committed."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("tools/run.sh", "#!/bin/sh\necho run\n")
    (root / "tools" / "run.sh").chmod(0o755)
    with ContextManager(root, index=False) as ctx:
        ctx.sync()
    return root


@pytest.mark.parametrize("src, dst", [("tools/run.sh", "bin/run.sh"), ("tools", "bin")])
def test_a_move_cut_short_is_moved_back_as_the_same_file(
    script_root: Path, src: str, dst: str
) -> None:
    head = git(script_root, "rev-parse", "HEAD")
    with ContextManager(script_root, index=False) as ctx:
        copy, ino = _left_by_a_kill("change.renamed", script_root, lambda: ctx.move(src, dst))
    assert not (copy / "tools" / "run.sh").exists()
    with ContextManager(copy, index=False) as ctx:
        assert ctx.list() == ["tools/run.sh"]
    back = (copy / "tools" / "run.sh").stat()
    assert back.st_ino == ino and back.st_mode & 0o777 == 0o755
    assert git(copy, "rev-parse", "HEAD") == head
    assert_clean(copy)


def test_a_file_made_at_the_source_after_a_move_cut_short_keeps_both_names(
    script_root: Path,
) -> None:
    """The move cannot be reversed without erasing the new file, so the moved file stays where
    the move put it: neither text is lost, and both are committed when the root is opened."""
    with ContextManager(script_root, index=False) as ctx:
        copy, ino = _left_by_a_kill(
            "change.renamed", script_root, lambda: ctx.move("tools/run.sh", "bin/run.sh")
        )
    (copy / "tools").mkdir()
    (copy / "tools" / "run.sh").write_text("a new script\n", "utf-8")
    with ContextManager(copy, index=False) as ctx:
        assert ctx.list() == ["bin/run.sh", "tools/run.sh"]
    assert (copy / "bin" / "run.sh").read_text("utf-8") == "#!/bin/sh\necho run\n"
    assert (copy / "bin" / "run.sh").stat().st_ino == ino
    assert (copy / "tools" / "run.sh").read_text("utf-8") == "a new script\n"
    assert_clean(copy)


# ------------------------------------------------------------------------- a path only read
@pytest.mark.parametrize("reads", [1, 2])
def test_an_undone_transaction_leaves_deleted_a_file_it_read_that_somebody_deleted(
    tmp_path: Path, reads: int
) -> None:
    """What a change read is what it leaves there, so far: a path holding anything else
    afterwards (no file) was changed by somebody else, and undoing the change keeps that. With
    two reads, the second finds a save made in between and reads that."""
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("notes/a.md", "committed\n")
        path = store.root / "notes" / "a.md"
        with pytest.raises(RuntimeError, match="the block failed"), store.transaction("undone"):
            store.append("notes/a.md", "the agent's line\n")
            if reads == 2:
                path.write_text("a person's save\n", "utf-8")
                store.append("notes/a.md", "another line\n")
            path.unlink()
            raise RuntimeError("the block failed")
        assert not path.exists()
        # the save it found would be in no commit now: it is committed on its own
        found = "a person's save\n" if reads == 2 else "committed\n"
        assert store.read_at("notes/a.md", "HEAD") == found


# ------------------------------------------------------------------------- a root that is not durable
def test_a_root_opened_without_durability_flushes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``durable=False`` skips every flush, those a change collects while it runs too."""
    with ContextManager(tmp_path / "ctx", index=False, durable=False) as store:
        store.write("notes/a.md", "alpha\n")
        flushed: list[int] = []
        real_fsync = os.fsync
        # Without syncfs (as on macOS) a flush fsyncs each file and folder it covers.
        monkeypatch.setattr(durability, "_SYNCFS", None)

        def fsync(fd: int) -> None:
            flushed.append(fd)
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", fsync)
        store.append("notes/a.md", "beta\n")
        with store.transaction("two files"):
            store.write("notes/b.md", "gamma\n")
            store.move("notes/a.md", "notes/c.md")
        monkeypatch.undo()
        assert store.list() == ["notes/b.md", "notes/c.md"]
        assert flushed == []


def test_an_undone_transaction_keeps_a_save_over_a_file_it_only_read(tmp_path: Path) -> None:
    """A file the change read (an edit that found nothing to replace) and never wrote holds,
    as far as the change knows, what it read: a person's save there afterwards is theirs,
    and undoing the change leaves it."""
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("notes/a.md", "committed\n")
        path = store.root / "notes" / "a.md"
        with pytest.raises(RuntimeError, match="the block failed"), store.transaction("undone"):
            store.write("notes/b.md", "the agent's note\n")
            with pytest.raises(ContextFSError):
                store.edit("notes/a.md", "text that is not there", "new text")
            path.write_text("a person's save\n", "utf-8")
            raise RuntimeError("the block failed")
        assert path.read_text("utf-8") == "a person's save\n"
        assert not (store.root / "notes" / "b.md").exists()


def test_a_file_only_others_may_run_is_committed_as_not_executable(tmp_path: Path) -> None:
    """Git's executable bit is the owner's: a file others may run but its owner may not is
    an ordinary file in the commit."""
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("tools/check.sh", "echo one\n")
        path = store.root / "tools" / "check.sh"
        path.chmod(0o645)
        with store.transaction("edit the script"):
            store.append("tools/check.sh", "echo two\n")
        assert git(store.root, "ls-tree", "HEAD", "tools/check.sh").split()[0] == "100644"
        path.chmod(0o745)
        store.append("tools/check.sh", "echo three\n")
        assert git(store.root, "ls-tree", "HEAD", "tools/check.sh").split()[0] == "100755"


# ------------------------------------------------------------------------- a branch that keeps moving
def _people_committing(root: Path, times: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """After each of the change's first ``times`` builds, a person commits with plain git, so
    the branch is no longer where the change built its commit. Returns the builds counted."""
    builds = [0]
    real = transaction.build_commits

    def build(*args: object, **kwargs: object) -> object:
        built = real(*args, **kwargs)  # type: ignore[arg-type]
        builds[0] += 1
        if builds[0] <= times:
            (root / "people.txt").write_text(f"edit {builds[0]}\n", "utf-8")
            git(root, "add", "people.txt")
            commit_as_person(root, f"a person's commit {builds[0]}")
        return built

    monkeypatch.setattr(transaction, "build_commits", build)
    return builds


def test_a_commit_is_built_again_when_the_branch_moved_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("notes/a.md", "one\n")
        builds = _people_committing(store.root, 2, monkeypatch)
        store.write("notes/a.md", "two\n")
        assert builds == [3]
        subjects = git(store.root, "log", "--format=%s", "-3").splitlines()
        assert subjects[1:] == ["a person's commit 2", "a person's commit 1"]
        assert git(store.root, "show", "HEAD:notes/a.md").endswith("---\ntwo\n")


def test_a_commit_gives_up_after_the_branch_moved_three_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three builds, each overtaken: the write is refused with the typed error, its file put
    back, and the people's commits kept."""
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("notes/a.md", "one\n")
        before = (store.root / "notes" / "a.md").read_bytes()
        builds = _people_committing(store.root, 3, monkeypatch)
        with pytest.raises(VersioningError):
            store.write("notes/a.md", "two\n")
        assert builds == [3]
        assert (store.root / "notes" / "a.md").read_bytes() == before
        assert git(store.root, "log", "--format=%s", "-1").strip() == "a person's commit 3"


# ------------------------------------------------------------------------- after a commit, and after a refused one
def test_a_commit_is_dated_by_the_library_clock_and_tells_the_listeners(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commits are dated by ``contextfs.clock`` (the one clock tests fake), the outside
    version a change commits first included; the listeners then hear which paths changed."""
    moment = datetime(2024, 2, 29, 12, 0, tzinfo=timezone.utc)
    monkeypatch.setattr("contextfs.clock.now", lambda: moment)
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("notes/a.txt", "one\n")
        heard: list[list[str]] = []
        store.parts.add_listener(heard.append)
        (store.root / "notes" / "a.txt").write_text("a person's save\n", "utf-8")
        store.write("notes/a.txt", "two\n")
        dates = git(store.root, "log", "--format=%at %ct", "-3").split()
        assert dates == [str(int(moment.timestamp()))] * 6
        assert heard == [["notes/a.txt"]]


def _refused_at_publish(store: ContextManager) -> None:
    faults.arm("commit.recorded", "raise")
    try:
        with pytest.raises(RuntimeError, match="fault injected"):
            store.write("notes/a.txt", "two\n")
    finally:
        faults.disarm()


def test_a_refused_commit_leaves_gits_index_in_line_with_the_files(tmp_path: Path) -> None:
    """The files put back are recorded in git's index again (their new status), so git sees
    them as unchanged without hashing them again: ``git diff-files`` does not refresh."""
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("notes/a.txt", "one\n")
        _refused_at_publish(store)
        assert (store.root / "notes" / "a.txt").read_text("utf-8") == "one\n"
        assert git(store.root, "diff-files", "--name-only") == ""
        assert_clean(store.root)


def test_an_index_that_cannot_be_brought_back_never_hides_the_first_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When bringing git's index back in line fails too, the failure that stopped the commit
    is what the caller gets, and the files are put back all the same."""
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("notes/a.txt", "one\n")

        def record(paths: object) -> None:
            raise VersioningError("git's index is locked by another program")

        monkeypatch.setattr(store.parts.git, "record", record)
        _refused_at_publish(store)
        assert (store.root / "notes" / "a.txt").read_text("utf-8") == "one\n"
        assert not list(store.parts.state.file("journal").glob("*.jsonl"))


def test_a_change_that_leaves_the_tree_as_committed_commits_nothing(tmp_path: Path) -> None:
    """Without the outside check a person's save is not committed first, so writing back
    what HEAD holds over it leaves the tree as committed: no commit, and git's index is
    brought in line with the file written (``git diff-files`` does not refresh)."""
    with ContextManager(tmp_path / "ctx", index=False) as store:
        store.write("notes/a.txt", "one\n")
        head = store.parts.git.head()
        writer = store.parts.writer()
        assert writer is not None
        writer.check_outside = False
        (store.root / "notes" / "a.txt").write_text("a person's save\n", "utf-8")
        store.write("notes/a.txt", "one\n")
        assert store.parts.git.head() == head
        assert (store.root / "notes" / "a.txt").read_text("utf-8") == "one\n"
        assert git(store.root, "diff-files", "--name-only") == ""
        assert_clean(store.root)


def test_a_change_cut_short_once_ready_is_published_as_the_commit_it_built(
    tmp_path: Path,
) -> None:
    """Killed once its journal says ``ready``, a change is rolled forward by the next process
    as the very commit it built (the journal names it), not as a new one."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("notes/a.txt", "one\n")
        copy = root.parent / "killed"
        faults.arm("commit.ready", lambda: shutil.copytree(root, copy, symlinks=True))
        try:
            ctx.write("notes/a.txt", "two\n")
        finally:
            faults.disarm()
    (journal,) = (copy / ".git").rglob("journal/*.jsonl")
    lines = [json.loads(line) for line in journal.read_text("utf-8").splitlines()]
    (ready,) = [line["ready"] for line in lines if "ready" in line]
    with ContextManager(copy, index=False) as ctx:
        assert ctx.read("notes/a.txt") == "two\n"
    assert (
        git(copy, "rev-parse", "HEAD").strip()
        == ready["sha"]
        == git(root, "rev-parse", "HEAD").strip()
    )
    assert_clean(copy)


def _killed_then_reopened(root: Path, point: str, call: Callable[[ContextManager], object]) -> None:
    """``root`` as a process killed at ``point`` during ``call`` leaves it, at its own path
    (the journal names git's lock files by absolute path)."""
    copy = root.parent / "killed"
    with ContextManager(root, index=False) as ctx:
        faults.arm(point, lambda: shutil.copytree(root, copy, symlinks=True))
        try:
            call(ctx)
        finally:
            faults.disarm()
    assert copy.exists(), f"the call never passed {point}"
    shutil.rmtree(root)
    copy.rename(root)


@pytest.mark.parametrize("point", ["record.locked", "commit.recorded", "publish.locked"])
def test_git_locks_a_killed_change_held_are_cleared_by_the_next_process(
    tmp_path: Path, point: str
) -> None:
    """A change killed while it held git's index or branch lock journaled the locks first, so
    the next process proves them its own (by device, inode and content: a real kill, not a
    copy), clears them and publishes the change; later writes go on."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("notes/a.txt", "one\n")
    code = (
        "import sys; from contextfs import ContextManager; "
        "ContextManager(sys.argv[1], index=False).write('notes/a.txt', 'two\\n')"
    )
    env = dict(os.environ, CONTEXTFS_FAULTS=f"{point}=kill")
    done = subprocess.run([sys.executable, "-c", code, str(root)], env=env, check=False)
    assert done.returncode == -signal.SIGKILL
    assert list((root / ".git").rglob("*.lock"))
    with ContextManager(root, index=False) as ctx:
        assert ctx.read("notes/a.txt") == "two\n"
        ctx.write("notes/b.txt", "three\n")
    assert not list((root / ".git").rglob("*.lock"))
    assert git(root, "log", "--format=%s", "-1").strip() == "write: notes/b.txt"
    assert_clean(root)


def test_a_change_rolled_forward_onto_a_moved_branch_keeps_modes_and_a_persons_save(
    tmp_path: Path,
) -> None:
    """Killed once ready, with a person's commit landing before the next process opens the
    root, the change is built again on top: the person's save it found is still committed
    first as theirs, and only the file that may be run is committed executable."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("tools/run.sh", "#!/bin/sh\necho run\n")
        ctx.write("notes/a.txt", "one\n")
    (root / "tools" / "run.sh").chmod(0o755)
    with ContextManager(root, index=False) as ctx:
        ctx.sync()

    def change(ctx: ContextManager) -> None:
        (root / "notes" / "a.txt").write_text("a person's save\n", "utf-8")
        with ctx.transaction("tidy up"):
            ctx.write("tools/run.sh", "#!/bin/sh\necho run fast\n")
            ctx.write("notes/a.txt", "two\n")

    _killed_then_reopened(root, "commit.ready", change)
    (root / "people.txt").write_text("elsewhere\n", "utf-8")
    git(root, "add", "people.txt")
    commit_as_person(root, "a person's commit")
    with ContextManager(root, index=False) as ctx:
        assert ctx.read("notes/a.txt") == "two\n"
    log = git(root, "log", "--format=%an|%s", "-3").splitlines()
    assert log[0] == "agent|tidy up" and log[1].startswith("human|"), log
    assert log[2] == "dev|a person's commit", log
    assert git(root, "show", "HEAD~1:notes/a.txt") == "a person's save\n"
    modes = {
        line.split("\t")[1]: line.split()[0]
        for line in git(root, "ls-tree", "-r", "HEAD").splitlines()
    }
    assert modes["tools/run.sh"] == "100755" and modes["notes/a.txt"] == "100644", modes
    assert_clean(root)
