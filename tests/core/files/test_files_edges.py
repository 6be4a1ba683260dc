"""The confined file layer at its edges: platforms without ``dir_fd``, moves onto existing
names and links, permission changes, names made from text, and what a refusal quotes."""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from contextfs import ContextManager
from contextfs.errors import InvalidPathError, NotFoundError
from contextfs.files import confined, durability, opening, paths
from contextfs.files.confined import RootFiles


def _tree(root: Path) -> None:
    """Files at two depths, a skipped top folder and its namesake deeper down, ``.git`` at two
    levels, a linked folder and a linked file, and an executable."""
    for rel, data in {
        "a.md": "a",
        "notes/b.md": "bb",
        "notes/deep/c.md": "ccc",
        "notes/cache/kept.md": "kept: only the top folder named cache is skipped",
        "cache/skipped.md": "s",
        ".git/HEAD": "ref",
        "notes/.git/config": "x",
        "run.sh": "#!/bin/sh\n",
        "theirs.sh": "#!/bin/sh\n",
    }.items():
        full = root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(data)
    (root / "run.sh").chmod(0o755)
    (root / "theirs.sh").chmod(0o641)  # executable by others only: not by its owner, as git sees it
    os.symlink(root / "notes", root / "linked")
    os.symlink(root / "a.md", root / "notes" / "link.md")


def _walk(files: RootFiles, rel: str = "") -> list[tuple[str, int, bool]]:
    found = list(files.walk(rel, skip_top=frozenset({"cache"})))
    for st in found:  # the status is the file's own
        assert st.mtime_ns == os.lstat(files.root / st.rel).st_mtime_ns
    return [(st.rel, st.size, st.executable) for st in found]


