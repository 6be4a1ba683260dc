"""Machines sharing a context through a bare remote, for the sync tests and the fleet benchmark.

A "machine" is a clone with its own ``contextfs.machine`` name; the remote is a bare
repository reached over ``file://`` (or any URL given), created the way people create
one (``git init --bare``, whose HEAD names ``master`` unless told otherwise).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from contextfs import ContextManager


def run_git(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout + proc.stderr


def bare_remote(where: Path, head: str = "master") -> Path:
    """An empty bare repository whose HEAD names ``head``."""
    run_git("init", "-q", "--bare", "-b", head, str(where))
    return where


def first_machine(root: Path, url: str, name: str, *, actor: str = "agent") -> ContextManager:
    """A new root that adds the remote (its first sync pushes the root there)."""
    run_git("init", "-q", "-b", "main", str(root))
    run_git("-C", str(root), "config", "contextfs.machine", name)
    run_git("-C", str(root), "remote", "add", "origin", url)
    return ContextManager(root, actor=actor, index=False)


def join_machine(root: Path, url: str, name: str, *, actor: str = "agent") -> ContextManager:
    """A machine joining: ``git clone`` of the remote, then the root opened there."""
    run_git("clone", "-q", url, str(root))
    run_git("-C", str(root), "config", "contextfs.machine", name)
    return ContextManager(root, actor=actor, index=False)


def tree_of(root: Path) -> str:
    """The tree id HEAD names (what two converged clones share)."""
    return run_git("-C", str(root), "rev-parse", "HEAD^{tree}").strip()


def fsck(root: Path) -> None:
    run_git("-C", str(root), "fsck", "--strict", "--no-progress")


def committed_markers(root: Path) -> list[str]:
    """Files in HEAD that hold a git conflict block."""
    out = subprocess.run(
        ["git", "-C", str(root), "grep", "-l", "-E", "^<<<<<<< |^>>>>>>> ", "HEAD", "--"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return [line for line in out.splitlines() if line]


def pulled_into_conflict(
    tmp_path: Path, rel: str = "memory/notes.md"
) -> tuple[ContextManager, ContextManager, Path]:
    """A server whose person ran ``git pull`` over a laptop's edit of the same line of ``rel``:
    git stopped with conflict markers in it, the merge in progress. (laptop, server, remote)"""
    remote = bare_remote(tmp_path / "remote.git")
    laptop = ContextManager(tmp_path / "laptop", index=False)
    laptop.write(rel, "# Notes\n\nThe cache is Redis.\n")
    run_git("-C", str(laptop.root), "push", "-q", str(remote), "HEAD:master")
    run_git("clone", "-q", str(remote), str(tmp_path / "server"))
    server = ContextManager(tmp_path / "server")
    laptop.edit(rel, "Redis", "Redis 7")
    run_git("-C", str(laptop.root), "push", "-q", str(remote), "HEAD:master")
    server.edit(rel, "Redis", "Valkey")
    pull = ["-c", "user.name=p", "-c", "user.email=p@x.invalid", "pull", "--no-rebase", "-q"]
    proc = subprocess.run(
        ["git", "-C", str(server.root), *pull, "origin", "master"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0 and "<<<<<<<" in (server.root / rel).read_text()
    return laptop, server, remote
