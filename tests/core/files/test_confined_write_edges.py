"""Atomic writes and flushes at their edges: the size limit, the bits a file gets, where the
temporary file lives and who may read it, what is left after a failed write, which file
and folder each flush reaches, and what a flush of a whole filesystem reports."""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from contextfs.errors import ContentError, ContextFSError
from contextfs.files import confined, durability, paths
from contextfs.files.confined import TMP_SUFFIX, RootFiles
from contextfs.files.durability import Unflushed
from contextfs.files.staged import Found

Flushed = list[tuple[int, int]]  # the ``flushed`` fixture (conftest.py)


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory outside the root: nothing may land there by a relative name."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _ident(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _temporaries(*folders: Path) -> list[str]:
    return sorted(
        str(folder / name)
        for folder in folders
        for name in os.listdir(folder)
        if name.endswith(TMP_SUFFIX)
    )


def _fake_syncfs(result: int, err: int = 0) -> Callable[[int], int]:
    """A syncfs that reports ``err`` through errno, as the C library's does."""

    def syncfs(fd: int) -> int:
        os.fstat(fd)  # called on an open descriptor
        ctypes.set_errno(err)
        return result

    return syncfs


# ------------------------------------------------------------------ the write itself


def test_content_exactly_at_the_limit_is_written_and_one_byte_more_is_refused(
    tmp_path: Path,
) -> None:
    files = RootFiles(tmp_path, durable=False)
    files.write("a.md", b"x" * 10, max_bytes=10)
    assert files.read("a.md") == b"x" * 10
    with pytest.raises(ContentError, match="11 bytes, over the 10-byte limit"):
        files.write("a.md", b"y" * 11, max_bytes=10)
    assert files.read("a.md") == b"x" * 10
    assert _temporaries(tmp_path) == []


