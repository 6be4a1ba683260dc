"""The renames that keep what they replace: ``renameat2`` exchange and no-replace, and the
plain rename contextfs falls back to where they are missing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextfs import ContextManager, InvalidPathError
from contextfs.files import swapping
from contextfs.files.confined import RootFiles

linux_only = pytest.mark.skipif(
    swapping._renameat2() is None, reason="renameat2 is a Linux call (glibc 2.28+)"
)


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[int]:
    """A folder holding ``a`` (b"A") and ``b`` (b"B"), open as a descriptor."""
    (tmp_path / "a").write_bytes(b"A")
    (tmp_path / "b").write_bytes(b"B")
    fd = os.open(tmp_path, os.O_RDONLY)
    yield fd
    os.close(fd)


@linux_only
def test_exchange_swaps_two_files_and_says_when_one_is_missing(folder: int, tmp_path: Path) -> None:
    assert swapping.exchange(folder, "a", "b") is True
    assert swapping.read(folder, "a") == b"B" and swapping.read(folder, "b") == b"A"
    assert swapping.exchange(folder, "a", "missing") is False
    assert swapping.read(folder, "a") == b"B"  # nothing moved
    # Without a folder descriptor the names are whole paths.
    assert swapping.exchange(-1, str(tmp_path / "a"), str(tmp_path / "b")) is True
    assert (tmp_path / "a").read_bytes() == b"A"


@linux_only
def test_place_new_never_replaces_a_file(folder: int) -> None:
    assert swapping.place_new(folder, "a", "b") is False
    assert swapping.read(folder, "b") == b"B" and swapping.read(folder, "a") == b"A"
    assert swapping.place_new(folder, "a", "free") is True
    assert swapping.read(folder, "free") == b"A" and swapping.read(folder, "a") is None


def test_read_is_none_for_a_link_or_a_folder(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"T")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    (tmp_path / "folder").mkdir()
    assert swapping.read(-1, str(tmp_path / "link")) is None
    assert swapping.read(-1, str(tmp_path / "folder")) is None
    assert swapping.read(-1, str(tmp_path / "target")) == b"T"


@linux_only
def test_other_failures_are_raised(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"F")
    (tmp_path / "b").write_bytes(b"B")
    with pytest.raises(NotADirectoryError):  # a name under a file: not a race, an error
        swapping.exchange(-1, str(tmp_path / "file" / "x"), str(tmp_path / "b"))


def test_without_the_call_every_write_path_falls_back_to_a_plain_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``renameat2`` is missing (macOS, an old C library) or the file system refuses its
    flags, a write is a plain rename again: everything works, with the moment's gap."""
    monkeypatch.setattr(swapping, "_renameat2", lambda: None)
    assert swapping.exchange(-1, "a", "b") is None and swapping.place_new(-1, "a", "b") is None
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        ctx.write("notes/a.md", "one\n")
        ctx.write("notes/a.md", "two\n")
        ctx.append("notes/a.md", "three\n")
        ctx.move("notes/a.md", "notes/b.md")
        ctx.delete("notes/b.md")
        assert [e.original_path for e in ctx.trash()] == ["notes/b.md"]
        [entry] = ctx.trash()
        assert ctx.parts.files.read(entry.stored_path).endswith(b"\ntwo\nthree\n")
        assert ctx.history("notes/a.md", limit=1)[0].op == "move"


def test_read_brings_a_file_of_several_chunks_whole(tmp_path: Path) -> None:
    data = os.urandom(3 * (1 << 20) + 7)  # more than one 1 MiB read
    (tmp_path / "big").write_bytes(data)
    assert swapping.read(-1, str(tmp_path / "big")) == data


