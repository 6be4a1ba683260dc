"""The path gate at its edges: what each refusal says and names, and the spellings of
'.git', device names and control characters that sit next to an accepted name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contextfs import InvalidPathError
from contextfs.files import paths


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "root"
    (base / "notes").mkdir(parents=True)
    (base / "notes" / "a.md").write_text("a")
    return base


def refusal(root: Path, raw: str, *, write: bool = True) -> str:
    """The message of the refusal of ``raw``; the tree is left as it was."""
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    with pytest.raises(InvalidPathError) as info:
        paths.check(root, raw, write=write)
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before
    return str(info.value)


@pytest.mark.parametrize("char", ["\ud800", "\udbff", "\udc00", "\udfff"])
def test_a_lone_surrogate_anywhere_in_the_range_is_refused_as_invalid_text(
    root: Path, char: str
) -> None:
    for raw in (f"notes/a{char}.md", f"new/a{char}.md"):
        assert "lone surrogate character, which is not valid text" in refusal(root, raw)


@pytest.mark.parametrize(
    "char",
    ["\x00", "\x07", "\x1f", "\x7f", "\x80", "\x85", "\x9b", "\x9f"],
    ids=["NUL", "BEL", "US", "DEL", "PAD", "NEL", "CSI", "APC"],
)
def test_every_control_character_is_refused_naming_its_code_point(root: Path, char: str) -> None:
    """C1 controls (U+0080-U+009F) too: a terminal that shows a listing may act on them."""
    message = refusal(root, f"notes/a{char}b.md")
    assert f"control character U+{ord(char):04X} is not allowed in names" in message


def test_the_characters_next_to_the_control_ranges_are_ordinary(root: Path) -> None:
    for char in (" ", "~", "\xa0", "\xa1"):
        assert paths.check(root, f"notes/a{char}b.md", write=True) == f"notes/a{char}b.md"


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("notes\\a.md", "backslashes and drive letters are not allowed"),
        ("c:notes.md", "backslashes and drive letters are not allowed"),
        ("Z:", "backslashes and drive letters are not allowed"),
        ("/notes/a.md", "absolute paths are not allowed"),
        ("~/notes.md", "absolute paths are not allowed"),
        ("notes/a:b.md", "character ':' is not allowed in names"),
        ("../a.md", "'..' leaves the context root"),
    ],
)
def test_a_refusal_says_what_kind_of_path_it_refused(root: Path, raw: str, why: str) -> None:
    """A Windows or absolute path is told apart from a name with an odd character, so the
    caller learns to send a path relative to the root, not to rename a file."""
    message = refusal(root, raw)
    assert why in message and repr(raw) in message


def test_refusals_of_names_and_of_what_is_on_disk_quote_the_path_as_given(root: Path) -> None:
    raw = "./notes/../notes/a<b.md"
    assert f"invalid path {raw!r}: character '<'" in refusal(root, raw)

    os.symlink(root / "notes", root / "linked")
    raw = "./linked/a.md"
    assert f"invalid path {raw!r}: symlinks are never followed" in refusal(root, raw, write=False)

    raw = "notes/./A.md"
    message = refusal(root, raw)
    assert f"invalid path {raw!r}: it differs only in case from the existing 'a.md'" in message

    raw = "notes/a.md/b.md"
    assert f"invalid path {raw!r}: 'notes/a.md' is a file, not a folder" in refusal(root, raw)


@pytest.mark.parametrize(
    "name",
    [
        ".git~1",
        ".GIT~1",
        ".git\uff0e",  # a fullwidth full stop folds to '.', and a trailing dot is dropped
        ".git\uff0e\uff0e",
        ".git\u3000",  # an ideographic space folds to ' '
        ".git\uff1astream",  # a fullwidth colon folds to ':': an NTFS stream of '.git'
        ".git\uff1a\uff1a$INDEX_ALLOCATION",
        ".git\uff0e \uff1a\uff1astream",  # dots and spaces before the stream are dropped too
    ],
)
def test_spellings_that_fold_to_git_are_reserved_for_the_repository(root: Path, name: str) -> None:
    for raw in (name, f"notes/{name}/x.md"):
        assert "'.git' is reserved for the repository" in refusal(root, raw)


@pytest.mark.parametrize("name", [".gitx", "x.git", ".git~1x", ".gi", "git", ".git-notes"])
def test_names_that_only_start_like_git_are_ordinary(root: Path, name: str) -> None:
    assert paths.check(root, f"notes/{name}", write=True) == f"notes/{name}"


@pytest.mark.parametrize("name", ["con .md", "CON  .txt", "aux .tar.gz", "Lpt9 .md", "nul"])
def test_a_device_name_is_reserved_with_spaces_before_its_extension(root: Path, name: str) -> None:
    assert f"{name!r} is a reserved device name on Windows" in refusal(root, f"notes/{name}")


@pytest.mark.parametrize(
    "name",
    [
        " con.md",  # Windows ignores trailing spaces of a device name, not leading ones
        "con\xa0.md",  # a no-break space is not stripped: 'con\xa0' is a name like any other
        "con\u3000.md",
        "con-1.md",
        "com10.md",
        "lpt.md",
        "console.md",
    ],
)
def test_names_that_only_look_like_a_device_are_ordinary(root: Path, name: str) -> None:
    assert paths.check(root, f"notes/{name}", write=True) == f"notes/{name}"


def test_the_dot_folder_and_a_leading_dot_slash_name_the_same_places(root: Path) -> None:
    assert paths.check(root, "", allow_root=True) == ""
    assert paths.check(root, "./", allow_root=True) == ""
    assert paths.check(root, "./.", allow_root=True) == ""
    assert paths.check(root, "././notes/./a.md") == "notes/a.md"
    assert paths.check(root, "./notes/") == "notes"
    for raw in ("", "./", "./."):
        assert "the path is empty" in refusal(root, raw)
    assert "'..' leaves the context root" in refusal(root, "./..")
    assert "empty path component" in refusal(root, ".//notes")


def test_internal_folders_are_recognised_in_any_case_and_only_at_the_top(root: Path) -> None:
    for raw in (".TRASH/x.md", ".ContextFS/x.md"):
        assert "is internal to contextfs" in refusal(root, raw)
    # A trailing dot or space would make another spelling of it: refused as not portable.
    for raw in (".trash./x.md", ".trash /x.md"):
        assert "names may not end with a dot or a space" in refusal(root, raw)
    assert paths.check(root, ".trashcan/x.md", write=True) == ".trashcan/x.md"


def test_slugify_cuts_at_48_characters_unless_told_otherwise() -> None:
    assert paths.slugify("a" * 60) == "a" * 48
    assert paths.slugify("b" * 48) == "b" * 48
    assert paths.slugify(" ".join(["abcdefg"] * 7)) == "-".join(["abcdefg"] * 6)  # 47 chars
