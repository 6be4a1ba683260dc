"""git's index written in-process: real git reads it as its own, whatever git wrote before.

Every case ends with what a person's git sees: ``git status`` and ``git diff --cached``
empty, ``git fsck`` clean, the index's entries equal to HEAD's tree, and the stat data of
each entry contextfs recorded equal to the file's (``git ls-files --debug``), so git does
not even need to re-read the file. The repositories start from indexes git itself wrote
in each version and with each extension it may add.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from helpers import application_repository, assert_clean, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfs import ContextManager, VersioningError
from contextfs.versioning import ewah
from contextfs.versioning.indexfile import parse
from contextfs.versioning.locks import boot_time

PERSON = ("-c", "user.name=person", "-c", "user.email=person@x.invalid")


def _index_matches_head(root: Path) -> None:
    staged = sorted(
        line.split("\t", 1)[1] + " " + line.split()[1]
        for line in git(root, "ls-files", "--stage").splitlines()
    )
    tree = sorted(
        line.split("\t", 1)[1] + " " + line.split()[2]
        for line in git(root, "ls-tree", "-r", "HEAD").splitlines()
    )
    assert staged == tree
    assert git(root, "diff", "--cached", "--name-only") == ""


def _stat_matches(root: Path, rel: str) -> None:
    """The entry's stat data is the file's: git takes the file as clean without reading it."""
    debug = git(root, "ls-files", "--debug", "--", rel)
    fields = dict(re.findall(r"(ctime|mtime|dev|ino|uid|gid|size): (\S+)", debug))
    st = os.lstat(root / rel)
    assert fields["mtime"] == f"{int(st.st_mtime)}:{st.st_mtime_ns % 10**9}"
    assert fields["ctime"] == f"{int(st.st_ctime)}:{st.st_ctime_ns % 10**9}"
    assert (int(fields["ino"]), int(fields["size"])) == (st.st_ino & 0xFFFFFFFF, st.st_size)


def _ext(root: Path) -> set[bytes]:
    data = (root / ".git" / "index").read_bytes()
    return {sig for sig, _payload in parse(data).extensions}


SETUPS = {
    "v2, plain": [("config", "core.splitIndex", "false")],
    "v3 (skip-worktree entry)": [("config", "core.splitIndex", "false")],
    "v4, prefix-compressed": [
        ("config", "core.splitIndex", "false"),
        ("update-index", "--index-version", "4"),
    ],
    "v4, split": [("update-index", "--index-version", "4"), ("update-index", "--split-index")],
    "untracked cache and offset tables": [
        ("config", "core.untrackedCache", "true"),
        ("config", "index.threads", "2"),
        ("config", "index.recordOffsetTable", "true"),
        ("config", "index.recordEndOfIndexEntries", "true"),
        ("update-index", "--no-split-index"),
        ("status", "--porcelain"),
    ],
}


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_git_reads_the_index_contextfs_writes(tmp_path: Path, setup: str) -> None:
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        for i in range(60):
            ctx.write(f"notes/n{i:02d}.md", f"note {i}")
        ctx.write("other/keep.md", "kept")
        for args in SETUPS[setup]:
            git(root, *args)
        if setup.startswith("v3"):
            git(root, "update-index", "--skip-worktree", "other/keep.md")
        git(root, *PERSON, "commit", "-q", "--allow-empty", "-m", "a person's commit (writes TREE)")
        before = _ext(root)
        ctx.write("notes/n01.md", "changed")
        ctx.write("fresh/new.md", "new")
        ctx.delete("notes/n02.md")
        ctx.move("notes/n03.md", "moved/n03.md")
        with ctx.transaction("many"):
            for i in range(10, 40):
                ctx.write(f"notes/n{i:02d}.md", f"again {i}")
        assert_clean(root)
        _index_matches_head(root)
        for rel in ("notes/n01.md", "fresh/new.md", "moved/n03.md", "notes/n20.md"):
            _stat_matches(root, rel)
        if setup.startswith("v3"):
            assert "skip-worktree" in git(
                root, "ls-files", "--debug", "--", "other/keep.md"
            ) or git(root, "ls-files", "-t", "--", "other/keep.md").startswith("S ")
        version = int.from_bytes((root / ".git" / "index").read_bytes()[4:8], "big")
        assert (version == 4) == ("v4" in setup)
        if setup.startswith("untracked"):
            assert {
                b"UNTR",
                b"EOIE",
            } <= before  # git did write them; contextfs drops what it cannot keep
        # A person works on afterwards with git alone.
        (root / "notes/n05.md").write_text("edited by a person\n")
        git(root, *PERSON, "commit", "-qam", "person")
        assert_clean(root)
        ctx.write("notes/n06.md", "after the person")
        assert_clean(root)
        _index_matches_head(root)


def test_own_root_keeps_a_small_split_index(tmp_path: Path) -> None:
    """A root of its own is split: recording one path rewrites a few hundred bytes."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        with ctx.transaction("seed"):
            for i in range(400):
                ctx.write(f"d{i // 50}/n{i:03d}.md", f"note {i}")
        ctx.write("d0/n000.md", "one change")
        index = (root / ".git" / "index").read_bytes()
        assert b"link" in {sig for sig, _ in parse(index).extensions}
        assert len(index) < 2048
        shared = [p for p in (root / ".git").iterdir() if p.name.startswith("sharedindex.")]
        assert shared
        for i in range(120):  # past the bound: folded into a new shared index, as git does
            ctx.write(f"d1/n{50 + i % 50:03d}.md", f"round {i}")
        assert_clean(root)
        _index_matches_head(root)
        assert git(root, "update-index", "--refresh") == ""


