"""The trash at its edges: the ages purge accepts (0, a whole day to the second, the
largest), entries that cannot be read or dated, and a folder brought back whole."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import assert_clean, commit_as_person, git

import contextfs
from contextfs import ContextManager
from contextfs.changes import trash
from contextfs.errors import InvalidArgumentError, InvalidPathError, NotFoundError
from contextfs.fixes import Fix

START = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ContextManager]:
    manager = ContextManager(tmp_path / "ctx", session="monday", index=False)
    yield manager
    manager.close()


def test_purge_takes_ages_from_zero_days_to_the_largest_and_a_day_to_the_second(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [START]
    monkeypatch.setattr(contextfs.clock, "now", lambda: now[0])
    ctx.write("old.md", "old\n")
    ctx.delete("old.md")
    now[0] = START + timedelta(days=1)  # exactly one day later
    ctx.write("new.md", "new\n")
    ctx.delete("new.md")
    for refused in (True, "3", -1, 36_500_001, 36_500_000.5, float("nan")):
        with pytest.raises(InvalidArgumentError, match="older_than must be"):
            ctx.purge_trash(refused)  # type: ignore[arg-type]
    assert ctx.purge_trash(36_500_000) == 0
    assert ctx.purge_trash(timedelta(days=1, microseconds=1)) == 0
    assert ctx.purge_trash(timedelta(days=1)) == 1  # a day old to the second is a day old
    assert [e.original_path for e in ctx.trash()] == ["new.md"]
    assert ctx.history(limit=1)[0].message == "purge: 1 trash entries"
    assert ctx.purge_trash(0) == 1  # deleted this very moment: zero days old
    assert ctx.trash() == []
    assert_clean(ctx.root)


def test_an_entry_that_is_not_there_is_not_found_with_the_trash_as_the_fix(
    ctx: ContextManager,
) -> None:
    missing = "20260101T000000Z-abcdef"
    with pytest.raises(NotFoundError, match="does not exist or is damaged") as caught:
        ctx.restore(missing)
    assert (caught.value.path, caught.value.fix) == (missing, Fix("trash"))
    # Read directly, anything that is not an entry id is refused before a file is read.
    for bad in ("../../.git/config", 5, None):
        with pytest.raises(NotFoundError, match="is not a trash entry id") as caught:
            trash.load_entry(ctx.parts.files, bad)  # type: ignore[arg-type]
        assert caught.value.fix == Fix("trash")


def made_elsewhere(
    ctx: ContextManager, entry_id: str, meta: dict[str, object], pad: int = 0
) -> None:
    """A trash entry committed by a person (or arriving from a clone), ``pad`` bytes long."""
    folder = ctx.root / ".trash" / entry_id
    (folder / "files").mkdir(parents=True)
    (folder / "files" / "h.md").write_text("kept\n")
    text = json.dumps(meta)
    (folder / "entry.json").write_text(text[:-1] + " " * (pad - len(text)) + "}" if pad else text)
    git(ctx.root, "add", "-A")
    commit_as_person(ctx.root, f"trash entry {entry_id} from elsewhere")


def test_entries_from_elsewhere_are_read_only_when_they_are_sound(ctx: ContextManager) -> None:
    base = {"original_path": "h.md", "deleted_at": "2026-01-01T00:00:00Z", "actor": "dev"}
    ids = [f"2026010{n}T000000Z-abcdef" for n in range(1, 9)]
    made_elsewhere(ctx, ids[0], {**base, "session": "night-run"})  # no id: the folder's
    made_elsewhere(ctx, ids[1], {**base, "id": ids[1]}, pad=64 * 1024)  # the largest read
    made_elsewhere(ctx, ids[2], {**base, "id": ids[2]}, pad=64 * 1024 + 1)
    made_elsewhere(ctx, ids[3], {**base, "id": ids[0]})  # another entry's id
    made_elsewhere(ctx, ids[4], {**base, "original_path": ".contextfs/config.toml"})
    made_elsewhere(ctx, ids[5], {**base, "original_path": ".trash/x/files/h.md"})
    made_elsewhere(ctx, ids[6], {**base, "id": ids[6], "session": None, "actor": "a" * 100})
    # No actor; fields longer than an entry keeps; a folder.
    long = {"deleted_at": "D" * 100, "session": "s" * 200, "is_dir": True}
    made_elsewhere(ctx, ids[7], {"original_path": "h.md", **long})
    entries = ctx.trash()
    assert [(e.id, e.session, e.actor, e.is_dir) for e in entries] == [
        (ids[0], "night-run", "dev", False),
        (ids[1], None, "dev", False),
        (ids[6], None, "a" * 80, False),
        (ids[7], "s" * 128, "unknown", True),
    ]
    assert entries[-1].deleted_at == "D" * 64
    assert (ctx.root / ".trash" / ids[1] / "entry.json").stat().st_size == 64 * 1024
    for damaged in ids[2:6]:
        with pytest.raises(NotFoundError, match="does not exist or is damaged"):
            ctx.restore(damaged)


def test_an_entry_whose_date_cannot_be_read_counts_as_just_deleted(ctx: ContextManager) -> None:
    entry_id = "20260101T000000Z-abcdef"
    meta = {"id": entry_id, "original_path": "h.md", "deleted_at": "yesterday", "actor": "dev"}
    made_elsewhere(ctx, entry_id, meta)
    [entry] = ctx.trash()
    assert (entry.id, entry.original_path, entry.deleted_at) == (entry_id, "h.md", "yesterday")
    assert ctx.purge_trash(timedelta(seconds=1)) == 0
    assert ctx.purge_trash() == 1 and ctx.trash() == []


def test_a_folder_comes_back_whole_and_committed(ctx: ContextManager) -> None:
    ctx.write("dir/a.md", "a\n")
    ctx.write("dir/sub/b.md", "b\n")
    entry = ctx.delete("dir")
    assert entry.is_dir and ctx.list() == [] and ctx.trash() == [entry]
    assert ctx.restore("dir", to="back") == "back"
    assert ctx.list() == ["back/a.md", "back/sub/b.md"]
    assert sorted(git(ctx.root, "ls-files", "back", ".trash").split()) == [
        "back/a.md",
        "back/sub/b.md",
    ]
    assert ctx.trash() == []
    assert_clean(ctx.root)


def test_an_entry_file_is_indented_utf8_json_dated_in_utc_and_read_back_alike(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The machine's own time zone never shows in an entry: its id and date are UTC.
    monkeypatch.setattr(contextfs.clock, "now", lambda: START)
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        ctx.write("café.md", "au lait\n")
        with ctx.provenance(actor="agent:barista", session="s-7"):
            entry = ctx.delete("café.md")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert entry.id.startswith("20260301T120000000000Z-")
    expected = {
        "id": entry.id,
        "original_path": "café.md",
        "deleted_at": "2026-03-01T12:00:00Z",
        "actor": "agent:barista",
        "session": "s-7",
        "is_dir": False,
    }
    written = (ctx.root / entry.meta_path).read_bytes()
    assert written == (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode()
    assert '"café.md"' in written.decode("utf-8")
    assert ctx.trash() == [entry]


def test_a_managed_file_is_never_deleted_nor_restored_over(ctx: ContextManager) -> None:
    with pytest.raises(InvalidPathError, match="managed by contextfs"):
        ctx.delete(".gitignore")
    assert (ctx.root / ".gitignore").exists() and ctx.trash() == []
    ctx.write("x.md", "x\n")
    ctx.delete("x.md")
    with pytest.raises(InvalidPathError, match="managed by contextfs"):
        ctx.restore("x.md", to="notes/.gitignore")
    assert [e.original_path for e in ctx.trash()] == ["x.md"]


def test_a_new_entry_comes_after_one_made_elsewhere_in_the_older_id_form(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ids to the second (no microseconds), dated after this machine's clock: the next
    # deletion is dated one microsecond after the latest of them.
    for entry_id in ("20260301T115959Z-abcdef", "20260301T120059Z-abcdef"):
        meta = {"id": entry_id, "original_path": "h.md", "deleted_at": "2026-03-01T12:00:59Z"}
        made_elsewhere(ctx, entry_id, meta)
    monkeypatch.setattr(contextfs.clock, "now", lambda: START)
    ctx.write("y.md", "y\n")
    entry = ctx.delete("y.md")
    assert entry.id.startswith("20260301T120059000001Z-")
    assert len(ctx.trash()) == 3


def test_the_latest_deletion_is_found_across_both_id_forms(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An entry made elsewhere in the older id form (to the second) and a newer one made here
    # within that same second: as text the old id sorts after the new ('Z' > '0'), as times
    # it is earlier. The latest deletion is the newer, and the next id comes after both.
    old = "20260301T120000Z-abcdef"
    meta = {"id": old, "original_path": "h.md", "deleted_at": "2026-03-01T12:00:00Z"}
    made_elsewhere(ctx, old, meta)
    monkeypatch.setattr(contextfs.clock, "now", lambda: START + timedelta(milliseconds=500))
    ctx.write("h.md", "newer\n")
    newer = ctx.delete("h.md")
    assert newer.id.startswith("20260301T120000500000Z-")
    ctx.write("g.md", "g\n")
    after = ctx.delete("g.md")  # same clock: one microsecond after the latest of both forms
    assert after.id.startswith("20260301T120000500001Z-")
    assert [e.id for e in ctx.trash()] == [old, newer.id, after.id]  # oldest first
    assert ctx.restore("h.md") == "h.md"
    assert ctx.read("h.md") == "newer\n"
