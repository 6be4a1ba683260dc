"""Opening the index cheaply without trusting it more: the read-only, lock-free open of a current index.

A short-lived process (one ``contextfs search``) opens an index that matches the files
without the lock, GitPython or a reconciliation, and without hashing index files whose
inode and times the signed stamp records. These tests check that every protection still
holds: damage and foreign files are still found, edits made while no process ran are
still seen, and the quick open writes nothing.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from helpers import git

from contextfs import ContextManager, clock
from contextfs.search import INDEX_DIR, STAMP_FILE
from contextfs.search.stamp import read_stamp, write_stamp

NOTES = {
    "project/a.md": "The ingestion pipeline uses Kafka with twelve partitions.",
    "memory/facts.md": "- Database: Postgres 16 with row level security",
}


def _settled_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A root whose index stamp records the files' digest and every index file's times."""
    root = tmp_path / "ctx"
    with ContextManager(root) as ctx:
        for rel, body in NOTES.items():
            ctx.write(rel, body)
        ctx.search("kafka")
    later = clock.now() + timedelta(seconds=30)
    with monkeypatch.context() as patch:
        patch.setattr(clock, "now", lambda: later)  # as if the files were written long ago
        with ContextManager(root, read_only=True) as ctx:
            ctx.search("kafka")
    return root


def _index(root: Path) -> Path:
    with ContextManager(root, read_only=True, index=False) as ctx:
        return ctx.parts.state.file(INDEX_DIR)


def _stamp(root: Path) -> dict:
    return json.loads((_index(root) / STAMP_FILE).read_text())


def _rebuilt(caplog: pytest.LogCaptureFixture) -> bool:
    return any(
        "rebuil" in r.getMessage() for r in caplog.records if r.name.startswith("contextfs.search")
    )


def test_the_stamp_records_times_and_the_files_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamp = _stamp(_settled_root(tmp_path, monkeypatch))
    assert isinstance(stamp.get("disk"), str)
    assert stamp["files"] and all(len(info) == 5 for info in stamp["files"].values())


def test_a_read_only_search_of_a_current_index_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _settled_root(tmp_path, monkeypatch)
    folder = _index(root)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    state_before = sorted(p.name for p in folder.parent.iterdir())
    with ContextManager(root, read_only=True) as ctx:
        assert [h.path for h in ctx.search("kafka partitions")] == ["project/a.md"]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in folder.parent.iterdir()) == state_before


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_damage_in_place_is_found_although_the_times_were_recorded(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    keep_mtime: bool,
) -> None:
    root = _settled_root(tmp_path, monkeypatch)
    segment = max(
        (p for p in _index(root).iterdir() if p.suffix == ".seg"), key=lambda p: p.stat().st_size
    )
    st = segment.stat()
    data = bytearray(segment.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)  # same size: only the content (and ctime) change
    segment.write_bytes(bytes(data))
    if keep_mtime:  # mtime can be set back; ctime cannot
        os.utime(segment, ns=(st.st_atime_ns, st.st_mtime_ns))
    caplog.set_level(logging.INFO, logger="contextfs")
    with ContextManager(root, read_only=True) as ctx:
        assert _rebuilt(caplog)
        assert [h.path for h in ctx.search("postgres")] == ["memory/facts.md"]


def test_a_planted_file_is_found_by_the_quick_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = _settled_root(tmp_path, monkeypatch)
    (_index(root) / "MAIN_planted.seg").write_bytes(b"garbage")
    caplog.set_level(logging.INFO, logger="contextfs")
    with ContextManager(root, read_only=True) as ctx:
        assert _rebuilt(caplog)
        assert [h.path for h in ctx.search("kafka")] == ["project/a.md"]
    assert not (_index(root) / "MAIN_planted.seg").exists()


def test_edits_while_no_process_ran_are_seen_by_a_read_only_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _settled_root(tmp_path, monkeypatch)
    (root / "project" / "a.md").write_text("Now the pipeline uses NATS JetStream.", "utf-8")
    (root / "memory" / "new.md").write_text("A note about lanterns.", "utf-8")
    with ContextManager(root, read_only=True) as ctx:
        assert ctx.search("kafka") == []
        assert [h.path for h in ctx.search("jetstream")] == ["project/a.md"]
        assert [h.path for h in ctx.search("lanterns")] == ["memory/new.md"]
    assert git(root, "status", "--porcelain")  # nothing was committed: the index followed the files
    assert _stamp(root)["disk"] != ""  # and it knows these files now


def test_a_commit_by_another_process_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _settled_root(tmp_path, monkeypatch)
    with ContextManager(root, index=False) as writer:
        writer.write("project/b.md", "Zeppelins carry the mail.")
    with ContextManager(root, read_only=True) as ctx:
        assert [h.path for h in ctx.search("zeppelins")] == ["project/b.md"]


def test_a_stamp_without_recorded_times_is_checked_by_hashing_then_upgraded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _settled_root(tmp_path, monkeypatch)
    stamp_path = _index(root) / STAMP_FILE
    stamp = _stamp(root)
    with ContextManager(root, read_only=True, index=False) as ctx:
        legacy = read_stamp(stamp_path.parent, ctx.parts.state)
        assert legacy is not None
        legacy["files"] = {
            name: info[:2] for name, info in legacy["files"].items()
        }  # as older versions wrote
        legacy.pop("disk")
        write_stamp(stamp_path.parent, ctx.parts.state, legacy["build"], legacy["head"], legacy)
    assert all(len(info) == 2 for info in _stamp(root)["files"].values())
    later = clock.now() + timedelta(seconds=30)
    with monkeypatch.context() as patch:
        patch.setattr(clock, "now", lambda: later)
        with ContextManager(root, read_only=True) as ctx:
            assert [h.path for h in ctx.search("kafka")] == ["project/a.md"]
    assert _stamp(root)["files"] == stamp["files"] and _stamp(root)["disk"] == stamp["disk"]


def test_head_is_read_without_gitpython_in_a_linked_worktree(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    with ContextManager(main / "context", index=False) as ctx:
        ctx.write("notes/a.md", "first")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "feature", str(linked))
    with ContextManager(linked / "context", index=False) as ctx:
        ctx.write("notes/b.md", "on the feature branch")
    git(main, "pack-refs", "--all")  # branch ids now live in the common folder's packed-refs
    with ContextManager(linked / "context", read_only=True, index=False) as ctx:
        expected = subprocess.run(
            ["git", "-C", str(linked), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert ctx.parts.head() == expected == ctx.parts.git.head()
