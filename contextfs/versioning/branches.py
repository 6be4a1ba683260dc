"""Refs besides HEAD's branch, and the linked work trees that check some of them out.

Review mode keeps an agent's writes on a branch of its own, checked out in a linked work
tree under the git directory (``git worktree``), and keeps a discarded branch's commits
reachable under ``refs/contextfs/`` for a while. Everything here goes through
:class:`~.gitcmd.GitCommand` (hooks, filters and risky config off), and every ref name is
checked against :data:`REF_NAME` before it reaches git: names are built by contextfs from
validated pieces, never taken from text a model wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import VersioningError
from .gitcmd import GitCommand

__all__ = ["REF_NAME", "Branches", "RefInfo"]

#: The only ref names this module reads or moves: contextfs's own namespaces.
REF_NAME = re.compile(r"^refs/(heads/contextfs|contextfs)(/[A-Za-z0-9_-]{1,120}){1,6}\Z")
_HEX40 = re.compile(r"^[0-9a-f]{40}\Z")


@dataclass(frozen=True)
class RefInfo:
    """One ref as ``for-each-ref`` lists it."""

    name: str
    sha: str
    #: Unix time of the ref's commit (the committer date).
    time: int


def _check_ref(name: str) -> str:
    if not REF_NAME.match(name):
        raise VersioningError(
            f"{name!r} is not a contextfs ref name; this is a bug in contextfs, please report it"
        )
    return name


def _check_sha(sha: str) -> str:
    if not _HEX40.match(sha):
        raise VersioningError(
            f"{sha!r} is not a full commit id; this is a bug in contextfs, please report it"
        )
    return sha


class Branches:
    """contextfs's own refs in one repository, and the linked work trees of its branches."""

    def __init__(self, cmd: GitCommand) -> None:
        self.cmd = cmd

    # ------------------------------------------------------------ refs
    def list(self, prefix: str) -> list[RefInfo]:
        """Every ref under ``prefix`` (e.g. ``refs/contextfs/discarded/root``), sorted by name."""
        _check_ref(prefix)
        out = self.cmd.run(
            "for-each-ref",
            "--format=%(refname)%00%(objectname)%00%(committerdate:unix)",
            prefix + "/",
        )
        found = []
        for line in out.splitlines():
            name, _, rest = line.partition("\0")
            sha, _, when = rest.partition("\0")
            if REF_NAME.match(name) and _HEX40.match(sha):
                found.append(RefInfo(name, sha, int(when) if when.isdigit() else 0))
        return sorted(found, key=lambda r: r.name)

    def read(self, name: str) -> str | None:
        """The commit a ref points at, or None when there is no such ref."""
        _check_ref(name)
        out = self.cmd.run("for-each-ref", "--format=%(objectname)", name)
        sha = out.strip().splitlines()[0] if out.strip() else ""
        return sha if _HEX40.match(sha) else None

    def update(self, name: str, new: str, old: str | None, message: str) -> None:
        """Point ``name`` at ``new`` if it still points at ``old`` (None: must not exist yet)."""
        _check_ref(name)
        expected = _check_sha(old) if old is not None else "0" * 40
        self.cmd.run(
            "update-ref", "-m", " ".join(message.split())[:200], name, _check_sha(new), expected
        )

    def delete(self, name: str, old: str) -> None:
        """Remove ``name`` if it still points at ``old``."""
        self.cmd.run("update-ref", "-d", _check_ref(name), _check_sha(old))

    # ------------------------------------------------------------ ancestry
    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is reachable from ``descendant`` (or is it)."""
        return (
            self.cmd.attempt(
                "merge-base", "--is-ancestor", _check_sha(ancestor), _check_sha(descendant)
            ).returncode
            == 0
        )

    def ahead(self, base: str, tip: str) -> int:
        """How many commits ``tip`` has that ``base`` does not."""
        out = self.cmd.run("rev-list", "--count", _check_sha(tip), "^" + _check_sha(base))
        return int(out.strip() or 0)

    # ------------------------------------------------------------ linked work trees
    def add_worktree(
        self, path: Path, branch: str, start: str, prefix: str, *, create: bool
    ) -> None:
        """Check ``branch`` out in a new linked work tree at ``path`` (``create``: a new
        branch at ``start``; otherwise ``start`` is the existing branch's tip).

        When the context root is a folder inside a larger repository (``prefix``), only
        that folder is written out: the index holds the whole tree, as a commit needs, and
        the rest of the application is never copied into the git directory.
        """
        _check_ref(branch)
        short = branch[len("refs/heads/") :]
        if not branch.startswith("refs/heads/"):
            raise VersioningError(
                f"{branch!r} is not a branch; this is a bug in contextfs, please report it"
            )
        args = ["worktree", "add", "--quiet"]
        if prefix:
            args.append("--no-checkout")
        if create:
            self.cmd.run(*args, "-b", short, str(path), _check_sha(start))
        else:
            self.cmd.run(*args, str(path), short)
        if prefix:
            linked = GitCommand(path, self.worktree_git_dir(path))
            linked.run("read-tree", start)
            listed = linked.run("ls-tree", "-r", "-z", "--name-only", start, "--", prefix)
            linked.run(
                "checkout-index",
                "--force",
                "--stdin",
                "-z",
                input=listed.encode("utf-8", "surrogateescape"),
            )

    @staticmethod
    def worktree_git_dir(path: Path) -> Path:
        """The private git folder of the linked work tree at ``path`` (from its ``.git`` file)."""
        try:
            text = (path / ".git").read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise VersioningError(
                f"{path} is not a linked work tree ({exc}); remove it and retry"
            ) from None
        if not text.startswith("gitdir:"):
            raise VersioningError(
                f"{path / '.git'} does not name a git folder; remove {path} and retry"
            )
        target = Path(text[7:].strip())
        return target if target.is_absolute() else (path / target).resolve()

    def remove_worktree(self, path: Path) -> None:
        """Delete a linked work tree and its private git folder (its branch stays)."""
        self.cmd.run("worktree", "remove", "--force", "--force", str(path))
        self.cmd.attempt("worktree", "prune")
