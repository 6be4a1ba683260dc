"""Nothing acknowledged is lost, and a failed call changes nothing.

Writes onto folders, deletes on a full disk, repositories in the middle of a rebase or a
merge, leftover git locks, durability (fsync) of what a commit acknowledges, file modes
and Unicode spellings that used to make a tree sync dirty forever.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import time
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import assert_clean, commit_count, git

from contextfs import (
    ContentError,
    ContextFSError,
    ContextManager,
    InvalidPathError,
    VersioningError,
    faults,
)
from contextfs.files import durability


@pytest.fixture(autouse=True)
def _no_faults() -> Iterator[None]:
    yield
    faults.disarm()


def state(root: Path) -> tuple[str, str, dict[str, bytes], list[str]]:
    """HEAD, git's index, every file's bytes and git's lock files: what 'nothing changed'
    compares (a lock left behind makes every later write wait for it, then fail)."""
    files = {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }
    locks = sorted(p.relative_to(root).as_posix() for p in (root / ".git").rglob("*.lock"))
    return git(root, "rev-parse", "HEAD"), git(root, "ls-files", "-s"), files, locks


# ----------------------------------------------------------------- writes onto folders
def test_writing_onto_a_folder_keeps_the_folder_and_its_unsaved_files(ctx: ContextManager) -> None:
    ctx.write("notes/a.md", "committed")
    (ctx.root / "notes" / "draft.md").write_text("not committed yet")
    for call in (
        lambda: ctx.write("notes", "x"),
        lambda: ctx.append("notes", "x"),
        lambda: ctx.create("notes", "x"),
    ):
        with pytest.raises(ContextFSError):
            call()
        assert (ctx.root / "notes" / "draft.md").read_text() == "not committed yet"
        assert (ctx.root / "notes" / "a.md").exists()


# ----------------------------------------------------------------- a full disk
def test_delete_on_a_full_disk_loses_nothing(ctx: ContextManager) -> None:
    ctx.write("a.md", "precious")
    before = state(ctx.root)
    for point in (
        "change.written",
        "change.renamed",
        "commit.prepared",
        "commit.ready",
        "commit.recorded",
    ):
        faults.arm(point, "enospc")
        with pytest.raises(ContentError, match="space"):
            ctx.delete("a.md")
        faults.disarm()
        assert state(ctx.root) == before, point
    # The disk stays full while the failure is undone: the file is renamed back, not rewritten.
    real_write = ctx.parts.files.write

    def full(*args: object, **kwargs: object) -> None:
        raise ContentError("a.md: no space left on the device; free disk space and retry")

    def disk_fills_up() -> None:
        ctx.parts.files.write = full  # type: ignore[method-assign]
        full()

    faults.arm("change.renamed", disk_fills_up)
    try:
        with pytest.raises(ContentError, match="space"):
            ctx.delete("a.md")
    finally:
        ctx.parts.files.write = real_write  # type: ignore[method-assign]
    assert state(ctx.root) == before
    assert ctx.read("a.md") == "precious"
    ctx.delete("a.md")  # with room again, the delete goes through
    assert not (ctx.root / "a.md").exists()


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 8 MB tmpfs (skipped where mounting is not permitted)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip("mounting a tmpfs is not permitted here; the injected-ENOSPC tests cover this")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_really_full_disk(tiny_disk: Path) -> None:
    root = tiny_disk / "ctx"
    with ContextManager(root) as ctx:
        ctx.write("a.md", "precious")
        ctx.write("b.md", "also precious")
        filler = tiny_disk / "filler"
        with open(filler, "wb") as fh:
            try:
                while True:
                    fh.write(b"\0" * 65536)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        before = state(root)
        for call in (
            lambda: ctx.delete("a.md"),
            lambda: ctx.write("b.md", "new " * 50_000),
            lambda: ctx.write("c.md", "x" * 100_000),
            lambda: ctx.append("a.md", "y" * 100_000),
            lambda: ctx.search("precious"),
        ):
            with contextlib.suppress(ContextFSError):  # refused or done: never half done
                call()
            assert state(root)[2]["a.md"] == before[2]["a.md"]
            assert state(root)[2]["b.md"] == before[2]["b.md"]
        filler.unlink()
        with ContextManager(root) as again:
            assert again.read("a.md") == "precious" and again.read("b.md") == "also precious"
        assert_clean(root)


# ----------------------------------------------------------------- repository state
def _conflicting(tmp_path: Path, operation: str, branch: str) -> Path:
    """A root where ``main`` and ``branch`` changed a.md differently, then ``git <operation>``
    stopped on the conflict (run on ``branch`` for a rebase, on ``main`` for a merge)."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("a.md", "base")
    person = ["-c", "user.name=p", "-c", "user.email=p@x"]
    git(root, "checkout", "-q", "-b", branch)
    (root / "a.md").write_text(f"{branch} change\n")
    git(root, *person, "commit", "-qam", branch)
    git(root, "checkout", "-q", "main")
    (root / "a.md").write_text("main change\n")
    git(root, *person, "commit", "-qam", "main")
    if operation == "rebase":
        git(root, "checkout", "-q", branch)
    target = "main" if operation == "rebase" else branch
    subprocess.run(
        ["git", "-C", str(root), *person, operation, target], capture_output=True, check=False
    )
    return root