def test_a_person_holding_the_index_lock_is_never_overridden(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("a.md", "one")
        ctx.parts.git.lock_wait = 0.2  # how long it waits is not what is tested (10 s by default)
        head = git(root, "rev-parse", "HEAD")
        lock = root / ".git" / "index.lock"
        lock.write_bytes(b"a person's git commit, waiting for its message")
        with pytest.raises(VersioningError, match="index"):
            ctx.write("a.md", "two")
        assert lock.read_bytes().startswith(b"a person's")
        assert git(root, "rev-parse", "HEAD") == head
        assert ctx.read("a.md") == "one"
        lock.unlink()
        ctx.write("a.md", "two")
        assert_clean(root)


@pytest.mark.skipif(boot_time() is None, reason="needs the boot time (/proc/stat)")
def test_a_lock_older_than_the_last_boot_is_removed(tmp_path: Path) -> None:
    """After a power cut no process can own a lock made before it; the write goes on."""
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("a.md", "one")
        booted = boot_time()
        assert booted is not None
        for lock in (root / ".git" / "index.lock", root / ".git" / "refs" / "heads" / "main.lock"):
            lock.write_bytes(b"")
            os.utime(lock, (booted - 60, booted - 60))
        ctx.write("a.md", "two")
        assert not (root / ".git" / "index.lock").exists()
        assert_clean(root)


def _racy_entry(app: Path, rel: str, data: bytes) -> None:
    """Record ``rel`` with git, file and index dated 5 seconds ago (the same second): a racily
    clean entry, as after a write made just before the index was written."""
    when = time.time_ns() - 5 * 10**9
    (app / rel).write_bytes(data)
    os.utime(app / rel, ns=(when, when))
    git(app, "add", rel)
    os.utime(app / ".git" / "index", ns=(when, when))


def test_racily_clean_entries_are_smudged(tmp_path: Path) -> None:
    """A file changed in the second the index was written, with the same size, is re-read
    by git: its entry's size is set to 0 when the index is next written in a later second."""

    app = application_repository(tmp_path)
    _racy_entry(app, "notes.md", b"aaaa")
    st = os.lstat(app / "notes.md")
    (app / "notes.md").write_bytes(b"bbbb")  # same size, same second: the stat data matches
    os.utime(app / "notes.md", ns=(st.st_atime_ns, st.st_mtime_ns))
    with ContextManager(app / "context", index=False) as ctx:
        ctx.write("a.md", "a")  # rewrites the index; notes.md is not among the paths
    debug = git(app, "ls-files", "--debug", "--", "notes.md")
    assert re.search(r"size: 0\b", debug), debug
    assert (
        git(app, "status", "--porcelain", "--untracked-files=no") == "AM notes.md\n"
    )  # staged, then changed


def test_racily_clean_entries_that_did_not_change_are_left_as_git_leaves_them(
    tmp_path: Path,
) -> None:
    """A racily clean file whose bytes are the recorded ones keeps its entry, and one written
    in the new index's second stays racily clean unread: a person's ``git status`` afterwards
    rewrites git's index to the same bytes."""

    app = application_repository(tmp_path)
    _racy_entry(app, "notes.md", b"aaaa")
    with ContextManager(app / "context", index=False) as ctx:
        ctx.write("a.md", "a")
        ctx.write("b.md", "b")
    assert not re.search(r"size: 0\b", git(app, "ls-files", "--debug"))
    index = (app / ".git" / "index").read_bytes()
    assert git(app, "status", "--porcelain", "--untracked-files=all") == "A  notes.md\n"
    assert (app / ".git" / "index").read_bytes() == index


def test_recorded_paths_under_an_application_repository(tmp_path: Path) -> None:
    """A root inside someone's repository: their staged work stays staged, the index is theirs."""

    app = application_repository(tmp_path)
    (app / "main.py").write_text("print('staged')\n")
    git(app, "add", "main.py")
    with ContextManager(app / "context", index=False) as ctx:
        ctx.write("notes/a.md", "a")
        ctx.write("notes/a.md", "b")
    assert git(app, "diff", "--cached", "--name-only") == "main.py\n"
    assert git(app, "status", "--porcelain", "--", "context") == ""
    assert not [p for p in (app / ".git").iterdir() if p.name.startswith("sharedindex.")]


@given(st.sets(st.integers(min_value=0, max_value=5000), max_size=200))
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_ewah_round_trip(bits: set[int]) -> None:
    decoded, end = ewah.decode(ewah.encode(bits))
    assert decoded == sorted(bits)
    assert end == len(ewah.encode(bits))


def test_ewah_reads_the_bitmaps_git_writes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for i in range(300):
        (root / f"f{i:03d}").write_text(str(i))
    git(root, "add", ".")
    git(root, "update-index", "--split-index")
    deleted = {3, 64, 65, 200, 299}
    for i in deleted:
        git(root, "rm", "-q", "--cached", f"f{i:03d}")
    link = parse((root / ".git" / "index").read_bytes()).extension(b"link")
    assert link is not None
    bits, _end = ewah.decode(link, 20)
    assert set(bits) == deleted


def test_git_subprocess_not_started_on_the_write_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ctx"
    with ContextManager(root, index=False) as ctx:
        ctx.write("a.md", "one")
        started: list[object] = []
        real = subprocess.Popen.__init__

        def spy(self: subprocess.Popen[bytes], *args: object, **kwargs: object) -> None:
            started.append(args[0] if args else kwargs.get("args"))
            real(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(subprocess.Popen, "__init__", spy)
        ctx.write("a.md", "two")
        ctx.write("b/new.md", "new")
        with ctx.transaction("t"):
            ctx.write("c.md", "c")
        ctx.delete("b/new.md")
        assert started == []
