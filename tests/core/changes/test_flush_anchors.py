"""A change flushes every filesystem it wrote to, the git folder's included.

A root's files and its git folder may live on different filesystems (``git init
--separate-git-dir``, a linked worktree whose repository is elsewhere). ``syncfs`` flushes
one filesystem, so a change that synced only the files' one would acknowledge a write whose
objects and branch a power cut could still take. The flushes are observed, not replaced:
each ``syncfs`` still runs, and the test records which filesystem it was for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextfs import ContextManager
from contextfs.files import durability

SHM = Path("/dev/shm")


@pytest.fixture
def elsewhere(tmp_path: Path) -> Iterator[Path]:
    """A folder on another filesystem than ``tmp_path`` (a tmpfs), removed afterwards."""
    if not SHM.is_dir() or os.stat(SHM).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on another filesystem than the test's temporary folder")
    if not durability.syncfs_available():
        pytest.skip("needs Linux's syncfs")
    folder = Path(tempfile.mkdtemp(dir=SHM, prefix="contextfs-git-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The device of every filesystem a ``syncfs`` flushed, in order."""
    devices: list[int] = []
    real = durability.sync_filesystem

    def observed(path: str | os.PathLike[str]) -> bool:
        done = real(path)
        if done:
            devices.append(os.stat(path).st_dev)
        return done

    monkeypatch.setattr(durability, "sync_filesystem", observed)
    return devices


def test_a_write_flushes_the_files_and_a_git_folder_on_another_filesystem(
    tmp_path: Path, elsewhere: Path, synced: list[int]
) -> None:
    root = tmp_path / "ctx"
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(elsewhere / "repo.git"), str(root)],
        check=True,
    )
    with ContextManager(root, index=False) as ctx:
        git_dir = ctx.parts.git.common_dir
        assert os.stat(git_dir).st_dev != os.stat(root).st_dev
        synced.clear()
        ctx.write("notes/plan.md", "# Plan\n\nShip it.\n")
        assert set(synced) == {os.stat(root).st_dev, os.stat(git_dir).st_dev}
        assert ctx.read("notes/plan.md").startswith("# Plan")
    # The commit is in the repository on the other filesystem.
    log = subprocess.run(
        ["git", "-C", str(root), "log", "--format=%s", "-1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "notes/plan.md" in log
