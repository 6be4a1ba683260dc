"""History as read back: each entry's op, target, turn and trailers; diffs between two old
versions, from before a file existed, and against the working copy, to the byte; reverts
that must refuse, or have nothing to do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import assert_clean, commit_as_person, git

from contextfs import ContextManager
from contextfs.errors import ContentError, InvalidArgumentError, InvalidPathError


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ContextManager]:
    manager = ContextManager(tmp_path / "ctx", session="monday", index=False)
    yield manager
    manager.close()


def test_an_entry_reads_its_op_from_the_trailer_and_its_target_after_the_first_colon(
    ctx: ContextManager,
) -> None:
    with ctx.provenance(turn=7), ctx.transaction("plan: step one: done", op="tidy"):
        ctx.write("a.txt", "a\n")
    entry = ctx.history(limit=1)[0]
    assert (entry.op, entry.message, entry.path) == (
        "tidy",
        "plan: step one: done",
        "step one: done",
    )
    assert (entry.session, entry.turn) == ("monday", "7")
    assert entry.trailers["Contextfs-Op"] == "tidy" and entry.trailers["Contextfs-Turn"] == "7"
    # A person's commit has no trailers: its op is what its subject starts with.
    (ctx.root / "b.md").write_text("b\n")
    git(ctx.root, "add", "b.md")
    commit_as_person(ctx.root, "fix: a typo")
    entry = ctx.history(limit=1)[0]
    assert (entry.op, entry.path, entry.session, entry.turn, dict(entry.trailers)) == (
        "fix",
        "a typo",
        None,
        None,
        {},
    )


def test_diffs_between_old_versions_from_before_a_file_and_against_the_working_copy(
    ctx: ContextManager,
) -> None:
    ctx.write("a.txt", "one\ntwo\n")
    first = ctx.history(limit=1)[0].commit
    ctx.write("a.txt", "one\nthree\n")
    second = ctx.history(limit=1)[0].commit
    ctx.write("a.txt", "four\n")
    assert ctx.diff("a.txt", first, second) == (
        f"--- a/a.txt@{first}\n+++ b/a.txt@{second}\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n"
    )
    born = ctx.history("a.txt")[-1].commit + "~1"  # the commit before the file was made
    assert ctx.diff("a.txt", born, first) == (
        f"--- a/a.txt@{born}\n+++ b/a.txt@{first}\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    )
    (ctx.root / "a.txt").write_text("four\nfive\n")  # an edit not committed yet
    assert ctx.diff("a.txt", "HEAD") == (
        "--- a/a.txt@HEAD\n+++ b/a.txt@working\n@@ -1 +1,2 @@\n four\n+five\n"
    )
    (ctx.root / "a.txt").write_text("four\n")
    ctx.delete("a.txt")
    gone = ctx.history(limit=1)[0].commit
    assert ctx.diff("a.txt", second, gone) == (
        f"--- a/a.txt@{second}\n+++ b/a.txt@{gone}\n@@ -1,2 +0,0 @@\n-one\n-three\n"
    )


def test_an_old_version_of_a_binary_file_is_refused_by_name(ctx: ContextManager) -> None:
    (ctx.root / "logo.png").write_bytes(b"\x89PNG\x00\x01")
    git(ctx.root, "add", "logo.png")
    commit_as_person(ctx.root, "add the logo")
    with pytest.raises(ContentError, match=r"^logo\.png is a binary file"):
        ctx.show_at("logo.png", "HEAD")


def test_a_revert_refuses_managed_files_and_has_nothing_to_do_for_a_file_never_made(
    ctx: ContextManager,
) -> None:
    ctx.write("a.txt", "a\n")
    first = ctx.history(limit=1)[0].commit
    ctx.write("a.txt", "a changed\n")
    with pytest.raises(InvalidPathError, match="managed by contextfs"):
        ctx.revert(".gitignore", first)
    # Missing then and now: nothing to undo, nothing to commit.
    head = ctx.history(limit=1)[0].commit
    assert ctx.revert("never.md", first) is None
    assert ctx.history(limit=1)[0].commit == head
    assert_clean(ctx.root)


def test_a_files_history_follows_its_moves_and_a_folders_never_does(ctx: ContextManager) -> None:
    ctx.write("draft.txt", "d\n")
    ctx.move("draft.txt", "notes")
    moved = ["move: draft.txt -> notes", "write: draft.txt"]
    assert [h.message for h in ctx.history("notes")] == moved
    # Now a folder of that name: only what happened to that path, never the old draft.
    ctx.delete("notes")
    ctx.write("notes/a.md", "a\n")
    assert [h.message for h in ctx.history("notes")] == [
        "write: notes/a.md",
        "delete: notes",
        "move: draft.txt -> notes",
    ]


def test_history_limits_run_from_zero_for_all_to_ten_thousand(ctx: ContextManager) -> None:
    ctx.write("a.md", "a\n")
    ctx.write("a.md", "b\n")
    total = int(git(ctx.root, "rev-list", "--count", "HEAD"))
    assert len(ctx.history(limit=0)) == len(ctx.history(limit=10_000)) == total >= 3
    assert len(ctx.history(limit=1)) == 1
    for bad in (True, -1, 10_001, "5", 2.0):
        with pytest.raises(InvalidArgumentError, match="^limit must be"):
            ctx.history(limit=bad)  # type: ignore[arg-type]
