"""The git gate: a repository seen from a context root (which may be a sub-folder of it).

:class:`GitStore` is the only way the rest of contextfs touches git. A commit is built by
tree surgery (:mod:`.objects`), recorded in git's index for exactly its paths (in-process,
:mod:`.staging`, with a split index so that step stays flat as the tree grows), and
published by moving the branch (:mod:`.refs`). Building, recording and publishing are
separate steps so the caller can journal between them: nothing is published until every
earlier step succeeded, so a failed call leaves HEAD where it was.

Because commits are built from HEAD's tree plus the changed paths only, a root that is a
sub-folder of a larger repository never sweeps up anybody else's staged work.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import git

from ..errors import NotFoundError, VersioningError
from ..fixes import Fix
from ..provenance import machine_name
from .branches import Branches
from .commits import Author, Commit, Prepared, Publication, commit_text
from .gitcmd import GitCommand, check_rev
from .indexentries import Record, record_of, unmatched
from .locks import LockMark, stale_lock, wait_for
from .objects import EXEC_MODE, FILE_MODE, TREE_MODE, ObjectStore
from .refs import Refs, RefUpdate, operation_in_progress
from .staging import IndexWriter

if TYPE_CHECKING:  # annotations inside GitStore, whose git() method hides the module name
    from git.objects import Commit as GitCommit

__all__ = ["GitStore"]

log = logging.getLogger(__name__)

#: Paths in one commit above which the index changes are folded into the shared index.
_FOLD_AFTER = 200
_FIELD = "\x1f"
_RECORD = "\x1e"


class GitStore:
    """The repository of one context root.

    ``lock_wait`` is how long a call waits for a lock another git command holds (git's
    index, the branch) before it gives up with a VersioningError naming the lock.
    """

    lock_wait: float = 10.0

    def __init__(
        self,
        root: Path,
        *,
        branch: str = "main",
        own_repository: bool = False,
        create: bool = True,
        durable: bool = True,
    ) -> None:
        self.root = root
        if own_repository and not (root / ".git").exists():
            # A repository of its own even inside another one (a demo, a nested store):
            # otherwise the enclosing repository is adopted and its history gets our commits.
            self._init(root, branch)
        try:
            self.repo = git.Repo(root, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            if not create:
                raise NotFoundError(
                    f"{root} is not inside a git repository", path="", fix=Fix("init")
                ) from None
            self.repo = self._init(root, branch)
        except git.GitCommandNotFound:
            raise VersioningError("git is not installed; install git 2.28 or newer") from None
        if self.repo.bare or self.repo.working_tree_dir is None:
            raise VersioningError(
                f"{root} is inside a bare repository; use a folder with a working tree"
            )
        self.workdir = Path(self.repo.working_tree_dir).resolve()
        rel = root.resolve().relative_to(self.workdir).as_posix()
        self.prefix = "" if rel == "." else rel + "/"
        self.git_dir = Path(self.repo.git_dir).resolve()
        self.common_dir = Path(self.repo.common_dir).resolve()
        self.objects = ObjectStore(str(self.common_dir / "objects"), durable=durable)
        self.refs = Refs(self.git_dir, self.common_dir, durable=durable)
        self.cmd = GitCommand(self.workdir, self.git_dir)
        self.branches = Branches(self.cmd)
        self.index = IndexWriter(self.git_dir, self.workdir, split=not self.prefix)

    # ---------------------------------------------------------------- setup
    @staticmethod
    def _init(root: Path, branch: str) -> git.Repo:
        try:
            return git.Repo.init(root, initial_branch=branch)
        except git.GitCommandError as exc:
            raise VersioningError(
                f"git init failed in {root}: {exc.stderr.strip()}; check the folder"
            ) from None
        except OSError as exc:
            raise VersioningError(
                f"git init failed in {root} ({exc.strerror}); pick a writable folder"
            ) from None

    def ensure_split_index(self) -> None:
        """Turn on split index (recording one path must not rewrite every entry) and turn off
        rename detection in merges (see below).

        Only in a repository that is the context root itself: when the root is a
        sub-folder of someone's application repository, their config is theirs.
        """
        if self.prefix:
            return
        reader = self.repo.config_reader("repository")
        if (
            reader.get_value("core", "splitIndex", default=False) in (True, "true")
            and reader.get_value("pull", "twohead", default="") == "recursive"
        ):
            return
        try:
            with self.repo.config_writer("repository") as writer:
                writer.set_value("core", "splitIndex", "true")
                writer.set_value("splitIndex", "maxPercentChange", "50")
                # A soft delete moves a file into .trash/; with rename detection a person's own
                # `git pull` would apply the other side's edit to the trash copy and drop the
                # live file silently. Without it git stops on a modify/delete conflict, which
                # `contextfs sync` resolves (the edit survives). git 2.39's default strategy
                # (ort) ignores merge.renames, so pull and merge use "recursive", which honours it.
                writer.set_value("merge", "renames", "false")
                writer.set_value("pull", "twohead", "recursive")
        except OSError as exc:
            raise VersioningError(
                f"cannot update the repository config ({exc.strerror}); check .git permissions"
            ) from None

    @functools.cached_property
    def machine(self) -> str:
        """This clone's machine name for commit trailers: ``git config contextfs.machine``, else
        :func:`contextfs.provenance.machine_name` (``$CONTEXTFS_MACHINE`` or the host name)."""
        try:
            value = self.repo.config_reader("repository").get_value(
                "contextfs", "machine", default=""
            )
        except Exception:  # noqa: BLE001 - an unreadable config must not stop a commit
            value = ""
        return machine_name(str(value)) if value else machine_name()

    def git(self, *args: str, input: bytes | None = None) -> str:
        """Run git with hooks and risky config disabled; paths must follow '--'."""
        return self.cmd.run(*args, input=input)

    # ---------------------------------------------------------------- state
    def head(self) -> str | None:
        """The hex id of HEAD, or None before the first commit."""
        return self.refs.head()

    def check_writable(self) -> None:
        """Refuse to commit while git is in the middle of an operation a person must finish."""
        busy = operation_in_progress(self.git_dir)
        if busy is not None:
            what, finish = busy
            raise VersioningError(
                f"{what} is in progress in {self.workdir}; contextfs will not commit until it is finished: {finish}"
            )

    def resolve(self, rev: str) -> GitCommit:
        check_rev(rev)
        try:
            obj = self.repo.rev_parse(rev)
            # A full 40-hex id is taken on trust by rev_parse and only looked up when an
            # attribute is read (raising a bare ValueError later); check it exists now.
            obj.type  # noqa: B018
            if isinstance(obj, git.Commit):
                obj.tree  # noqa: B018
        except (git.BadName, ValueError, IndexError, git.BadObject):
            raise NotFoundError(f"revision {rev!r} does not exist", fix=Fix("history")) from None
        if not isinstance(obj, git.Commit):
            raise NotFoundError(f"revision {rev!r} is not a commit", fix=Fix("history"))
        return obj

    # ---------------------------------------------------------------- commit
    def store_blob(self, data: bytes) -> str:
        """Write ``data`` as a blob (if git lacks it) and return its id."""
        return self.objects.store(b"blob", data).hex()

    def read_blob(self, sha: str) -> bytes:
        kind, data = self.objects.read(bytes.fromhex(sha))
        if kind != "blob":
            raise VersioningError(f"object {sha} is a {kind}, not a blob; run 'git fsck'")
        return data

    def prepare(
        self,
        changes: Mapping[str, bytes | str | None],
        message: str,
        author: str,
        email: str,
        *,
        when: float | None = None,
        executable: Collection[str] = (),
        parent: str | None | Literal[False] = False,
    ) -> Prepared | None:
        """Write the objects of a commit of root-relative ``changes`` on top of HEAD.

        A value is the new bytes, a blob id (hex, already stored) or None to remove the
        path. None comes back when the tree would not change. ``parent`` overrides HEAD.
        """
        if not changes:
            return None
        when = time.time() if when is None else when
        base_commit = self.head() if parent is False else parent
        base = self.objects.commit_tree(base_commit) if base_commit is not None else None
        blobs: dict[str, tuple[bytes, int] | None] = {}
        for rel, value in changes.items():
            full = self.prefix + rel
            if value is None:
                blobs[full] = None
                continue
            sha = (
                bytes.fromhex(value)
                if isinstance(value, str)
                else self.objects.store(b"blob", value)
            )
            blobs[full] = (sha, EXEC_MODE if rel in executable else FILE_MODE)
        tree = self.objects.rewrite(base, blobs) or self.objects.store(b"tree", b"")
        if base is not None and tree == base:
            self.objects.flush()
            return None
        sig = Author(author, email).signature(when)
        parents = () if base_commit is None else (base_commit,)
        commit = self.objects.store(b"commit", commit_text(tree, parents, sig, message)).hex()
        self.objects.flush()
        return Prepared(
            parent=base_commit,
            sha=commit,
            paths=tuple(changes),
            subject=message.splitlines()[0][:200],
            signature=sig,
        )

    def wait_for_index(self) -> None:
        """Return once no git command holds the index; after :attr:`lock_wait` raise VersioningError."""
        lock = self.git_dir / "index.lock"
        stale_lock(lock)  # left before the machine last started: nobody holds it
        wait_for(lock, self.lock_wait, "git's index")

    def publication(
        self,
        prepared: Prepared | None,
        paths: Collection[str] = (),
        *,
        journal: Callable[[list[LockMark]], None] | None = None,
    ) -> Publication:
        """git's index for ``paths`` and the branch's move to ``prepared`` (its parent to it),
        written into their locks; :meth:`Publication.commit` puts both in place.

        Each path gets the blob id and stat data of what is on disk now (a missing file or a
        folder removes its entry); after a big batch (adoption, a large transaction) the
        entries are folded into the shared index, so later updates stay small. ``journal``
        receives each lock's mark before the lock is taken, so a killed process's locks are
        provably its own (see :mod:`.locks`). A git command holding the index (a person's
        ``git commit``, which read HEAD when it started) is waited for, up to :attr:`lock_wait`
        seconds, so the branch never moves under it. Inside a change the locks' bytes go with
        the change's flush (``objects.unflushed``); nothing is flushed here.
        """
        out = Publication()
        try:
            if paths:
                records: dict[bytes, Record | None] = {}
                for rel in paths:
                    full = self.prefix + rel
                    record = record_of(self.workdir / full)
                    if record is not None and not self.objects.has(record.sha):
                        record = self._not_staged(full, prepared)
                    records[full.encode("utf-8", "surrogateescape")] = record
                out.index = self.index.prepare(
                    records,
                    fold=not self.prefix and len(records) >= _FOLD_AFTER,
                    journal=journal,
                    wait=self.lock_wait,
                )
                if self.objects.unflushed is not None:
                    self.objects.unflushed.add(*out.index.written)
            elif prepared is not None:
                self.wait_for_index()
            if prepared is not None:
                zero = "0" * 40
                line = (
                    f"{prepared.parent or zero} {prepared.sha} ".encode()
                    + prepared.signature
                    + b"\t"
                    + prepared.subject.encode("utf-8", "surrogateescape")
                    + b"\n"
                )
                out.branch = RefUpdate(
                    self.refs,
                    prepared.parent,
                    prepared.sha,
                    line,
                    self.objects.unflushed,
                    journal=journal,
                    wait=self.lock_wait,
                )
        except BaseException:
            out.abort()
            raise
        return out

    def _not_staged(self, full: str, prepared: Prepared | None) -> Record | None:
        """The entry of a path whose file holds bytes git has no object for: a save made after
        the change decided what to commit there. The entry keeps what the commit (or HEAD)
        holds, with stat data no file matches, so git reads the file again and shows the
        save as a change not staged, as if it came just after the commit."""
        top = prepared.sha if prepared is not None else self.head()
        entry = None if top is None else self.objects.lookup(self.objects.commit_tree(top), full)
        if entry is None or entry[1] == TREE_MODE:
            return None
        return unmatched(entry[0], entry[1])

    def record(self, paths: Collection[str]) -> None:
        """Bring git's index in line with the files on disk for exactly these paths."""
        if paths:
            self.publication(None, paths).commit()

    def commit(
        self,
        changes: Mapping[str, bytes | None],
        message: str,
        author: Author,
        *,
        when: float | None = None,
        executable: Collection[str] = (),
    ) -> str | None:
        """Prepare, record and publish in one go (for callers that journal nothing)."""
        prepared = self.prepare(
            changes, message, author.name, author.email, when=when, executable=executable
        )
        if prepared is None:
            self.record(list(changes))
            return None
        self.publication(prepared, list(changes)).commit()
        return prepared.sha

    # ---------------------------------------------------------------- reading
    def head_blob(self, rel: str, commit: str | None = None) -> str | None:
        """The blob id of ``rel`` in HEAD's tree (or ``commit``'s), or None (read in-process, trees cached)."""
        head = self.head() if commit is None else commit
        if head is None:
            return None
        entry = self.objects.lookup(self.objects.commit_tree(head), self.prefix + rel)
        return None if entry is None or entry[1] == TREE_MODE else entry[0].hex()

    def blob_at(self, rel: str, rev: str) -> bytes | None:
        """The bytes of ``rel`` at ``rev``, or None if it did not exist then."""
        commit = self.resolve(rev)
        entry = self.objects.lookup(bytes.fromhex(commit.tree.hexsha), self.prefix + rel)
        if entry is None or entry[1] == TREE_MODE:
            return None
        kind, data = self.objects.read(entry[0])
        return data if kind == "blob" else None

    def files_at(self, rev: str, folder: str = "") -> dict[str, str]:
        """Map of root-relative path -> blob id for every file under ``folder`` at ``rev``."""
        commit = self.resolve(rev)
        base = self.prefix + folder
        try:
            tree = commit.tree / base.rstrip("/") if base else commit.tree
        except KeyError:
            return {}
        if not isinstance(tree, git.Tree):
            return {}
        cut = len(self.prefix)
        return {
            str(item.path)[cut:]: item.hexsha  # GitPython types it PathLike; it is a str
            for item in tree.traverse()
            if isinstance(item, git.Blob)
        }

    def changed(self, rev_a: str | None, rev_b: str) -> list[str]:
        """Root-relative paths that differ between two commits (all files if rev_a is None)."""
        if rev_a is None:
            return sorted(self.files_at(rev_b))
        out = self.cmd.run(
            "diff-tree",
            "-r",
            "--no-renames",
            "--name-only",
            "-z",
            check_rev(rev_a),
            check_rev(rev_b),
            "--",
            self.prefix or ".",
        )
        cut = len(self.prefix)
        return sorted(p[cut:] for p in out.split("\0") if p)

    def log(
        self,
        rel: str | None = None,
        limit: int = 50,
        grep_trailer: tuple[str, str] | None = None,
        *,
        follow: bool = False,
    ) -> list[Commit]:
        """Commits touching ``rel`` (or the root), newest first, with trailers parsed.

        ``follow`` continues the history of one file across renames.
        """
        if self.head() is None:
            return []
        fmt = _FIELD.join(["%H", "%an", "%aI", "%s", "%(trailers:only,unfold)"]) + _RECORD
        args = ["log", f"--format={fmt}", "--no-color"]
        if limit:
            args.append(f"--max-count={int(limit)}")
        if grep_trailer is not None:
            key, value = grep_trailer
            args += ["--fixed-strings", f"--grep={key}: {value}"]
        if follow and rel:
            args += [
                "--follow",
                "--find-renames=100%",
            ]  # exact renames only: small notes share most of their frontmatter
        target = self.prefix + rel if rel else (self.prefix.rstrip("/") or ".")
        out = self.cmd.run(*args, "--", target)
        commits = []
        for record in out.split(_RECORD):
            record = record.strip("\n")
            if not record:
                continue
            sha, author, date, subject, trailer_text = (record.split(_FIELD) + [""] * 5)[:5]
            trailers: dict[str, str] = {}
            for line in trailer_text.splitlines():
                key, sep, value = line.partition(":")
                if sep and key.startswith("Contextfs-"):
                    trailers[key.strip()] = value.strip()
            if grep_trailer is not None and trailers.get(grep_trailer[0]) != grep_trailer[1]:
                continue
            commits.append(Commit(sha, author, date, subject, trailers))
        return commits

    def commit_paths(self, sha: str) -> list[str]:
        """Root-relative paths a commit changed against its first parent."""
        commit = self.resolve(sha)
        parent = commit.parents[0].hexsha if commit.parents else None
        if parent is None:
            return sorted(self.files_at(sha))
        return self.changed(parent, sha)

    def parent_of(self, sha: str) -> str | None:
        commit = self.resolve(sha)
        return commit.parents[0].hexsha if commit.parents else None

    def dirty(self, *, ignored: bool = False) -> dict[str, str]:
        """Root-relative paths whose working copy differs from HEAD, with git's status code.

        The code is git's two-letter porcelain status ('??' new, ' M' changed, ' D'
        deleted, 'UU' unmerged, ...). ``ignored`` adds the files git ignores ('!!'), one
        by one even inside an ignored folder.
        """
        extra = ["--ignored=traditional"] if ignored else []
        out = self.cmd.run(
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=all",
            *extra,
            "--",
            self.prefix.rstrip("/") or ".",
        )
        found: dict[str, str] = {}
        cut = len(self.prefix)
        for entry in out.split("\0"):
            if len(entry) > 3:
                path = entry[3:]
                if path.startswith(self.prefix):
                    found[path[cut:]] = entry[:2]
        return found
