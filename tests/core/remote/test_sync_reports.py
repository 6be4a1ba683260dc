"""What sync holds back is said, and ``watch --once`` exits non-zero when it held anything back.

Held back: everything while git is in the middle of a merge or rebase, files holding
conflict markers, and files git ignores (a folder the application's ``.gitignore`` lists).
A root whose folder the enclosing repository ignores is refused when it is opened for
writing, with the fix: a repository of its own (``init --own-repository``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import application_repository, git

from contextfs import ContextManager, VersioningError
from contextfs.cli import cli

HELD = 3  # the exit status of 'watch --once' when it held something back


def _once(root: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(root), "watch", "--once"])
    return result.exit_code, result.output


def test_a_merge_in_progress_is_reported_not_called_clean(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    ctx = ContextManager(root, index=False)
    ctx.write("a.md", "base\n")
    git(root, "checkout", "-q", "-b", "side")
    ctx.write("a.md", "side\n")
    git(root, "checkout", "-q", "main")
    ctx.write("a.md", "main\n")
    git(root, "-c", "user.name=p", "-c", "user.email=p@x.invalid", "merge", "side", check=False)
    assert (root / ".git" / "MERGE_HEAD").exists()
    (root / "b.md").write_text("typed while merging\n")
    code, out = _once(root)
    assert code == HELD, out
    assert "merge is in progress" in out and "nothing to commit" not in out
    assert "b.md" not in git(root, "ls-files")


def test_conflict_markers_are_reported(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    ContextManager(root, index=False).close()
    (root / "c.md").write_text("<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    (root / "d.md").write_text("fine\n")
    code, out = _once(root)
    assert code == HELD, out
    assert "committed 1 file(s)" in out and "d.md" in out
    assert "c.md" in out and "conflict markers" in out
    assert "c.md" not in git(root, "ls-files")


def test_new_files_under_an_ignored_folder_are_reported(tmp_path: Path) -> None:
    app = application_repository(tmp_path)
    (app / ".gitignore").write_text("context/drafts/\n")
    root = app / "context"
    ContextManager(root, index=False).close()
    (root / "drafts").mkdir()
    (root / "drafts" / "idea.md").write_text("an idea typed by hand\n")
    code, out = _once(root)
    assert code == HELD, out
    assert "drafts/idea.md" in out and ".gitignore" in out and "nothing to commit" not in out
    with ContextManager(root, index=False) as ctx:
        assert "drafts/idea.md" in ctx.parts.last_sync.held
    # contextfs's own ignored files (temporary and editor scratch files) are never reported.
    (root / ".notes.md.swp").write_text("vim swap")
    (root / "drafts" / "idea.md").unlink()
    assert _once(root) == (0, "nothing to commit: every file matches the last commit\n")


def test_watch_once_still_succeeds_when_all_is_committed(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    ContextManager(root, index=False).close()
    (root / "e.md").write_text("by hand\n")
    assert _once(root) == (0, "committed 1 file(s) edited outside contextfs: e.md\n")
    assert _once(root) == (0, "nothing to commit: every file matches the last commit\n")


def test_a_root_the_application_ignores_is_refused_with_the_fix(tmp_path: Path) -> None:
    app = application_repository(tmp_path)
    (app / ".gitignore").write_text("context/\n")
    head = git(app, "rev-parse", "HEAD")
    result = CliRunner().invoke(cli, ["--root", str(app / "context"), "init"])
    assert result.exit_code == 1
    assert "ignore" in result.output and "--own-repository" in result.output
    assert git(app, "rev-parse", "HEAD") == head  # nothing committed into the application's history
    with pytest.raises(VersioningError, match="own_repository=True"):
        ContextManager(app / "context", index=False)


def test_init_own_repository_gives_the_root_its_own_history(tmp_path: Path) -> None:
    app = application_repository(tmp_path)
    (app / ".gitignore").write_text("context/\n")
    head = git(app, "rev-parse", "HEAD")
    root = app / "context"
    result = CliRunner().invoke(cli, ["--root", str(root), "init", "--own-repository"])
    assert result.exit_code == 0, result.output
    assert (root / ".git").is_dir() and git(app, "rev-parse", "HEAD") == head
    (root / "memory").mkdir()
    (root / "memory" / "facts.md").write_text("- typed by hand later\n")
    assert _once(root) == (0, "committed 1 file(s) edited outside contextfs: memory/facts.md\n")
    assert git(root, "log", "-1", "--format=%an").strip() == "human"
