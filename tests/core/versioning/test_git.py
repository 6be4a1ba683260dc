"""Git: a commit per change, clean trees, no hooks, sub-folder roots, adoption, history."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from helpers import assert_clean, commit_count, git

from contextfs import ContextManager, NotFoundError


def subjects(root: Path, n: int = 1) -> list[str]:
    return git(root, "log", f"-{n}", "--format=%s").splitlines()


def last(root: Path, fmt: str) -> str:
    return git(root, "log", "-1", f"--format={fmt}").strip()


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Repo Owner")
    git(path, "config", "user.email", "owner@example.invalid")
    return path


# ----------------------------------------------------------------- one commit per call
def test_every_call_is_one_commit_with_subject_author_trailers(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:writer", session="sess-9", index=False)
    root = ctx.root
    assert_clean(root)
    calls = [
        ("write", "a.md", lambda: ctx.write("a.md", "hello")),
        ("create", "b.md", lambda: ctx.create("b.md", "bee")),
        ("append", "a.md", lambda: ctx.append("a.md", "more")),
        ("edit", "a.md", lambda: ctx.edit("a.md", "hello", "hi")),
        ("meta", "a.md", lambda: ctx.update_metadata("a.md", {"tags": ["t"]})),
        ("move", "b.md -> c/b.md", lambda: ctx.move("b.md", "c/b.md")),
        ("delete", "c/b.md", lambda: ctx.delete("c/b.md")),
        ("restore", "c/b.md", lambda: ctx.restore("c/b.md")),
    ]
    for op, target, call in calls:
        before = commit_count(root)
        with ctx.provenance(turn=str(before)):
            call()
        assert commit_count(root) == before + 1, op
        assert subjects(root) == [f"{op}: {target}"]
        assert last(root, "%an") == "agent:writer"
        assert last(root, "%cn") == "agent:writer"
        body = last(root, "%B")
        assert f"Contextfs-Op: {op}" in body
        assert "Contextfs-Session: sess-9" in body
        assert f"Contextfs-Turn: {before}" in body
        assert_clean(root)
    ctx.delete("a.md")
    ctx.delete("c/b.md")
    before = commit_count(root)
    assert ctx.purge_trash() == 2
    assert commit_count(root) == before + 1 and subjects(root)[0].startswith("purge: ")
    assert_clean(root)


def test_empty_transaction_and_failed_call_make_no_commit(ctx: ContextManager) -> None:
    ctx.write("a.md", "same", {"title": "T"})
    head = git(ctx.root, "rev-parse", "HEAD")
    data = (ctx.root / "a.md").read_bytes()
    with ctx.transaction("nothing"):
        pass
    with pytest.raises(NotFoundError):
        ctx.delete("missing.md")
    assert git(ctx.root, "rev-parse", "HEAD") == head
    assert (ctx.root / "a.md").read_bytes() == data
    assert_clean(ctx.root)


def test_works_without_any_git_identity(tmp_path: Path, isolated_git: Path) -> None:
    assert git(tmp_path, "config", "--global", "--list", check=False) == ""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    ctx.write("a.md", "x")
    assert last(ctx.root, "%an <%ae>") == "agent <agent@contextfs.invalid>"
    assert_clean(ctx.root)


def test_hooks_are_never_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "hook-ran"
    hooks = repo / ".git" / "hooks"
    for name in (
        "pre-commit",
        "post-commit",
        "commit-msg",
        "reference-transaction",
        "post-index-change",
        "post-checkout",
        "prepare-commit-msg",
        "pre-auto-gc",
    ):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} >> '{marker}'\nexit 1\n")
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    # Sanity: a person's git does run them.
    (repo / "staged.txt").write_text("x")
    git(repo, "add", "staged.txt")
    git(repo, "reset", "-q")
    assert marker.exists()
    marker.unlink()

    ctx = ContextManager(repo / "ctx", index=False)
    ctx.write("a.md", "a")
    ctx.append("a.md", "b")
    ctx.move("a.md", "b.md")
    ctx.delete("b.md")
    ctx.restore("b.md")
    with ctx.transaction("txn"):
        ctx.write("c.md", "c")
    ctx.revert("b.md", "HEAD~2")
    (ctx.root / "outside-edit.md").write_text("by hand")
    ctx.sync()
    ctx.history()
    ctx.diff("b.md", "HEAD~1")
    assert not marker.exists()


# ----------------------------------------------------------------- sub-folder roots
def test_subfolder_root_leaves_the_big_repo_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print('v1')\n")
    (repo / "README.md").write_text("app\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "app: initial")
    # Someone's work in progress: one staged change, one unstaged, one untracked.
    (repo / "src" / "main.py").write_text("print('v2 staged')\n")
    git(repo, "add", "src/main.py")
    (repo / "src" / "main.py").write_text("print('v3 unstaged')\n")
    (repo / "README.md").write_text("app, edited\n")
    (repo / "notes.txt").write_text("untracked\n")
    cached, unstaged = git(repo, "diff", "--cached"), git(repo, "diff")
    status = git(repo, "status", "--porcelain")

    ctx = ContextManager(repo / "context", index=False)
    ctx.write("memory/facts.md", "- fact")
    ctx.delete("memory/facts.md")
    ctx.restore("memory/facts.md")
    with ctx.transaction("batch"):
        ctx.write("a.md", "a")
        ctx.write("b.md", "b")

    assert git(repo, "diff", "--cached") == cached
    assert git(repo, "diff") == unstaged
    assert (repo / "src" / "main.py").read_text() == "print('v3 unstaged')\n"
    assert (repo / "notes.txt").read_text() == "untracked\n"
    ours = [line for line in git(repo, "status", "--porcelain").splitlines() if "context/" in line]
    assert ours == []
    assert git(repo, "status", "--porcelain") == status
    # Every contextfs commit touches only paths under the root.
    for sha in git(repo, "rev-list", "HEAD", "--", "context").split():
        files = git(repo, "show", "--name-only", "--format=", sha).split()
        assert files and all(f.startswith("context/") for f in files), files
    assert subjects(repo, 1) == ["batch"]
    assert "app: initial" in git(repo, "log", "--format=%s")
    fsck = subprocess.run(
        ["git", "-C", str(repo), "fsck", "--strict"], capture_output=True, text=True
    )
    assert fsck.returncode == 0, fsck.stderr
    assert ctx.history()[0].message == "batch"
    assert all(h.path is None or not h.path.startswith("context/") for h in ctx.history())


# ----------------------------------------------------------------- adoption
def test_adopting_an_existing_folder(sample_root: Path) -> None:
    files = sorted(
        p.relative_to(sample_root).as_posix() for p in sample_root.rglob("*") if p.is_file()
    )
    ctx = ContextManager(sample_root, index=False)
    # The sample's files, as found (by whoever made them: an outside edit), then the
    # managed .gitignore and .gitattributes, by the manager's actor.
    assert commit_count(sample_root) == 2
    assert subjects(sample_root, 2) == ["init: contextfs root", f"init: adopt {len(files)} file(s)"]
    assert git(sample_root, "log", "--format=%an").split() == ["agent", "human"]
    tracked = set(git(sample_root, "ls-files").split())
    assert set(files) <= tracked
    assert {".gitignore", ".gitattributes"} <= tracked
    assert ctx.list() == files
    assert_clean(sample_root)
    ctx.write("project/README.md", "new readme")
    assert commit_count(sample_root) == 3


def test_adopting_an_existing_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "notes")
    (repo / "old.md").write_text("---\ntitle: Old\n---\nold body\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "their first commit")
    (repo / "uncommitted.md").write_text("typed by hand\n")
    ctx = ContextManager(repo, index=False)
    log = git(repo, "log", "--format=%an|%s").splitlines()
    assert log[-1] == "Repo Owner|their first commit"
    assert "human|sync: 1 file(s) edited outside contextfs" in log
    assert ctx.read("old.md") == "old body\n"
    assert ctx.read("uncommitted.md") == "typed by hand\n"
    assert_clean(repo)
    # Re-opening is a no-op.
    before = commit_count(repo)
    ContextManager(repo, index=False)
    assert commit_count(repo) == before


def test_outside_edits_are_committed_by_sync_as_human(ctx: ContextManager) -> None:
    ctx.write("a.md", "a")
    ctx.write("b.md", "b")
    (ctx.root / "a.md").write_text("edited in vim\n")
    (ctx.root / "b.md").unlink()
    (ctx.root / "new").mkdir()
    (ctx.root / "new" / "c.md").write_text("new file\n")
    (ctx.root / ".a.md.1234abcd.cfs-tmp").write_text("half a write")
    assert sorted(ctx.sync()) == ["a.md", "b.md", "new/c.md"]
    assert last(ctx.root, "%an") == "human"
    assert "Contextfs-Op: sync" in last(ctx.root, "%B")
    assert git(ctx.root, "show", "HEAD:a.md") == "edited in vim\n"
    assert ctx.sync() == []
    (ctx.root / ".a.md.1234abcd.cfs-tmp").unlink()
    assert_clean(ctx.root)


# ----------------------------------------------------------------- history
def test_history_read_at_diff(ctx: ContextManager) -> None:
    ctx.write("a.md", "one\n", {"title": "v1"})
    v1 = git(ctx.root, "rev-parse", "HEAD").strip()
    ctx.write("a.md", "two\n", {"title": "v2"})
    v2 = git(ctx.root, "rev-parse", "HEAD").strip()
    ctx.write("other.md", "x")
    hist = ctx.history("a.md")
    assert [h.commit for h in hist] == [v2, v1]
    assert hist[0].op == "write" and hist[0].path == "a.md" and hist[0].author == "agent"
    assert hist[0].message == "write: a.md" and hist[0].date.startswith("20")
    assert len(ctx.history(limit=2)) == 2
    assert ctx.history()[0].path == "other.md"
    assert ctx.read_at("a.md", v1) == "one\n"
    assert ctx.read_at("a.md", v1[:8]) == "one\n"
    assert ctx.read_at("a.md", "HEAD~1") == "two\n"
    assert ctx.read_at("other.md", v1) is None
    assert "title: v1" in ctx.show_at("a.md", v1)
    patch = ctx.diff("a.md", v1, v2)
    assert "-one" in patch and "+two" in patch and "-title: v1" in patch
    assert ctx.diff("a.md", v2) == ""
    with pytest.raises(NotFoundError):
        ctx.read_at("a.md", "0" * 40)


def test_revert_restores_content_and_metadata_and_recreates(ctx: ContextManager) -> None:
    ctx.write("a.md", "original\n", {"title": "Orig", "tags": ["x"]})
    v1 = git(ctx.root, "rev-parse", "HEAD").strip()
    original = (ctx.root / "a.md").read_bytes()
    ctx.write("a.md", "changed\n", {"title": "Changed"})
    before = commit_count(ctx.root)
    doc = ctx.revert("a.md", v1)
    assert commit_count(ctx.root) == before + 1
    assert (ctx.root / "a.md").read_bytes() == original
    assert doc is not None and doc.metadata["title"] == "Orig" and doc.body == "original\n"
    assert subjects(ctx.root) == ["revert: a.md"]
    assert f"Contextfs-Reverts: {v1}" in last(ctx.root, "%B")
    ctx.delete("a.md")
    ctx.revert("a.md", v1)
    assert (ctx.root / "a.md").read_bytes() == original
    # Reverting to a revision where the file did not exist deletes it (into the trash).
    ctx.write("late.md", "late")
    ctx.revert("late.md", v1)
    assert not ctx.exists("late.md") and ctx.trash()[-1].original_path == "late.md"
    assert_clean(ctx.root)


def test_revert_session_newest_first_with_conflicts(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", session="base", index=False)
    ctx.write("shared.md", "base shared\n")
    ctx.write("mine.md", "base mine\n")
    with ctx.provenance(actor="agent:rogue", session="rogue-1"):
        ctx.write("mine.md", "rogue 1\n")
        ctx.write("mine.md", "rogue 2\n")
        ctx.write("created.md", "rogue created\n")
        ctx.write("shared.md", "rogue shared\n")
    with ctx.provenance(actor="human", session="later"):
        ctx.write("shared.md", "human fixed it\n")
    before = commit_count(ctx.root)
    report = ctx.revert_session("rogue-1")
    assert report.session == "rogue-1"
    assert len(report.reverted) == 3
    assert commit_count(ctx.root) == before + len(report.commits) == before + 3
    assert ctx.read("mine.md") == "base mine\n"
    assert not ctx.exists("created.md")
    assert ctx.read("shared.md") == "human fixed it\n"
    assert report.conflicts and all(c.startswith("shared.md") for c in report.conflicts)
    log = git(ctx.root, "log", f"-{len(report.commits)}", "--format=%s|%B%x00").split("\x00")
    assert all("Contextfs-Op: revert-session" in entry for entry in log if entry.strip())
    # Newest first: the revert commits undo the rogue commits from the newest back.
    rogue = [h.commit for h in ctx.history() if h.session == "rogue-1"]
    conflicted = rogue[0]  # the rogue write to shared.md, changed later by the human
    assert report.reverted == rogue[1:]
    made = git(
        ctx.root, "log", "-3", "--reverse", "--format=%(trailers:key=Contextfs-Reverts,valueonly)"
    )
    assert [line for line in made.split() if line] == report.reverted
    assert conflicted[:12] in report.conflicts[0]
    assert_clean(ctx.root)


def test_revert_session_undoes_a_delete(ctx: ContextManager) -> None:
    ctx.write("keep.md", "keep me", {"title": "K"})
    data = (ctx.root / "keep.md").read_bytes()
    with ctx.provenance(session="oops"):
        ctx.delete("keep.md")
    report = ctx.revert_session("oops")
    assert report.conflicts == []
    assert (ctx.root / "keep.md").read_bytes() == data
    assert ctx.trash() == []
    assert_clean(ctx.root)


def test_revert_session_moves_the_files_it_created_to_the_trash(ctx: ContextManager) -> None:
    with ctx.provenance(session="oops"):
        ctx.write("notes/new.md", "created by mistake\n", {"title": "N"})
        ctx.write("notes/other.md", "also created\n")
    data = (ctx.root / "notes/new.md").read_bytes()
    report = ctx.revert_session("oops")
    assert len(report.reverted) == 2 and report.conflicts == []
    assert not ctx.exists("notes/new.md") and not ctx.exists("notes/other.md")
    assert sorted(e.original_path for e in ctx.trash()) == ["notes/new.md", "notes/other.md"]
    ctx.restore("notes/new.md")  # never a hard delete: the trash brings it back
    assert (ctx.root / "notes/new.md").read_bytes() == data
    assert_clean(ctx.root)


def test_temp_files_are_never_committed(ctx: ContextManager) -> None:
    (ctx.root / ".x.md.deadbeef.cfs-tmp").write_text("partial")
    ctx.write("x.md", "x")
    ctx.sync()
    assert not [f for f in git(ctx.root, "ls-files").split() if f.endswith(".cfs-tmp")]
    os.unlink(ctx.root / ".x.md.deadbeef.cfs-tmp")


def _repo_with_one_commit(folder: Path, name: str, text: str) -> str:
    """A person's repository with one committed file; returns its HEAD."""
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / name).write_text(text)
    git(folder, "add", name)
    git(
        folder,
        "-c",
        "user.name=dev",
        "-c",
        "user.email=dev@example.com",
        "commit",
        "-q",
        "-m",
        "start",
    )
    return git(folder, "rev-parse", "HEAD")


