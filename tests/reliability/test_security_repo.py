"""Hostile repository state: sentinel hooks and risky config never run; odd states are safe.

Every program a repository's configuration can name (hooks, fsmonitor, pagers, external
diff, textconv, filter drivers, signature checks, editors, ssh) is a script that appends
to a sentinel file. A round of every contextfs operation must leave the sentinel absent.
Detached HEAD, a person's staged work and swaps of folders for symlinks during calls are
covered too.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

import pytest
from helpers import git

from contextfs import ContextFSError, ContextManager

HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "post-merge",
    "pre-auto-gc",
    "post-rewrite",
    "reference-transaction",
    "post-index-change",
    "fsmonitor-watchman",
    "pre-push",
    "post-update",
)


def _sentinel_script(tmp_path: Path, sentinel: Path, name: str) -> Path:
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\necho {name} >> {sentinel}\ncat\n")
    script.chmod(0o755)
    return script


def _every_operation(ctx: ContextManager) -> None:
    ctx.write("a.md", "alpha")
    ctx.append("a.md", "more alpha")
    ctx.edit("a.md", "more", "even more")
    ctx.update_metadata("a.md", {"tags": ["x"]})
    ctx.create("b.md", "beta")
    ctx.move("b.md", "c/b.md")
    entry = ctx.delete("c/b.md")
    ctx.restore(entry.id)
    with ctx.transaction("two at once"):
        ctx.write("t1.md", "one")
        ctx.write("t2.md", "two")
    ctx.history("a.md")
    ctx.history()
    ctx.diff("a.md", "HEAD~1")
    ctx.read_at("a.md", "HEAD~1")
    ctx.revert("a.md", "HEAD~2")
    ctx.search("alpha")
    ctx.index.verify()
    ctx.sync()
    ctx.revert_session(ctx.parts.session)  # type: ignore[arg-type]


def test_no_hook_or_risky_config_ever_runs(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    sentinel = tmp_path / "sentinel"
    with ContextManager(root) as ctx:
        ctx.write("first.md", "first")
    hooks = root / ".git" / "hooks"
    for name in HOOKS:
        _sentinel_script(tmp_path, sentinel, name).rename(hooks / name)
    elsewhere = tmp_path / "hooks-elsewhere"
    elsewhere.mkdir()
    for name in HOOKS:
        _sentinel_script(tmp_path, sentinel, f"x-{name}").rename(elsewhere / name)
    script = str(_sentinel_script(tmp_path, sentinel, "config"))
    config = {
        "core.hooksPath": str(elsewhere),
        "core.fsmonitor": script,
        "core.pager": script,
        "pager.log": script,
        "pager.diff": script,
        "diff.external": script,
        "diff.evil.textconv": script,
        "core.sshCommand": script,
        "core.editor": script,
        "sequence.editor": script,
        "gpg.program": script,
        "log.showSignature": "true",
        "filter.evil.clean": script,
        "filter.evil.smudge": script,
        "filter.evil.process": script,
        "filter.evil.required": "true",
        "core.askPass": script,
        "credential.helper": f"!{script}",
        "core.alternateRefsCommand": script,
        "status.submoduleSummary": "true",
    }
    for key, value in config.items():
        git(root, "config", key, value)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n")
    os.environ_backup = dict(os.environ)  # type: ignore[attr-defined]
    for var, value in (
        ("GIT_EXTERNAL_DIFF", script),
        ("GIT_PAGER", script),
        ("GIT_SSH_COMMAND", script),
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
        ("GIT_CONFIG_VALUE_0", script),
    ):
        os.environ[var] = value
    try:
        with ContextManager(root) as ctx:
            _every_operation(ctx)
    finally:
        os.environ.clear()
        os.environ.update(os.environ_backup)  # type: ignore[attr-defined]
    assert not sentinel.exists(), sentinel.read_text()


def test_detached_head_commits_stay_reachable(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    with ContextManager(root) as ctx:
        ctx.write("a.md", "one")
        ctx.write("a.md", "two")
    git(root, "checkout", "-q", "--detach", "HEAD~1")
    with ContextManager(root) as ctx:
        assert ctx.read("a.md") == "one"
        ctx.write("b.md", "on a detached head")
        assert ctx.history(limit=1)[0].message == "write: b.md"
    assert git(root, "rev-parse", "HEAD:b.md").strip()
    assert git(root, "status", "--porcelain") == ""


def test_a_persons_staged_work_is_left_staged(tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('v1')\n")
    git(repo, "add", "app.py")
    git(repo, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "app")
    (repo / "app.py").write_text("print('v2, staged by a person')\n")
    git(repo, "add", "app.py")
    (repo / "notes.txt").write_text("unstaged scribbles\n")
    with ContextManager(repo / "context") as ctx:
        ctx.write("memory/facts.md", "- the app prints")
    assert git(repo, "diff", "--cached", "--name-only").split() == ["app.py"]
    assert "app.py" not in git(repo, "show", "--name-only", "--format=", "HEAD")
    assert git(repo, "show", "HEAD:app.py") == "print('v1')\n"
    assert (repo / "notes.txt").read_text() == "unstaged scribbles\n"


def test_folder_swapped_for_a_symlink_during_calls(tmp_path: Path) -> None:
    """A folder flips between a real folder and a link to outside while writes and reads run."""
    root = tmp_path / "ctx"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.md").write_text("OUTSIDE CONTENT")
    with ContextManager(root, index=False) as ctx:
        ctx.write("d/f.md", "inside content")
    real, parked = root / "d", root / "d.parked"
    stop = threading.Event()
    flips = 0  # full cycles: the folder was a link to outside, then a folder again
    recreated = 0  # a write made a fresh d/ while the real one was parked

    def aside() -> None:
        """A write made a fresh d/ while the real one was parked: move that one aside."""
        nonlocal recreated
        recreated += 1
        os.rename(real, root / f"d.recreated-{recreated}")

    def flipper() -> None:
        nonlocal flips
        while not stop.is_set():
            os.rename(real, parked)
            try:
                os.symlink(outside, real)
            except FileExistsError:
                aside()
            else:
                time.sleep(0.0005)
                os.unlink(real)
                flips += 1
            while True:
                try:
                    os.rename(parked, real)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                        raise
                    aside()

    leaks: list[str] = []
    thread = threading.Thread(target=flipper)
    target = 400 if os.environ.get("CONTEXTFS_STRESS") else 60
    with ContextManager(root, index=False, sync=False) as ctx:
        thread.start()
        i = 0
        try:
            # Until the folder has flipped often enough, whatever the machine's speed (a
            # bound on calls only so that a stuck flipper fails instead of hanging).
            while (flips < target or i < 20) and i < 200_000 and thread.is_alive():
                i += 1
                try:
                    body = ctx.read("d/f.md")
                    if body is not None and "OUTSIDE" in body:
                        leaks.append("read returned outside content")
                    ctx.write(f"d/new-{i}.md", "x")
                except ContextFSError:
                    pass
        finally:
            stop.set()
            thread.join()
    assert not real.is_symlink() and real.is_dir()
    assert sorted(p.name for p in outside.iterdir()) == ["f.md"], "a write landed outside the root"
    assert (outside / "f.md").read_text() == "OUTSIDE CONTENT"
    assert leaks == []
    assert flips >= target and i >= 20, (flips, i)


@pytest.mark.parametrize("swap", ["file", "parent"])
def test_search_never_shows_outside_text(tmp_path: Path, swap: str) -> None:
    root = tmp_path / "ctx"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "n.md").write_text("zeppelin secrets from outside")
    with ContextManager(root) as ctx:
        ctx.write("d/n.md", "zeppelin notes inside")
        assert ctx.search("zeppelin")
        if swap == "file":
            (root / "d" / "n.md").unlink()
            (root / "d" / "n.md").symlink_to(outside / "n.md")
        else:
            (root / "d" / "n.md").unlink()
            (root / "d").rmdir()
            (root / "d").symlink_to(outside)
        hits = ctx.search("zeppelin")
        assert all("outside" not in h.snippet for h in hits)
    with ContextManager(root) as ctx:  # reopened: the open-time reconcile follows nothing either
        assert all("outside" not in h.snippet for h in ctx.search("zeppelin"))
