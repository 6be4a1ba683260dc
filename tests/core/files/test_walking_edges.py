"""Listing and walking a folder of the root at their edges: what a listing names, refuses and
never makes, staged writes a listing puts in place (and only those), and a tree that changes
while it is walked: a file removed, a folder swapped for a link, the root swapped for a link."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from contextfs.errors import InvalidPathError
from contextfs.files.confined import RootFiles
from contextfs.files.durability import Unflushed
from contextfs.files.walking import walk_fd


def _make(root: Path, rels: list[str]) -> None:
    for rel in rels:
        full = root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(rel)


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder, outside the root and holding names of its own: a listing that
    resolved a name against it instead of the root's folder would show them."""
    cwd = tmp_path / "cwd"
    _make(cwd, ["notes/stray.md", "stray.md"])
    monkeypatch.chdir(cwd)
    return cwd


@pytest.mark.usefixtures("elsewhere")
def test_listdir_names_the_entries_of_a_folder_and_a_missing_folder_is_empty_and_not_made(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    _make(root, ["a.md", "notes/b.md", "notes/deep/c.md"])
    files = RootFiles(root, durable=False)
    assert sorted(files.listdir("")) == ["a.md", "notes"]
    assert sorted(files.listdir("notes")) == ["b.md", "deep"]
    assert files.listdir("notes/deep") == ["c.md"]
    assert files.listdir("missing") == []
    assert files.listdir("notes/missing") == []
    assert files.listdir("missing/deeper") == []
    # Looking is never making: no folder appears for a listing of a missing one.
    assert not (root / "missing").exists()
    assert sorted(os.listdir(root / "notes")) == ["b.md", "deep"]


def test_listdir_refuses_a_linked_folder_or_a_file_naming_the_path_asked_for(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    _make(root, ["notes/a.md", "notes/sub/b.md"])
    outside = tmp_path / "outside"
    _make(outside, ["secret.md"])
    os.symlink(outside, root / "notes" / "linked")
    files = RootFiles(root, durable=False)
    with pytest.raises(InvalidPathError, match="'notes/linked'.*symlink"):
        files.listdir("notes/linked")
    with pytest.raises(InvalidPathError, match="'notes/a.md'.*is a file, not a folder"):
        files.listdir("notes/a.md")


def test_a_change_s_staged_write_is_put_in_place_by_a_listing_of_its_folder_only(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    _make(root, ["other/x.md"])
    files = RootFiles(root, durable=False)
    files.unflushed = Unflushed(root, durable=False)  # as a change does: writes are staged
    files.write("notes/a.md", b"a")
    assert not (root / "notes" / "a.md").exists()  # staged beside it, not in place
    # A folder that holds no staged write is listed as it is; the staged write waits.
    assert files.listdir("other") == ["x.md"]
    assert files.listdir("notes/sub") == []
    assert not (root / "notes" / "a.md").exists()
    # Listing its folder puts it in place first: the listing names it, not its staging file.
    assert files.listdir("notes") == ["a.md"]
    assert (root / "notes" / "a.md").read_bytes() == b"a"
    # A folder above a staged write holds it too, down to the root.
    files.write("notes/deep/b.md", b"b")
    assert sorted(files.listdir("notes")) == ["a.md", "deep"]
    assert (root / "notes" / "deep" / "b.md").read_bytes() == b"b"
    files.write("top.md", b"t")
    assert sorted(files.listdir("")) == ["notes", "other", "top.md"]
    assert (root / "top.md").read_bytes() == b"t"


def test_a_listing_of_the_root_names_the_folder_it_opened_while_the_root_is_swapped_for_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    _make(root, ["a.md"])
    outside = tmp_path / "outside"
    _make(outside, ["secret.md"])
    files = RootFiles(root, durable=False)
    real_open = os.open

    def swap_after_opening_the_root(path: object, *args: object, **kwargs: object) -> int:
        fd = real_open(path, *args, **kwargs)  # type: ignore[arg-type]
        if path == root and not root.is_symlink():
            # Someone swaps the root for a link just after it was opened.
            root.rename(tmp_path / "aside")
            root.symlink_to(outside)
        return fd

    monkeypatch.setattr(os, "open", swap_after_opening_the_root)
    assert files.listdir("") == ["a.md"]
    assert root.is_symlink()  # the swap did happen during the listing


def test_walk_fd_closes_a_descriptor_it_cannot_list(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    fd = os.open(tmp_path / "a.md", os.O_RDONLY)  # not a folder: scandir fails on it
    assert list(walk_fd(fd, "", frozenset(), top=True)) == []
    with pytest.raises(OSError) as caught:
        os.fstat(fd)
    assert caught.value.errno == errno.EBADF


@pytest.mark.usefixtures("fd_ops")
def test_a_file_removed_while_its_folder_is_walked_is_skipped_and_the_rest_still_listed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    _make(root, ["a.md", "b.md", "c.md", "sub/d.md"])
    walk = RootFiles(root, durable=False).walk()
    assert next(walk).rel == "a.md"
    (root / "b.md").unlink()  # listed already, gone before its status is taken
    assert [st.rel for st in walk] == ["c.md", "sub/d.md"]


@pytest.mark.usefixtures("fd_ops")
def test_a_folder_swapped_for_a_link_while_the_walk_runs_is_skipped_never_entered(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    _make(root, ["x.md", "one/f.md", "two/g.md", "three/h.md"])
    outside = tmp_path / "outside"
    _make(outside, ["secret.md"])
    walk = RootFiles(root, durable=False).walk()
    assert next(walk).rel == "x.md"
    # Listed as folders already; now one becomes a link out of the root, one vanishes.
    (root / "one").rename(tmp_path / "one-aside")
    (root / "one").symlink_to(outside)
    (root / "three").rename(tmp_path / "three-aside")
    assert [st.rel for st in walk] == ["two/g.md"]
