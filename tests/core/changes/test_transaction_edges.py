"""The edges of one change: the trailers its nested calls bring, a path it removes and writes
again, a save somebody makes while it runs, and undoing it for good.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from pathlib import Path

import pytest
from helpers import assert_clean, commit_count, git
from secret_samples import SECRET_KINDS

from contextfs import ContextManager, faults
from contextfs.files import durability, swapping

COPY = "notes/plan.conflict-0123abcd.md"


@pytest.fixture
def store(tmp_path: Path):
    manager = ContextManager(tmp_path / "ctx", index=False)  # an agent, as by default
    yield manager
    manager.close()


def authors(root: Path, count: int) -> list[str]:
    return git(root, "log", f"-{count}", "--format=%an").split()


def test_nested_calls_add_each_trailer_value_once(store: ContextManager) -> None:
    with store.transaction("plan the release", trailers={"Contextfs-Refs": "T-1"}):
        store.write("notes/a.md", "alpha", trailers={"Contextfs-Refs": "T-2"})
        store.append("notes/a.md", "more", trailers={"Contextfs-Refs": "T-1"})  # already there
        store.write(
            "notes/b.md", "bravo", trailers={"Contextfs-Refs": "", "Contextfs-Ticket": "X-9"}
        )
        store.append("notes/b.md", "again", trailers={"Contextfs-Ticket": "X-9"})
    trailers = store.history(limit=1)[0].trailers
    assert trailers["Contextfs-Refs"] == "T-1, T-2" and trailers["Contextfs-Ticket"] == "X-9"


def test_a_transaction_builds_on_its_own_staged_writes(store: ContextManager) -> None:
    store.write("notes/a.md", "committed")
    with store.transaction("build up"):
        store.write("notes/a.md", "first")
        store.append("notes/a.md", "second")
        store.write("notes/new.md", "one")
        store.append("notes/new.md", "two")
        store.edit("notes/new.md", "two", "three")
    assert store.read("notes/a.md") == "first\nsecond"
    assert store.read("notes/new.md") == "one\nthree"
    assert authors(store.root, 1) == ["agent"] and commit_count(store.root) == 3
    assert_clean(store.root)


@pytest.mark.parametrize("look", ["append", "update_metadata"])
def test_a_save_over_a_staged_write_wins_when_the_change_looks_again(
    store: ContextManager, look: str
) -> None:
    """The person saved after the change staged its bytes (they were never on disk): when
    the change looks at the file again, the save is what it finds, and its own write is
    dropped. An append looks at the file's place first, which puts staged bytes in place
    (the later save supersedes them there); a metadata change reads the file directly."""
    store.write("notes/a.md", "committed")
    path = store.root / "notes" / "a.md"
    with store.transaction("look again"):
        store.write("notes/a.md", "the agent's draft")
        path.write_text("the person's save\n", "utf-8")
        if look == "append":
            store.append("notes/a.md", "")  # reads it, changes nothing
        else:
            store.update_metadata("notes/a.md", {})  # the same
    assert path.read_text("utf-8") == "the person's save\n"
    assert store.read_at("notes/a.md", "HEAD") == "the person's save\n"
    assert authors(store.root, 1) == ["human"]
    assert_clean(store.root)


def test_bytes_not_computed_from_a_read_are_never_a_stale_read(store: ContextManager) -> None:
    """An append (computed from what it read) is dropped when somebody saves; taking a
    conflict copy's text over the file computes nothing from the file, so a second save,
    made before those bytes go in place, is committed first instead of failing the
    transaction."""
    store.write("notes/plan.md", "our plan")
    store.write(COPY, "their plan")
    path = store.root / "notes" / "plan.md"

    def second_save() -> None:
        path.write_text("the second save\n", "utf-8")
        time.sleep(0.05)  # file times tick coarsely: the copy's text is staged a tick later

    with store.transaction("take their plan"):
        store.append("notes/plan.md", "more")
        path.write_text("the first save\n", "utf-8")
        faults.arm("change.touched", second_save)  # while the first save is snapshotted
        try:
            store.remote.resolve(COPY, keep="copy")
        finally:
            faults.disarm()
    assert store.read("notes/plan.md") == "their plan" and not store.exists(COPY)
    assert store.read_at("notes/plan.md", "HEAD~1") == "the second save\n"
    assert store.read_at("notes/plan.md", "HEAD~2") == "the first save\n"
    assert authors(store.root, 3) == ["agent", "human", "human"]
    assert_clean(store.root)


def test_a_path_removed_then_written_in_one_transaction_is_one_commit(
    store: ContextManager,
) -> None:
    store.write("notes/plan.md", "our plan")
    store.write(COPY, "their plan")
    before = commit_count(store.root)
    with store.transaction("tidy the conflict"):
        store.remote.resolve(COPY, keep="current")  # the copy is removed
        store.write(COPY, "a note that happens to have the copy's name")
    assert commit_count(store.root) == before + 1
    assert authors(store.root, 1) == ["agent"]
    assert store.read(COPY) == "a note that happens to have the copy's name"
    assert_clean(store.root)


def test_a_save_over_a_removed_path_read_earlier_is_not_a_stale_read(
    store: ContextManager,
) -> None:
    """The change read the path, then removed it: a file somebody saves there afterwards is
    theirs, committed first, and writing the path is not working on a stale read."""
    store.write("notes/plan.md", "our plan")
    store.write(COPY, "their plan")
    before = commit_count(store.root)
    with store.transaction("tidy the conflict"):
        store.append(COPY, "")  # reads it, changes nothing
        store.remote.resolve(COPY, keep="current")
        (store.root / COPY).write_text("a person's new note\n", "utf-8")
        store.write(COPY, "the agent's note")
    assert commit_count(store.root) == before + 2
    assert authors(store.root, 2) == ["agent", "human"]
    assert store.read_at(COPY, "HEAD~1") == "a person's new note\n"
    assert store.read(COPY) == "the agent's note"
    assert_clean(store.root)


def _save_during_an_undone_transaction(
    store: ContextManager, *, first: str = "the person's first save\n", fault: str | None = None
) -> Path:
    """A person saves ``notes/a.md`` (``first``) before a transaction writes it and again
    while it runs; the transaction then fails (``fault``: with that fault armed once it began)."""
    store.write("notes/a.md", "committed")
    path = store.root / "notes" / "a.md"
    path.write_text(first, "utf-8")
    try:
        with (
            pytest.raises(RuntimeError, match="the block failed"),
            store.transaction("undone"),
        ):
            if fault is not None:
                faults.arm(fault, "eio")
            store.write("notes/a.md", "the agent's version")  # finds the first save
            path.write_text("the person's second save\n", "utf-8")
            raise RuntimeError("the block failed")
    finally:
        faults.disarm()
    return path


def test_an_undone_transaction_keeps_a_later_save_and_commits_the_one_it_found(
    store: ContextManager,
) -> None:
    path = _save_during_an_undone_transaction(store)
    assert path.read_text("utf-8") == "the person's second save\n"  # never overwritten
    # the first save would be in no commit now: it is committed on its own, as the person's
    assert store.read_at("notes/a.md", "HEAD") == "the person's first save\n"
    assert store.read_at("notes/a.md", "HEAD~1") == "committed"
    assert authors(store.root, 2) == ["human", "agent"]


def test_an_undo_whose_commit_fails_still_ends_with_the_blocks_error(
    store: ContextManager,
) -> None:
    """The branch cannot move when the undo commits the save it found: the caller still gets
    the block's own error, and the later save stays on disk."""
    path = _save_during_an_undone_transaction(store, fault="publish.locked")
    assert path.read_text("utf-8") == "the person's second save\n"
    assert store.read_at("notes/a.md", "HEAD") == "committed"