def test_no_write_while_a_rebase_is_in_progress(tmp_path: Path) -> None:
    root = _conflicting(tmp_path, "rebase", "side")
    assert (root / ".git" / "rebase-merge").exists() or (root / ".git" / "rebase-apply").exists()
    with ContextManager(root, index=False) as ctx:
        assert "<<<<<<<" in (root / "a.md").read_text()
        with pytest.raises(VersioningError, match="rebase"):
            ctx.write("b.md", "written during the rebase")
        assert not (root / "b.md").exists()
    # Nothing contextfs did survives an abort, because it did nothing.
    git(root, "rebase", "--abort")
    assert not (root / "b.md").exists()
    assert "<<<<<<<" not in git(root, "log", "-p", "--all")


def test_opening_a_root_mid_merge_never_commits_conflict_markers(tmp_path: Path) -> None:
    root = _conflicting(tmp_path, "merge", "other")
    head = git(root, "rev-parse", "HEAD")
    with ContextManager(root, index=False) as ctx:
        assert ctx.parts.last_sync.held
        with pytest.raises(VersioningError, match="merge"):
            ctx.write("b.md", "x")
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "ls-files", "-u")  # still unmerged: contextfs did not mark it resolved
    # A file with markers is never committed, even after the merge is aborted by hand.
    git(root, "merge", "--abort")
    (root / "c.md").write_text("<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    with ContextManager(root, index=False) as ctx:
        assert "c.md" in ctx.parts.last_sync.held
    assert "c.md" not in git(root, "ls-files")


# ----------------------------------------------------------------- failed writes
def test_a_failed_write_leaves_no_commit_behind(ctx: ContextManager) -> None:
    ctx.write("a.md", "old")
    # How long a write waits for another command's lock is not what is tested here (10 s each).
    ctx.parts.git.lock_wait = 0.2
    lock = ctx.root / ".git" / "index.lock"
    lock.write_text("")  # another git process, or one that was killed
    before = state(ctx.root)
    with pytest.raises(VersioningError, match="index.lock"):
        ctx.write("a.md", "new")
    assert state(ctx.root) == before
    lock.unlink()
    with ContextManager(ctx.root, index=False) as again:
        assert again.read("a.md") == "old"
    assert state(ctx.root)[0] == before[0]  # the next open committed nothing
    before = state(ctx.root)
    for point in (
        "change.touched",
        "change.written",
        "change.published",
        "commit.prepared",
        "commit.ready",
        "record.locked",
        "commit.recorded",
        "publish.locked",
    ):
        faults.arm(point, "eio")
        with pytest.raises(ContextFSError):
            ctx.write("a.md", f"failed at {point}")
        faults.disarm()
        assert state(ctx.root) == before, point


def test_acknowledged_writes_are_fsynced(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        with contextlib.suppress(OSError):
            synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to name file descriptors")
    monkeypatch.setattr(os, "fsync", spy)
    # Without syncfs (as on macOS) a change's single flush fsyncs each thing it wrote.
    monkeypatch.setattr(durability, "_SYNCFS", None)
    ctx.write("memory/facts.md", "- durable fact")
    head = git(ctx.root, "rev-parse", "HEAD").strip()
    objects = {f"{head[:2]}/{head[2:]}"}
    tree = git(ctx.root, "rev-parse", "HEAD^{tree}").strip()
    blob = git(ctx.root, "rev-parse", "HEAD:memory/facts.md").strip()
    objects |= {f"{tree[:2]}/{tree[2:]}", f"{blob[:2]}/{blob[2:]}"}
    joined = "\n".join(synced)
    assert any(p.endswith("memory/facts.md") or ".cfs-tmp" in p for p in synced)  # the file itself
    # The branch's new value and git's new index: written into their lock files (linked into
    # place from private files), fsynced by the change's flush before either is renamed.
    assert any("/.git/refs/heads/" in p and p.endswith(".lock") for p in synced), joined
    assert any(p.endswith("/.git/index.lock") for p in synced), joined
    assert all(any(p.endswith(obj) for p in synced) for obj in objects)  # every new object
    assert any(p.endswith("/.git/refs/heads") for p in synced)  # the rename of the branch


@pytest.mark.skipif(
    not durability.syncfs_available(), reason="counts the flushes of Linux's syncfs path"
)
def test_a_write_costs_at_most_three_flushes(ctx: ContextManager) -> None:
    """Counted, not estimated: a new file, a replaced file, a removal and a transaction of
    many new files each take at most three flush calls; a transaction pays one more per file
    it replaces."""
    ctx.write("notes/old.md", "old")

    def flushes(action: Callable[[], object]) -> int:
        before = durability.FLUSHES.calls
        action()
        return durability.FLUSHES.calls - before

    assert flushes(lambda: ctx.write("notes/new.md", "new")) <= 3
    assert flushes(lambda: ctx.write("notes/old.md", "replaced")) <= 3
    assert flushes(lambda: ctx.delete("notes/new.md")) <= 3

    def many() -> None:
        with ctx.transaction("many"):
            for i in range(40):
                ctx.write(f"batch/n{i:02d}.md", f"note {i}")

    assert flushes(many) <= 3
    assert_clean(ctx.root)


# ----------------------------------------------------------------- modes and spellings
def test_executable_files_sync_clean(ctx: ContextManager) -> None:
    script = ctx.root / "skills" / "run.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    assert ctx.sync() == ["skills/run.sh"]
    assert_clean(ctx.root)
    ctx.write("skills/run.sh", "#!/bin/sh\necho bye\n")
    assert os.stat(script).st_mode & 0o111
    assert_clean(ctx.root)
    assert "100755" in git(ctx.root, "ls-tree", "HEAD", "skills/run.sh")


def test_decomposed_unicode_names_are_readable_and_stay_one_file(ctx: ContextManager) -> None:
    nfd = unicodedata.normalize("NFD", "café.md")
    (ctx.root / nfd).write_text("written by a Mac editor")
    ctx.sync()
    composed = unicodedata.normalize("NFC", "café.md")
    assert ctx.read(composed) == "written by a Mac editor"
    assert ctx.read(nfd) == "written by a Mac editor"
    ctx.write(composed, "updated")
    assert sorted(os.listdir(ctx.root)) == sorted(
        [".contextfs", ".git", ".gitattributes", ".gitignore", nfd]
    )
    assert_clean(ctx.root)
    assert ctx.search("updated")[0].path in (nfd, composed)


def test_verify_without_fix_does_not_report_queued_writes(ctx: ContextManager) -> None:
    ctx.search("anything")  # the index is open and current
    for i in range(5):
        ctx.write(f"n{i}.md", f"queued note {i}")
    report = ctx.index.verify(fix=False)
    assert report.ok, report.to_dict()


# ----------------------------------------------------------------- typed errors
def test_core_calls_only_raise_typed_errors(ctx: ContextManager) -> None:
    ctx.write("a.md", "a")
    lone = "bad \ud800 text"
    for call in (
        lambda: ctx.write("a.md", lone),
        lambda: ctx.write(lone + ".md", "x"),
        lambda: ctx.append("a.md", lone),
        lambda: ctx.edit("a.md", "a", lone),
        lambda: ctx.write("a.md", "x", {"title": lone}),
        lambda: ctx.history(limit="x"),  # type: ignore[arg-type]
        lambda: ctx.history(limit=None),  # type: ignore[arg-type]
        lambda: ctx.history(limit=-1),
        lambda: ctx.purge_trash(older_than="soon"),  # type: ignore[arg-type]
        lambda: ContextManager(ctx.root, actor="bob"),
        lambda: ContextManager(ctx.root, max_file_bytes="big"),  # type: ignore[arg-type]
        lambda: ctx.revert_session("nope"),
        lambda: ctx.search("x", limit="many"),  # type: ignore[arg-type]
    ):
        with pytest.raises(ContextFSError) as info:
            call()
        assert not isinstance(info.value, (OSError, UnicodeError, KeyError, TypeError))
        assert "\ud800" not in str(info.value)
    (ctx.root / ".git" / "refs" / "heads" / "main").write_text("garbage\n")
    with pytest.raises(VersioningError, match="commit id"):
        ctx.write("a.md", "b")


def test_a_read_only_root_opens_for_reading(tiny_disk: Path) -> None:
    """On a read-only filesystem: reading works, writing fails typed, nothing raw escapes."""
    root = tiny_disk / "ctx"
    with ContextManager(root) as ctx:
        ctx.write("a.md", "alpha note")
        ctx.search("alpha")
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], check=True)
    with ContextManager(root, read_only=True) as ctx:
        assert ctx.read("a.md") == "alpha note"
        assert ctx.search("alpha")  # the index state falls back to the user's cache folder
    with ContextManager(root, sync=False, index=False) as ctx:
        assert ctx.read("a.md") == "alpha note"
        with pytest.raises(ContentError, match="writable|read-only"):
            ctx.write("b.md", "b")
    with ContextManager(root) as ctx:  # sync and index on a read-only disk: still no raw OSError
        assert ctx.read("a.md") == "alpha note"


