"""Two trees merged against their base, path by path, without a work tree or git's merge.

:func:`merge_trees` walks the three trees together and skips every subtree that one side
left as the base had it, so a merge costs what changed, not what the root holds. Each
path both sides changed goes through :func:`.files.merge_file`. No rename detection is
done on purpose: a soft delete moves a file into ``.trash/``, and git's rename detection
would apply the other side's edit to the trash copy and lose the live file; here the
delete and the edit meet at the file's own path, and the edit survives.

Entries that are not plain files (symlinks, submodules) are never read: they are passed
through as changes for the caller's gate to refuse. A name that is a folder on one side
and a file on the other keeps our side; a file from their side is kept as a conflict copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..versioning.objects import EXEC_MODE, FILE_MODE, TREE_MODE, TreeEntry
from .files import merge_file
from .report import MergeNote, conflict_copy_path

__all__ = ["Change", "Merged", "ObjectReader", "TreeMerge", "TreeWriter", "merge", "merge_trees"]

#: A path's new (blob id, mode), or None when the path goes.
Change = tuple[bytes, int] | None
_FILES = (FILE_MODE, EXEC_MODE)


class ObjectReader(Protocol):
    """What a merge needs of git's object database (:class:`~contextfs.versioning.objects.ObjectStore`)."""

    def tree(self, binsha: bytes | None) -> list[TreeEntry]: ...

    def read(self, binsha: bytes) -> tuple[str, bytes]: ...

    def store(self, kind: bytes, data: bytes) -> bytes: ...


@dataclass
class TreeMerge:
    """What merging changes relative to our tree, what came from theirs, and the notes."""

    changes: dict[str, Change] = field(default_factory=dict)
    incoming: set[str] = field(default_factory=set)
    notes: list[MergeNote] = field(default_factory=list)


