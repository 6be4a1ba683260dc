"""The git gate: the only module that imports GitPython.

A commit per change has to be cheap at any tree size. ``git add && git commit`` and
GitPython's ``index.add`` both rewrite the whole index and hash trees in proportion
to the repository, so contextfs commits by *tree surgery*: it writes the new blobs
and only the trees on the changed paths into the object store in-process (gitdb's
loose object writer, no subprocess), writes the commit object, and moves the branch
ref with GitPython's locked ref writer. The cost then depends on the depth of the
changed paths, not on the number of files. ``git update-index`` then records the
same paths in the index so ``git status`` stays clean; with ``core.splitIndex`` it
writes only the changed entries, so that step stays flat too.

Because commits are built from HEAD's tree plus the changed paths only, a root that
is a sub-folder of a larger repository never sweeps up anybody else's staged work.
LLM text never reaches git as an option, ref name, URL or config value: revisions
are validated by :func:`check_rev` before use, and paths follow ``--``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import re
import secrets
import subprocess
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import git
from git.objects.fun import tree_entries_from_data
from gitdb import GitDB

from .errors import NotFoundError, VersioningError

__all__ = ["Author", "Commit", "GitStore", "check_rev"]

log = logging.getLogger(__name__)

_TREE_MODE = 0o040000
_FILE_MODE = 0o100644
_EXEC_MODE = 0o100755
_REV = re.compile(r"^(HEAD|[0-9a-fA-F]{4,40})([~^][0-9]{0,4})*$")
_SAFE_CONFIG = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.quotePath=false",
    "-c", "diff.external=",
    "-c", "core.pager=cat",
    "-c", "protocol.allow=never",
)
#: Paths in one commit above which the index changes are folded into the shared index.
_FOLD_AFTER = 200
_FIELD = "\x1f"
_RECORD = "\x1e"


@dataclass(frozen=True)
class Author:
    """Who a commit is attributed to; never the machine's global git identity."""

    name: str
    email: str

    def signature(self, when: float) -> bytes:
        return f"{self.name} <{self.email}> {int(when)} +0000".encode()


@dataclass(frozen=True)
class Commit:
    """One commit as read back from the log, with the contextfs trailers parsed."""

    commit: str
    author: str
    date: str
    subject: str
    trailers: Mapping[str, str]


def check_rev(rev: object) -> str:
    """Accept only a commit id (4-40 hex digits) or HEAD with ~N/^N suffixes."""
    if not isinstance(rev, str) or not _REV.match(rev):
        raise NotFoundError(
            f"revision {rev!r} is not accepted; pass a commit id from history() (hex) or HEAD~N",
            path=None,
        )
    return rev


def _sort_key(entry: tuple[bytes, int, str]) -> bytes:
    name = entry[2].encode("utf-8", "surrogateescape")
    return name + b"/" if entry[1] == _TREE_MODE else name


