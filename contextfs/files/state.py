"""Where derived state lives: under the repository's ``.git/``, never in the work tree.

The search index, caches, locks and the intent journal are derived from the files and
rebuilt at will. Kept in the work tree they could arrive by ``git clone`` (a repository
can commit anything with ``git add -f``) and Whoosh reads parts of its index with pickle,
so opening a hostile clone would run its code. Git never transfers what is inside
``.git/``, so each root keeps its state in ``<git dir>/contextfs/<key>/`` (the key names
the root's folder inside the work tree, so two roots in one repository stay apart).

What is written there is also authenticated where it is read back in a risky way: the
index stamp carries an HMAC made with a key kept in the user's own state folder
(``$XDG_STATE_HOME/contextfs``), so an index this machine did not write — copied with a
tarball of the repository, say — is rebuilt, never unpickled.

When the git folder cannot be written (a read-only checkout), the state goes to the
user's cache folder instead, keyed by the repository's path.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ContentError, NotFoundError, VersioningError
from ..fixes import Fix

if TYPE_CHECKING:
    from filelock import FileLock

__all__ = ["RootLock", "StateDir", "find_repository", "locate_root", "machine_key", "root_key"]

log = logging.getLogger(__name__)


def find_repository(root: Path) -> tuple[Path, Path] | None:
    """(work tree, git dir) of the repository holding ``root``, or None.

    Read from the filesystem alone (no git process, no GitPython import), so that
    commands that only read can find their repository cheaply.
    """
    for folder in (root, *root.parents):
        dotgit = folder / ".git"
        try:
            st = os.stat(dotgit)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            return folder, dotgit.resolve()
        if stat.S_ISREG(st.st_mode):  # a linked worktree or submodule: "gitdir: <path>"
            try:
                text = dotgit.read_text("utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if text.startswith("gitdir:"):
                target = Path(text[7:].strip())
                return folder, (target if target.is_absolute() else folder / target).resolve()
            return None
    return None


def locate_root(raw_root: Path) -> tuple[Path, Path, str]:
    """(root, git dir, the root's folder inside the work tree) of an existing root.

    For opening without creating anything: a missing folder or one outside any git
    repository is NotFoundError naming the command that creates a root.
    """
    if not raw_root.is_dir():
        raise NotFoundError(
            f"there is no context root at {raw_root}", path=str(raw_root), fix=Fix("init")
        )
    root = raw_root.resolve()
    found = find_repository(root)
    if found is None:
        raise NotFoundError(
            f"{root} is not inside a git repository", path=str(root), fix=Fix("init")
        )
    workdir, git_dir = found
    rel = root.relative_to(workdir.resolve()).as_posix()
    return root, git_dir, "" if rel == "." else rel + "/"


def _user_folder(env: str, fallback: str) -> Path:
    base = os.environ.get(env)
    return Path(base) if base and os.path.isabs(base) else Path.home() / fallback


_KEYS: dict[Path, bytes] = {}
#: The key's path for the environment it was found in: finding it (pathlib, the home
#: folder) cost more than the HMAC itself when a cache signs one line per commit.
_KEY_PATHS: dict[tuple[str | None, str | None], Path] = {}


def machine_key() -> bytes:
    """A random key that never leaves this user account (created on first use, then cached)."""
    where = (os.environ.get("XDG_STATE_HOME"), os.environ.get("HOME"))
    path = _KEY_PATHS.get(where)
    if path is None:
        path = _KEY_PATHS[where] = (
            _user_folder("XDG_STATE_HOME", ".local/state") / "contextfs" / "index-key"
        )
    folder = path.parent
    if path in _KEYS:
        return _KEYS[path]
    _KEYS[path] = key = _load_or_make_key(folder, path)
    return key


def _load_or_make_key(folder: Path, path: Path) -> bytes:
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except OSError:
        pass
    key = secrets.token_bytes(32)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = folder / f".index-key.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # first writer wins; a racing process reads the winner's key
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        return path.read_bytes()
    except OSError:
        # No writable home: a per-process key still refuses indexes from elsewhere; the
        # cost is a rebuild in each new process.
        log.info("no writable state folder for the contextfs key; using a per-process key")
        return _PROCESS_KEY


_PROCESS_KEY = secrets.token_bytes(32)


class RootLock:
    """A reentrant lock shared by every process and thread writing one root.

    Backed by ``flock``, so the operating system releases it when its holder dies: a
    killed process never leaves a lock someone has to delete by hand.
    """

    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        self._lock: FileLock | None = None  # made on first use: see _file_lock
        self._making = threading.Lock()
        self._timeout = timeout
        self._path = path

    def _file_lock(self) -> FileLock:
        if self._lock is None:
            # Imported here: filelock costs ~9 ms to import, and a process that opens a root
            # read-only (or only searches an index that is current) never takes a lock.
            from filelock import FileLock

            with self._making:
                if self._lock is None:
                    self._lock = FileLock(str(self._path), timeout=self._timeout, thread_local=True)
        return self._lock

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        lock = self._file_lock()
        from filelock import Timeout  # loaded by _file_lock just above: no cost here

        try:
            lock.acquire()
        except Timeout:
            raise VersioningError(
                f"another process held the contextfs lock {self._path} for over {self._timeout:.0f}s; "
                "wait for it to finish and retry"
            ) from None
        except OSError as exc:
            raise VersioningError(
                f"cannot take the contextfs lock {self._path} ({exc.strerror}); "
                "check that the repository's .git folder is writable"
            ) from None
        try:
            yield
        finally:
            lock.release()

    @property
    def is_held(self) -> bool:
        return self._lock is not None and self._lock.is_locked


def root_key(prefix: str) -> str:
    """The name that keeps one root's things apart from another's in the same repository."""
    # fsencode: a folder name that is not UTF-8 comes back from the file system as surrogates.
    return "root" if not prefix else "sub-" + hashlib.sha1(os.fsencode(prefix)).hexdigest()[:16]


class StateDir:
    """The folder of one root's derived state, created on first use."""

    def __init__(self, git_dir: Path, prefix: str) -> None:
        self.git_dir = git_dir
        self.prefix = prefix
        self._preferred = git_dir / "contextfs" / root_key(prefix)
        self._fallback = (
            _user_folder("XDG_CACHE_HOME", ".cache")
            / "contextfs"
            / hashlib.sha1(os.fsencode(f"{git_dir}\0{prefix}")).hexdigest()[:24]
        )
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        """The folder itself (created, private to the user)."""
        if self._path is None:
            self._path = self._make()
        return self._path

    def _make(self) -> Path:
        for candidate in (self._preferred, self._fallback):
            try:
                candidate.mkdir(parents=True, exist_ok=True, mode=0o700)
                st = os.lstat(candidate)
                if not stat.S_ISDIR(st.st_mode):
                    continue
                probe = candidate / f".probe-{secrets.token_hex(3)}"
                probe.touch()
                probe.unlink()
                return candidate
            except OSError:
                continue
        raise ContentError(
            f"no writable place for contextfs's derived state (tried {self._preferred} and {self._fallback}); "
            "make the repository's .git folder or your cache folder writable"
        )

    def file(self, name: str) -> Path:
        """A path inside the state folder (``name`` is a constant, never user input)."""
        return self.path / name

    def lock(self, name: str = "lock", timeout: float = 30.0) -> RootLock:
        return RootLock(self.file(name), timeout=timeout)

    # ------------------------------------------------------------ small JSON files
    def read_json(self, name: str) -> Any:
        """A JSON document written by :meth:`write_json`, or None (missing or damaged)."""
        try:
            return json.loads(self.file(name).read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def write_json(self, name: str, value: Any) -> None:
        """Replace a small JSON document atomically (caches: no fsync, losing one is harmless)."""
        target = self.file(name)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
            tmp.write_text(json.dumps(value, separators=(",", ":")), "utf-8")
            os.replace(tmp, target)
        except OSError as exc:
            log.warning("could not write %s (%s); it will be rebuilt", target, exc.strerror)

    def read_bytes(self, name: str) -> bytes | None:
        """A derived file's bytes, or None (missing or unreadable: it is rebuilt)."""
        try:
            return self.file(name).read_bytes()
        except OSError:
            return None

    def write_bytes(self, name: str, data: bytes) -> None:
        """Replace a derived file atomically (no fsync: losing one costs a rebuild)."""
        target = self.file(name)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
        except OSError as exc:
            log.warning("could not write %s (%s); it will be rebuilt", target, exc.strerror)

    def sign(self, payload: bytes) -> str:
        """An HMAC of ``payload`` with this user's machine key."""
        return hmac.new(machine_key(), payload, hashlib.sha256).hexdigest()

    def signer(self) -> Callable[[bytes], str]:
        """:meth:`sign` with the key looked up once, for signing many small pieces."""
        key = machine_key()
        return lambda payload: hmac.new(key, payload, hashlib.sha256).hexdigest()

    def verify(self, payload: bytes, mac: object) -> bool:
        return isinstance(mac, str) and hmac.compare_digest(self.sign(payload), mac)
