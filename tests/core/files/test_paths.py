"""The path gate: every hostile path is refused before any I/O, and nothing is created."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfs import ContextManager, InvalidPathError
from contextfs.files import paths


def snapshot(root: Path) -> set[str]:
    """Every file and folder under ``root`` (the repository included)."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, name), root))
    return out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "root"
    (base / "notes").mkdir(parents=True)
    (base / "notes" / "a.md").write_text("a")
    (base / ".git").mkdir()
    (base / ".trash").mkdir()
    return base


# ----------------------------------------------------------------- Hypothesis
_alphabet = st.sampled_from(
    list("abcAB.-_ ~:/\\")
    + [
        "..",
        ".git",
        ".GIT",
        ".trash",
        ".contextfs",
        "\x00",
        "\x1f",
        "\u200c",
        "\u00e9",
        "e\u0301",
        "CON",
        "git~1",
    ]
)
_hostile = st.lists(_alphabet, max_size=12).map("".join)


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.one_of(_hostile, st.text(max_size=40)))
def test_any_string_is_refused_or_confined(root: Path, raw: str) -> None:
    before = snapshot(root)
    try:
        rel = paths.check(root, raw, write=True)
    except InvalidPathError as exc:
        assert "use a relative POSIX path" in str(exc)
    else:
        full = paths.full_path(root, rel)
        resolved = full.resolve()
        assert resolved.is_relative_to(root.resolve())
        assert resolved != root.resolve()
        parts = Path(rel).parts
        assert rel == "/".join(parts) and ".." not in parts and "." not in parts
        assert not any(
            p.casefold().startswith(".git") and p.casefold().rstrip(". ") == ".git" for p in parts
        )
        assert parts[0] not in paths.INTERNAL_DIRS
        assert parts[-1] not in paths.MANAGED_FILES
    assert snapshot(root) == before


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.text(max_size=30))
def test_check_is_idempotent(root: Path, raw: str) -> None:
    try:
        rel = paths.check(root, raw)
    except InvalidPathError:
        return
    assert paths.check(root, rel) == rel


# ----------------------------------------------------------------- refusals
REFUSED = {
    "absolute": "/etc/passwd",
    "absolute-in-root": "/notes/a.md",
    "home": "~/notes.md",
    "drive letter": "C:/notes.md",
    "drive letter relative": "c:notes.md",
    "backslash": "notes\\a.md",
    "backslash traversal": "..\\..\\etc\\passwd",
    "dotdot escape": "../outside.md",
    "dotdot deep escape": "notes/../../outside.md",
    "NUL": "notes/a\x00.md",
    "control char": "notes/a\x07.md",
    "newline": "notes/a\n.md",
    "DEL": "notes/a\x7f.md",
    "empty": "",
    "dot": ".",
    "empty component": "notes//a.md",
    "git": ".git/config",
    "git upper": ".GIT/config",
    "git mixed": ".Git/HEAD",
    "git trailing dot": ".git./config",
    "git trailing space": ".git /config",
    "git zero-width": ".g\u200cit/config",
    "git zero-width joiner": ".gi\u200dt/config",
    "git bom": "\ufeff.git/config",
    "git 8.3": "git~1/config",
    "git 8.3 upper": "GIT~1/config",
    "git ntfs stream": ".git::$INDEX_ALLOCATION/config",
    "git fullwidth": "\uff0egit/config",
    "git nested": "notes/.git/config",
    "trash": ".trash/x.md",
    "trash case": ".Trash/x.md",
    "contextfs": ".contextfs/config.toml",
    "contextfs case": ".ContextFS/config.toml",
    "gitignore": ".gitignore",
    "gitignore nested": "notes/.gitignore",
    "gitattributes": ".gitattributes",
    "gitattributes case": ".GitAttributes",
    "device": "CON",
    "device ext": "notes/con.md",
    "device com": "COM1.txt",
    "device lpt": "lpt9",
    "device aux": "aux.tar.gz",
    "trailing dot": "notes/a.md.",
    "trailing space": "notes/a.md ",
    "dir trailing dot": "notes./a.md",
    "over-long name": "n" * 256 + ".md",
    "over-long path": "/".join(["abcdefgh"] * 200),
    "colon": "notes/a:b.md",
    "star": "notes/*.md",
    "question": "notes/a?.md",
    "pipe": "notes/a|b.md",
    "angle": "notes/<a>.md",
    "quote": 'notes/"a".md',
}


