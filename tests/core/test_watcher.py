"""The watcher on a real root: plain ``open().write()`` edits become commits by ``human``.

Waiting is always a bounded poll (up to ~10 s) for something observable (a commit in
``git log``, a path in ``Watcher.pending``); nothing asserts how fast it happened.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import commit_count, git, start_watch

from contextfs import ConfigError, ContextManager
from contextfs.cli import cli
from contextfs.cli.watch import demo
from contextfs.files.scratch import is_scratch
from contextfs.watcher import Watcher, is_ignored, watch

WAIT = 10.0


def wait_for(check: Callable[[], object], what: str, timeout: float = WAIT) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"gave up after {timeout:.0f}s waiting for {what}")


def human_commits(root: Path) -> list[str]:
    return [
        line
        for line in git(root, "log", "--format=%an|%s").splitlines()
        if line.startswith("human|")
    ]


@pytest.fixture
def mgr(tmp_path: Path) -> ContextManager:
    manager = ContextManager(tmp_path / "ctx", index=False)
    yield manager
    manager.close()


class SyncSpy:
    """Counts real ``ctx.sync()`` calls (the call still happens)."""

    def __init__(self, ctx: ContextManager) -> None:
        self.calls = 0
        real = ctx.sync

        def counted() -> list[str]:
            self.calls += 1
            return real()

        ctx.sync = counted  # type: ignore[method-assign]


def test_is_ignored() -> None:
    for rel in (
        ".git/index",
        ".git",
        ".contextfs/index/MAIN.toc",
        ".contextfs/lock",
        "memory/.facts.md.1a2b3c4d.cfs-tmp",
        "",
        ".",
        "..",
        "../elsewhere.md",
        "memory/.facts.md.swp",
        "memory/facts.md~",
        ".DS_Store",
        "memory/#facts.md#",
    ):
        assert is_ignored(rel), rel
    for rel in (
        "memory/facts.md",
        ".trash/x/meta.json",
        "notes.md",
        "git/notes.md",
        "a.contextfs/b.md",
    ):
        assert not is_ignored(rel), rel


def test_plain_write_while_watching_is_committed_as_human(mgr: ContextManager) -> None:
    root = mgr.root
    mgr.write("memory/facts.md", "- Database: PostgreSQL 16\n")
    with watch(mgr, debounce=0.2) as w:
        assert w.running
        with open(root / "memory" / "facts.md", "a", encoding="utf-8") as fh:
            fh.write("- Cache: Redis 7\n")
        with open(root / "memory" / "new-note.md", "w", encoding="utf-8") as fh:
            fh.write("written in an editor\n")
        # Poll with read-only git commands: 'git status' may take the index lock the watcher needs.
        wait_for(
            lambda: (
                git(root, "log", "-1", "--format=%an", "--", "memory/facts.md").strip() == "human"
                and git(root, "log", "-1", "--format=%an", "--", "memory/new-note.md").strip()
                == "human"
            ),
            "the edits to be committed",
        )
    assert not w.running
    assert git(root, "status", "--porcelain") == ""
    log = human_commits(root)
    assert log and all("sync:" in line for line in log)
    assert git(root, "log", "-1", "--format=%an", "--", "memory/facts.md").strip() == "human"
    assert git(root, "show", "HEAD:memory/facts.md").endswith("- Cache: Redis 7\n")
    assert git(root, "show", "HEAD:memory/new-note.md") == "written in an editor\n"
    trailers = git(root, "log", "-1", "--format=%B", "--", "memory/new-note.md")
    assert "Contextfs-Op: sync" in trailers
    assert w.commits >= 1 and w.last_synced


def test_deleting_a_file_by_hand_is_committed(mgr: ContextManager) -> None:
    root = mgr.root
    mgr.write("task/current.md", "Ship webhooks v2")
    with watch(mgr, debounce=0.2):
        os.remove(root / "task" / "current.md")
        wait_for(
            lambda: git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", "task/") == "",
            "the deletion to be committed",
        )
    assert git(root, "log", "-1", "--format=%an|%s").startswith("human|sync:")
    assert git(root, "status", "--porcelain") == ""


def test_contextfs_own_writes_do_not_trigger_a_sync(mgr: ContextManager) -> None:
    root = mgr.root
    spy = SyncSpy(mgr)
    # A debounce longer than the test: nothing happens unless flush() is called.
    w = watch(mgr, debounce=60, max_delay=600)
    try:
        before = commit_count(root)
        mgr.write("memory/facts.md", "- Queue: arq\n")
        mgr.append("memory/facts.md", "- Cache: Redis 7")
        mgr.delete("memory/facts.md")
        mgr.write("project/README.md", "# Tidewater")
        wait_for(lambda: "project/README.md" in w.pending, "the watcher to see contextfs's write")
        assert w.flush() == []
        assert spy.calls == 0
        assert commit_count(root) == before + 4

        # An outside edit among them is still committed, in one sync.
        mgr.write("memory/lessons.md", "- Pin arq")
        (root / "notes.md").write_text("hand-written\n", "utf-8")
        wait_for(
            lambda: {"memory/lessons.md", "notes.md"} <= set(w.pending), "both changes to be seen"
        )
        assert w.flush() == ["notes.md"]
        assert spy.calls == 1
        assert commit_count(root) == before + 6
        assert (
            git(root, "log", "-1", "--format=%an|%s")
            == "human|sync: 1 file(s) edited outside contextfs\n"
        )
    finally:
        w.stop()
    assert spy.calls == 1  # stop() had nothing left to sync


def test_a_burst_of_edits_becomes_one_commit(mgr: ContextManager) -> None:
    root = mgr.root
    before = commit_count(root)
    w = watch(mgr, debounce=60, max_delay=600)
    try:
        names = [f"notes/n{i}.md" for i in range(5)]
        (root / "notes").mkdir()
        for name in names:
            (root / name).write_text(f"{name}\n", "utf-8")
        (root / "notes" / "n0.md").write_text("changed again\n", "utf-8")
        wait_for(lambda: set(names) <= set(w.pending), "all five files to be seen")
    finally:
        w.stop()  # flushes the pending burst
    assert commit_count(root) == before + 1
    committed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert committed == sorted(names)
    assert git(root, "show", "HEAD:notes/n0.md") == "changed again\n"
    assert git(root, "log", "-1", "--format=%an").strip() == "human"


def test_ignored_paths_never_trigger_a_sync(mgr: ContextManager) -> None:
    root = mgr.root
    spy = SyncSpy(mgr)
    w = watch(mgr, debounce=60, max_delay=600)
    try:
        (root / ".contextfs" / "cache").mkdir(parents=True, exist_ok=True)
        (root / ".contextfs" / "cache" / "blob.json").write_text("{}", "utf-8")
        (root / "memory").mkdir()
        (root / "memory" / ".facts.md.0badc0de.cfs-tmp").write_text("half", "utf-8")
        (root / "memory" / ".facts.md.0badc0de.cfs-tmp").unlink()
        (root / "sentinel.md").write_text(
            "done\n", "utf-8"
        )  # seen after the others (inotify keeps order)
        wait_for(lambda: "sentinel.md" in w.pending, "the sentinel file to be seen")
        assert w.pending == ["sentinel.md"]
    finally:
        w.stop()
    assert spy.calls == 1
    assert (
        git(root, "log", "-1", "--format=%an|%s")
        == "human|sync: 1 file(s) edited outside contextfs\n"
    )


# ------------------------------------------------------------------ editors' saves
FINAL = "- Database: PostgreSQL 17\n- Cache: Redis 7\n"


def _vim(folder: Path) -> None:
    """vim with its defaults (swapfile, writebackup, backupcopy=auto) saving facts.md."""
    (folder / ".facts.md.swp").write_bytes(b"b0VIM 9.0\0" + b"\0" * 64)  # while editing
    (folder / "4913").write_bytes(b"")  # can the folder be written?
    (folder / "4913").unlink()
    os.rename(folder / "facts.md", folder / "facts.md~")  # the backup
    with open(folder / "facts.md", "w", encoding="utf-8") as fh:
        fh.write(FINAL)
        fh.flush()
        os.fsync(fh.fileno())
    (folder / "facts.md~").unlink()
    (folder / ".facts.md.swp").write_bytes(b"b0VIM 9.0\0" + b"\1" * 64)  # still open in vim


def _emacs(folder: Path) -> None:
    """emacs: lock symlink, auto-save file, first save renames the original to name~."""
    os.symlink(
        "dana@laptop.4242:1700000000", folder / ".#facts.md"
    )  # a dangling symlink, by design
    (folder / "#facts.md#").write_text(FINAL[:20], "utf-8")
    os.rename(folder / "facts.md", folder / "facts.md~")
    (folder / "facts.md").write_text(FINAL, "utf-8")
    (folder / "#facts.md#").unlink()


def _jetbrains(folder: Path) -> None:
    """JetBrains "safe write": new content to a temp name, old one renamed aside, then swapped."""
    (folder / "facts.md___jb_tmp___").write_text(FINAL, "utf-8")
    os.rename(folder / "facts.md", folder / "facts.md___jb_old___")
    os.rename(folder / "facts.md___jb_tmp___", folder / "facts.md")
    (folder / "facts.md___jb_old___").unlink()


def _gedit(folder: Path) -> None:
    """gedit (GIO): a hidden temp file renamed over the original, a backup kept as name~."""
    (folder / ".goutputstream-5YQ8T2").write_text(FINAL, "utf-8")
    shutil.copy2(folder / "facts.md", folder / "facts.md~")
    os.replace(folder / ".goutputstream-5YQ8T2", folder / "facts.md")
    (folder / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")  # and a Mac mounted the share


@pytest.mark.parametrize(
    "save", [_vim, _emacs, _jetbrains, _gedit], ids=["vim", "emacs", "jetbrains", "gedit"]
)
def test_an_editor_save_is_one_commit_of_the_final_content(mgr: ContextManager, save) -> None:
    root = mgr.root
    mgr.write("memory/facts.md", "- Database: PostgreSQL 16\n")
    before = commit_count(root)
    spy = SyncSpy(mgr)
    w = watch(mgr, debounce=60, max_delay=600)  # only stop() flushes: the burst is whole
    try:
        save(root / "memory")
        (root / "sentinel.md").write_text("seen after the save\n", "utf-8")
        wait_for(lambda: "sentinel.md" in w.pending, "the watcher to see the save")
        assert w.pending == ["memory/facts.md", "sentinel.md"]  # no scratch path was ever queued
    finally:
        w.stop()
    assert spy.calls == 1 and commit_count(root) == before + 1
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [
        "memory/facts.md",
        "sentinel.md",
    ]
    assert git(root, "show", "HEAD:memory/facts.md").endswith(FINAL)
    history = git(root, "log", "--all", "--name-only", "--format=").split()
    assert [p for p in history if is_scratch(p)] == []
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""


def test_scratch_activity_alone_never_wakes_a_sync(mgr: ContextManager) -> None:
    root = mgr.root
    spy = SyncSpy(mgr)
    w = watch(mgr, debounce=60, max_delay=600)
    try:
        (root / "memory").mkdir()
        for i in range(5):  # vim rewriting its swap file while a person types
            (root / "memory" / ".facts.md.swp").write_bytes(b"b0VIM 9.0\0" + bytes([i]) * 32)
        (root / "memory" / ".DS_Store").write_bytes(b"Bud1")
        (root / "sentinel.md").write_text("done\n", "utf-8")
        wait_for(lambda: "sentinel.md" in w.pending, "the sentinel file to be seen")
        assert w.pending == ["sentinel.md"]
    finally:
        w.stop()
    assert spy.calls == 1
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["sentinel.md"]


def test_watcher_rejects_bad_timing(mgr: ContextManager) -> None:
    with pytest.raises(ConfigError, match="debounce"):
        Watcher(mgr, debounce=-1)
    with pytest.raises(ConfigError, match="max_delay"):
        Watcher(mgr, debounce=0.5, max_delay=0)


# ------------------------------------------------------------------ CLI and demo
def test_watch_once_commits_outside_edits(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    ContextManager(root, index=False).close()
    (root / "memory").mkdir()
    (root / "memory" / "facts.md").write_text("- edited in vim\n", "utf-8")
    runner = CliRunner()
    result = runner.invoke(cli, ["--root", str(root), "watch", "--once"])
    assert result.exit_code == 0, result.output
    assert result.output == "committed 1 file(s) edited outside contextfs: memory/facts.md\n"
    assert (
        git(root, "log", "-1", "--format=%an|%s")
        == "human|sync: 1 file(s) edited outside contextfs\n"
    )
    again = runner.invoke(cli, ["--root", str(root), "watch", "--once"])
    assert again.exit_code == 0 and again.output.startswith("nothing to commit")
    assert "Example" in runner.invoke(cli, ["watch", "--help"]).output


def test_watch_once_reports_errors_in_one_line(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["--root", str(tmp_path / "r"), "watch", "--once"])
    assert missing.exit_code == 1 and missing.output.startswith("error: there is no context root")
    assert not (tmp_path / "r").exists()  # watching never creates a root
    ContextManager(tmp_path / "r").close()
    result = CliRunner().invoke(
        cli, ["--root", str(tmp_path / "r"), "--actor", "root!", "watch", "--once"]
    )
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith(
        "error: actor 'root!' is not accepted"
    )


def test_watch_command_runs_until_interrupted(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    ContextManager(root, index=False).close()
    proc = start_watch(root, 0.2)
    try:
        assert "watching" in proc.stdout.readline()
        (root / "task").mkdir()
        (root / "task" / "current.md").write_text("typed by a person\n", "utf-8")
        wait_for(lambda: human_commits(root), "the watch command to commit the edit")
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 0, err
    assert "committed 1 file(s) edited outside contextfs: task/current.md" in out
    assert "stopping" in out
    assert git(root, "show", "HEAD:task/current.md") == "typed by a person\n"


def test_demo_shows_an_editor_edit_being_committed(sample_root: Path) -> None:
    ctx = ContextManager(sample_root, actor="agent:demo", index=False)
    lines: list[str] = []
    demo(ctx, lines.append)
    ctx.close()
    assert any(line.endswith("ctx.sync() committed: memory/preferences.md") for line in lines), (
        lines
    )
    assert any("by human: sync:" in line for line in lines), lines
    assert git(sample_root, "log", "-1", "--format=%an").strip() == "human"
    assert (
        (sample_root / "memory" / "preferences.md").read_text("utf-8").endswith("imperative mood\n")
    )
    assert git(sample_root, "status", "--porcelain") == ""
    assert ".swp" not in git(sample_root, "log", "--all", "--name-only", "--format=")
