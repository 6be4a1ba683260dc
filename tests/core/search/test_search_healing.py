"""The index heals itself: damage, foreign folders, edits behind the store's back, other processes.

Damage is injected into real Whoosh index files on disk; every test then checks that the
next ContextManager (or the next search) answers correctly, logs a rebuild, and never
lets a Whoosh exception escape.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contextfs import ContextManager
from contextfs.search import INDEX_DIR, STAMP_FILE

NOTES = {
    "project/a.md": "The ingestion pipeline uses Kafka with twelve partitions.",
    "memory/facts.md": "- Database: Postgres 16 with row level security",
    "topics/b/where-are-we.md": "Blocked on the proration mismatch in Stripe invoices.",
}


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "ctx"
    with ContextManager(root) as ctx:
        for rel, body in NOTES.items():
            ctx.write(rel, body)
        assert ctx.search("kafka")[0].path == "project/a.md"
    return root


def index_dir(root: Path) -> Path:
    """The index folder, in the root's state folder under .git/."""
    with ContextManager(root, index=False, sync=False) as ctx:
        return ctx.parts.state.file(INDEX_DIR)


def segment_files(root: Path) -> list[Path]:
    return sorted(
        p for p in index_dir(root).iterdir() if p.name != STAMP_FILE and "LOCK" not in p.name
    )


def assert_answers(ctx: ContextManager) -> None:
    assert [h.path for h in ctx.search("kafka partitions")] == ["project/a.md"]
    assert [h.path for h in ctx.search("postgres")] == ["memory/facts.md"]
    assert [h.path for h in ctx.search("stripe proration")] == ["topics/b/where-are-we.md"]
    assert ctx.index.verify(fix=False).ok


def rebuilt(caplog: pytest.LogCaptureFixture) -> bool:
    return any(
        "rebuil" in r.getMessage() for r in caplog.records if r.name.startswith("contextfs.search")
    )


@pytest.mark.parametrize("damage", ["truncate", "scramble", "empty", "delete-one"])
def test_damaged_segment_files_are_rebuilt_on_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    root = make_root(tmp_path)
    rng = random.Random(7)
    for path in segment_files(root):
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "scramble":
            start = len(data) // 3
            garbage = bytes(rng.randrange(256) for _ in range(min(512, len(data) - start)))
            path.write_bytes(data[:start] + garbage + data[start + len(garbage) :])
        elif damage == "empty":
            path.write_bytes(b"")
        elif damage == "delete-one" and path.suffix == ".seg":
            path.unlink()
            break
    caplog.set_level(logging.INFO, logger="contextfs")
    with ContextManager(root) as ctx:
        assert rebuilt(caplog)
        assert_answers(ctx)


def test_deleted_index_folder_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = make_root(tmp_path)
    shutil.rmtree(index_dir(root))
    caplog.set_level(logging.INFO, logger="contextfs")
    with ContextManager(root) as ctx:
        assert rebuilt(caplog)
        assert_answers(ctx)


