"""Soft delete: ``.trash/<entry-id>/files/<original path>`` plus ``entry.json``.

An entry keeps the bytes exactly as they were (frontmatter included), who deleted
them and when, so :func:`restore` brings back content and metadata alike. Entries are
committed like everything else, so a deletion is reversible from any clone.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from .. import clock
from ..errors import AlreadyExistsError, ContextFSError, InvalidArgumentError, NotFoundError
from ..files import paths
from ..files.confined import RootFiles
from ..fixes import Fix

if TYPE_CHECKING:
    from ..parts import RootParts
    from .transaction import Change

__all__ = [
    "TRASH_DIR",
    "TrashEntry",
    "delete",
    "delete_path",
    "entry_files",
    "find",
    "list_entries",
    "load_entry",
    "new_entry_id",
    "purge",
    "purge_older",
    "purgeable",
    "restore",
    "restore_path",
]

# Entries arrive by clone and pull like any file, so every field is validated on load:
# an ``original_path`` of '../../.git/config' must never steer a restore.

TRASH_DIR = ".trash"
ENTRY_FILE = "entry.json"
_ID = re.compile(r"^\d{8}T\d{6}(\d{6})?Z-[0-9a-f]{6}\Z")


@dataclass(frozen=True)
class TrashEntry:
    """One soft-deleted file or folder."""

    id: str
    original_path: str
    deleted_at: str
    actor: str
    session: str | None = None
    is_dir: bool = False

    @property
    def folder(self) -> str:
        """The entry's folder, relative to the root."""
        return f"{TRASH_DIR}/{self.id}"

    @property
    def stored_path(self) -> str:
        """Where the deleted bytes live now, relative to the root."""
        return f"{TRASH_DIR}/{self.id}/files/{self.original_path}"

    @property
    def meta_path(self) -> str:
        return f"{TRASH_DIR}/{self.id}/{ENTRY_FILE}"

    def to_json(self) -> bytes:
        data = {
            "id": self.id,
            "original_path": self.original_path,
            "deleted_at": self.deleted_at,
            "actor": self.actor,
            "session": self.session,
            "is_dir": self.is_dir,
        }
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def is_entry_id(text: str) -> bool:
    return bool(_ID.match(text))


def _in_time_order(entry_id: str) -> str:
    """An id as a key that sorts by deletion time: an id in the older form, to the second
    (``20260301T120000Z-...``), reads as that second's first microsecond; as written it would
    sort after every newer id of the same second (``Z`` after the digits)."""
    stamp, _, rest = entry_id.partition("Z-")
    return (stamp if len(stamp) > 15 else stamp + "000000") + "Z-" + rest


def new_entry_id(files: RootFiles | None = None) -> str:
    """Sortable by time, unique even for two deletions within one second.

    Given the root, the id is also later than every existing entry's, so "the most
    recent deletion" is the largest id even when the clock is coarse, frozen (tests) or
    stepped back; the caller holds the root lock, so two deletions cannot race here.
    """
    moment = clock.now().astimezone(timezone.utc)
    if files is not None:
        try:
            names = [n for n in files.listdir(TRASH_DIR) if is_entry_id(n)]
        except ContextFSError:
            names = []
        if names:
            stamp = _in_time_order(max(names, key=_in_time_order)).split("Z-", 1)[0]
            latest = datetime.strptime(stamp, "%Y%m%dT%H%M%S%f").replace(tzinfo=timezone.utc)
            if moment <= latest:
                moment = latest + timedelta(microseconds=1)
    return moment.strftime("%Y%m%dT%H%M%S%fZ") + "-" + secrets.token_hex(3)


