"""A change flushes every filesystem it wrote to, the git folder's included.

A root's files and its git folder may live on different filesystems (``git init
--separate-git-dir``, a linked worktree whose repository is elsewhere). ``syncfs`` flushes
one filesystem, so a change that synced only the files' one would acknowledge a write whose
objects and branch a power cut could still take. The flushes are observed, not replaced:
each ``syncfs`` still runs, and the test records which filesystem it was for.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from secret_samples import SECRET_KINDS

from contextfs import ContentError, ContextManager, faults
from contextfs.changes import journal, transaction
from contextfs.files import durability, swapping
from contextfs.files.confined import RootFiles

SHM = Path("/dev/shm")


@pytest.fixture
def elsewhere(tmp_path: Path) -> Iterator[Path]:
    """A folder on another filesystem than ``tmp_path`` (a tmpfs), removed afterwards."""
    if not SHM.is_dir() or os.stat(SHM).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on another filesystem than the test's temporary folder")
    if not durability.syncfs_available():
        pytest.skip("needs Linux's syncfs")
    folder = Path(tempfile.mkdtemp(dir=SHM, prefix="contextfs-git-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The device of every filesystem a ``syncfs`` flushed, in order."""
    devices: list[int] = []
    real = durability.sync_filesystem

    def observed(path: str | os.PathLike[str]) -> bool:
        done = real(path)
        if done:
            devices.append(os.stat(path).st_dev)
        return done

    monkeypatch.setattr(durability, "sync_filesystem", observed)
    return devices