@pytest.fixture
def without_dir_fd(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layer as it runs where ``open`` and ``rename`` take no folder descriptor."""
    monkeypatch.setattr(opening, "FD_OPS", False)
    monkeypatch.setattr(confined, "FD_OPS", False)


def test_both_walks_list_the_same_files_skipping_git_links_and_skipped_top_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    files = RootFiles(tmp_path, durable=False)
    # Sorted per folder: a folder's files, then its sub-folders.
    expected = [
        ("a.md", 1, False),
        ("run.sh", 10, True),
        ("theirs.sh", 10, False),
        ("notes/b.md", 2, False),
        ("notes/cache/kept.md", 48, False),
        ("notes/deep/c.md", 3, False),
    ]
    assert _walk(files) == expected
    assert _walk(files, "notes") == expected[3:]
    assert _walk(files, "missing") == []
    assert not (tmp_path / "missing").exists()
    monkeypatch.setattr(opening, "FD_OPS", False)
    monkeypatch.setattr(confined, "FD_OPS", False)
    assert _walk(files) == expected
    assert _walk(files, "notes") == expected[3:]
    assert _walk(files, "missing") == []
    assert not (tmp_path / "missing").exists()  # walking a missing folder never makes it


@pytest.mark.usefixtures("without_dir_fd")
def test_without_dir_fd_files_are_written_read_listed_moved_and_refused_as_with_it(
    tmp_path: Path,
) -> None:
    files = RootFiles(tmp_path)
    files.write("notes/sub/a.md", b"one")
    files.write("notes/sub/a.md", b"two")  # replaced in place
    assert files.read("notes/sub/a.md") == b"two"
    assert sorted(files.listdir("notes/sub")) == ["a.md"]
    assert "notes" in files.listdir("")
    files.rename("notes/sub/a.md", "archive/2026/a.md")
    assert files.read("archive/2026/a.md") == b"two"
    assert files.read("notes/sub/a.md") is None
    files.write("b.md", b"b")
    with pytest.raises(InvalidPathError, match="already exists"):
        files.rename("b.md", "archive/2026/a.md")
    assert files.read("archive/2026/a.md") == b"two"
    with pytest.raises(NotFoundError):
        files.rename("gone.md", "elsewhere.md")
    os.symlink(tmp_path / "archive", tmp_path / "link")
    with pytest.raises(InvalidPathError, match="link"):
        files.write("link/c.md", b"c")
    assert not (tmp_path / "archive" / "c.md").exists()


@pytest.mark.usefixtures("without_dir_fd")
def test_without_dir_fd_a_manager_writes_moves_and_lists_a_tree(tmp_path: Path) -> None:
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("project/plan.md", "# Plan\nShip it.\n")
        ctx.move("project/plan.md", "project/done/plan.md")
        assert ctx.read("project/done/plan.md") == "# Plan\nShip it.\n"
        assert "project/done/plan.md" in ctx.list("project")
        assert "project/plan.md" not in ctx.list("project")


def test_a_move_never_replaces_an_existing_file_or_link(tmp_path: Path) -> None:
    files = RootFiles(tmp_path)
    files.write("a.md", b"a")
    files.write("b.md", b"b")
    with pytest.raises(InvalidPathError, match="already exists"):
        files.rename("a.md", "b.md")
    assert (files.read("a.md"), files.read("b.md")) == (b"a", b"b")
    # A link pointing nowhere is still a name in the folder: a move must not replace it.
    os.symlink(tmp_path / "nowhere.md", tmp_path / "dangling.md")
    with pytest.raises(InvalidPathError, match="already exists"):
        files.rename("a.md", "dangling.md")
    assert os.path.islink(tmp_path / "dangling.md")
    assert files.read("a.md") == b"a"


def test_chmod_sets_the_bits_of_files_and_folders_and_refuses_links(tmp_path: Path) -> None:
    files = RootFiles(tmp_path)
    files.write("dir/a.md", b"a")
    files.chmod("dir/a.md", 0o600)
    files.chmod("dir", 0o700)
    assert stat.S_IMODE(os.stat(tmp_path / "dir" / "a.md").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "dir").st_mode) == 0o700
    os.symlink(tmp_path / "dir" / "a.md", tmp_path / "link.md")
    with pytest.raises(InvalidPathError, match="link"):
        files.chmod("link.md", 0o777)
    assert stat.S_IMODE(os.stat(tmp_path / "dir" / "a.md").st_mode) == 0o600
    with pytest.raises(NotFoundError, match="missing.md"):
        files.chmod("missing.md", 0o600)


@pytest.mark.parametrize("fd_ops", [True, False])
def test_no_descriptor_the_file_layer_opens_is_inherited_by_a_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fd_ops: bool
) -> None:
    # The layer passes no O_CLOEXEC of its own: it relies on os.open making every descriptor
    # non-inheritable (PEP 446), so a git process started meanwhile never holds one open.
    monkeypatch.setattr(confined, "FD_OPS", fd_ops)
    monkeypatch.setattr(opening, "FD_OPS", fd_ops)
    seen: list[bool] = []
    real_open = os.open

    def spy(*args: object, **kwargs: object) -> int:
        fd = real_open(*args, **kwargs)  # type: ignore[arg-type]
        seen.append(os.get_inheritable(fd))
        return fd

    monkeypatch.setattr(os, "open", spy)
    files = RootFiles(tmp_path)
    files.write("dir/a.md", b"a")
    assert files.read("dir/a.md") == b"a"
    files.chmod("dir/a.md", 0o600)
    assert [f.rel for f in files.walk()] == ["dir/a.md"]
    assert seen and not any(seen)


def test_walking_a_linked_folder_is_refused_naming_it(tmp_path: Path) -> None:
    _tree(tmp_path)
    with pytest.raises(InvalidPathError, match="'linked'|linked"):
        list(RootFiles(tmp_path).walk("linked"))


def test_a_change_s_staged_writes_stay_staged_while_another_folder_is_walked(
    tmp_path: Path,
) -> None:
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("other/x.md", "x\n")
        with ctx.transaction("two notes"):
            ctx.write("notes/a.md", "a\n")
            assert not (tmp_path / "ctx" / "notes" / "a.md").exists()  # staged, not in place
            assert [st.rel for st in ctx.parts.files.walk("other")] == ["other/x.md"]
            assert not (tmp_path / "ctx" / "notes" / "a.md").exists()
            # Looking at the folder that holds it puts it in place first.
            assert [st.rel for st in ctx.parts.files.walk("notes")] == ["notes/a.md"]
        assert (tmp_path / "ctx" / "notes" / "a.md").read_text().endswith("a\n")


@pytest.mark.parametrize(
    ("text", "max_len", "expected"),
    [
        ("alpha beta gamma", 10, "alpha-beta"),  # a word ending at the limit is kept
        ("alpha beta gamma", 12, "alpha-beta"),  # a word crossing it is dropped
        ("alpha beta", 10, "alpha-beta"),  # exactly at the limit: not cut
        ("abcdefgh", 5, "abcde"),  # one long word is cut inside
        ("ab cdefghij", 5, "ab"),
    ],
)
def test_slugify_cuts_names_on_word_boundaries(text: str, max_len: int, expected: str) -> None:
    assert paths.slugify(text, max_len=max_len) == expected


def test_slugify_never_makes_a_windows_device_name() -> None:
    assert paths.slugify("CON") == "con-item"
    assert paths.slugify("aux", default="note") == "aux-note"
    assert paths.slugify("", default="note") == "note"


def test_a_refusal_quotes_a_path_whole_up_to_120_characters_and_cuts_a_longer_one(
    tmp_path: Path,
) -> None:
    def refusal(raw: str) -> str:
        with pytest.raises(InvalidPathError) as info:
            paths.check(tmp_path, raw)
        return str(info.value)

    fits = ".trash/" + "a" * (118 - len(".trash/"))  # repr adds the two quotes: 120
    assert len(repr(fits)) == 120
    assert repr(fits) in refusal(fits)
    longer = fits + "b"
    message = refusal(longer)
    assert repr(longer) not in message
    assert repr(longer)[:117] + "..." in message


def test_full_path_joins_every_part_whatever_characters_the_names_hold(tmp_path: Path) -> None:
    assert paths.full_path(tmp_path, "") == tmp_path
    assert paths.full_path(tmp_path, "my notes/a b.md") == tmp_path / "my notes" / "a b.md"
    assert paths.full_path(tmp_path, "aXX/XXb.md") == tmp_path / "aXX" / "XXb.md"


def _libc_syncfs() -> bool:
    try:
        return hasattr(ctypes.CDLL(None), "syncfs")
    except OSError:
        return False


@pytest.mark.skipif(not _libc_syncfs(), reason="the C library here has no syncfs")
def test_syncfs_is_found_in_the_c_library_and_reports_errors_through_errno() -> None:
    syncfs = durability._load_syncfs()
    assert syncfs is not None
    assert durability.syncfs_available()
    ctypes.set_errno(0)
    assert syncfs(-1) == -1
    assert ctypes.get_errno() == errno.EBADF


@pytest.mark.parametrize(("text", "max_len"), [("abcd e fgh", 5), ("a b c d e f", 4), ("ab-cd", 2)])
def test_slugify_never_exceeds_its_limit(text: str, max_len: int) -> None:
    assert 0 < len(paths.slugify(text, max_len=max_len)) <= max_len


def test_removing_a_link_removes_the_link_and_the_last_file_its_empty_folders(
    tmp_path: Path,
) -> None:
    files = RootFiles(tmp_path)
    files.write("keep/a.md", b"a")
    os.symlink(tmp_path / "keep", tmp_path / "link")
    files.remove("link")  # the link itself, never the folder it points to
    assert not os.path.lexists(tmp_path / "link")
    assert files.read("keep/a.md") == b"a"
    files.write("x/y/z.md", b"z")
    files.remove("x/y/z.md")
    assert not (tmp_path / "x").exists()  # folders left empty are pruned
    assert tmp_path.is_dir()


def test_chmod_of_a_named_pipe_returns_at_once(tmp_path: Path) -> None:
    # A cloned tree can hold a FIFO; opening one without O_NONBLOCK waits for a writer.
    os.mkfifo(tmp_path / "pipe")
    done = threading.Thread(target=RootFiles(tmp_path).chmod, args=("pipe", 0o600), daemon=True)
    done.start()
    done.join(timeout=20)
    if done.is_alive():  # let the blocked open go (a writer arrives), then fail
        os.close(os.open(tmp_path / "pipe", os.O_WRONLY | os.O_NONBLOCK))
        done.join()
        pytest.fail("chmod waited on the pipe")
    assert stat.S_IMODE(os.stat(tmp_path / "pipe").st_mode) == 0o600
