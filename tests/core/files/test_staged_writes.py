"""A change's staged writes at their edges: dropping one write (a save superseded it), dropping
them all (the change is undone), a failure part way through putting them in place, and which
folder each one leaves to be flushed."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from contextfs import faults
from contextfs.errors import ContentError, ContextFSError, InvalidPathError
from contextfs.files import staged as staged_module
from contextfs.files.confined import TMP_SUFFIX, RootFiles
from contextfs.files.durability import Unflushed
from contextfs.files.staged import Found, replacing_only

Flushed = list[tuple[int, int]]  # the ``flushed`` fixture (conftest.py)


def _temporaries(*folders: Path) -> list[str]:
    return sorted(
        str(folder / name)
        for folder in folders
        if folder.is_dir()
        for name in os.listdir(folder)
        if name.endswith(TMP_SUFFIX)
    )


def _in_change(root: Path, *, durable: bool = False) -> RootFiles:
    files = RootFiles(root, durable=durable)
    files.write("a.md", b"old a")
    files.write("notes/b.md", b"old b")
    files.write("notes/c.md", b"old c")
    # No anchor: a flush reaches each added path by name (as where syncfs is missing), so
    # what is added is what gets flushed.
    files.unflushed = Unflushed(durable=durable)
    return files


def _stage_three(files: RootFiles) -> None:
    files.write("a.md", b"new a")
    files.write("notes/b.md", b"new b")
    files.write("notes/c.md", b"new c")
    assert len(_temporaries(files.root, files.root / "notes")) == 3


def _on_disk(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in ("a.md", "notes/b.md", "notes/c.md")}


def _folder_removed(root: Path, folder: str) -> None:
    """Somebody removes ``folder``, with the temporary files staged in it."""
    for path in _temporaries(root / folder):
        os.unlink(path)
    (root / folder).rmdir()


def _folder_made_a_link(root: Path, folder: str) -> Path:
    """Somebody moves ``folder`` out of the root and leaves a link to it: where it went."""
    elsewhere = root.parent / f"{root.name}-elsewhere"
    os.rename(root / folder, elsewhere)
    (root / folder).symlink_to(elsewhere)
    return elsewhere


# ------------------------------------------------------------------ unstage


def test_unstaging_a_path_drops_its_temporary_file_and_leaves_the_other_writes_staged(
    tmp_path: Path,
) -> None:
    files = _in_change(tmp_path)
    _stage_three(files)
    files.unstage("notes/b.md")
    left = _temporaries(tmp_path, tmp_path / "notes")
    assert len(left) == 2 and not any("/.b.md." in path for path in left)
    files.publish()
    assert _on_disk(tmp_path) == {"a.md": b"new a", "notes/b.md": b"old b", "notes/c.md": b"new c"}
    assert _temporaries(tmp_path, tmp_path / "notes") == []


def test_unstaging_a_path_with_no_staged_write_changes_nothing(tmp_path: Path) -> None:
    files = _in_change(tmp_path)
    files.write("notes/b.md", b"new b")
    files.unstage("notes/c.md")
    files.unstage("a.md")
    assert len(_temporaries(tmp_path / "notes")) == 1
    files.publish()
    assert _on_disk(tmp_path)["notes/b.md"] == b"new b"


def test_unstaging_under_a_folder_removed_or_made_a_link_meanwhile_is_quiet(
    tmp_path: Path,
) -> None:
    files = _in_change(tmp_path)
    files.write("notes/b.md", b"new b")
    files.write("gone/d.md", b"new d")
    # The folder of one staged write removed (its temporary file with it), the other's
    # swapped for a link: dropping them must neither fail nor follow the link.
    _folder_removed(tmp_path, "gone")
    elsewhere = _folder_made_a_link(tmp_path, "notes")
    files.unstage("gone/d.md")
    files.unstage("notes/b.md")
    assert len(_temporaries(elsewhere)) == 1  # not reached through the link
    files.publish()  # nothing left staged
    assert not (tmp_path / "gone").exists()


# ------------------------------------------------------------------ discard


def test_discarding_drops_every_staged_write_and_puts_none_in_place(tmp_path: Path) -> None:
    files = _in_change(tmp_path)
    _stage_three(files)
    files.discard()
    assert _temporaries(tmp_path, tmp_path / "notes") == []
    files.publish()  # nothing is left to publish
    assert _on_disk(tmp_path) == {"a.md": b"old a", "notes/b.md": b"old b", "notes/c.md": b"old c"}


def test_discarding_goes_on_past_a_write_whose_folder_is_now_a_link(tmp_path: Path) -> None:
    files = _in_change(tmp_path)
    files.write("notes/b.md", b"new b")  # staged first: its folder fails first
    files.write("a.md", b"new a")
    elsewhere = _folder_made_a_link(tmp_path, "notes")
    files.discard()
    assert _temporaries(tmp_path) == []  # the write after the failing one is dropped too
    assert len(_temporaries(elsewhere)) == 1  # nothing was removed through the link
    files.publish()
    assert (tmp_path / "a.md").read_bytes() == b"old a"


def test_discarding_goes_on_past_a_write_whose_folder_was_removed(tmp_path: Path) -> None:
    files = _in_change(tmp_path)
    files.write("gone/d.md", b"new d")
    files.write("a.md", b"new a")
    _folder_removed(tmp_path, "gone")
    files.discard()
    assert _temporaries(tmp_path) == []


# ------------------------------------------------------------------ publish fails part way


def test_a_write_that_cannot_be_put_in_place_names_its_path_and_the_rest_are_dropped(
    tmp_path: Path,
) -> None:
    files = _in_change(tmp_path)
    _stage_three(files)  # a.md, then notes/b.md, then notes/c.md
    [b_tmp] = [p for p in _temporaries(tmp_path / "notes") if "/.b.md." in p]
    os.unlink(b_tmp)  # swept by somebody: the rename into place fails
    with pytest.raises(ContextFSError, match="notes/b.md") as caught:
        files.publish()
    assert not isinstance(caught.value, OSError)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    # The write before it is in place; the one after it was dropped, not left behind.
    assert _on_disk(tmp_path) == {"a.md": b"new a", "notes/b.md": b"old b", "notes/c.md": b"old c"}
    assert _temporaries(tmp_path, tmp_path / "notes") == []
    files.publish()  # nothing is left staged to try again
    assert _on_disk(tmp_path)["notes/c.md"] == b"old c"


def test_a_typed_refusal_part_way_is_raised_as_it_is_and_the_rest_are_dropped(
    tmp_path: Path,
) -> None:
    files = _in_change(tmp_path)
    refusal = InvalidPathError("refused by the hook")

    def refuse(_staged_at: int | None, _found: Found) -> bool | None:
        raise refusal

    files.write("a.md", b"new a")
    files.write("notes/b.md", b"new b", before_replace=refuse)
    files.write("notes/c.md", b"new c")
    with pytest.raises(InvalidPathError) as caught:
        files.publish()
    assert caught.value is refusal
    assert _on_disk(tmp_path) == {"a.md": b"new a", "notes/b.md": b"old b", "notes/c.md": b"old c"}
    assert _temporaries(tmp_path, tmp_path / "notes") == []


def test_a_full_disk_part_way_is_the_typed_no_space_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _in_change(tmp_path)
    _stage_three(files)
    real = staged_module.StagedWrites._put_in_place

    def full(self: RootFiles, fd: int, tmp: str, name: str, disk: str, *rest: object) -> bool:
        if disk == "notes/c.md":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, fd, tmp, name, disk, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(staged_module.StagedWrites, "_put_in_place", full)
    with pytest.raises(ContentError, match="notes/c.md: no space left"):
        files.publish()
    assert _on_disk(tmp_path) == {"a.md": b"new a", "notes/b.md": b"new b", "notes/c.md": b"old c"}
    assert _temporaries(tmp_path, tmp_path / "notes") == []


# ------------------------------------------------------------------ which folder is flushed


def _ident(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def test_in_a_change_each_written_files_own_folder_is_flushed_with_it(
    tmp_path: Path, flushed: Flushed, fd_ops: bool
) -> None:
    files = _in_change(tmp_path, durable=True)
    flushed.clear()
    files.write("a.md", b"new a")
    files.write("notes/b.md", b"new b")
    files.publish()
    assert _ident(tmp_path / "notes") not in flushed  # left to the change's flush
    assert files.unflushed is not None
    files.unflushed.flush()
    assert _ident(tmp_path) in flushed and _ident(tmp_path / "notes") in flushed
    assert _ident(tmp_path.parent) not in flushed


def test_a_new_folder_made_in_a_change_is_flushed_in_its_own_parent(
    tmp_path: Path, flushed: Flushed
) -> None:
    files = _in_change(tmp_path, durable=True)
    flushed.clear()
    files.write("notes/deep/e.md", b"new e")
    files.publish()
    assert files.unflushed is not None
    files.unflushed.flush()
    # notes/ gained the folder deep/, and deep/ gained e.md: both entries are flushed.
    assert _ident(tmp_path / "notes") in flushed
    assert _ident(tmp_path / "notes" / "deep") in flushed
    assert _ident(tmp_path) not in flushed


def test_a_root_that_is_not_durable_leaves_no_folder_to_flush(
    tmp_path: Path, flushed: Flushed
) -> None:
    files = _in_change(tmp_path, durable=False)
    files.unflushed = Unflushed()  # one that would flush what it is given
    files.write("notes/b.md", b"new b")
    files.publish()
    flushed.clear()
    files.unflushed.flush()
    assert _ident(tmp_path / "notes") not in flushed and _ident(tmp_path) not in flushed
    files.unflushed = None
    flushed.clear()
    files.write("notes/c.md", b"new c")  # outside a change: nothing flushed at all
    assert flushed == []


def test_outside_a_change_a_folder_that_refuses_a_flush_does_not_fail_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = RootFiles(tmp_path)
    files.write("notes/b.md", b"old b")
    refused: list[int] = []

    def refuse(fd: int) -> None:
        refused.append(fd)
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(staged_module, "fsync_fd", refuse)
    files.write("notes/b.md", b"new b")
    assert refused and (tmp_path / "notes" / "b.md").read_bytes() == b"new b"


def test_a_write_its_hook_drops_leaves_no_folder_to_flush(tmp_path: Path, flushed: Flushed) -> None:
    files = _in_change(tmp_path, durable=True)
    files.write("notes/b.md", b"new b", before_replace=lambda _at, _found: None)
    files.publish()
    flushed.clear()
    assert files.unflushed is not None
    files.unflushed.flush()
    assert flushed == []  # nothing moved in notes/: nothing to flush
    assert _on_disk(tmp_path)["notes/b.md"] == b"old b"
    assert _temporaries(tmp_path / "notes") == []


def test_a_write_dropped_for_the_newest_save_leaves_that_save_in_place_and_flushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flushed: Flushed
) -> None:
    """A save lands before the swap and another over the change's file before the first can
    go back: the newest takes the place, by a swap, so its folder is flushed like a write's."""
    files = _in_change(tmp_path, durable=True)
    note = tmp_path / "notes" / "b.md"

    def save(data: bytes) -> None:  # an editor's safe save: a new file renamed over the old
        scratch = note.with_name("b.md___jb_tmp___")
        scratch.write_bytes(data)
        os.replace(scratch, note)

    real_read = staged_module.swapping.read

    def read_then_save(fd: int, name: str) -> bytes | None:
        out = real_read(fd, name)  # what the swap brought out: the first save
        save(b"newest")  # over the change's bytes, just swapped in
        return out

    files.write("notes/b.md", b"new b", before_replace=lambda _at, _found: False)
    faults.arm("change.judged", lambda: save(b"first"))
    monkeypatch.setattr(staged_module.swapping, "read", read_then_save)
    try:
        files.publish()
    finally:
        faults.disarm()
    flushed.clear()
    assert files.unflushed is not None
    files.unflushed.flush()
    assert note.read_bytes() == b"newest"
    assert _ident(tmp_path / "notes") in flushed
    assert sorted(os.listdir(tmp_path / "notes")) == ["b.md", "c.md"]