def test_a_write_flushes_the_files_and_a_git_folder_on_another_filesystem(
    tmp_path: Path, elsewhere: Path, synced: list[int]
) -> None:
    root = tmp_path / "ctx"
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(elsewhere / "repo.git"), str(root)],
        check=True,
    )
    with ContextManager(root, index=False) as ctx:
        git_dir = ctx.parts.git.common_dir
        assert os.stat(git_dir).st_dev != os.stat(root).st_dev
        synced.clear()
        ctx.write("notes/plan.md", "# Plan\n\nShip it.\n")
        assert set(synced) == {os.stat(root).st_dev, os.stat(git_dir).st_dev}
        assert ctx.read("notes/plan.md").startswith("# Plan")
    # The commit is in the repository on the other filesystem.
    log = subprocess.run(
        ["git", "-C", str(root), "log", "--format=%s", "-1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "notes/plan.md" in log


@pytest.mark.parametrize("cause", ["the commit gate", "a failure while publishing"])
def test_a_refused_commit_is_undone_durably_before_its_journal_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cause: str
) -> None:
    """When a change whose files are already in place is refused (by the commit gate, or by
    a failure while its commit is published), the files are put back, git's index with
    them, and the names they were put back under are flushed before the journal that says
    how to undo them is removed: a power cut in between would otherwise keep the change's
    bytes with nothing left to say they are to be undone."""
    events: list[str] = []
    real_undo, real_close = transaction.undo, journal.JournalFile.close
    real_publish = RootFiles.publish

    def undo(*args: Any, **kwargs: Any) -> Any:
        events.append("undo")
        return real_undo(*args, **kwargs)

    def publish(self: RootFiles) -> None:
        real_publish(self)
        events.append("put in place")

    def close(self: journal.JournalFile) -> None:
        events.append("journal closed")
        real_close(self)

    def sync(path: str | os.PathLike[str], real: Any = durability.sync_filesystem) -> bool:
        events.append("sync")
        return bool(real(path))

    token = SECRET_KINDS["GitHub classic token"](random.Random(5)).payload
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("notes/plan.md", "# Plan\n\nShip it.\n")
        monkeypatch.setattr(transaction, "undo", undo)
        monkeypatch.setattr(RootFiles, "publish", publish)
        monkeypatch.setattr(journal.JournalFile, "close", close)
        monkeypatch.setattr(durability, "sync_filesystem", sync)
        message = f"rotate {token}" if cause == "the commit gate" else "rotate"
        if cause != "the commit gate":
            faults.arm("commit.recorded", "raise")
        refusal = ContentError if cause == "the commit gate" else RuntimeError
        with pytest.raises(refusal), ctx.transaction(message):
            ctx.write("notes/plan.md", "# Plan\n\nShip it on Friday.\n")
        faults.disarm()
        undone = events[events.index("undo") :]
        put_back = undone.index("put in place")
        assert "sync" in undone[put_back : undone.index("journal closed")], events
        assert ctx.read("notes/plan.md") == "# Plan\n\nShip it.\n"
        assert (
            subprocess.run(
                ["git", "-C", str(ctx.root), "status", "--porcelain"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            == ""
        )


def test_a_transaction_that_puts_every_file_back_flushes_nothing_after_it(
    tmp_path: Path,
) -> None:
    """A change whose files end as they were commits nothing, and flushes nothing once its
    files are in place: they hold the committed bytes, which a power cut leaves either way.
    A change that commits flushes once more, after its branch moved. (A text file is stored
    as written: a markdown one would get a new ``updated`` time.)"""
    if not durability.syncfs_available():
        pytest.skip("counts syncfs calls: without it each path is flushed on its own")
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("notes/plan.txt", "one\n")
        head = ctx.parts.git.head()
        before = durability.FLUSHES.calls
        with ctx.transaction("and back"):
            ctx.write("notes/plan.txt", "two\n")
            ctx.write("notes/plan.txt", "one\n")
        back = durability.FLUSHES.calls - before
        assert ctx.parts.git.head() == head
        before = durability.FLUSHES.calls
        ctx.write("notes/plan.txt", "three\n")
        committed = durability.FLUSHES.calls - before
        assert ctx.parts.git.head() != head
        assert back == committed - 1, (back, committed)


def test_the_point_after_a_commit_is_published_sees_the_branch_moved(tmp_path: Path) -> None:
    """``commit.published`` (where the crash matrix kills a writer whose commit is out) is
    passed once per commit, after the branch moved and before the change lets go."""
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("notes/plan.md", "one\n")
        head = ctx.parts.git.head()
        seen: list[str | None] = []
        faults.arm("commit.published", lambda: seen.append(ctx.parts.git.head()))
        try:
            ctx.write("notes/plan.md", "two\n")
        finally:
            faults.disarm()
        assert seen == [ctx.parts.git.head()] and seen[0] != head


def test_a_save_found_just_before_a_rename_is_journaled_durably_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Somebody saves over a file after the change snapshotted it and before the change's
    bytes were staged. Just before its rename the change snapshots their version again (to
    commit it first, and to put it back if the change is undone), and that journal line is
    flushed before the rename: a power cut right after it must still find how to give them
    their version back."""
    if not durability.syncfs_available():
        pytest.skip("observes syncfs: without it each path is flushed on its own")
    events: list[tuple[str, int]] = []
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("notes/plan.txt", "one\n")
        first = ctx.parts.git.head()
        ctx.write("notes/plan.txt", "two\n")
        folder = ctx.parts.state.file("journal")

        def lines() -> int:
            return sum(p.read_bytes().count(b"\n") for p in folder.glob("*.jsonl"))

        def sync(path: str | os.PathLike[str], real: Any = durability.sync_filesystem) -> bool:
            events.append(("sync", lines()))
            return bool(real(path))

        def save() -> None:
            (ctx.root / "notes" / "plan.txt").write_text("theirs\n", "utf-8")
            time.sleep(0.05)  # file times tick coarsely: the staging comes a tick after the save

        monkeypatch.setattr(durability, "sync_filesystem", sync)
        _spy_put_in_place(
            monkeypatch, lambda dst: dst == "plan.txt" and events.append(("rename", lines()))
        )
        faults.arm("change.touched", save)
        try:
            # A revert writes without reading first: the save lands between its snapshot
            # and its staging (a write that reads first would find it stale instead).
            ctx.revert("notes/plan.txt", first)
        finally:
            faults.disarm()
        renames = [i for i, (what, _) in enumerate(events) if what == "rename"]
        assert len(renames) == 1, events
        renamed = renames[0]
        last_sync = max(i for i, (what, _) in enumerate(events[:renamed]) if what == "sync")
        assert events[last_sync][1] == events[renamed][1], events
        assert ctx.read("notes/plan.txt") == "one\n"
        saved = ctx.history("notes/plan.txt", limit=2)[1]
        assert ctx.parts.git.blob_at("notes/plan.txt", saved.commit) == b"theirs\n"


def test_without_syncfs_the_journal_is_flushed_by_name_before_a_file_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``syncfs`` is missing (or fails) each written path is flushed by name, and the
    journal is among them before the change's bytes replace a file: the line saying how to
    put the old bytes back is durable first."""
    events: list[tuple[str, str]] = []
    real_fsync = durability.fsync_path

    def fsync_path(path: str | os.PathLike[str]) -> None:
        events.append(("flush", os.fspath(path)))
        real_fsync(path)

    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("notes/plan.txt", "one\n")
        monkeypatch.setattr(durability, "sync_filesystem", lambda path: False)
        monkeypatch.setattr(durability, "fsync_path", fsync_path)
        _spy_put_in_place(monkeypatch, lambda dst: events.append(("rename", dst)))
        ctx.write("notes/plan.txt", "two\n")
        monkeypatch.undo()
        assert ctx.read("notes/plan.txt") == "two\n"
    renamed = events.index(("rename", "plan.txt"))
    flushed = [path for what, path in events[:renamed] if what == "flush"]
    assert any(path.endswith(".jsonl") for path in flushed), events


def _spy_put_in_place(monkeypatch: pytest.MonkeyPatch, record: Any) -> None:
    """Call ``record(name)`` whenever a file is renamed into place, by whichever call does it
    (a swap that keeps what it replaced, a rename that never replaces, or a plain one)."""

    def spy(real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            record(os.fspath(args[-1] if real is not os.replace else args[1]))
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(os, "replace", spy(os.replace))
    monkeypatch.setattr(swapping, "exchange", spy(swapping.exchange))
    monkeypatch.setattr(swapping, "place_new", spy(swapping.place_new))
