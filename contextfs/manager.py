"""The ``ContextManager`` façade: CRUD, trash, history and transactions on one root.

Every mutating call follows the same cycle under the root lock: gate the paths,
snapshot what will be touched, write atomically, commit exactly those paths, then
tell the search index. Inside ``transaction()`` the commit is deferred to the end of
the outermost block, and an exception restores every snapshot instead.
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import clock, paths, store, trash
from .config import load_config
from .document import LIBRARY_KEYS, Document, blob_version, decode, parse, serialize
from .errors import (
    AlreadyExistsError,
    ConflictError,
    ContentError,
    ContextFSError,
    InvalidPathError,
    NotFoundError,
)
from .versioning import Author, GitStore

if TYPE_CHECKING:
    from .search import SearchHit, SearchIndex

__all__ = ["ContextManager", "HistoryEntry", "Provenance", "RevertReport"]

log = logging.getLogger(__name__)

_ACTOR = re.compile(r"^(agent(:[A-Za-z0-9_.-]{1,64})?|human|remote)$")
_TOKEN = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")
_GITIGNORE = """# managed by contextfs: derived state, never committed
.contextfs/index/
.contextfs/cache/
.contextfs/logs/
.contextfs/lock
.contextfs/*.lock
.contextfs/active-vocabulary.txt
*.cfs-tmp
"""
_GITATTRIBUTES = """# managed by contextfs
# Store bytes exactly as written so blob ids match what contextfs hashes.
* -text
# Append-only logs merge by keeping both sides' lines.
*.jsonl merge=union
"""


@dataclass(frozen=True)
class Provenance:
    """Who is writing: set by the library and by ``provenance()``, never by content."""

    actor: str = "agent"
    session: str | None = None
    turn: str | None = None


@dataclass(frozen=True)
class HistoryEntry:
    """One commit that touched the root (or one path)."""

    commit: str
    author: str
    date: str
    op: str
    message: str
    path: str | None
    session: str | None = None
    turn: str | None = None
    trailers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RevertReport:
    """What ``revert_session`` undid, and what it left alone because others changed it."""

    session: str
    reverted: list[str]
    commits: list[str]
    conflicts: list[str]


class _Changes:
    """The paths one commit (or one transaction) touched, with their bytes before."""

    def __init__(self, root: Path, message: str, op: str, trailers: Mapping[str, str]) -> None:
        self.root = root
        self.message = message
        self.op = op
        self.trailers = dict(trailers)
        self.before: dict[str, bytes | None] = {}
        self.ops: list[str] = []
        self.depth = 0

    def merge_trailers(self, extra: Mapping[str, str] | None) -> None:
        """Add a nested call's trailers; several values for one key are all kept."""
        for key, value in (extra or {}).items():
            have = [v.strip() for v in self.trailers.get(key, "").split(",") if v.strip()]
            if value and value not in have:
                have.append(value)
            self.trailers[key] = ", ".join(have)

    def touch(self, rel: str) -> None:
        if rel not in self.before:
            self.before[rel] = store.read_bytes(paths.full_path(self.root, rel))

    def write(self, rel: str, data: bytes) -> None:
        self.touch(rel)
        store.atomic_write(paths.full_path(self.root, rel), data)

    def remove(self, rel: str) -> None:
        self.touch(rel)
        store.remove_file(paths.full_path(self.root, rel), self.root)

    def after(self) -> dict[str, bytes | None]:
        return {rel: store.read_bytes(paths.full_path(self.root, rel)) for rel in self.before}

    def restore(self) -> None:
        """Put every touched path back the way it was; used when a block fails."""
        for rel, data in self.before.items():
            full = paths.full_path(self.root, rel)
            try:
                if data is None:
                    if full.exists():
                        store.remove_file(full, self.root)
                else:
                    store.atomic_write(full, data, max_bytes=1 << 62)
            except ContextFSError:
                log.exception("could not restore %s after a failed transaction", rel)


def _clean_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line[:limit]


def _is_markdown(rel: str) -> bool:
    return rel.lower().endswith((".md", ".markdown"))


def _document(text: str, rel: str, version: str) -> Document:
    """Markdown parses into frontmatter and body; any other file is all body, as stored."""
    if _is_markdown(rel):
        return parse(text, rel, version=version)
    return Document(path=rel, metadata={}, body=text, version=version)


def _check_token(name: str, value: object) -> str | None:
    if value is None:
        return None
    value = str(value)
    if not _TOKEN.match(value):
        raise InvalidPathError(
            f"{name} {value!r} is not accepted; use 1-128 letters, digits and . _ : @ -"
        )
    return value


class ContextManager:
    """A context root: plain markdown files, a git commit for every change.

    >>> ctx = ContextManager("./context")            # doctest: +SKIP
    >>> ctx.write("memory/facts.md", "- Database: PostgreSQL 16")  # doctest: +SKIP
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = "./context",
        *,
        actor: str = "agent",
        session: str | None = None,
        index: bool = True,
        sync: bool = True,
        own_repository: bool = False,
        max_file_bytes: int = store.MAX_FILE_BYTES,
    ) -> None:
        raw_root = Path(root)
        try:
            raw_root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ContentError(f"cannot create the context root {raw_root} ({exc.strerror}); pick a writable folder") from None
        self.root = raw_root.resolve()
        if not _ACTOR.match(actor):
            raise InvalidPathError(f"actor {actor!r} is not accepted; use 'agent', 'agent:<name>', 'human' or 'remote'")
        if session is None:
            session = f"s-{clock.now().strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
        self._base = Provenance(actor=actor, session=_check_token("session", session), turn=None)
        self._local = threading.local()
        self.max_file_bytes = max_file_bytes
        self._git = GitStore(self.root, own_repository=own_repository)
        self._lock = store.RootLock(self.root / ".contextfs" / "lock")
        self._index: SearchIndex | None = None
        self._index_enabled = index
        self._listeners: list[Callable[[list[str]], None]] = []
        self._ensure_managed_files()
        if sync:
            self.sync()
        if index:
            self._open_index()

    # ------------------------------------------------------------ plumbing
    @property
    def git(self) -> GitStore:
        """The repository gate (for layers above the core, not for LLM input)."""
        return self._git

    @property
    def config(self) -> dict[str, Any]:
        """The parsed ``.contextfs/config.toml`` ({} when absent)."""
        return load_config(self.root)

    @property
    def current_provenance(self) -> Provenance:
        stack = getattr(self._local, "prov", None)
        return stack[-1] if stack else self._base

    @property
    def session(self) -> str | None:
        return self.current_provenance.session

    @contextlib.contextmanager
    def provenance(
        self, *, actor: str | None = None, session: str | None = None, turn: str | int | None = None
    ) -> Iterator[Provenance]:
        """Change who is writing for the duration of a block (nests)."""
        cur = self.current_provenance
        if actor is not None and not _ACTOR.match(actor):
            raise InvalidPathError(f"actor {actor!r} is not accepted; use 'agent', 'agent:<name>', 'human' or 'remote'")
        new = Provenance(
            actor=actor or cur.actor,
            session=_check_token("session", session) if session is not None else cur.session,
            turn=_check_token("turn", turn) if turn is not None else cur.turn,
        )
        stack = getattr(self._local, "prov", None)
        if stack is None:
            stack = self._local.prov = []
        stack.append(new)
        try:
            yield new
        finally:
            stack.pop()

    def add_listener(self, callback: Callable[[list[str]], None]) -> None:
        """Call ``callback(paths)`` after every commit (used by caches above the core)."""
        self._listeners.append(callback)

    def _author(self) -> Author:
        actor = self.current_provenance.actor
        email = re.sub(r"[^A-Za-z0-9_.-]", "-", actor) + "@contextfs.invalid"
        return Author(actor, email)

    def _full(self, rel: str) -> Path:
        return paths.full_path(self.root, rel)

    def _gate(self, raw: object, *, write: bool = False) -> str:
        return paths.check(self.root, raw, write=write)

    def _ensure_managed_files(self) -> None:
        wanted = {".gitignore": _GITIGNORE, ".gitattributes": _GITATTRIBUTES}
        with self._lock.held():
            changes = _Changes(self.root, "init", "init", {})
            for name, text in wanted.items():
                data = text.encode()
                if store.read_bytes(self._full(name)) != data:
                    changes.write(name, data)
            subject = "init: contextfs root"
            if self._git.head() is None:
                # Adopting a folder: everything already in it becomes the first commit.
                adopted = [p for p in self._git.dirty() if not p.endswith(store.TMP_SUFFIX)]
                for rel in adopted:
                    changes.before.setdefault(rel, None)
                own = [p for p in adopted if p not in wanted]
                if own:
                    subject = f"init: adopt {len(own)} file(s)"
            if changes.before:
                self._commit(changes, subject, force=True)

    # ------------------------------------------------------------ commits
    def _commit(self, changes: _Changes, subject: str, *, force: bool = False) -> str | None:
        after = changes.after()
        changed = {rel: data for rel, data in after.items() if data != changes.before.get(rel) or force}
        if not changed and not force:
            return None
        if not changed:
            changed = after
        prov = self.current_provenance
        body = "\n".join(f"- {op}" for op in changes.ops[:50])
        trailers = {"Contextfs-Op": changes.op}
        if prov.session:
            trailers["Contextfs-Session"] = prov.session
        if prov.turn:
            trailers["Contextfs-Turn"] = prov.turn
        for key, value in changes.trailers.items():
            if value:
                trailers[key] = _clean_line(value, 120)
        message = _clean_line(subject) + "\n\n"
        if body:
            message += body + "\n\n"
        message += "".join(f"{k}: {v}\n" for k, v in trailers.items())
        if not changed:
            return None
        sha = self._git.commit(changed, message, self._author(), when=clock.now().timestamp())
        self._notify(sorted(changed))
        return sha

    def _notify(self, changed: list[str]) -> None:
        if self._index is not None:
            self._index.notify(changed)
        for callback in self._listeners:
            try:
                callback(changed)
            except Exception:  # a cache must never break a write
                log.exception("a change listener failed")

    @contextlib.contextmanager
    def _change(self, op: str, subject_path: str, *, trailers: Mapping[str, str] | None = None) -> Iterator[_Changes]:
        """One mutating call: joins the open transaction or makes its own commit."""
        with self._lock.held():
            txn: _Changes | None = getattr(self._local, "txn", None)
            if txn is not None:
                txn.ops.append(f"{op}: {subject_path}")
                txn.merge_trailers(trailers)
                yield txn
                return
            changes = _Changes(self.root, f"{op}: {subject_path}", op, trailers or {})
            changes.ops.append(f"{op}: {subject_path}")
            try:
                yield changes
            except BaseException:
                changes.restore()
                raise
            try:
                self._commit(changes, changes.message)
            except BaseException:
                changes.restore()
                raise

    @contextlib.contextmanager
    def transaction(
        self, message: str, *, op: str = "transaction", trailers: Mapping[str, str] | None = None
    ) -> Iterator[ContextManager]:
        """Group many calls into one commit; on an exception restore and commit nothing."""
        with self._lock.held():
            outer: _Changes | None = getattr(self._local, "txn", None)
            if outer is not None:
                outer.merge_trailers(trailers)
                yield self
                return
            txn = _Changes(self.root, _clean_line(message) or "transaction", op, trailers or {})
            self._local.txn = txn
            try:
                yield self
            except BaseException:
                self._local.txn = None
                txn.restore()
                raise
            self._local.txn = None
            try:
                self._commit(txn, txn.message)
            except BaseException:
                txn.restore()
                raise

    # ------------------------------------------------------------ reading
    def _load(self, rel: str) -> Document | None:
        data = store.read_bytes(self._full(rel))
        if data is None:
            return None
        return _document(decode(data, rel), rel, blob_version(data))

    def read(self, path: str) -> str | None:
        """The body of a file (frontmatter removed), or None when it does not exist."""
        rel = self._gate(path)
        doc = self._load(rel)
        self._touched(rel)
        return None if doc is None else doc.body

    def get(self, path: str) -> Document:
        """The whole document: path, metadata, body and version (its git blob id)."""
        rel = self._gate(path)
        doc = self._load(rel)
        if doc is None:
            raise NotFoundError(f"{rel} does not exist; list files with list()", path=rel)
        self._touched(rel)
        return doc

    def read_raw(self, path: str) -> bytes | None:
        """The file's bytes as stored (frontmatter included), or None."""
        return store.read_bytes(self._full(self._gate(path)))

    def free_path(self, stem: str, suffix: str = ".md") -> str:
        """``stem + suffix``, or ``stem-2 + suffix``, ``-3``... whichever does not exist yet."""
        path, n = f"{stem}{suffix}", 2
        while self.exists(path):
            path, n = f"{stem}-{n}{suffix}", n + 1
        return path

    def exists(self, path: str) -> bool:
        rel = self._gate(path)
        return self._full(rel).is_file()

    def list(self, path: str = "") -> list[str]:
        """Relative paths of the files under ``path``, sorted; [] for a missing folder."""
        rel = paths.check(self.root, path, allow_root=True)
        base = self._full(rel)
        if not base.is_dir() or base.is_symlink():
            return []
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base):
            here = Path(dirpath)
            at_root = here == self.root
            dirnames[:] = [
                d for d in dirnames
                if not (here / d).is_symlink() and d != ".git" and not (at_root and d in paths.INTERNAL_DIRS)
            ]
            for name in filenames:
                if name.endswith(store.TMP_SUFFIX) or name in paths.MANAGED_FILES:
                    continue
                full = here / name
                if full.is_symlink():
                    continue
                out.append(full.relative_to(self.root).as_posix())
        return sorted(out)

    def _touched(self, rel: str) -> None:
        """Hook for access tracking (cleanup); replaced by the layer that needs it."""
        hook = getattr(self, "_access_hook", None)
        if hook is not None:
            try:
                hook(rel)
            except Exception:
                log.debug("access hook failed for %s", rel, exc_info=True)

    # ------------------------------------------------------------ writing
    def _render(self, rel: str, body: str, user_meta: Mapping[str, Any] | None, old: Document | None) -> bytes:
        if not isinstance(body, str):
            raise ContentError(f"content for {rel} must be a string, not {type(body).__name__}; pass text")
        if "\x00" in body:
            raise ContentError(f"content for {rel} contains NUL bytes; contextfs stores text only")
        if not _is_markdown(rel):
            # Only markdown carries frontmatter. JSON Lines logs, .json, .txt and other files
            # are stored exactly as written (provenance lives in the commit trailers), so a
            # log line or a JSON document stays parseable on its own.
            raw = body.encode("utf-8")
            if len(raw) > self.max_file_bytes:
                raise ContentError(
                    f"{rel} would be {len(raw)} bytes, over the {self.max_file_bytes}-byte limit; split it into several files"
                )
            return raw
        base = dict(old.metadata) if old is not None else {}
        if user_meta is not None:
            if not isinstance(user_meta, Mapping):
                raise ContentError(f"metadata for {rel} must be a mapping; pass a dict")
            kept = {k: v for k, v in base.items() if k in LIBRARY_KEYS}
            base = {k: v for k, v in user_meta.items() if k not in LIBRARY_KEYS}
            base.update(kept)
        prov = self.current_provenance
        now = clock.iso()
        base.setdefault("created", now)
        base["updated"] = now
        base["author"] = prov.actor
        for key, value in (("session", prov.session), ("turn", prov.turn)):
            if value is None:
                base.pop(key, None)
            else:
                base[key] = value
        data = serialize(base, body).encode("utf-8")
        if len(data) > self.max_file_bytes:
            raise ContentError(
                f"{rel} would be {len(data)} bytes, over the {self.max_file_bytes}-byte limit; split it into several files"
            )
        return data

    def _check_version(self, rel: str, old: Document | None, expected: str | None) -> None:
        if expected is None:
            return
        current = old.version if old is not None else None
        if current != expected:
            raise ConflictError(
                f"{rel} changed since version {expected[:12]} (now {str(current)[:12]}); read it again and retry"
            )

    def _put(self, changes: _Changes, rel: str, body: str, meta: Mapping[str, Any] | None, old: Document | None) -> Document:
        data = self._render(rel, body, meta, old)
        changes.write(rel, data)
        return _document(data.decode("utf-8"), rel, blob_version(data))

    def write(
        self,
        path: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        *,
        expected_version: str | None = None,
        trailers: Mapping[str, str] | None = None,
    ) -> Document:
        """Create or replace a file. ``metadata`` replaces the user keys; omitted, they are kept."""
        rel = self._gate(path, write=True)
        with self._change("write", rel, trailers=trailers) as changes:
            old = self._load(rel)
            self._check_version(rel, old, expected_version)
            return self._put(changes, rel, content, metadata, old)

    def create(self, path: str, content: str, metadata: Mapping[str, Any] | None = None) -> Document:
        """Like ``write`` but refuses to overwrite (AlreadyExistsError)."""
        rel = self._gate(path, write=True)
        with self._change("create", rel) as changes:
            if self._full(rel).exists():
                raise AlreadyExistsError(f"{rel} already exists; use write() to replace it or pick another name")
            return self._put(changes, rel, content, metadata, None)

    def append(self, path: str, text: str, *, trailers: Mapping[str, str] | None = None) -> Document:
        """Add text at the end of a file's body (creating the file when missing)."""
        rel = self._gate(path, write=True)
        if not isinstance(text, str):
            raise ContentError(f"text for {rel} must be a string; pass text")
        with self._change("append", rel, trailers=trailers) as changes:
            old = self._load(rel)
            body = old.body if old is not None else ""
            if body and not body.endswith("\n"):
                body += "\n"
            return self._put(changes, rel, body + text, None, old)

    def edit(self, path: str, old_text: str, new_text: str, *, expected_version: str | None = None) -> Document:
        """Replace ``old_text`` with ``new_text`` in the body; it must occur exactly once."""
        rel = self._gate(path, write=True)
        if not isinstance(old_text, str) or not isinstance(new_text, str) or not old_text:
            raise ContentError("edit needs a non-empty old text and a new text, both strings; pass the exact text to replace")
        with self._change("edit", rel) as changes:
            old = self._load(rel)
            if old is None:
                raise NotFoundError(f"{rel} does not exist; create it with write()", path=rel)
            self._check_version(rel, old, expected_version)
            count = old.body.count(old_text)
            if count != 1:
                how = "does not occur" if count == 0 else f"occurs {count} times"
                raise ConflictError(f"the text to replace {how} in {rel}; quote a longer, unique passage")
            return self._put(changes, rel, old.body.replace(old_text, new_text, 1), None, old)

    def update_metadata(self, path: str, changes_: Mapping[str, Any], *, expected_version: str | None = None) -> Document:
        """Merge keys into the frontmatter (None removes a key); the body stays byte-for-byte."""
        rel = self._gate(path, write=True)
        if not isinstance(changes_, Mapping):
            raise ContentError("metadata changes must be a mapping; pass a dict")
        with self._change("meta", rel) as changes:
            old = self._load(rel)
            if old is None:
                raise NotFoundError(f"{rel} does not exist; create it with write()", path=rel)
            self._check_version(rel, old, expected_version)
            meta = {k: v for k, v in old.metadata.items() if k not in LIBRARY_KEYS}
            for key, value in changes_.items():
                if key in LIBRARY_KEYS:
                    continue
                if value is None:
                    meta.pop(key, None)
                else:
                    meta[key] = value
            return self._put(changes, rel, old.body, meta, old)

    def _files_under(self, rel: str) -> list[str]:
        full = self._full(rel)
        if full.is_file():
            return [rel]
        out = []
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
            for name in filenames:
                out.append((Path(dirpath) / name).relative_to(self.root).as_posix())
        return sorted(out)

    def move(self, src: str, dst: str) -> str:
        """Rename a file or folder; the destination must be free (a case-only rename is fine)."""
        rel_src = self._gate(src, write=True)
        case_only = isinstance(dst, str) and rel_src.casefold() == paths.check(self.root, dst).casefold()
        rel_dst = paths.check(self.root, dst, write=not case_only)
        if rel_dst.split("/")[-1].casefold() in paths.MANAGED_FILES:
            raise InvalidPathError(f"{rel_dst!r} is managed by contextfs and cannot be written")
        if rel_src == rel_dst:
            return rel_dst
        with self._change("move", f"{rel_src} -> {rel_dst}") as changes:
            if not self._full(rel_src).exists():
                raise NotFoundError(f"{rel_src} does not exist; list files with list()", path=rel_src)
            if self._full(rel_dst).exists() and not case_only:
                raise AlreadyExistsError(f"{rel_dst} already exists; delete it first or pick another name")
            if rel_dst.startswith(rel_src + "/"):
                raise InvalidPathError(f"cannot move {rel_src!r} into itself; pick a destination outside it")
            moved = self._files_under(rel_src)
            for rel in moved:
                changes.touch(rel)
                changes.touch(rel_dst + rel[len(rel_src):])
            if case_only:
                tmp = self._full(rel_src).with_name(f".{secrets.token_hex(4)}{store.TMP_SUFFIX}")
                store.rename(self._full(rel_src), tmp)
                store.rename(tmp, self._full(rel_dst))
            else:
                store.rename(self._full(rel_src), self._full(rel_dst))
            self._prune(self._full(rel_src).parent)
        return rel_dst

    def _prune(self, folder: Path) -> None:
        while folder != self.root and folder.is_relative_to(self.root):
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent

    # ------------------------------------------------------------ trash
    def delete(self, path: str) -> trash.TrashEntry:
        """Move a file or folder to ``.trash/``; never a hard delete."""
        rel = self._gate(path, write=True)
        with self._change("delete", rel) as changes:
            full = self._full(rel)
            if not full.exists():
                raise NotFoundError(f"{rel} does not exist; list files with list()", path=rel)
            prov = self.current_provenance
            entry = trash.TrashEntry(
                id=trash.new_entry_id(self.root),
                original_path=rel,
                deleted_at=clock.iso(),
                actor=prov.actor,
                session=prov.session,
                is_dir=full.is_dir(),
            )
            for moved in self._files_under(rel):
                changes.touch(moved)
                changes.touch(f"{trash.TRASH_DIR}/{entry.id}/files/{moved}")
            store.rename(full, self._full(entry.stored_path))
            self._prune(full.parent)
            changes.write(entry.meta_path, entry.to_json())
            return entry

    def trash(self) -> list[trash.TrashEntry]:
        """Soft-deleted entries, oldest first."""
        return trash.list_entries(self.root)

    def _find_entry(self, key: str) -> trash.TrashEntry:
        if isinstance(key, str) and trash.is_entry_id(key):
            return trash.load_entry(self.root, key)
        rel = self._gate(key)
        matches = [e for e in trash.list_entries(self.root) if e.original_path == rel]
        if not matches:
            raise NotFoundError(f"nothing deleted from {rel} is in the trash; list entries with trash()", path=rel)
        return max(matches, key=lambda e: e.id)  # ids are monotonic per root

    def restore(self, path_or_entry_id: str, to: str | None = None) -> str:
        """Bring a deleted file back (the latest deletion of a path, or a given entry)."""
        entry = self._find_entry(path_or_entry_id)
        rel = self._gate(to if to is not None else entry.original_path, write=True)
        with self._change("restore", rel) as changes:
            if self._full(rel).exists():
                raise AlreadyExistsError(f"{rel} exists; restore to another path with to=... or move it away first")
            stored = self._full(entry.stored_path)
            if not stored.exists():
                raise NotFoundError(f"trash entry {entry.id} has no files; it may have been purged", path=entry.id)
            for moved in trash.entry_files(self.root, entry):
                changes.touch(moved)
            for moved in self._files_under(entry.stored_path):
                changes.touch(rel + moved[len(entry.stored_path):])
            store.rename(stored, self._full(rel))
            store.remove_file(self._full(entry.folder), self.root)
        return rel

    def purge_trash(self, older_than: timedelta | float | None = None) -> int:
        """Remove trash entries for good (git history still has them); returns how many."""
        if isinstance(older_than, (int, float)):
            older_than = timedelta(days=older_than)
        entries = [
            e for e in trash.list_entries(self.root)
            if older_than is None or trash.age_of(e) >= older_than.total_seconds()
        ]
        if not entries:
            return 0
        with self._change("purge", f"{len(entries)} trash entries") as changes:
            for entry in entries:
                for rel in trash.entry_files(self.root, entry):
                    changes.touch(rel)
                store.remove_file(self._full(entry.folder), self.root)
        return len(entries)

    # ------------------------------------------------------------ history
    def history(self, path: str | None = None, limit: int = 50) -> list[HistoryEntry]:
        """Commits that touched the root or one path, newest first."""
        rel = self._gate(path) if path else None
        return [self._entry(c) for c in self._git.log(rel, limit=max(0, int(limit)))]

    @staticmethod
    def _entry(c: Any) -> HistoryEntry:
        op, _, target = c.subject.partition(": ")
        return HistoryEntry(
            commit=c.commit,
            author=c.author,
            date=c.date,
            op=c.trailers.get("Contextfs-Op", op),
            message=c.subject,
            path=target or None,
            session=c.trailers.get("Contextfs-Session"),
            turn=c.trailers.get("Contextfs-Turn"),
            trailers=dict(c.trailers),
        )

    def read_at(self, path: str, rev: str) -> str | None:
        """The body of ``path`` as it was at ``rev`` (None if it did not exist then)."""
        rel = self._gate(path)
        data = self._git.blob_at(rel, rev)
        if data is None:
            return None
        return _document(decode(data, rel), rel, blob_version(data)).body

    def show_at(self, path: str, rev: str) -> str | None:
        """The whole file (frontmatter included) at ``rev``."""
        rel = self._gate(path)
        data = self._git.blob_at(rel, rev)
        return None if data is None else decode(data, rel)

    def diff(self, path: str, rev_a: str, rev_b: str | None = None) -> str:
        """A unified diff of the whole file between two revisions (or ``rev_a`` and now)."""
        rel = self._gate(path)
        a = self._git.blob_at(rel, rev_a)
        b = self._git.blob_at(rel, rev_b) if rev_b is not None else store.read_bytes(self._full(rel))
        text_a = decode(a, rel) if a is not None else ""
        text_b = decode(b, rel) if b is not None else ""
        return "".join(
            difflib.unified_diff(
                text_a.splitlines(keepends=True),
                text_b.splitlines(keepends=True),
                fromfile=f"a/{rel}@{rev_a}",
                tofile=f"b/{rel}@{rev_b or 'working'}",
            )
        )

    def revert(self, path: str, rev: str) -> Document | None:
        """Make a file what it was at ``rev`` (content and metadata), as a new commit."""
        rel = self._gate(path, write=True)
        data = self._git.blob_at(rel, rev)
        if data is None:
            if self._full(rel).exists():
                self.delete(rel)
            return None
        with self._change("revert", rel, trailers={"Contextfs-Reverts": self._git.resolve(rev).hexsha}) as changes:
            changes.write(rel, data)
        return self._load(rel)

    def revert_session(self, session_id: str) -> RevertReport:
        """Undo everything one session wrote, newest first, one new commit per commit undone.

        A path someone changed after the session is left alone and reported as a conflict.
        """
        sid = _check_token("session", session_id)
        commits = self._git.log(None, limit=0, grep_trailer=("Contextfs-Session", sid))
        reverted: list[str] = []
        made: list[str] = []
        conflicts: list[str] = []
        for c in commits:
            if c.trailers.get("Contextfs-Op") in ("revert-session", "init"):
                continue
            parent = self._git.parent_of(c.commit)
            undone = []
            with self.transaction(f"revert-session: {sid} {c.commit[:12]}", op="revert-session",
                                  trailers={"Contextfs-Reverts": c.commit}) as _:
                txn: _Changes = self._local.txn
                for rel in self._git.commit_paths(c.commit):
                    if rel.split("/")[-1] in paths.MANAGED_FILES:
                        continue
                    after = self._git.blob_at(rel, c.commit)
                    before = self._git.blob_at(rel, parent) if parent else None
                    if store.read_bytes(self._full(rel)) != after:
                        conflicts.append(f"{rel} (changed after {c.commit[:12]})")
                        continue
                    if before is None:
                        txn.remove(rel)
                    else:
                        txn.write(rel, before)
                    undone.append(rel)
            if undone:
                reverted.append(c.commit)
                head = self._git.head()
                if head:
                    made.append(head)
        return RevertReport(session=sid, reverted=reverted, commits=made, conflicts=sorted(set(conflicts)))

    # ------------------------------------------------------------ outside edits
    def sync(self) -> list[str]:
        """Commit edits made behind the store's back (an editor, a script) as ``human``."""
        with self._lock.held():
            dirty = []
            for rel in self._git.dirty():
                if rel.endswith(store.TMP_SUFFIX) or rel == ".contextfs/lock":
                    continue
                full = self._full(rel)
                if full.is_symlink():
                    log.warning("not committing %s: symlinks are never followed", rel)
                    continue
                dirty.append(rel)
            if not dirty:
                return []
            with self.provenance(actor="human"):
                changes = _Changes(self.root, "sync", "sync", {})
                for rel in dirty:
                    changes.before[rel] = None  # force inclusion: compare against HEAD, not disk
                changes.ops.extend(f"sync: {rel}" for rel in dirty[:50])
                self._commit(changes, f"sync: {len(dirty)} file(s) edited outside contextfs", force=True)
            log.info("committed %d file(s) edited outside contextfs", len(dirty))
            return dirty

    # ------------------------------------------------------------ search
    def _open_index(self) -> None:
        from .search import SearchIndex

        self._index = SearchIndex(self)
        self._index.open()

    @property
    def index(self) -> SearchIndex:
        """The search index (opened on first use when the manager was made with index=False)."""
        if self._index is None:
            self._open_index()
        assert self._index is not None
        return self._index

    def search(self, query: str, path: str = "", limit: int = 10, **filters: Any) -> list[SearchHit]:
        """Ranked search; ``for path, snippet in ctx.search(q)`` works as in the seed."""
        return self.index.search(query, path=path, limit=limit, **filters)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def __enter__(self) -> ContextManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ContextManager({str(self.root)!r}, actor={self.current_provenance.actor!r})"
