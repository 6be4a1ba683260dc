"""The snapshot a change takes of a path before it alters it: what its journal line records
(the blob found on disk, what the change leaves there, whether the version is an outside
one), and that the bytes it names are kept, so recovery and undo can put them back.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import authors_and_bytes, git

from contextfs import ContextManager, faults
from contextfs.changes import adoption
from contextfs.document import blob_version

PERSON = b"- typed by the person in their editor\n"


@pytest.fixture
def ctx(tmp_path: Path) -> ContextManager:
    manager = ContextManager(tmp_path / "ctx", actor="agent:planner", index=False)
    manager.write("notes/plan.md", "- the agent's first plan\n")
    yield manager
    manager.close()
    faults.disarm()


def _touch_lines(ctx: ContextManager) -> list[dict[str, Any]]:
    """The ``touch`` lines of the journals open now."""
    lines: list[dict[str, Any]] = []
    for path in sorted(ctx.parts.state.file("journal").glob("*")):
        for raw in path.read_bytes().splitlines():
            entry = json.loads(raw)
            if "touch" in entry:
                lines.append(entry)
    return lines


def _capture_at_touch(ctx: ContextManager) -> list[dict[str, Any]]:
    """Arm ``change.touched`` to keep the journal's touch lines as they stand at that point."""
    seen: list[dict[str, Any]] = []
    faults.arm("change.touched", lambda: seen.extend(_touch_lines(ctx)))
    return seen


def test_without_the_outside_check_the_snapshot_names_the_blob_found_and_keeps_it(
    ctx: ContextManager,
) -> None:
    """Turning the comparison with HEAD off does not turn the snapshot off: the line names the
    bytes found, stored in git, so a dead writer's change can be undone to them."""
    writer = ctx.parts.writer()
    assert writer is not None
    writer.check_outside = False
    old = (ctx.root / "notes/plan.md").read_bytes()
    lines = _capture_at_touch(ctx)
    ctx.write("notes/plan.md", "- the agent's second plan\n")
    # The write reads the file first (to keep its metadata): the snapshot leaves it as found.
    found = blob_version(old)
    assert lines == [{"touch": "notes/plan.md", "blob": found, "after": found}]
    faults.disarm()
    lines = _capture_at_touch(ctx)
    ctx.write("notes/new.md", "- a new note\n")  # a new path: no bytes to keep, no blob
    assert [(line["touch"], line["blob"]) for line in lines] == [("notes/new.md", None)]
    assert git(ctx.root, "cat-file", "-p", blob_version(old)).encode() == old


def test_a_file_deleted_outside_is_committed_as_deleted_before_the_agent_writes_it(
    ctx: ContextManager,
) -> None:
    """The outside version may be no file at all: nothing to store, a line with no blob that
    names the outside author, and a commit of the deletion before the agent's own."""
    (ctx.root / "notes/plan.md").unlink()
    lines = _capture_at_touch(ctx)
    ctx.write("notes/plan.md", "- the agent's new plan\n")
    assert lines[0]["blob"] is None and lines[0]["outside"] == "human"
    history = authors_and_bytes(ctx.root, "notes/plan.md")
    assert history[-2][0] == "human" and history[-2][1] is None
    assert history[-1][0] == "agent:planner"
    assert (history[-1][1] or "").endswith("---\n- the agent's new plan\n")


def test_a_save_made_before_the_write_is_staged_is_committed_first_as_it_was_on_disk(
    ctx: ContextManager,
) -> None:
    """A person saves between the change's first look and its write: the file is snapshotted
    again, from disk, so the person's version is the one committed first and journaled as an
    outside one."""
    root = ctx.root
    lines: list[dict[str, Any]] = []

    def person_saves() -> None:
        (root / "notes/plan.md").write_bytes(PERSON)
        time.sleep(0.05)  # file times come from a coarse clock: the staging comes a tick later
        faults.arm("change.touched", lambda: lines.extend(_touch_lines(ctx)))

    faults.arm("change.touched", person_saves)
    ctx.write("notes/plan.md", "- the agent's second plan\n")
    history = authors_and_bytes(root, "notes/plan.md")
    assert history[-2] == ("human", PERSON.decode())
    assert history[-1][0] == "agent:planner"
    assert (history[-1][1] or "").endswith("---\n- the agent's second plan\n")
    again = [line for line in lines if line.get("outside")]
    assert again and again[-1]["blob"] == blob_version(PERSON)


class _Undone(Exception):
    pass


def test_a_settled_file_is_not_hashed_again_whichever_files_were_looked_at_since(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison with HEAD knows each path's blob by its status: a file nobody changed
    since the last look is not read into a hash again, though other files were looked at."""
    ctx.write("notes/other.md", "- another note\n")
    writer = ctx.parts.writer()
    assert writer is not None
    real = time.time_ns
    # Every file counts as settled (its status older than the clock's coarse tick).
    monkeypatch.setattr(adoption.time, "time_ns", lambda: real() + 60 * adoption.SETTLED_NS)
    for _ in range(2):  # staged writes that are undone: the files on disk stay as they were
        with pytest.raises(_Undone), ctx.transaction("look at two notes"):
            ctx.write("notes/plan.md", "- a plan never kept\n")
            ctx.write("notes/other.md", "- a note never kept\n")
            raise _Undone
    assert (writer.seen.hashed, writer.seen.hits) == (2, 2)


def test_without_the_outside_check_a_kept_snapshot_is_flushed_before_its_line(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes a touch line names must outlive a power cut before the line can be needed:
    the object is flushed when a snapshot was kept, and nothing is flushed for a new path
    (no bytes to keep), before the line is journaled."""
    writer = ctx.parts.writer()
    assert writer is not None
    writer.check_outside = False
    objects = ctx.parts.git.objects
    events: list[str] = []
    real_flush = objects.flush

    def flush() -> None:
        events.append("flush")
        real_flush()

    monkeypatch.setattr(objects, "flush", flush)
    faults.arm("change.touched", lambda: events.append("touched"))
    ctx.write("notes/plan.md", "- the agent's second plan\n")
    assert events[: events.index("touched")] == ["flush"]
    events.clear()
    faults.arm("change.touched", lambda: events.append("touched"))  # a point fires once
    ctx.write("notes/new.md", "- a new note\n")
    assert events[: events.index("touched")] == []
