"""The confined file layer's looking, removing and reading at their edges: what ``kind`` and
``lstat`` report for links, pipes and sockets, what a read inside a change sees, the exact
read limit, how far a removal prunes, and that a root is durable unless told otherwise."""

from __future__ import annotations

import os
import socket
import stat
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextfs.errors import ContentError, InvalidPathError
from contextfs.files.confined import MAX_READ_BYTES, RootFiles
from contextfs.files.durability import Unflushed


@pytest.fixture
def files(tmp_path: Path) -> RootFiles:
    return RootFiles(tmp_path, durable=False)


@pytest.fixture
def in_change(files: RootFiles) -> Iterator[RootFiles]:
    """``files`` with a change running in this thread: its writes are staged, not in place."""
    files.unflushed = Unflushed(files.root, durable=False)
    try:
        yield files
    finally:
        files.discard()
        files.unflushed = None


def _socket(folder: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> socket.socket:
    # Bound by a relative name: a socket's full path may be at most 107 bytes.
    monkeypatch.chdir(folder)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(name)
    return sock


# ------------------------------------------------------------ kind and lstat
def test_kind_names_files_folders_links_and_what_lies_behind_a_link(
    files: RootFiles, tmp_path: Path
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("a")
    os.symlink(tmp_path / "real", tmp_path / "linked")
    os.symlink(tmp_path / "real" / "a.md", tmp_path / "alias.md")
    os.symlink(tmp_path / "gone.md", tmp_path / "dangling.md")
    assert files.kind("real") == "dir"
    assert files.kind("real/a.md") == "file"
    assert files.kind("real/none.md") is None
    assert files.kind("linked") == "link"
    assert files.kind("alias.md") == "link"
    assert files.kind("dangling.md") == "link"
    # Behind a linked folder nothing is looked at: the path is a link's, whatever it names.
    assert files.kind("linked/a.md") == "link"
    assert files.kind("linked/none.md") == "link"


def test_kind_of_a_pipe_or_a_socket_is_other(
    files: RootFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(tmp_path / "pipe")
    with _socket(tmp_path, "sock", monkeypatch):
        assert files.kind("pipe") == "other"
        assert files.kind("sock") == "other"


def test_reading_a_pipe_or_a_socket_is_refused_as_no_plain_file(
    files: RootFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(tmp_path / "pipe")
    with _socket(tmp_path, "sock", monkeypatch):
        for rel in ("pipe", "sock"):
            with pytest.raises(InvalidPathError) as refused:
                files.read(rel)
            assert str(refused.value).startswith(f"{rel} is not a regular file;")


def test_lstat_reports_a_link_itself_and_the_root_as_the_folder_it_is(
    files: RootFiles, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text("a")
    os.symlink(tmp_path / "a.md", tmp_path / "alias.md")
    st = files.lstat("alias.md")
    assert st is not None and stat.S_ISLNK(st.st_mode)
    assert st.st_ino == os.lstat(tmp_path / "alias.md").st_ino != os.stat(tmp_path / "a.md").st_ino
    root = files.lstat("")
    assert root is not None and stat.S_ISDIR(root.st_mode)
    assert root.st_ino == os.stat(tmp_path).st_ino
    assert files.kind("") == "dir"
    assert files.lstat("none.md") is None


# ------------------------------------------------------------ inside a change
def test_lstat_of_a_file_written_in_the_change_reports_it_once_in_place(
    in_change: RootFiles, tmp_path: Path
) -> None:
    in_change.write("notes/new.md", b"fresh")
    assert not (tmp_path / "notes" / "new.md").exists()  # staged, not in place yet
    st = in_change.lstat("notes/new.md")
    assert st is not None and st.st_size == len(b"fresh")
    assert st.st_ino == os.lstat(tmp_path / "notes" / "new.md").st_ino
    assert (tmp_path / "notes" / "new.md").read_bytes() == b"fresh"


def test_a_read_in_a_change_sees_its_staged_write_unless_asked_for_what_is_on_disk(
    in_change: RootFiles, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_bytes(b"saved")
    in_change.write("a.md", b"staged")
    assert in_change.read("a.md") == b"staged"
    data, st = in_change.read_stat("a.md", staged=False)
    assert data == b"saved"
    assert st is not None and st.st_ino == os.stat(tmp_path / "a.md").st_ino
    assert in_change.read_stat("new.md", staged=False) == (None, None)


def test_disk_rel_gives_the_on_disk_spelling_in_a_change_as_outside_one(
    in_change: RootFiles, tmp_path: Path
) -> None:
    composed = unicodedata.normalize("NFC", "café.md")
    decomposed = unicodedata.normalize("NFD", composed)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / decomposed).write_text("saved under its decomposed name")
    in_change.write(f"old/{composed}", b"staged over it")
    in_change.write(f"new/{composed}", b"a new file")
    assert in_change.disk_rel(f"old/{composed}") == f"old/{decomposed}"
    assert in_change.disk_rel(f"new/{composed}") == f"new/{composed}"
    # Callers read by the spelling disk_rel gives (the path gate does): the staged bytes.
    assert in_change.read(in_change.disk_rel(f"old/{composed}")) == b"staged over it"
    in_change.publish()
    assert in_change.disk_rel(f"old/{composed}") == f"old/{decomposed}"
    assert in_change.disk_rel(f"new/{composed}") == f"new/{composed}"
    assert os.listdir(tmp_path / "old") == [decomposed]


# ------------------------------------------------------------ reading
def test_a_file_over_a_read_chunk_is_read_whole(files: RootFiles, tmp_path: Path) -> None:
    data = bytes(range(256)) * 8192 + b"tail"  # 2 MiB and 4 bytes: three reads of 1 MiB
    (tmp_path / "big.bin").write_bytes(data)
    got, st = files.read_stat("big.bin")
    assert got == data
    assert st is not None and st.st_size == len(data)


def test_a_file_of_exactly_the_read_limit_is_read_and_one_byte_more_is_refused(
    files: RootFiles, tmp_path: Path
) -> None:
    big = tmp_path / "big.bin"
    with big.open("wb") as out:  # sparse: no disk space taken
        out.truncate(MAX_READ_BYTES)
    got = files.read("big.bin")
    assert got is not None and len(got) == MAX_READ_BYTES
    del got
    with big.open("r+b") as out:
        out.truncate(MAX_READ_BYTES + 1)
    with pytest.raises(ContentError) as refused:
        files.read("big.bin")
    assert str(refused.value).startswith(f"big.bin is {MAX_READ_BYTES + 1} bytes, too large")


# ------------------------------------------------------------ removing
def test_removing_the_last_file_prunes_every_folder_it_leaves_empty_up_to_a_kept_one(
    files: RootFiles, tmp_path: Path
) -> None:
    (tmp_path / "a" / "b" / "c" / "d").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "d" / "f.md").write_text("f")
    (tmp_path / "a" / "keep.md").write_text("k")
    (tmp_path / "x" / "y" / "z").mkdir(parents=True)
    (tmp_path / "x" / "y" / "z" / "g.md").write_text("g")
    files.remove("a/b/c/d/f.md")
    assert sorted(os.listdir(tmp_path / "a")) == ["keep.md"]
    files.remove("x/y/z/g.md")
    assert not (tmp_path / "x").exists()
    assert tmp_path.is_dir()  # never the root


def test_a_root_is_durable_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for rel in ("notes/a.md", "notes/b.md"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("x")
    flushed: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    RootFiles(tmp_path).remove("notes/a.md")
    # The unlink is an entry of its folder: flushed before the removal returns.
    assert flushed == [str(tmp_path / "notes")]
    RootFiles(tmp_path, durable=False).remove("notes/b.md")
    assert flushed == [str(tmp_path / "notes")]


# ------------------------------------------------------------ chmod in a change
def test_chmod_of_a_folder_in_a_change_puts_what_is_staged_under_it_in_place_first(
    in_change: RootFiles, tmp_path: Path
) -> None:
    """A folder made read-only would refuse the renames that put its staged files in place
    later (to anyone but root), so chmod of a folder with staged files under it puts the
    change's files in place before it sets the bits; chmod of another folder leaves them
    staged."""
    in_change.write("other/b.md", b"elsewhere")
    (tmp_path / "plain").mkdir()
    in_change.chmod("plain", 0o700)
    assert not (tmp_path / "other" / "b.md").exists()  # nothing staged under 'plain'
    in_change.write("locked/deep/a.md", b"under the folder")
    in_change.chmod("locked", 0o555)
    try:
        assert (tmp_path / "locked" / "deep" / "a.md").read_bytes() == b"under the folder"
        assert stat.S_IMODE(os.stat(tmp_path / "locked").st_mode) == 0o555
    finally:
        os.chmod(tmp_path / "locked", 0o755)


def test_disk_rel_of_an_ascii_path_is_the_path_itself_without_a_lookup(
    files: RootFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only Unicode names can be spelled differently on disk (NFC/NFD), so an ASCII path is
    its own spelling: given as it is, with no folder opened (git's paths are asked for one
    by one), even where a lookup would refuse the path (under a link, under a file)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to("real")
    (tmp_path / "a.md").write_bytes(b"a file")
    opened: list[object] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    for rel in ("via/x.md", "a.md/x.md", "missing/x.md", "notes/Mixed Case.md", ""):
        assert files.disk_rel(rel) == rel
    assert opened == []