def test_an_undone_transaction_holds_back_a_found_save_holding_a_secret(
    store: ContextManager,
) -> None:
    """The save it found passes the check every save a person made passes before it is
    committed: one holding a secret stays out of history."""
    key = SECRET_KINDS["AWS secret access key"](random.Random("undone-secret")).text
    path = _save_during_an_undone_transaction(store, first=f"the person's first save\n{key}\n")
    assert path.read_text("utf-8") == "the person's second save\n"
    assert store.read_at("notes/a.md", "HEAD") == "committed"
    assert key not in git(store.root, "log", "-p", "--all")


def test_a_save_made_while_a_move_runs_moves_with_it_and_is_committed_first(
    store: ContextManager,
) -> None:
    store.write("notes/a.md", "committed")
    path = store.root / "notes" / "a.md"
    # the move snapshots the source, then the destination; the save comes in between
    faults.arm("change.touched", lambda: path.write_text("saved meanwhile\n", "utf-8"), nth=2)
    try:
        store.move("notes/a.md", "notes/b.md")
    finally:
        faults.disarm()
    assert store.read("notes/b.md") == "saved meanwhile\n" and not path.exists()
    assert store.read_at("notes/a.md", "HEAD~1") == "saved meanwhile\n"
    assert authors(store.root, 2) == ["agent", "human"]
    assert_clean(store.root)


def test_an_undone_transaction_is_flushed_before_its_journal_goes(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut after the call returns must not bring the change back: what the undo put
    back is flushed before the journal that could redo the undo is removed."""
    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to name file descriptors")
    store.write("notes/a.md", "alpha")
    events: list[tuple[str, str]] = []
    real_fsync, real_unlink, real_rename = os.fsync, os.unlink, os.rename

    def fsync(fd: int) -> None:
        with contextlib.suppress(OSError):
            events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def unlink(path: object, *args: object, **kwargs: object) -> None:
        events.append(("unlink", os.fsdecode(path)))  # type: ignore[arg-type]
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    def rename(src: object, dst: object, *args: object, **kwargs: object) -> None:
        events.append(("rename", f"{os.fsdecode(src)} -> {os.fsdecode(dst)}"))  # type: ignore[arg-type]
        real_rename(src, dst, *args, **kwargs)  # type: ignore[arg-type]

    def place_new(fd: int, src: str, dst: str, **kwargs: int | None) -> bool | None:
        events.append(("rename", f"{src} -> {dst}"))  # a move that never replaces
        return real_place_new(fd, src, dst, **kwargs)

    real_place_new = swapping.place_new
    monkeypatch.setattr(swapping, "place_new", place_new)
    # Without syncfs (as on macOS) a flush fsyncs each file and folder it covers, by name.
    monkeypatch.setattr(durability, "_SYNCFS", None)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(RuntimeError), store.transaction("undone move"):
        store.move("notes/a.md", "notes/b.md")
        raise RuntimeError("the block failed")
    monkeypatch.undo()
    assert store.read("notes/a.md") == "alpha" and not store.exists("notes/b.md")
    journal = next(
        i for i, (kind, what) in enumerate(events) if kind == "unlink" and "journal" in what
    )
    undone = max(i for i, (kind, what) in enumerate(events[:journal]) if kind == "rename")
    assert "b.md -> a.md" in events[undone][1]
    notes = str(store.root / "notes")
    assert ("fsync", notes) in events[undone:journal], events[undone:]
