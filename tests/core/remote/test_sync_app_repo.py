"""A context root inside an application repository: what sync touches, and what it leaves to people.

The root is ``context/`` of the app's repository; teammates share it through the app's
own remote. Sync merges and writes only inside the root, leaves a person's staged and
unstaged work where it was, stops (saying to ``git pull``) when the remote changed files
outside the root, and pushes only commits that touch the root alone unless asked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import git
from sync_support import bare_remote, fsck, run_git

from contextfs import ContextManager, VersioningError

DEV = ["-c", "user.name=dev", "-c", "user.email=dev@x.invalid"]


def _team(tmp_path: Path) -> tuple[Path, Path, Path]:
    remote = bare_remote(tmp_path / "app.git", head="main")
    app = tmp_path / "seed"
    run_git("clone", "-q", remote.as_uri(), str(app))
    (app / "main.py").write_text("print('app')\n")
    (app / "context").mkdir()
    (app / "context" / "README.md").write_text("# The app's context\n")
    run_git("-C", str(app), "add", "-A")
    run_git("-C", str(app), *DEV, "commit", "-qm", "app with a context folder")
    run_git("-C", str(app), "push", "-q", "origin", "HEAD:main")
    one, two = tmp_path / "ana", tmp_path / "ben"
    for who in (one, two):
        run_git("clone", "-q", remote.as_uri(), str(who))
    return remote, one, two


def test_sync_in_an_application_repository_touches_only_the_root(tmp_path: Path) -> None:
    _remote, ana, ben = _team(tmp_path)
    a = ContextManager(ana / "context", actor="agent:a", index=False)
    b = ContextManager(ben / "context", actor="agent:b", index=False)
    a.write("memory/facts.md", "- The API runs on Python 3.13\n")
    assert a.remote.sync().pushed
    # Ben has application work of his own: a commit, a staged change and an unstaged one.
    (ben / "main.py").write_text("print('app v2')\n")
    run_git("-C", str(ben), *DEV, "commit", "-qam", "app v2")
    (ben / "util.py").write_text("X = 1\n")
    run_git("-C", str(ben), "add", "util.py")
    (ben / "notes.txt").write_text("scratch\n")
    b.write("memory/lessons.md", "- Run the migrations before the deploy\n")
    result = b.remote.sync()
    assert result.state == "merged" and not result.pushed
    assert "outside the context root" in str(result.push_skipped) and "main.py" in str(
        result.push_skipped
    )
    assert b.read("memory/facts.md") == "- The API runs on Python 3.13\n"
    assert git(ben, "diff", "--cached", "--name-only").split() == ["util.py"]
    assert git(ben, "status", "--porcelain", "--", "notes.txt").strip() == "?? notes.txt"
    assert (ben / "main.py").read_text() == "print('app v2')\n"
    # Asked to, it pushes the application commit too.
    assert b.remote.sync(push_application_commits=True).pushed
    # Now the remote has application changes Ana lacks: sync will not write outside the root.
    a.write("memory/facts.md", "- The API runs on Python 3.13\n- The queue is SQS\n")
    with pytest.raises(VersioningError, match="outside the context root.*git pull"):
        a.remote.sync()
    run_git("-C", str(ana), *DEV, "pull", "-q", "--no-rebase", "origin", "main")
    assert a.remote.sync().pushed
    b.remote.sync()  # Ben catches up: what changed since his push is inside the root
    assert "SQS" in (ben / "context" / "memory" / "facts.md").read_text()
    fsck(ana)
    fsck(ben)