# ------------------------------------------------------------------ what appears in the moment


@pytest.mark.parametrize("what", ["folder", "link to a folder"])
def test_a_folder_or_link_made_where_a_new_file_goes_is_a_typed_refusal(
    tmp_path: Path, what: str
) -> None:
    """Made between the last look and the rename that places a new file, which refuses to
    replace anything: a folder is refused as a write onto a folder is, a link as any link."""
    files = RootFiles(tmp_path, durable=False)
    target = tmp_path / "notes" / "new.md"
    (tmp_path / "elsewhere").mkdir()

    def make() -> None:
        target.parent.mkdir(exist_ok=True)
        if what == "folder":
            target.mkdir()
        else:
            target.symlink_to(tmp_path / "elsewhere")

    faults.arm("change.judged", make)
    try:
        with pytest.raises(
            InvalidPathError, match="is a folder" if what == "folder" else "symlink"
        ):
            files.write("notes/new.md", b"new", before_replace=lambda _at, _found: False)
    finally:
        faults.disarm()
    assert target.is_dir() and (what == "folder") != target.is_symlink()
    assert _temporaries(tmp_path / "notes") == []


def test_looking_at_a_folder_does_not_put_what_is_staged_under_it_in_place(
    tmp_path: Path,
) -> None:
    files = _in_change(tmp_path)
    files.write("notes/b.md", b"new b")
    assert files.lstat("notes") is not None  # the folder's own status: nothing under it
    assert _on_disk(tmp_path)["notes/b.md"] == b"old b"
    assert len(_temporaries(tmp_path / "notes")) == 1
    files.lstat("notes/b.md")  # the staged path itself: put in place first
    assert _on_disk(tmp_path)["notes/b.md"] == b"new b"