def test_remove_returns_what_it_took_and_nothing_for_a_link(tmp_path: Path) -> None:
    """A removal renames the file aside and reads it before unlinking: the caller learns what
    was there at that instant; a link is removed, never followed or read."""
    files = RootFiles(tmp_path, durable=False)
    files.write("notes/a.md", b"kept bytes")
    data, st = files.remove("notes/a.md")
    assert data == b"kept bytes" and st is not None and st.st_size == 10
    (tmp_path / "target.md").write_bytes(b"outside")
    (tmp_path / "link.md").symlink_to(tmp_path / "target.md")
    assert files.remove("link.md") == (None, None)
    assert not (tmp_path / "link.md").is_symlink() and (tmp_path / "target.md").exists()
    assert files.remove("missing.md") == (None, None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target.md"]  # nothing left aside


@linux_only
def test_place_new_moves_between_two_folders_only_while_the_name_is_free(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "dst").mkdir()
    (tmp_path / "src" / "a").write_bytes(b"A")
    (tmp_path / "dst" / "taken").write_bytes(b"T")
    src, dst = os.open(tmp_path / "src", os.O_RDONLY), os.open(tmp_path / "dst", os.O_RDONLY)
    try:
        assert swapping.place_new(src, "a", "taken", into=dst) is False
        assert (tmp_path / "dst" / "taken").read_bytes() == b"T"
        assert swapping.place_new(src, "a", "free", into=dst) is True
        assert (tmp_path / "dst" / "free").read_bytes() == b"A"
        assert not (tmp_path / "src" / "a").exists() and not (tmp_path / "dst" / "a").exists()
    finally:
        os.close(src)
        os.close(dst)


@pytest.mark.parametrize("fd_ops", [True, False], indirect=True, ids=["dir_fd", "paths"])
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_file_saved_at_a_moves_destination_in_the_moment_is_never_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fd_ops: bool, what: str
) -> None:
    """Somebody saves a file where a move is going, just before the rename itself: the move
    is refused and their file stays (a plain rename would destroy it unseen)."""
    files = RootFiles(tmp_path, durable=False)
    if what == "file":
        files.write("notes/a.md", b"moved")
    else:
        files.write("notes/a/x.md", b"moved")
    destination = tmp_path / "done" / "b.md"
    saved = []

    def person_saves() -> None:
        if not saved and destination.parent.is_dir():
            destination.write_bytes(b"theirs")
            saved.append(True)

    real_rename, real_call = os.rename, swapping._renameat2()

    def rename(*args: object, **kwargs: object) -> None:
        person_saves()
        real_rename(*args, **kwargs)  # type: ignore[arg-type]

    def call(*args: object) -> int:
        person_saves()
        assert real_call is not None
        return real_call(*args)

    monkeypatch.setattr(os, "rename", rename)
    if real_call is not None:
        monkeypatch.setattr(swapping, "_renameat2", lambda: call)
    source = "notes/a.md" if what == "file" else "notes/a"
    with pytest.raises(InvalidPathError, match="already exists"):
        files.rename(source, "done/b.md")
    assert saved and destination.read_bytes() == b"theirs"
    assert files.read("notes/a.md" if what == "file" else "notes/a/x.md") == b"moved"


def test_read_where_the_platform_has_no_nofollow_flag_still_reads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").write_bytes(b"A")
    monkeypatch.delattr(os, "O_NOFOLLOW")
    assert swapping.read(-1, str(tmp_path / "a")) == b"A"


@linux_only
def test_without_a_folder_descriptor_names_are_taken_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-1 stands for no folder: a relative name is the working directory's, as for os.open."""
    (tmp_path / "a").write_bytes(b"A")
    (tmp_path / "b").write_bytes(b"B")
    monkeypatch.chdir(tmp_path)
    assert swapping.read(-1, "a") == b"A"
    assert swapping.exchange(-1, "a", "b") is True
    assert swapping.place_new(-1, "a", "c") is True
    assert swapping.place_new(-1, "c", "d", into=-1) is True
    assert (tmp_path / "b").read_bytes() == b"A" and (tmp_path / "d").read_bytes() == b"B"


@pytest.mark.parametrize("fd_ops", [True, False], indirect=True, ids=["dir_fd", "paths"])
@pytest.mark.parametrize("there", ["file", "dangling link"])
def test_without_the_call_a_move_still_never_replaces_its_destination(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fd_ops: bool, there: str
) -> None:
    monkeypatch.setattr(swapping, "_renameat2", lambda: None)
    files = RootFiles(tmp_path, durable=False)
    files.write("notes/a.md", b"moved")
    destination = tmp_path / "done" / "b.md"
    destination.parent.mkdir()
    if there == "file":
        destination.write_bytes(b"theirs")
    else:
        destination.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InvalidPathError, match="already exists"):
        files.rename("notes/a.md", "done/b.md")
    assert destination.is_symlink() if there != "file" else destination.read_bytes() == b"theirs"
    files.rename("notes/a.md", "done/c.md")  # a free name: moved
    assert (tmp_path / "done" / "c.md").read_bytes() == b"moved"


def test_a_move_outside_a_change_flushes_both_folders(
    tmp_path: Path, flushed: list[tuple[int, int]]
) -> None:
    files = RootFiles(tmp_path)
    files.write("notes/a.md", b"moved")
    (tmp_path / "done").mkdir()
    flushed.clear()
    files.rename("notes/a.md", "done/a.md")
    for folder in (tmp_path / "notes", tmp_path / "done"):
        st = os.stat(folder)
        assert (st.st_dev, st.st_ino) in flushed