def test_own_repository_inside_another_keeps_the_outer_history(tmp_path) -> None:
    """A store made with own_repository=True never commits into the enclosing repository."""
    outer = tmp_path / "app"
    before = _repo_with_one_commit(outer, "app.py", "print('hi')\n")
    ctx = ContextManager(outer / "ctx", own_repository=True, index=False)
    ctx.write("memory/facts.md", "- nested")
    assert git(outer, "rev-parse", "HEAD") == before
    assert (outer / "ctx" / ".git").is_dir()
    assert git(outer / "ctx", "log", "--format=%s", "-1").strip() == "write: memory/facts.md"
    assert_clean(outer / "ctx")


def test_demo_inside_a_checkout_does_not_touch_its_history(tmp_path) -> None:
    """make demo writes into .demo/ of the source checkout; the checkout's log stays as it was."""
    from contextfs.demo import run_demo

    checkout = tmp_path / "checkout"
    before = _repo_with_one_commit(checkout, ".gitignore", ".demo/\n")
    root = run_demo(str(checkout / ".demo" / "context"))
    assert git(checkout, "rev-parse", "HEAD") == before
    assert git(checkout, "status", "--porcelain") == ""
    log = git(root, "log", "--format=%an %s")
    assert "human sync: 1 file(s) edited outside contextfs" in log  # the editor edit was seen
    assert_clean(root)