def test_a_save_the_swap_brings_out_is_put_back_and_shown_to_the_hook_before_it_is_replaced(
    tmp_path: Path,
) -> None:
    """Outside a change the hook judges each version it would replace: a save made after its
    first look goes back in place, is shown to it, and only then replaced."""
    files = RootFiles(tmp_path, durable=False)
    files.write("notes/b.md", b"old b")
    shown: list[bytes | None] = []

    def hook(_staged_at: int | None, found: Found) -> bool | None:
        shown.append(found[0])
        return False

    faults.arm("change.judged", lambda: (tmp_path / "notes" / "b.md").write_bytes(b"saved"))
    try:
        files.write("notes/b.md", b"new b", before_replace=hook)
    finally:
        faults.disarm()
    assert shown == [b"old b", b"saved"]
    assert (tmp_path / "notes" / "b.md").read_bytes() == b"new b"
    assert _temporaries(tmp_path / "notes") == []


def test_a_staged_write_whose_folder_was_removed_fails_typed_and_makes_no_folder(
    tmp_path: Path,
) -> None:
    files = _in_change(tmp_path)
    files.write("a.md", b"new a")
    files.write("gone/d.md", b"new d")
    _folder_removed(tmp_path, "gone")
    with pytest.raises(ContextFSError, match="gone/d.md"):
        files.publish()
    assert not (tmp_path / "gone").exists()
    assert (tmp_path / "a.md").read_bytes() == b"new a"


def test_a_write_that_may_replace_only_what_was_read_keeps_anything_else() -> None:
    kept: list[bool] = []
    judge = replacing_only(b"read", lambda: kept.append(True))
    assert judge(None, (b"read", None)) is False and kept == []  # what was read: replaced
    assert judge(None, (b"saved since", None)) is None and kept == [True]  # kept, dropped
    assert replacing_only(None, lambda: None)(None, (None, None)) is False  # still no file