def test_index_deleted_while_a_manager_is_open(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        ctx.search("kafka")
        shutil.rmtree(index_dir(root))
        ctx.write("project/new.md", "fresh note about zeppelins")
        assert [h.path for h in ctx.search("zeppelins")] == ["project/new.md"]
        assert_answers(ctx)


def test_foreign_index_without_stamp_is_never_opened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = make_root(tmp_path)
    folder = index_dir(root)
    shutil.rmtree(folder)
    # A folder that looks like a Whoosh index but that contextfs did not create.
    folder.mkdir()
    (folder / "_MAIN_1.toc").write_bytes(b"\x80\x04cos\nsystem\n(S'touch pwned'\ntR.")
    (folder / "MAIN_evil.seg").write_bytes(os.urandom(64))
    caplog.set_level(logging.INFO, logger="contextfs")
    with ContextManager(root) as ctx:
        assert rebuilt(caplog)
        assert not (Path.cwd() / "pwned").exists()
        assert_answers(ctx)
    assert not (folder / "MAIN_evil.seg").exists()


def test_forged_or_outdated_stamp_means_rebuild(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = make_root(tmp_path)
    stamp_path = index_dir(root) / STAMP_FILE

    def edit(key: str, value: object) -> None:
        stamp = json.loads(stamp_path.read_text())
        stamp[key] = value
        stamp_path.write_text(json.dumps(stamp))

    caplog.set_level(logging.INFO, logger="contextfs")
    for tamper in (
        lambda: edit("format", 0),
        # Another postings layout (or array item sizes, byte order) is never misread.
        lambda: edit("codec", "packed0/128/big/H2I4"),
        lambda: stamp_path.write_text("not json at all"),
    ):
        tamper()
        caplog.clear()
        with ContextManager(root) as ctx:
            assert rebuilt(caplog)
            assert_answers(ctx)


def test_stray_file_in_index_folder_means_rebuild(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = make_root(tmp_path)
    (index_dir(root) / "MAIN_planted.seg").write_bytes(b"garbage")
    caplog.set_level(logging.INFO, logger="contextfs")
    with ContextManager(root) as ctx:
        assert rebuilt(caplog)
        assert_answers(ctx)


def test_stale_whoosh_lock_is_harmless(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (index_dir(root) / "MAIN_WRITELOCK").write_text("left by a crashed process")
    (index_dir(root).parent / "index.lock").write_text("")
    with ContextManager(root) as ctx:
        ctx.write("project/c.md", "quasar telemetry")
        assert [h.path for h in ctx.search("quasar")] == ["project/c.md"]
        assert_answers_after_write(ctx)


def assert_answers_after_write(ctx: ContextManager) -> None:
    assert ctx.index.verify(fix=False).ok


def test_damage_while_open_heals_before_the_search_returns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        ctx.search("kafka")
        # Another process leaves the index unreadable mid-session.
        for path in segment_files(root):
            path.write_bytes(b"\x00" * 10)
        (index_dir(root) / STAMP_FILE).write_text("{}")
        ctx.write("project/d.md", "pulsar notes")
        caplog.set_level(logging.INFO, logger="contextfs")
        assert [h.path for h in ctx.search("pulsar")] == ["project/d.md"]
        assert rebuilt(caplog)
        assert_answers(ctx)


def _flaky(ctx: ContextManager, monkeypatch: pytest.MonkeyPatch, failures: int) -> list[int]:
    """Make the next ``failures`` query runs fail as a vanished segment file would."""
    real = ctx.index.queries.run
    calls = [0]

    def run(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        if calls[0] <= failures:
            raise FileNotFoundError(2, "No such file or directory", "MAIN_gone.pst")
        return real(*args, **kwargs)

    monkeypatch.setattr(ctx.index.queries, "run", run)
    return calls


def test_a_segment_merged_away_while_reading_means_reopen_not_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Another process may merge (and delete) segments between our TOC read and our open."""
    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        ctx.search("kafka")
        calls = _flaky(ctx, monkeypatch, failures=1)
        caplog.set_level(logging.INFO, logger="contextfs")
        assert_answers(ctx)
        assert calls[0] >= 2 and ctx.index.rebuilds == 0
        assert "reopened it" in caplog.text and not rebuilt(caplog)


def test_a_failure_after_a_clean_reopen_means_rebuild_then_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from contextfs.errors import SearchIndexError

    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        ctx.search("kafka")
        before = ctx.index.rebuilds
        _flaky(ctx, monkeypatch, failures=2)
        caplog.set_level(logging.INFO, logger="contextfs")
        assert [h.path for h in ctx.search("kafka")]
        assert ctx.index.rebuilds == before + 1 and rebuilt(caplog)
        _flaky(ctx, monkeypatch, failures=99)
        with pytest.raises(SearchIndexError, match="reindex"):
            ctx.search("kafka")


# ---------------------------------------------------------------- edits behind the store's back
def test_edits_while_no_process_ran_are_reconciled_on_open(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (root / "project" / "a.md").write_text("Now the pipeline uses NATS JetStream.", "utf-8")
    (root / "memory" / "facts.md").unlink()
    (root / "memory" / "new.md").write_text("A brand new note about lanterns.", "utf-8")
    with ContextManager(root, sync=False) as ctx:
        assert ctx.parts.git.dirty()  # nothing was committed: reconciliation used mtime and size
        assert ctx.search("kafka") == []
        assert [h.path for h in ctx.search("jetstream")] == ["project/a.md"]
        assert ctx.search("postgres") == []
        assert [h.path for h in ctx.search("lanterns")] == ["memory/new.md"]
        assert ctx.index.verify(fix=False).ok


def test_edits_behind_the_back_then_sync_are_seen_by_search(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        ctx.search("kafka")
        (root / "project" / "a.md").write_text("Switched to Redpanda.", "utf-8")
        ctx.sync()
        assert [h.path for h in ctx.search("redpanda")] == ["project/a.md"]
        assert ctx.search("kafka") == []


def test_verify_reports_and_fixes_drift(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        ctx.search("kafka")
        # Same size, content changed, mtime put back: only a content hash can see it.
        target = root / "project" / "a.md"
        st = target.stat()
        data = target.read_bytes().replace(b"Kafka", b"Kafkb")
        target.write_bytes(data)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        (root / "memory" / "x.md").write_text("unindexed quokka", "utf-8")
        report = ctx.index.verify(fix=True)
        assert report.stale == ["project/a.md"] and report.missing == ["memory/x.md"]
        assert report.fixed and not report.ok
        assert ctx.index.verify(fix=False).ok
        assert [h.path for h in ctx.search("kafkb")] == ["project/a.md"]


def test_deleted_file_is_never_returned(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        ctx.search("kafka")
        (root / "project" / "a.md").unlink()  # gone without a commit or a notify
        assert ctx.search("kafka") == []


def test_index_files_live_where_git_never_transfers_them(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    stamp = index_dir(root) / STAMP_FILE
    assert stamp.is_file() and stamp.is_relative_to(root / ".git")
    tracked = subprocess.run(
        ["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True
    ).stdout
    assert "index" not in tracked and "stamp" not in tracked
    with ContextManager(root) as ctx:
        from contextfs.errors import InvalidPathError

        with pytest.raises(InvalidPathError):
            ctx.read(".contextfs/index/stamp.json")


# ---------------------------------------------------------------- several processes
_WRITER = textwrap.dedent("""
    import sys
    from contextfs import ContextManager
    root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ctx = ContextManager(root, actor="agent:" + name)
    for i in range(count):
        ctx.write(f"{name}/n{i}.md", f"note {i} from {name} about gannets")
        # Every search flushes a segment, so segments are merged (and their files deleted)
        # while the other process is reading: that must never look like damage.
        hits = [h.path for h in ctx.search("gannets " + name, limit=100, path=name)]
        assert f"{name}/n{i}.md" in hits, (i, hits)
    rebuilds = ctx.index.rebuilds
    ctx.close()
    print("ok", rebuilds)
""")


def test_two_processes_writing_and_searching(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), name, "30"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.strip() == "ok 0", err  # no search ever fell back to a rebuild
        assert "LockError" not in err and "Traceback" not in err
    with ContextManager(root) as ctx:
        hits = ctx.search("gannets", limit=100)
        assert sorted(h.path for h in hits) == sorted(
            f"{n}/n{i}.md" for n in ("alpha", "beta") for i in range(30)
        )
        report = ctx.index.verify(fix=False)
        assert report.ok, report


def test_write_in_another_process_is_seen_by_the_next_search(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        assert ctx.search("ospreys") == []
        code = (
            "import sys; from contextfs import ContextManager\n"
            "c = ContextManager(sys.argv[1], index=False)\n"
            "c.write('memory/birds.md', 'ospreys nest by the river')\n"
            "c.delete('project/a.md')\n"
        )
        subprocess.run([sys.executable, "-c", code, str(root)], check=True, timeout=60)
        assert [h.path for h in ctx.search("ospreys")] == ["memory/birds.md"]
        assert ctx.search("kafka") == []


def test_parallel_rebuild_indexes_everything_and_leaves_no_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large rebuilds use Whoosh's worker processes; the result must equal a one-writer build."""
    import multiprocessing

    from contextfs.search import segments as search_segments

    root = make_root(tmp_path)
    with ContextManager(root) as ctx:
        for i in range(30):
            ctx.write(f"bulk/n{i:02d}.md", f"Bulk note {i} about shard rebalancing number{i}.")

        def ranked(q: str) -> list[tuple[float, str]]:  # ties may come in any docnum order
            return sorted((-round(h.score, 6), h.path) for h in ctx.search(q, limit=50))

        single = {q: ranked(q) for q in ("shard", "kafka", "number7", '"shard rebalancing"')}
        monkeypatch.setattr(search_segments, "_PARALLEL_MIN_FILES", 1)
        assert ctx.index.rebuild() == len(NOTES) + 30
        assert multiprocessing.active_children() == []
        assert ctx.index.doc_count() == len(NOTES) + 30
        for q, expected in single.items():
            assert ranked(q) == expected
        assert ctx.index.verify(fix=False).ok
    # The rebuilt index is stamped and reopens without another rebuild.
    with ContextManager(root) as again:
        assert again.index.rebuilds == 0
        assert again.search("number7")[0].path == "bulk/n07.md"