def load_entry(files: RootFiles, entry_id: str) -> TrashEntry:
    """The entry ``entry_id``; a missing, damaged or hostile entry is NotFoundError."""
    if not isinstance(entry_id, str) or not is_entry_id(entry_id):
        raise NotFoundError(
            f"{entry_id!r} is not a trash entry id", path=str(entry_id), fix=Fix("trash")
        )
    damaged = NotFoundError(
        f"trash entry {entry_id!r} does not exist or is damaged", path=entry_id, fix=Fix("trash")
    )
    try:
        raw = files.read(f"{TRASH_DIR}/{entry_id}/{ENTRY_FILE}")
        if raw is None or len(raw) > 64 * 1024:
            raise damaged
        data = json.loads(raw.decode("utf-8"))
        original = paths.check(files.root, data["original_path"], allow_internal=False)
        if data.get("id", entry_id) != entry_id:
            raise damaged
        session = data.get("session")
        return TrashEntry(
            id=entry_id,
            original_path=original,
            deleted_at=str(data["deleted_at"])[:64],
            actor=str(data.get("actor", "unknown"))[:80],
            session=str(session)[:128] if session is not None else None,
            is_dir=bool(data.get("is_dir", False)),
        )
    except (ContextFSError, ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        raise damaged from None


def list_entries(files: RootFiles) -> list[TrashEntry]:
    """All readable entries, oldest first (damaged ones are left out)."""
    try:
        names = sorted(files.listdir(TRASH_DIR), key=_in_time_order)
    except ContextFSError:
        return []
    entries = []
    for name in names:
        if is_entry_id(name):
            try:
                entries.append(load_entry(files, name))
            except NotFoundError:
                continue
    return entries


def entry_files(files: RootFiles, entry: TrashEntry) -> list[str]:
    """Root-relative paths of every file an entry holds (the meta file included)."""
    return sorted(st.rel for st in files.walk(entry.folder))


def age_of(entry: TrashEntry) -> float:
    """Seconds since the entry was deleted."""
    try:
        when = datetime.fromisoformat(entry.deleted_at.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (clock.now() - when).total_seconds()


# ---------------------------------------------------------------- operations
def delete(change: Change, rel: str, prov: Any) -> TrashEntry:
    """Move ``rel`` (a file or folder) into a new entry, as part of ``change``.

    The entry's metadata is written first and the bytes are then moved with one rename:
    on a full disk the metadata write fails before anything moved, and undoing a failure
    after the move renames the file back instead of rewriting it.
    """
    files = change.files
    kind = files.kind(rel)
    if kind not in ("file", "dir"):
        raise NotFoundError(
            f"{rel} does not exist", path=rel, fix=Fix("list", rel.rpartition("/")[0])
        )
    entry = TrashEntry(
        id=new_entry_id(files),
        original_path=rel,
        deleted_at=clock.iso(),
        actor=prov.actor,
        session=prov.session,
        is_dir=kind == "dir",
    )
    moved = [rel] if kind == "file" else sorted(st.rel for st in files.walk(rel))
    change.write(entry.meta_path, entry.to_json())
    change.rename(rel, entry.stored_path, moved)
    return entry


def find(files: RootFiles, key: object, gate: Callable[[object], str]) -> TrashEntry:
    """The entry with id ``key``, or the latest deletion of the path ``key``."""
    if isinstance(key, str) and is_entry_id(key):
        return load_entry(files, key)
    rel = gate(key)
    matches = [e for e in list_entries(files) if e.original_path == rel]
    if not matches:
        raise NotFoundError(
            f"nothing deleted from {rel} is in the trash", path=rel, fix=Fix("trash")
        )
    return max(matches, key=lambda e: _in_time_order(e.id))  # ids are monotonic per root


def restore(change: Change, entry: TrashEntry, rel: str) -> None:
    """Move an entry's bytes to ``rel`` and drop the entry, as part of ``change``."""
    files = change.files
    if files.kind(rel) is not None:
        raise AlreadyExistsError(
            f"{rel} exists; restore to another path with to=... or move it away first"
        )
    kind = files.kind(entry.stored_path)
    if kind not in ("file", "dir"):
        raise NotFoundError(
            f"trash entry {entry.id} has no files; it may have been purged", path=entry.id
        )
    moved = (
        [entry.stored_path]
        if kind == "file"
        else sorted(st.rel for st in files.walk(entry.stored_path))
    )
    change.rename(entry.stored_path, rel, moved)
    for leftover in entry_files(files, entry):
        change.remove(leftover)


def purgeable(files: RootFiles, older_than: timedelta | float | None) -> list[TrashEntry]:
    """Entries at least ``older_than`` old (a number means days), all of them for None."""
    if isinstance(older_than, bool) or not (
        older_than is None or isinstance(older_than, (int, float, timedelta))
    ):
        raise InvalidArgumentError(
            f"older_than must be a number of days or a timedelta, not {older_than!r}"
        )
    if isinstance(older_than, (int, float)):
        if (
            not 0 <= older_than <= 36_500_000
        ):  # NaN fails both sides; timedelta stops near 2.7 million years
            raise InvalidArgumentError(
                f"older_than must be a number of days from 0 to 36,500,000, not {older_than!r}"
            )
        older_than = timedelta(days=older_than)
    return [
        e
        for e in list_entries(files)
        if older_than is None or age_of(e) >= older_than.total_seconds()
    ]


def purge(change: Change, chosen: list[TrashEntry]) -> None:
    """Remove entries for good (git history keeps them), as part of ``change``."""
    for entry in chosen:
        for rel in entry_files(change.files, entry):
            change.remove(rel)


def delete_path(parts: RootParts, path: str) -> TrashEntry:
    """Move the file or folder at ``path`` to the trash, as one change."""
    rel = parts.gate(path, write=True)
    with parts.change("delete", rel) as change:
        return delete(change, rel, parts.current_provenance)


def restore_path(parts: RootParts, path_or_entry_id: str, to: str | None = None) -> str:
    """Bring back the latest deletion of a path (or a given entry) to ``to`` or where it was."""
    entry = find(parts.files, path_or_entry_id, parts.gate)
    rel = parts.gate(to if to is not None else entry.original_path, write=True)
    with parts.change("restore", rel) as change:
        restore(change, entry, rel)
    return rel


def purge_older(parts: RootParts, older_than: timedelta | float | None = None) -> int:
    """Remove the entries older than ``older_than`` (all without it) for good; how many."""
    chosen = purgeable(parts.files, older_than)
    if not chosen:
        return 0
    with parts.change("purge", f"{len(chosen)} trash entries") as change:
        purge(change, chosen)
    return len(chosen)
