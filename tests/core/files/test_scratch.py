"""Editor and OS scratch files: one list, honoured by sync(), the watcher and git itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import assert_clean, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfs import ContextManager
from contextfs.files.scratch import GITIGNORE, PATTERNS, is_scratch

SCRATCH = [
    ".facts.md.swp",
    ".facts.md.swo",
    ".swp",
    ".facts.md.un~",
    "4913",
    "facts.md~",
    "facts.md.~1~",
    "#facts.md#",
    ".#facts.md",
    "facts.md___jb_tmp___",
    "facts.md___jb_old___",
    "facts.md.vsctmp",
    "facts.md.crswap",
    ".goutputstream-5YQ8T2",
    ".facts.md.kate-swp",
    ".directory",
    ".~lock.plan.odt#",
    "~$plan.docx",
    ".DS_Store",
    "._facts.md",
    "Thumbs.db",
    "ehthumbs.db",
    "desktop.ini",
    ".fuse_hidden0000001a00000001",
    ".nfs000000000123abcd00000001",
]
CONTENT = [
    "facts.md",
    "swp.md",
    "notes.swp.md",
    "4913.md",
    "a#b.md",
    "tilde~middle.md",
    "DS_Store.md",
    "thumbs.md",
    "desktop.md",
    "_underscore.md",
    "jb_tmp.md",
    ".hidden-note.md",
    "x.sw",
    "lock.md",
]


def _git_ignores(root: Path, rels: list[str]) -> set[str]:
    """What git itself ignores among ``rels`` under the root's managed .gitignore."""
    proc = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--no-index", "--stdin", "-z"],
        input="\0".join(rels) + "\0",
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {p for p in proc.stdout.split("\0") if p}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ContextManager(tmp_path / "ctx", index=False).close()
    return tmp_path / "ctx"


def test_samples() -> None:
    for name in SCRATCH:
        assert is_scratch(name) and is_scratch(f"memory/{name}"), name
    for name in CONTENT:
        assert not is_scratch(name) and not is_scratch(f"memory/{name}"), name
    assert is_scratch(".Trashes/501/facts.md") and is_scratch("memory/.Spotlight-V100/store.db")
    assert len({glob for glob, _ in PATTERNS}) == len(PATTERNS)


def test_the_managed_gitignore_lists_every_pattern(root: Path) -> None:
    text = (root / ".gitignore").read_text("utf-8")
    assert text.endswith(GITIGNORE)
    assert "\\#*#" in text  # escaped: a bare '#' would start a comment


def test_git_ignores_exactly_what_is_scratch(root: Path) -> None:
    rels = [
        f"{folder}{name}" for folder in ("", "memory/", "topics/a/") for name in SCRATCH + CONTENT
    ]
    assert _git_ignores(root, rels) == {rel for rel in rels if is_scratch(rel)}


_FRAGMENTS = st.sampled_from(
    [
        "a",
        "md",
        ".",
        "#",
        "~",
        "$",
        "_",
        "-",
        "swp",
        "sw",
        "un",
        "DS_Store",
        "___jb_tmp___",
        "Thumbs",
        "db",
        "vsctmp",
        "goutputstream",
        "kate-swp",
        "~lock",
        "nfs",
        "4913",
        "[x]",
    ]
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(_FRAGMENTS, min_size=1, max_size=5).map("".join), min_size=1, max_size=40))
def test_git_and_is_scratch_agree_on_any_name(root: Path, names: list[str]) -> None:
    rels = sorted({f"notes/{n}" for n in names if n not in (".", "..")})
    if rels:
        assert _git_ignores(root, rels) == {rel for rel in rels if is_scratch(rel)}


def test_sync_commits_the_edit_and_none_of_the_scratch(root: Path) -> None:
    (root / "memory").mkdir()
    (root / "memory" / "facts.md").write_text("- edited by hand\n", "utf-8")
    for name in (".facts.md.swp", "facts.md~", "#facts.md#", ".DS_Store"):
        (root / "memory" / name).write_bytes(b"b0VIM 9.0\0scratch")
    (root / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    with ContextManager(root, index=False) as ctx:
        assert ctx.history("memory/facts.md")[0].author == "human"  # the sync on open
        assert ctx.sync() == []
    tracked = git(root, "ls-files").split()
    assert "memory/facts.md" in tracked and not [p for p in tracked if is_scratch(p)]
    assert_clean(root)  # the scratch files are still on disk, and ignored


def test_adopting_a_folder_leaves_its_scratch_files_out(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "memory").mkdir(parents=True)
    (folder / "memory" / "facts.md").write_text("- kept\n", "utf-8")
    (folder / "memory" / ".facts.md.swp").write_bytes(b"b0VIM 9.0\0")
    (folder / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    ContextManager(folder, index=False).close()
    tracked = git(folder, "ls-files").split()
    assert "memory/facts.md" in tracked and not [p for p in tracked if is_scratch(p)]
    assert_clean(folder)


def test_a_root_made_before_the_patterns_gets_them_on_open(root: Path) -> None:
    gitignore = root / ".gitignore"
    gitignore.write_text(gitignore.read_text("utf-8").replace(GITIGNORE, ""), "utf-8")
    git(
        root,
        "-c",
        "user.name=human",
        "-c",
        "user.email=h@x.invalid",
        "commit",
        "-qam",
        "an older .gitignore",
    )
    (root / "notes.md~").write_text("backup\n", "utf-8")
    with ContextManager(root, index=False):
        pass
    assert gitignore.read_text("utf-8").endswith(GITIGNORE)
    assert "notes.md~" not in git(root, "ls-files")
    assert_clean(root)