@pytest.mark.usefixtures("umask_022")
def test_a_new_file_gets_0644_an_existing_one_keeps_its_bits_and_a_link_is_replaced_not_followed(
    tmp_path: Path, fd_ops: bool
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    files = RootFiles(root, durable=False)
    files.write("new.md", b"n")
    assert stat.S_IMODE(os.stat(root / "new.md").st_mode) == 0o644
    (root / "run.sh").write_bytes(b"#!/bin/sh\n")
    (root / "run.sh").chmod(0o750)
    files.write("run.sh", b"#!/bin/sh\necho\n")
    assert stat.S_IMODE(os.stat(root / "run.sh").st_mode) == 0o750
    # A link at the name is replaced by a file of its own; its target (outside the root,
    # executable) keeps its bytes, and its bits are not copied.
    target = tmp_path / "outside.sh"
    target.write_bytes(b"theirs")
    target.chmod(0o755)
    os.symlink(target, root / "linked.md")
    files.write("linked.md", b"mine")
    assert not os.path.islink(root / "linked.md")
    assert (root / "linked.md").read_bytes() == b"mine"
    assert stat.S_IMODE(os.stat(root / "linked.md").st_mode) == 0o644
    assert target.read_bytes() == b"theirs"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


@pytest.mark.parametrize(
    "name",
    ["a" * 255, "é" * 127, "日" * 85, "a" + "日" * 84],
    ids=["ascii-255", "two-byte-254", "three-byte-255", "cut-inside-a-character"],
)
def test_the_longest_names_the_path_gate_takes_can_be_written(
    tmp_path: Path, fd_ops: bool, name: str
) -> None:
    rel = paths.check(tmp_path, f"notes/{name}")  # the gate takes names up to 255 bytes
    files = RootFiles(tmp_path, durable=False)
    files.write(rel, b"one")
    files.write(rel, b"two")
    assert files.read(rel) == b"two"
    assert os.listdir(tmp_path / "notes") == [name]


@pytest.mark.usefixtures("umask_022")
def test_the_temporary_file_is_beside_the_target_and_only_its_owner_may_read_it(
    tmp_path: Path, fd_ops: bool, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    files = RootFiles(root, durable=False)
    files.write("notes/a.md", b"old")
    seen: list[tuple[list[str], int]] = []
    real = confined.write_all

    def watch(fd: int, data: bytes) -> None:
        # While the bytes are being written: where the temporary file is, and its bits.
        seen.append((_temporaries(root / "notes", elsewhere), stat.S_IMODE(os.fstat(fd).st_mode)))
        real(fd, data)

    monkeypatch.setattr(confined, "write_all", watch)
    beside: list[list[str]] = []
    files.write(
        "notes/a.md",
        b"secret",
        before_replace=lambda _staged, _found: bool(
            beside.append(_temporaries(root / "notes", elsewhere))
        ),  # False: put it in place
    )
    [(during, mode)] = seen
    assert len(during) == 1
    assert during[0].startswith(str(root / "notes" / ".a.md."))
    assert mode == 0o600
    assert beside == [during]  # still there, beside the file, just before it replaces it
    assert files.read("notes/a.md") == b"secret"
    assert _temporaries(root / "notes", elsewhere) == []
    assert stat.S_IMODE(os.stat(root / "notes" / "a.md").st_mode) == 0o644


def test_a_link_planted_at_the_temporary_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    files = RootFiles(root, durable=False)
    files.write("a.md", b"old")
    # Somebody who can guess the random part plants a link there, aimed outside the root.
    monkeypatch.setattr(confined.secrets, "token_hex", lambda _n=None: "abababab")
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"theirs")
    planted = root / f".a.md.abababab{TMP_SUFFIX}"
    os.symlink(victim, planted)
    with pytest.raises(ContextFSError):
        files.write("a.md", b"mine")
    assert victim.read_bytes() == b"theirs"
    assert os.path.islink(planted)
    assert files.read("a.md") == b"old"


# ------------------------------------------------------------------ after a failed write


class Refused(ContextFSError):
    pass


def test_a_write_refused_just_before_it_replaces_the_file_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, fd_ops: bool, elsewhere: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    files = RootFiles(root, durable=False)
    files.write("notes/a.md", b"old")

    def refuse(_staged: int | None, _found: Found) -> bool | None:
        raise Refused("saved by somebody meanwhile")

    with pytest.raises(Refused, match="meanwhile"):
        files.write("notes/a.md", b"new", before_replace=refuse)
    assert files.read("notes/a.md") == b"old"
    assert _temporaries(root / "notes", elsewhere) == []


def test_a_write_whose_temporary_file_vanished_fails_with_a_typed_error_leaving_the_old_file(
    tmp_path: Path, fd_ops: bool
) -> None:
    files = RootFiles(tmp_path, durable=False)
    files.write("notes/a.md", b"old")

    def sweep(_staged: int | None, _found: Found) -> bool | None:
        for path in _temporaries(tmp_path / "notes"):
            os.unlink(path)
        return False

    with pytest.raises(ContentError, match="notes/a.md"):
        files.write("notes/a.md", b"new", before_replace=sweep)
    assert files.read("notes/a.md") == b"old"


# ------------------------------------------------------------------ what is flushed


def test_a_write_outside_a_change_flushes_its_bytes_before_they_replace_the_file_then_its_folder(
    tmp_path: Path, flushed: Flushed, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = RootFiles(tmp_path)
    files.write("notes/a.md", b"old")
    replaced_when_flushed: list[bytes] = []
    real = os.fsync

    def note(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            replaced_when_flushed.append((tmp_path / "notes" / "a.md").read_bytes())
        real(fd)

    monkeypatch.setattr(os, "fsync", note)
    flushed.clear()
    monkeypatch.setattr(durability.FLUSHES, "calls", 10)
    files.write("notes/a.md", b"new")
    assert replaced_when_flushed == [b"old"]  # the bytes were flushed before the rename
    assert flushed == [_ident(tmp_path / "notes" / "a.md"), _ident(tmp_path / "notes")]
    assert durability.FLUSHES.calls == 12


def test_inside_a_change_each_write_is_staged_flushed_once_then_renamed_in_place(
    tmp_path: Path, flushed: Flushed, elsewhere: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    files = RootFiles(root)
    files.write("a.md", b"old")
    files.write("Xylo/deep/b.md", b"old")
    # No anchor: the flush reaches each file and folder by name (as where syncfs is missing).
    files.unflushed = Unflushed()
    told: list[int | None] = []

    def hook(staged_at: int | None, _found: Found) -> bool | None:
        told.append(staged_at)
        return False

    files.write("a.md", b"first")
    first = _temporaries(root)
    assert len(first) == 1
    files.write("a.md", b"second", before_replace=hook)  # the first staged file is dropped
    files.write("Xylo/deep/b.md", b"new")
    staged = _temporaries(root, root / "Xylo" / "deep")
    assert len(staged) == 2 and first[0] not in staged
    assert _temporaries(elsewhere) == []
    assert (root / "a.md").read_bytes() == b"old"  # nothing in place before the publish
    idents = {path: _ident(Path(path)) for path in staged}
    staged_at = {path: os.stat(path).st_ctime_ns for path in staged}
    flushed.clear()
    files.publish()
    assert set(idents.values()) <= set(flushed)  # both staged files flushed, by name
    assert (root / "a.md").read_bytes() == b"second"
    assert (root / "Xylo" / "deep" / "b.md").read_bytes() == b"new"
    [a_tmp] = [path for path in staged if "/.a.md." in path]
    assert told == [staged_at[a_tmp]]  # the hook learns when the bytes were staged
    assert _temporaries(root, root / "Xylo" / "deep", elsewhere) == []


def test_a_staged_file_removed_meanwhile_does_not_stop_the_next_write_of_its_path(
    tmp_path: Path,
) -> None:
    files = RootFiles(tmp_path)
    files.unflushed = Unflushed()
    files.write("a.md", b"first")
    [first] = _temporaries(tmp_path)
    os.unlink(first)  # swept by somebody
    files.write("a.md", b"second")
    files.publish()
    assert (tmp_path / "a.md").read_bytes() == b"second"
    assert _temporaries(tmp_path) == []


# ------------------------------------------------------------------ durability


def test_each_fsync_is_counted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(durability.FLUSHES, "calls", 10)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        durability.fsync_fd(fd)
    finally:
        os.close(fd)
    assert durability.FLUSHES.calls == 11
    durability.fsync_path(tmp_path)
    assert durability.FLUSHES.calls == 12


def test_a_syncfs_is_counted_once_and_reaches_the_filesystem_of_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reached: list[tuple[int, int]] = []

    def syncfs(fd: int) -> int:
        st = os.fstat(fd)
        reached.append((st.st_dev, st.st_ino))
        return 0

    monkeypatch.setattr(durability, "_SYNCFS", syncfs)
    monkeypatch.setattr(durability.FLUSHES, "calls", 10)
    assert durability.sync_filesystem(tmp_path) is True
    assert reached == [_ident(tmp_path)]
    assert durability.FLUSHES.calls == 11
    # A path that cannot be opened flushes nothing there: the caller flushes by name.
    assert durability.sync_filesystem(tmp_path / "gone") is False
    assert reached == [_ident(tmp_path)]
    assert durability.FLUSHES.calls == 11


def test_a_write_error_syncfs_reports_is_raised(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(durability, "_SYNCFS", _fake_syncfs(-1, errno.EIO))
    with pytest.raises(OSError) as info:
        durability.sync_filesystem(tmp_path)
    assert info.value.errno == errno.EIO
    unflushed = Unflushed(tmp_path)
    unflushed.add(tmp_path)
    with pytest.raises(OSError):
        unflushed.flush()


@pytest.mark.parametrize("err", [errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP])
def test_a_filesystem_without_syncfs_is_flushed_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flushed: Flushed, err: int
) -> None:
    monkeypatch.setattr(durability, "_SYNCFS", _fake_syncfs(-1, err))
    assert durability.sync_filesystem(tmp_path) is False
    (tmp_path / "a.md").write_bytes(b"a")
    unflushed = Unflushed(tmp_path)
    unflushed.add(tmp_path / "a.md", tmp_path)
    unflushed.flush()
    assert flushed == [_ident(tmp_path / "a.md"), _ident(tmp_path)]


def test_a_flush_by_name_skips_a_path_gone_since_and_flushes_the_rest(
    tmp_path: Path, flushed: Flushed
) -> None:
    (tmp_path / "a.md").write_bytes(b"a")
    (tmp_path / "b.md").write_bytes(b"b")
    unflushed = Unflushed()  # no anchor: nothing to syncfs, each path is flushed by name
    unflushed.add(tmp_path / "gone.md", tmp_path / "a.md", tmp_path / "a.md", tmp_path / "b.md")
    unflushed.flush()
    assert flushed == [_ident(tmp_path / "a.md"), _ident(tmp_path / "b.md")]
    unflushed.flush()  # flushed once: nothing is left
    assert len(flushed) == 2


def test_an_unflushed_set_is_durable_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flushed: Flushed
) -> None:
    monkeypatch.setattr(durability, "_SYNCFS", None)
    (tmp_path / "a.md").write_bytes(b"a")
    durable = Unflushed(tmp_path)
    durable.add(tmp_path / "a.md")
    durable.flush()
    assert flushed == [_ident(tmp_path / "a.md")]
    scratch = Unflushed(tmp_path, durable=False)
    scratch.add(tmp_path / "a.md")
    scratch.flush()
    assert len(flushed) == 1


def _other_filesystem(path: Path) -> str | None:
    device = os.stat(path).st_dev
    for candidate in ("/proc", "/dev/shm", "/dev", "/sys", "/run"):
        try:
            if os.stat(candidate).st_dev != device:
                return candidate
        except OSError:
            continue
    return None


def test_anchors_keep_one_per_filesystem_and_skip_missing_ones(tmp_path: Path) -> None:
    (tmp_path / "git").mkdir()
    assert Unflushed(tmp_path / "gone", tmp_path, tmp_path / "git").anchors == [str(tmp_path)]
    other = _other_filesystem(tmp_path)
    if other is None:
        pytest.skip("no second filesystem here")
    assert Unflushed(tmp_path, tmp_path / "git", other).anchors == [str(tmp_path), other]