@pytest.mark.parametrize("raw", list(REFUSED.values()), ids=list(REFUSED))
def test_refused_paths_create_nothing(root: Path, raw: str) -> None:
    before = snapshot(root)
    with pytest.raises(InvalidPathError) as info:
        paths.check(root, raw, write=True)
    message = str(info.value)
    assert "invalid path" in message and "e.g. 'project/README.md'" in message
    assert snapshot(root) == before


@pytest.mark.parametrize("raw", [None, 3, b"notes/a.md", Path("notes/a.md"), ["a"]])
def test_non_strings_are_refused(root: Path, raw: object) -> None:
    with pytest.raises(InvalidPathError, match="expected a string"):
        paths.check(root, raw)


def test_gitignore_may_be_read_but_not_written(root: Path) -> None:
    assert paths.check(root, ".gitignore") == ".gitignore"
    with pytest.raises(InvalidPathError, match="managed by contextfs"):
        paths.check(root, ".gitignore", write=True)


def test_internal_folders_only_through_their_own_operations(root: Path) -> None:
    assert paths.check(root, ".trash/x.md", allow_internal=True) == ".trash/x.md"
    with pytest.raises(InvalidPathError, match="internal to contextfs"):
        paths.check(root, ".trash/x.md")
    # A folder of the same name deeper in the tree is an ordinary folder.
    assert paths.check(root, "notes/.trash/x.md", write=True) == "notes/.trash/x.md"


# ----------------------------------------------------------------- normalisation
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a/../b.md", "b.md"),
        ("notes/./a.md", "notes/a.md"),
        ("./notes/a.md", "notes/a.md"),
        ("notes/sub/../a.md", "notes/a.md"),
        ("notes/", "notes"),
        ("e\u0301t\u00e9.md", "\u00e9t\u00e9.md"),  # NFC
        ("caf\u00e9 notes/r\u00e9sum\u00e9.md", "caf\u00e9 notes/r\u00e9sum\u00e9.md"),
    ],
)
def test_normalisation(root: Path, raw: str, expected: str) -> None:
    assert paths.check(root, raw) == expected


def test_root_only_when_allowed(root: Path) -> None:
    assert paths.check(root, "", allow_root=True) == ""
    assert paths.check(root, ".", allow_root=True) == ""
    with pytest.raises(InvalidPathError, match="empty"):
        paths.check(root, "")


def test_file_used_as_folder_is_refused(root: Path) -> None:
    with pytest.raises(InvalidPathError, match="is a file, not a folder"):
        paths.check(root, "notes/a.md/b.md", write=True)


# ----------------------------------------------------------------- symlinks
def test_symlink_out_of_root_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (root / "link").symlink_to(outside, target_is_directory=True)
    before = snapshot(root)
    for raw in ("link/secret.md", "link/new/deep/file.md", "link"):
        with pytest.raises(InvalidPathError, match="symlink"):
            paths.check(root, raw, write=True)
    assert snapshot(root) == before
    assert sorted(os.listdir(outside)) == ["secret.md"]


def test_symlink_inside_root_is_refused_too(root: Path) -> None:
    (root / "alias").symlink_to(root / "notes", target_is_directory=True)
    (root / "notes" / "file-link.md").symlink_to(root / "notes" / "a.md")
    for raw in ("alias/a.md", "alias/new.md", "notes/file-link.md"):
        with pytest.raises(InvalidPathError, match="symlink"):
            paths.check(root, raw)


def test_dangling_symlink_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "notes" / "dangling.md").symlink_to(tmp_path / "nowhere" / "x.md")
    with pytest.raises(InvalidPathError, match="symlink"):
        paths.check(root, "notes/dangling.md", write=True)
    assert not (tmp_path / "nowhere").exists()