class _Walk:
    def __init__(self, objects: ObjectReader, when: tuple[float, float]) -> None:
        self.objects = objects
        self.when = when
        self.out = TreeMerge()

    def entries(self, tree: bytes | None) -> dict[str, tuple[bytes, int]]:
        return {name: (sha, mode) for sha, mode, name in self.objects.tree(tree)}

    def files(self, tree: bytes, path: str) -> dict[str, tuple[bytes, int]]:
        found: dict[str, tuple[bytes, int]] = {}
        for name, (sha, mode) in self.entries(tree).items():
            if mode == TREE_MODE:
                found.update(self.files(sha, f"{path}{name}/"))
            else:
                found[path + name] = (sha, mode)
        return found

    def blob(self, entry: tuple[bytes, int] | None) -> bytes | None:
        if entry is None:
            return None
        kind, data = self.objects.read(entry[0])
        return data if kind == "blob" else None

    # ------------------------------------------------------------ theirs wholesale
    def take(
        self, ours: tuple[bytes, int] | None, theirs: tuple[bytes, int] | None, rel: str
    ) -> None:
        """Make ``rel`` (a file or a folder) what theirs has, recording every file that changes."""
        mine = (
            {}
            if ours is None
            else ({rel: ours} if ours[1] != TREE_MODE else self.files(ours[0], rel + "/"))
        )
        other = (
            {}
            if theirs is None
            else ({rel: theirs} if theirs[1] != TREE_MODE else self.files(theirs[0], rel + "/"))
        )
        for path in sorted({*mine, *other}):
            if mine.get(path) != other.get(path):
                self.out.changes[path] = other.get(path)
                if path in other:
                    self.out.incoming.add(path)

    def take_tree(self, ours: bytes | None, theirs: bytes | None, path: str) -> None:
        mine, other = self.entries(ours), self.entries(theirs)
        for name in sorted({*mine, *other}):
            o, t = mine.get(name), other.get(name)
            if o == t:
                continue
            if o is not None and t is not None and o[1] == TREE_MODE and t[1] == TREE_MODE:
                self.take_tree(o[0], t[0], f"{path}{name}/")
            else:
                self.take(o, t, path + name)

    # ------------------------------------------------------------ both sides
    def walk(self, base: bytes | None, ours: bytes | None, theirs: bytes | None, path: str) -> None:
        if ours == theirs or base == theirs:
            return
        if base == ours:
            self.take_tree(ours, theirs, path)
            return
        b, o, t = self.entries(base), self.entries(ours), self.entries(theirs)
        for name in sorted({*b, *o, *t}):
            be, oe, te = b.get(name), o.get(name), t.get(name)
            if oe == te or be == te:
                continue
            rel = path + name
            if be == oe:
                self.take(oe, te, rel)
                continue
            modes = {e[1] for e in (be, oe, te) if e is not None}
            if modes == {TREE_MODE}:
                self.walk(
                    be[0] if be else None, oe[0] if oe else None, te[0] if te else None, rel + "/"
                )
            elif TREE_MODE in modes:
                self.clash(be, oe, te, rel)
            else:
                self.file(be, oe, te, rel)

    def clash(
        self,
        be: tuple[bytes, int] | None,
        oe: tuple[bytes, int] | None,
        te: tuple[bytes, int] | None,
        rel: str,
    ) -> None:
        """A folder on one side and a file on the other: our side keeps the name."""
        if oe is None:
            self.take(oe, te, rel)
            return
        if te is not None and te[1] != TREE_MODE:
            data = self.blob(te)
            if data is not None:
                copy = conflict_copy_path(rel, data)
                self.out.changes[copy] = (te[0], FILE_MODE)
                self.out.incoming.add(copy)
                self.out.notes.append(
                    MergeNote(
                        rel,
                        "conflict-copy",
                        f"a folder on our side and a file on theirs; their file is kept as {copy}",
                    )
                )
                return
        self.out.notes.append(
            MergeNote(
                rel,
                "conflict-copy",
                "a file on one side and a folder on the other; "
                "our side is kept, theirs is in history",
            )
        )

    def file(
        self,
        be: tuple[bytes, int] | None,
        oe: tuple[bytes, int] | None,
        te: tuple[bytes, int] | None,
        rel: str,
    ) -> None:
        if any(e is not None and e[1] not in _FILES for e in (oe, te)):
            if te is not None and te[1] not in _FILES:
                self.out.changes[rel] = te  # the gate refuses it, with a note
                self.out.incoming.add(rel)
            return
        same_content = oe is not None and te is not None and oe[0] == te[0]
        mode = self.mode(be, oe, te)
        if same_content:
            assert oe is not None
            if mode != oe[1]:
                self.out.changes[rel] = (oe[0], mode)
            return
        base_data = None if be is None or be[1] not in _FILES else self.blob(be)
        ours_data, theirs_data = self.blob(oe), self.blob(te)
        result = merge_file(rel, base_data, ours_data, theirs_data, when=self.when)
        self.out.notes.extend(result.notes)
        if result.data is None:
            if oe is not None:
                self.out.changes[rel] = None
        elif result.data != ours_data or (oe is not None and mode != oe[1]):
            self.out.changes[rel] = (self.objects.store(b"blob", result.data), mode)
            self.out.incoming.add(rel)
        if result.copy is not None:
            copy, data = result.copy
            self.out.changes[copy] = (self.objects.store(b"blob", data), FILE_MODE)
            self.out.incoming.add(copy)

    @staticmethod
    def mode(
        be: tuple[bytes, int] | None, oe: tuple[bytes, int] | None, te: tuple[bytes, int] | None
    ) -> int:
        b, o, t = (e[1] if e is not None else None for e in (be, oe, te))
        if o is None:
            return t or FILE_MODE
        if t is None or t == o or b == t:
            return o
        return t if b == o else o


def merge_trees(
    objects: ObjectReader,
    base: bytes | None,
    ours: bytes | None,
    theirs: bytes | None,
    *,
    when: tuple[float, float] = (0.0, 0.0),
) -> TreeMerge:
    """Merge ``theirs`` into ``ours`` against ``base`` (tree ids, None for none).

    ``when`` is (our, their) commit time, for deciding which side is newer where the
    files do not say. Paths in the result are relative to the trees given.
    """
    walk = _Walk(objects, when)
    walk.walk(base, ours, theirs, "")
    return walk.out


@dataclass(frozen=True)
class Merged:
    """A merge's result tree and what was decided on the way."""

    tree: bytes
    merge: TreeMerge


class TreeWriter(ObjectReader, Protocol):
    """An object database that can also rebuild trees (:class:`~contextfs.versioning.objects.ObjectStore`)."""

    def rewrite(self, base: bytes | None, changes: dict[str, Change]) -> bytes | None: ...


def merge(
    objects: TreeWriter,
    base: bytes | None,
    ours: bytes | None,
    theirs: bytes | None,
    *,
    when: tuple[float, float] = (0.0, 0.0),
) -> Merged:
    """``merge_trees`` plus the result tree itself: base, ours, theirs in; one tree and reports out."""
    done = merge_trees(objects, base, ours, theirs, when=when)
    tree = objects.rewrite(ours, done.changes) if done.changes else ours
    return Merged(tree if tree is not None else objects.store(b"tree", b""), done)
