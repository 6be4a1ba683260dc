"""Git objects written and read in-process: loose objects and tree surgery.

A commit per change has to be cheap at any tree size. ``git add && git commit`` rewrites
the whole index and hashes trees in proportion to the repository; here a commit writes
its new blobs and only the trees on the changed paths (plus the commit object), so the
cost follows the depth of the changed paths, not the number of files.

Each loose object is written to a temporary file in the objects folder and renamed into
place; :meth:`ObjectStore.flush`, called before a commit is published, makes them durable
as git does with ``core.fsync=committed``. Inside a change (:attr:`ObjectStore.unflushed`
set) the objects are handed to the change's flush, which covers them together with the
files, the journal and git's index in one ``syncfs``; otherwise they are flushed at once
(one ``syncfs`` for a batch, an ``fsync`` each for a few). Temporary names carry the
writer's pid, so what a killed process left can be told from a live one's. An object file
that a power cut left empty is written again instead of being taken for the object.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import re
import secrets
import zlib
from collections.abc import Mapping

from git.objects.fun import tree_entries_from_data
from gitdb import GitDB

from ..errors import VersioningError
from ..files.durability import Unflushed, fsync_path, sync_filesystem, write_all
from .locks import remove_dead_writers_files

__all__ = ["EXEC_MODE", "FILE_MODE", "TREE_MODE", "ObjectStore", "TreeEntry"]

TREE_MODE = 0o040000
FILE_MODE = 0o100644
EXEC_MODE = 0o100755
_TMP_PREFIX = "tmp_obj_cfs-"
#: Above this many new objects, one filesystem flush is cheaper than an fsync each.
_BATCH = 16
_TMP_NAME = re.compile(r"^tmp_obj_cfs-(\d+)-[0-9a-f]+\Z")

#: (binary sha, mode, name) as git stores a tree entry.
TreeEntry = tuple[bytes, int, str]


def _sort_key(entry: TreeEntry) -> bytes:
    name = entry[2].encode("utf-8", "surrogateescape")
    return name + b"/" if entry[1] == TREE_MODE else name


def _piece(entry: TreeEntry) -> bytes:
    sha, mode, name = entry
    return b"%o %s\x00%s" % (mode, name.encode("utf-8", "surrogateescape"), sha)


class _Tree:
    """A tree's entries in git's order with each one's bytes, edited by binary search."""

    __slots__ = ("entries", "keys", "pieces")

    def __init__(
        self,
        entries: list[TreeEntry],
        keys: list[bytes] | None = None,
        pieces: list[bytes] | None = None,
    ) -> None:
        self.entries = entries
        self.keys = keys if keys is not None else [_sort_key(e) for e in entries]
        self.pieces = pieces if pieces is not None else [_piece(e) for e in entries]

    def copy(self) -> _Tree:
        return _Tree(self.entries.copy(), self.keys.copy(), self.pieces.copy())

    def _find(self, name: str) -> int:
        raw = name.encode("utf-8", "surrogateescape")
        for key in (raw, raw + b"/"):  # a file, or a folder of that name
            i = bisect.bisect_left(self.keys, key)
            if i < len(self.keys) and self.keys[i] == key:
                return i
        return -1

    def get(self, name: str) -> TreeEntry | None:
        i = self._find(name)
        return self.entries[i] if i >= 0 else None

    def put(self, name: str, entry: TreeEntry | None) -> None:
        """Set (None: remove) the entry called ``name``."""
        i = self._find(name)
        if i >= 0:
            del self.entries[i], self.keys[i], self.pieces[i]
        if entry is not None:
            key = _sort_key(entry)
            at = bisect.bisect_left(self.keys, key)
            self.entries.insert(at, entry)
            self.keys.insert(at, key)
            self.pieces.insert(at, _piece(entry))