def test_symlinked_parent_of_new_file_through_manager(tmp_path: Path) -> None:
    """The manager refuses before any I/O: nothing appears outside the root."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (ctx.root / "escape").symlink_to(outside, target_is_directory=True)
    for call in (
        lambda: ctx.write("escape/new/deep.md", "x"),
        lambda: ctx.create("escape/new.md", "x"),
        lambda: ctx.append("escape/log.md", "x"),
        lambda: ctx.move("escape", "elsewhere"),
        lambda: ctx.read("escape/anything.md"),
        lambda: ctx.list("escape"),
        lambda: ctx.delete("escape"),
    ):
        with pytest.raises(InvalidPathError):
            call()
    assert list(outside.iterdir()) == []
    assert (ctx.root / "escape").is_symlink()


# ----------------------------------------------------------------- case twins
def test_case_only_twin_of_file_is_refused(root: Path) -> None:
    before = snapshot(root)
    with pytest.raises(InvalidPathError, match="differs only in case"):
        paths.check(root, "notes/A.md", write=True)
    with pytest.raises(InvalidPathError, match="differs only in case"):
        paths.check(root, "NOTES/b.md", write=True)
    assert snapshot(root) == before
    # Reading is lexical; the twin simply does not exist.
    assert paths.check(root, "notes/A.md") == "notes/A.md"


def test_case_twin_through_manager(ctx: ContextManager) -> None:
    ctx.write("Notes/Plan.md", "plan")
    with pytest.raises(InvalidPathError, match="differs only in case"):
        ctx.write("notes/plan.md", "other")
    with pytest.raises(InvalidPathError, match="differs only in case"):
        ctx.write("Notes/PLAN.md", "other")
    assert ctx.list() == ["Notes/Plan.md"]


# ----------------------------------------------------------------- through the manager
@pytest.mark.parametrize(
    "raw", ["../x.md", "/tmp/x.md", ".git/HEAD", ".trash/x.md", ".gitignore", "a//b.md"]
)
def test_manager_refuses_before_any_io(tmp_path: Path, raw: str) -> None:
    ctx = ContextManager(tmp_path / "ctx", index=False)
    before = snapshot(ctx.root)
    head = (ctx.root / ".git" / "HEAD").read_bytes()
    for call in (
        lambda: ctx.write(raw, "x"),
        lambda: ctx.create(raw, "x"),
        lambda: ctx.append(raw, "x"),
        lambda: ctx.update_metadata(raw, {"a": 1}),
        lambda: ctx.edit(raw, "a", "b"),
        lambda: ctx.delete(raw),
        lambda: ctx.move("x.md", raw),
    ):
        with pytest.raises(InvalidPathError):
            call()
    assert snapshot(ctx.root) == before
    assert (ctx.root / ".git" / "HEAD").read_bytes() == head
    assert not (tmp_path / "x.md").exists()


def test_hostile_list_raises_but_missing_folder_is_empty(ctx: ContextManager) -> None:
    with pytest.raises(InvalidPathError):
        ctx.list("../")
    with pytest.raises(InvalidPathError):
        ctx.list(".git")
    assert ctx.list("no/such/folder") == []


def test_slugify_makes_names_the_gate_accepts(tmp_path) -> None:
    from contextfs.files.paths import check, slugify

    assert slugify("Billing migration: Chargebee → Stripe!") == "billing-migration-chargebee-stripe"
    assert slugify("Ünïcödé words here", words=2) == "unicode-words"
    assert slugify("!!!", default="note") == "note"
    long = slugify("word " * 40, max_len=20)
    assert len(long) <= 20 and not long.endswith("-")
    for text in ("CON", "a/../b", ".git", "  spaced  out  "):
        slug = slugify(text, default="x")
        assert check(tmp_path, slug, write=True) == slug


def test_free_path_counts_up(ctx) -> None:
    assert ctx.free_path("notes/a") == "notes/a.md"
    ctx.write("notes/a.md", "one")
    ctx.write("notes/a-2.md", "two")
    assert ctx.free_path("notes/a") == "notes/a-3.md"


@pytest.mark.parametrize(
    ("char", "category"),
    [("\u200b", "Cf"), ("\u202e", "Cf"), ("\ue000", "Co"), ("\u0378", "Cn")],
)
def test_invisible_and_unassigned_characters_are_refused_by_name(
    root: Path, char: str, category: str
) -> None:
    """A zero-width or bidi format character, a private-use character or an unassigned one
    in a name is refused for what it is, naming its code point: each can make a name look
    like another. (A lone surrogate is refused before, as text that is not valid.)"""
    import unicodedata

    assert unicodedata.category(char) == category
    before = snapshot(root)
    with pytest.raises(InvalidPathError) as info:
        paths.check(root, f"notes/plan{char}b.md", write=True)
    assert f"invisible or unassigned character U+{ord(char):04X} is not allowed" in str(info.value)
    assert snapshot(root) == before