def test_read_only_managers_never_write(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    with ContextManager(root) as ctx:
        ctx.write("a.md", "a")
    (root / "edited.md").write_text("edited by hand")
    before = state(root)
    count = commit_count(root)
    with ContextManager(root, read_only=True) as ctx:
        assert ctx.read("edited.md") == "edited by hand"
        assert ctx.search("hand")[0].path == "edited.md"
        with pytest.raises(VersioningError, match="read-only"):
            ctx.write("b.md", "b")
    assert state(root) == before and commit_count(root) == count
    with pytest.raises(ContextFSError, match=r"ContextManager\(root\)"):
        ContextManager(tmp_path / "missing", read_only=True)
    with pytest.raises(ContextFSError, match=r"ContextManager\(root\)"):
        ContextManager(tmp_path, read_only=True)  # not a repository
    with pytest.raises(InvalidPathError):
        ContextManager(root, read_only=True).read("../x")


# ----------------------------------------------------------------- settings
@pytest.mark.parametrize(
    "text, message",
    [
        ("[sopes]\nproject = []\n", r"\[sopes\] is not a known table; did you mean scopes\?"),
        (
            "[memory]\ncore_limt = 5\n",
            r"\[memory\] core_limt is not a known key; did you mean core_limit\?",
        ),
        ("[evolve]\narchive = 'x'\n", r"\[evolve\] archive is not a known key"),
        ("[compaction]\nmax_token = 9000\n", r"\[compaction\] max_token is not a known key"),
        ("memory = 3\n", r"memory must be a table"),
    ],
)
def test_misspelled_settings_are_refused_not_ignored(
    ctx: ContextManager, text: str, message: str
) -> None:
    from contextfs import ConfigError
    from contextfs.scopes import Memory, Topics

    (ctx.root / ".contextfs" / "config.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        _ = ctx.parts.config
        Memory(ctx)
        Topics(ctx)
        from contextfs.evolve import cleanup

        cleanup.cleanup(ctx, dry_run=True)


def test_a_file_with_broken_frontmatter_can_be_replaced_or_repaired(ctx: ContextManager) -> None:
    from contextfs import FrontmatterError

    (ctx.root / "bad.md").write_text("---\ntags: [a, b\n---\nbody text\n")
    (ctx.root / "worse.md").write_text("---\ntitle: [x\n---\nkeep me\n")
    ctx.sync()
    with pytest.raises(FrontmatterError):
        ctx.get("bad.md")
    repaired = ctx.edit("bad.md", "tags: [a, b\n", "tags: [a, b]\n")
    assert repaired.metadata["tags"] == ["a", "b"] and repaired.body == "body text\n"
    replaced = ctx.write("worse.md", "a fresh start")
    assert replaced.body == "a fresh start" and "title" not in replaced.metadata
    assert_clean(ctx.root)
    with pytest.raises(FrontmatterError):
        (ctx.root / "bad.md").write_text("---\n[\n---\n")
        ctx.sync()
        ctx.update_metadata("bad.md", {"k": "v"})  # merging keys needs readable keys


def test_readers_never_wait_for_a_writer(tmp_path: Path) -> None:
    """Another process holds the write lock for as long as it likes; reads go on."""
    import sys
    import textwrap

    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("a.md", "readable while locked")
    locked, release = tmp_path / "locked", tmp_path / "release"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import pathlib, time
        from contextfs import ContextManager
        ctx = ContextManager({str(root)!r}, index=False, sync=False)
        with ctx.parts.write_lock():
            pathlib.Path({str(locked)!r}).touch()
            while not pathlib.Path({str(release)!r}).exists():
                time.sleep(0.05)
    """),
        ]
    )
    try:
        while not locked.exists():
            assert holder.poll() is None, "the lock holder died"
            time.sleep(0.05)
        cli = Path(sys.executable).with_name("contextfs")
        for args in (["read", "a.md"], ["ls"], ["log", "-n", "1"], ["search", "readable"]):
            proc = subprocess.run(
                [str(cli), "--root", str(root), *args],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert proc.returncode == 0, (args, proc.stderr)
        assert (
            "readable while locked"
            in subprocess.run(
                [str(cli), "--root", str(root), "read", "a.md"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
        )
        with ContextManager(root, read_only=True) as reader:
            assert reader.read("a.md") == "readable while locked"
        assert holder.poll() is None  # the writer still holds the lock: nobody waited for it
    finally:
        release.touch()
        holder.wait(timeout=60)


def test_a_transaction_sees_its_staged_writes_and_other_threads_do_not(ctx: ContextManager) -> None:
    """Writes of a transaction are staged until its commit: the transaction reads, lists and
    moves them as written; a reader in another thread sees the committed root meanwhile."""
    import threading

    ctx.write("notes/a.md", "committed")
    seen: list[object] = []

    def reader() -> None:
        seen.append((ctx.read("notes/a.md"), ctx.exists("notes/b.md")))

    with ctx.transaction("staged"):
        ctx.write("notes/a.md", "staged")
        ctx.write("notes/b.md", "new")
        assert ctx.read("notes/a.md") == "staged"
        thread = threading.Thread(target=reader)
        thread.start()
        thread.join()
        assert "notes/b.md" in ctx.list("notes")
        ctx.move("notes/b.md", "moved/b.md")
    assert seen == [("committed", False)]
    assert ctx.read("notes/a.md") == "staged"
    assert ctx.read("moved/b.md") == "new" and not ctx.exists("notes/b.md")
    assert_clean(ctx.root)