class ObjectStore:
    """The object database of one repository, as contextfs writes and reads it."""

    def __init__(self, objects_dir: str, *, durable: bool = True) -> None:
        self.dir = objects_dir
        self.durable = durable
        self._known_dirs: set[str] = set()
        self._dirty_dirs: set[str] = set()
        self._unsynced: list[str] = []
        self._reader = GitDB(objects_dir)
        self._trees: dict[bytes, list[TreeEntry]] = {}
        self._edited: dict[bytes, _Tree] = {}  # trees this process built, ready to edit
        self._commit_trees: dict[str, bytes] = {}
        #: The flush of the change in progress, which takes the objects written (None: flush here).
        self.unflushed: Unflushed | None = None

    # ------------------------------------------------------------ writing
    def store(self, kind: bytes, data: bytes) -> bytes:
        """Write one loose object; skip the write when git already has it. Returns its sha."""
        raw = b"%s %d\x00" % (kind, len(data)) + data
        binsha = hashlib.sha1(raw).digest()
        hexsha = binsha.hex()
        folder = os.path.join(self.dir, hexsha[:2])
        final = os.path.join(folder, hexsha[2:])
        if self.has(binsha):
            return binsha
        tmp = os.path.join(self.dir, f"{_TMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}")
        try:
            if folder not in self._known_dirs:
                try:
                    os.mkdir(folder)
                    # A new fan-out folder is an entry of objects/: flushed too, or a power
                    # cut can take the folder and every object in it.
                    self._dirty_dirs.add(self.dir)
                except FileExistsError:
                    pass
                self._known_dirs.add(folder)
            # Created read-only, as git does, without a separate chmod call.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            try:
                write_all(fd, zlib.compress(raw, 1))
            finally:
                os.close(fd)
            os.replace(tmp, final)
            self._dirty_dirs.add(folder)
            self._unsynced.append(final)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise VersioningError(
                f"cannot write a git object ({exc.strerror}); check .git permissions and free disk space"
            ) from None
        return binsha

    def has(self, binsha: bytes) -> bool:
        """Whether git has the object (a loose file with bytes in it, or in a pack)."""
        hexsha = binsha.hex()
        try:
            if os.stat(os.path.join(self.dir, hexsha[:2], hexsha[2:])).st_size > 0:
                return True
        except OSError:
            pass
        return self._packed(binsha)

    def _packed(self, binsha: bytes) -> bool:
        # Only consulted when the loose file is absent: after `git gc` most objects are packed.
        try:
            return bool(self._reader.has_object(binsha))
        except Exception:  # noqa: BLE001 - a pack written after GitDB listed the packs
            self._reader.update_cache(force=True)
            try:
                return bool(self._reader.has_object(binsha))
            except Exception:  # noqa: BLE001
                return False

    def flush(self) -> None:
        """Make every object written since the last flush, and its folder entry, durable."""
        written, folders = self._unsynced, sorted(self._dirty_dirs)
        self._unsynced, self._dirty_dirs = [], set()
        if not self.durable or not written:
            return
        if self.unflushed is not None:
            self.unflushed.add(*written, *folders)
            return
        if len(written) > _BATCH and sync_filesystem(self.dir):
            return
        try:
            for path in written + folders:
                fsync_path(path)
        except OSError as exc:
            raise VersioningError(
                f"cannot make git objects durable ({exc.strerror}); check the disk"
            ) from None

    def remove_empty(self) -> int:
        """Delete loose object files that are empty (a power cut kept the name, not the bytes),
        so git does not report them and the next write of that object makes it again."""
        removed = 0
        try:
            folders = [f for f in os.listdir(self.dir) if len(f) == 2]
        except OSError:
            return 0
        for folder in folders:
            path = os.path.join(self.dir, folder)
            with contextlib.suppress(OSError):
                for name in os.listdir(path):
                    full = os.path.join(path, name)
                    with contextlib.suppress(OSError):
                        if os.lstat(full).st_size == 0:
                            os.unlink(full)
                            removed += 1
        return removed

    def remove_leftovers(self) -> int:
        """Delete temporary object files of processes that are no longer running."""
        return remove_dead_writers_files(self.dir, _TMP_NAME)

    def intact(self, binsha: bytes) -> bool:
        """True when git has the object and its bytes hash to its id (a power cut can leave
        a loose object empty or cut short)."""
        hexsha = binsha.hex()
        try:
            with open(os.path.join(self.dir, hexsha[:2], hexsha[2:]), "rb") as fh:
                raw = zlib.decompress(fh.read())
        except FileNotFoundError:
            return self._packed(binsha)
        except (OSError, zlib.error):
            return False
        return hashlib.sha1(raw).digest() == binsha

    # ------------------------------------------------------------ reading
    def read(self, binsha: bytes) -> tuple[str, bytes]:
        """(type, data) of an object."""
        try:
            stream = self._reader.stream(binsha)
        except Exception:  # noqa: BLE001 - a pack written after GitDB listed the packs
            self._reader.update_cache(force=True)
            try:
                stream = self._reader.stream(binsha)
            except Exception:  # noqa: BLE001
                raise VersioningError(
                    f"git object {binsha.hex()} is missing; run 'git fsck' on the repository"
                ) from None
        kind = stream.type
        return (kind.decode() if isinstance(kind, bytes) else str(kind)), stream.read()

    def tree(self, binsha: bytes | None) -> list[TreeEntry]:
        """Entries of a tree, cached (trees never change)."""
        if binsha is None:
            return []
        cached = self._trees.get(binsha)
        if cached is None:
            _kind, data = self.read(binsha)
            cached = list(tree_entries_from_data(data))
            self._remember(binsha, cached)
        return cached

    def commit_tree(self, commit_hex: str) -> bytes:
        """The tree id of a commit (cached: a commit never changes)."""
        cached = self._commit_trees.get(commit_hex)
        if cached is not None:
            return cached
        try:
            binsha = bytes.fromhex(commit_hex)
        except ValueError:
            raise VersioningError(
                f"{commit_hex!r} is not a commit id; check the repository's refs"
            ) from None
        _kind, data = self.read(binsha)
        first = data.split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            raise VersioningError(
                f"commit {commit_hex} has no tree; run 'git fsck' on the repository"
            )
        tree = bytes.fromhex(first[5:].decode())
        if len(self._commit_trees) > 4096:
            self._commit_trees.clear()
        self._commit_trees[commit_hex] = tree
        return tree

    def lookup(self, tree: bytes | None, path: str) -> TreeEntry | None:
        """The entry at ``path`` (slash separated) under ``tree``, or None."""
        entry: TreeEntry | None = None
        current = tree
        for name in path.split("/"):
            if current is None:
                return None
            entry = next((e for e in self.tree(current) if e[2] == name), None)
            if entry is None:
                return None
            current = entry[0] if entry[1] == TREE_MODE else None
        return entry

    # ------------------------------------------------------------ tree surgery
    def rewrite(
        self, base: bytes | None, changes: Mapping[str, tuple[bytes, int] | None]
    ) -> bytes | None:
        """The tree ``base`` with ``changes`` applied (path -> (blob sha, mode) or None to remove).

        Only the trees on changed paths are rebuilt; None comes back for an empty tree.
        """
        tree = self._editable(base)
        nested: dict[str, dict[str, tuple[bytes, int] | None]] = {}
        added: dict[str, tuple[bytes, int]] = {}
        for name, value in changes.items():
            head, sep, tail = name.partition("/")
            if sep:
                nested.setdefault(head, {})[tail] = value
            elif value is None:
                tree.put(head, None)
            else:
                added[head] = value
        # Removals, then folders, then files: a file that takes the place of a folder emptied
        # in the same change (or the other way round) is kept, whatever the order of changes.
        for head, sub in nested.items():
            old = tree.get(head)
            new = self.rewrite(old[0] if old and old[1] == TREE_MODE else None, sub)
            tree.put(head, None if new is None else (new, TREE_MODE, head))
        for head, (sha, mode) in added.items():
            tree.put(head, (sha, mode, head))
        if not tree.entries:
            return None
        binsha = self.store(b"tree", b"".join(tree.pieces))
        # The next change starts from this tree: keep its entries (and their bytes), so it is
        # never read back and parsed, nor its unchanged entries sorted and formatted again (at
        # 10,000 files in one folder that was most of a commit's time).
        self._remember(binsha, tree.entries)
        if len(self._edited) > 64:
            self._edited.clear()
        self._edited[binsha] = tree
        return binsha

    def _editable(self, binsha: bytes | None) -> _Tree:
        """A copy of tree ``binsha`` that :meth:`_Tree.put` can change."""
        known = self._edited.get(binsha) if binsha is not None else None
        if known is not None:
            return known.copy()
        return _Tree(sorted(self.tree(binsha), key=_sort_key))

    def _remember(self, binsha: bytes, entries: list[TreeEntry]) -> None:
        if len(self._trees) > 4096:
            self._trees.clear()
        self._trees[binsha] = entries