class GitStore:
    """A repository seen from a context root (which may be a sub-folder of it)."""

    def __init__(self, root: Path, *, branch: str = "main", own_repository: bool = False) -> None:
        self.root = root
        if own_repository and not (root / ".git").exists():
            # A repository of its own even inside another one (a demo, a nested store):
            # otherwise the enclosing repository is adopted and its history gets our commits.
            self._init(root, branch)
        try:
            self.repo = git.Repo(root, search_parent_directories=True)
        except git.InvalidGitRepositoryError:
            self.repo = self._init(root, branch)
        except git.GitCommandNotFound:
            raise VersioningError("git is not installed; install git 2.28 or newer") from None
        if self.repo.bare or self.repo.working_tree_dir is None:
            raise VersioningError(f"{root} is inside a bare repository; use a folder with a working tree")
        self.workdir = Path(self.repo.working_tree_dir).resolve()
        rel = root.resolve().relative_to(self.workdir).as_posix()
        self.prefix = "" if rel == "." else rel + "/"
        objects = os.path.join(self.repo.common_dir, "objects")
        self._objects_dir = objects
        self._known_dirs: set[str] = set()
        self._reader = GitDB(objects)
        self._trees: dict[bytes, list[tuple[bytes, int, str]]] = {}
        self._ensure_split_index()

    # ---------------------------------------------------------------- setup
    @staticmethod
    def _init(root: Path, branch: str) -> git.Repo:
        try:
            return git.Repo.init(root, initial_branch=branch)
        except git.GitCommandError as exc:
            raise VersioningError(f"git init failed in {root}: {exc.stderr.strip()}; check the folder") from None

    def _ensure_split_index(self) -> None:
        """Turn on split index so that recording one path does not rewrite every entry.

        Only in a repository that is the context root itself: when the root is a
        sub-folder of someone's application repository, their config is theirs.
        """
        if self.prefix:
            return
        reader = self.repo.config_reader("repository")
        if reader.get_value("core", "splitIndex", default=False) in (True, "true"):
            return
        with self.repo.config_writer("repository") as writer:
            writer.set_value("core", "splitIndex", "true")
            writer.set_value("splitIndex", "maxPercentChange", "50")

    def git(self, *args: str, input: bytes | None = None) -> str:
        """Run git with hooks and risky config disabled; paths must follow '--'."""
        env = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        try:
            return self.repo.git.execute(
                ["git", *_SAFE_CONFIG, *args],
                env=env,
                istream=io.BytesIO(input) if input is not None else None,
                strip_newline_in_stdout=False,
            )
        except git.GitCommandError as exc:
            stderr = (exc.stderr or "").strip().strip("'").strip()
            raise VersioningError(f"git {args[0]} failed: {stderr[:300]}; check the repository state") from None
        except git.GitCommandNotFound:
            raise VersioningError("git is not installed; install git 2.28 or newer") from None

    # ---------------------------------------------------------------- refs
    def _branch_ref(self) -> str | None:
        """The ref HEAD points at ('refs/heads/main'), or None when HEAD is detached."""
        try:
            text = Path(self.repo.git_dir, "HEAD").read_text("utf-8").strip()
        except OSError as exc:
            raise VersioningError(f"cannot read HEAD ({exc.strerror}); check the repository") from None
        return text[5:].strip() if text.startswith("ref:") else None

    def head(self) -> str | None:
        """The hex id of HEAD, or None before the first commit.

        Read straight from the ref files: GitPython's reference objects cost about
        half a millisecond per look-up, paid several times per commit.
        """
        ref = self._branch_ref()
        if ref is None:
            return Path(self.repo.git_dir, "HEAD").read_text("utf-8").strip()
        for base in (self.repo.git_dir, self.repo.common_dir):
            try:
                return Path(base, ref).read_text("utf-8").strip()
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                raise VersioningError(f"cannot read {ref} ({exc.strerror}); check the repository") from None
        try:
            packed = Path(self.repo.common_dir, "packed-refs").read_text("utf-8")
        except FileNotFoundError:
            return None
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
        return None

    def _move_head(self, old: str | None, new: str, subject: str, author: Author, when: float) -> None:
        """Point the branch at ``new`` if it still points at ``old`` (git's lock-file protocol)."""
        ref = self._branch_ref() or "HEAD"
        base = self.repo.git_dir if ref == "HEAD" else self.repo.common_dir
        path = Path(base, ref)
        lock = path.with_name(path.name + ".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise VersioningError(
                f"{lock} exists: another git process is updating {ref}; retry, or delete the lock if no git is running"
            ) from None
        try:
            current = self.head()
            if current != old:
                raise VersioningError(f"{ref} moved during the commit (now {current}); retry the call")
            # No fsync, as git itself does: the file bytes are already durable, and
            # recovery on open (ContextManager.sync) commits anything a crash left behind.
            os.write(fd, new.encode() + b"\n")
            os.close(fd)
            fd = -1
            os.replace(lock, path)
        finally:
            if fd >= 0:
                os.close(fd)
            if lock.exists():
                lock.unlink()
        zero = "0" * 40
        entry = f"{old or zero} {new} ".encode() + author.signature(when) + b"\t" + subject.encode("utf-8") + b"\n"
        for logged in {ref, "HEAD"}:
            log_path = Path(self.repo.git_dir if logged == "HEAD" else self.repo.common_dir, "logs", logged)
            try:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                with open(log_path, "ab") as fh:
                    fh.write(entry)
            except OSError:
                log.warning("could not append to the reflog %s", log_path)

    def resolve(self, rev: str) -> git.Commit:
        check_rev(rev)
        try:
            obj = self.repo.rev_parse(rev)
            # A full 40-hex id is taken on trust by rev_parse and only looked up when an
            # attribute is read (raising a bare ValueError later); check it exists now.
            obj.type  # noqa: B018
            if isinstance(obj, git.Commit):
                obj.tree  # noqa: B018
        except (git.BadName, ValueError, IndexError, git.BadObject):
            raise NotFoundError(f"revision {rev!r} does not exist; pick one from history()") from None
        if not isinstance(obj, git.Commit):
            raise NotFoundError(f"revision {rev!r} is not a commit; pick one from history()")
        return obj

    # ---------------------------------------------------------------- commit
    def _store(self, kind: bytes, data: bytes) -> bytes:
        """Write one loose object in-process; skip the write when git already has it."""
        raw = b"%s %d\x00" % (kind, len(data)) + data
        binsha = hashlib.sha1(raw).digest()
        hexsha = binsha.hex()
        folder = os.path.join(self._objects_dir, hexsha[:2])
        final = os.path.join(folder, hexsha[2:])
        if os.path.exists(final):
            return binsha
        if folder not in self._known_dirs:
            os.makedirs(folder, exist_ok=True)
            self._known_dirs.add(folder)
        # The same steps as gitdb's LooseObjectDB.store (temp file, then rename into
        # place) without its per-call mkstemp/makedirs, which dominated commit time.
        tmp = f"{final}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
        try:
            # Created read-only, as git does, without a separate chmod call.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            try:
                os.write(fd, zlib.compress(raw, 1))
            finally:
                os.close(fd)
            os.replace(tmp, final)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise VersioningError(f"cannot write a git object ({exc.strerror}); check .git permissions and disk space") from None
        return binsha

    def _read_tree(self, binsha: bytes | None) -> list[tuple[bytes, int, str]]:
        """Entries of a tree, read in-process and cached (trees never change)."""
        if binsha is None:
            return []
        cached = self._trees.get(binsha)
        if cached is None:
            try:
                data = self._reader.stream(binsha).read()
            except Exception:  # a pack written after GitDB listed the packs
                self._reader.update_cache(force=True)
                data = self._reader.stream(binsha).read()
            cached = list(tree_entries_from_data(data))
            if len(self._trees) > 4096:
                self._trees.clear()
            self._trees[binsha] = cached
        return cached

    def _rewrite(self, binsha: bytes | None, changes: dict[str, object]) -> bytes | None:
        entries = {e[2]: e for e in self._read_tree(binsha)}
        nested: dict[str, dict[str, object]] = {}
        for name, value in changes.items():
            head, sep, tail = name.partition("/")
            if sep:
                nested.setdefault(head, {})[tail] = value
            elif value is None:
                entries.pop(head, None)
            else:
                old = entries.get(head)
                mode = old[1] if old and old[1] in (_FILE_MODE, _EXEC_MODE) else _FILE_MODE
                entries[head] = (value, mode, head)  # type: ignore[assignment]
        for head, sub in nested.items():
            old = entries.get(head)
            child = old[0] if old and old[1] == _TREE_MODE else None
            new = self._rewrite(child, sub)
            if new is None:
                entries.pop(head, None)
            else:
                entries[head] = (new, _TREE_MODE, head)
        if not entries:
            return None
        data = b"".join(
            b"%o %s\x00%s" % (mode, name.encode("utf-8", "surrogateescape"), sha)
            for sha, mode, name in sorted(entries.values(), key=_sort_key)
        )
        return self._store(b"tree", data)

    def commit(
        self,
        changes: Mapping[str, bytes | None],
        message: str,
        author: Author,
        *,
        when: float | None = None,
    ) -> str:
        """Commit root-relative ``changes`` (None removes) on top of HEAD; return the id.

        The caller holds the root lock. Files must already be on disk as given, so the
        index can be refreshed from them.
        """
        if not changes:
            raise VersioningError("nothing to commit; this is a bug in the caller")
        when = time.time() if when is None else when
        parent = self.head()
        blobs: dict[str, object] = {}
        for rel, data in changes.items():
            blobs[self.prefix + rel] = None if data is None else self._store(b"blob", data)
        base = self._tree_of(parent) if parent is not None else None
        tree = self._rewrite(base, blobs) or self._store(b"tree", b"")
        if parent is not None and tree == base:
            self._record(changes)
            return parent
        sig = author.signature(when)
        raw = b"tree " + tree.hex().encode() + b"\n"
        if parent is not None:
            raw += b"parent " + parent.encode() + b"\n"
        raw += b"author " + sig + b"\ncommitter " + sig + b"\n\n" + message.encode("utf-8")
        if not raw.endswith(b"\n"):
            raw += b"\n"
        new = self._store(b"commit", raw).hex()
        self._move_head(parent, new, message.splitlines()[0][:200], author, when)
        self._record(changes)
        return new

    def _tree_of(self, commit: str) -> bytes:
        data = self._reader.stream(bytes.fromhex(commit)).read()
        first = data.split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            raise VersioningError(f"commit {commit} has no tree; run 'git fsck' on the repository")
        return bytes.fromhex(first[5:].decode())

    def _record(self, changes: Mapping[str, bytes | None]) -> None:
        """Bring the index in line with the commit for exactly these paths."""
        paths = [self.prefix + rel for rel in changes]
        for start in range(0, len(paths), 2000):
            chunk = paths[start : start + 2000]
            # After a big batch (adoption, a large transaction) the entries would stay in
            # the split part of the index, which every later update rewrites whole: at
            # 10,000 files that part was ~400 KB per single-file commit. '--split-index'
            # given again folds them into the shared index so later updates stay small.
            fold = ["--split-index"] if len(paths) >= _FOLD_AFTER and start + 2000 >= len(paths) else []
            self._run_plain(["update-index", *fold, "--add", "--remove", "--", *chunk])

    def _run_plain(self, args: list[str]) -> None:
        """A lean subprocess call for the write path (GitPython's wrapper adds ~1 ms)."""
        try:
            proc = subprocess.run(
                ["git", *_SAFE_CONFIG, *args],
                cwd=self.workdir,
                capture_output=True,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
                check=False,
            )
        except FileNotFoundError:
            raise VersioningError("git is not installed; install git 2.28 or newer") from None
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()[:300]
            raise VersioningError(f"git {args[0]} failed: {err}; check the repository state")

    # ---------------------------------------------------------------- reading
    def blob_at(self, rel: str, rev: str) -> bytes | None:
        """The bytes of ``rel`` at ``rev``, or None if it did not exist then."""
        commit = self.resolve(rev)
        try:
            blob = commit.tree / (self.prefix + rel)
        except KeyError:
            return None
        if blob.type != "blob":
            return None
        return blob.data_stream.read()

    def files_at(self, rev: str, folder: str = "") -> dict[str, str]:
        """Map of root-relative path -> blob id for every file under ``folder`` at ``rev``."""
        commit = self.resolve(rev)
        base = self.prefix + folder
        try:
            tree = commit.tree / base.rstrip("/") if base else commit.tree
        except KeyError:
            return {}
        if tree.type != "tree":
            return {}
        cut = len(self.prefix)
        return {
            item.path[cut:]: item.hexsha
            for item in tree.traverse()
            if item.type == "blob"  # type: ignore[union-attr]
        }

    def changed(self, rev_a: str | None, rev_b: str) -> list[str]:
        """Root-relative paths that differ between two commits (all files if rev_a is None)."""
        if rev_a is None:
            return sorted(self.files_at(rev_b))
        out = self.git(
            "diff-tree", "-r", "--no-renames", "--name-only", "-z", check_rev(rev_a), check_rev(rev_b),
            "--", self.prefix or ".",
        )
        cut = len(self.prefix)
        return sorted(p[cut:] for p in out.split("\0") if p)

    def log(self, rel: str | None = None, limit: int = 50, grep_trailer: tuple[str, str] | None = None) -> list[Commit]:
        """Commits touching ``rel`` (or the root), newest first, with trailers parsed."""
        if self.head() is None:
            return []
        fmt = _FIELD.join(["%H", "%an", "%aI", "%s", "%(trailers:only,unfold)"]) + _RECORD
        args = ["log", f"--format={fmt}", "--no-color"]
        if limit:
            args.append(f"--max-count={int(limit)}")
        if grep_trailer is not None:
            key, value = grep_trailer
            args += ["--fixed-strings", f"--grep={key}: {value}"]
        target = self.prefix + rel if rel else (self.prefix.rstrip("/") or ".")
        out = self.git(*args, "--", target)
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

    def dirty(self) -> list[str]:
        """Root-relative paths whose working copy differs from HEAD (edits made outside)."""
        out = self.git(
            "-C", str(self.workdir), "status", "--porcelain=v1", "-z", "--untracked-files=all",
            "--no-renames", "--", self.prefix.rstrip("/") or ".",
        )
        paths = set()
        cut = len(self.prefix)
        for entry in out.split("\0"):
            if len(entry) > 3:
                path = entry[3:]
                if path.startswith(self.prefix):
                    paths.add(path[cut:])
        return sorted(paths)
