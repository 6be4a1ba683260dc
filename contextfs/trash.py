"""Soft delete: ``.trash/<entry-id>/files/<original path>`` plus ``entry.json``.

An entry keeps the bytes exactly as they were (frontmatter included), who deleted
them and when, so :func:`restore` brings back content and metadata alike. Entries are
committed like everything else, so a deletion is reversible from any clone.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from . import clock
from .errors import NotFoundError

__all__ = ["TRASH_DIR", "TrashEntry", "entry_files", "list_entries", "load_entry", "new_entry_id"]

TRASH_DIR = ".trash"
ENTRY_FILE = "entry.json"
_ID = re.compile(r"^\d{8}T\d{6}(\d{6})?Z-[0-9a-f]{6}$")


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


def new_entry_id(root: Path | None = None) -> str:
    """Sortable by time, unique even for two deletions within one second.

    Given the root, the id is also later than every existing entry's, so "the most
    recent deletion" is the largest id even when the clock is coarse, frozen (tests) or
    stepped back; the caller holds the root lock, so two deletions cannot race here.
    """
    moment = clock.now().astimezone(timezone.utc)
    if root is not None:
        try:
            names = [n for n in os.listdir(root / TRASH_DIR) if is_entry_id(n)]
        except OSError:
            names = []
        if names:
            stamp = max(names).split("Z-", 1)[0]
            fmt = "%Y%m%dT%H%M%S%f" if len(stamp) > 15 else "%Y%m%dT%H%M%S"
            latest = datetime.strptime(stamp, fmt).replace(tzinfo=timezone.utc)
            if moment <= latest:
                moment = latest + timedelta(microseconds=1)
    return moment.strftime("%Y%m%dT%H%M%S%fZ") + "-" + secrets.token_hex(3)


def load_entry(root: Path, entry_id: str) -> TrashEntry:
    if not is_entry_id(entry_id):
        raise NotFoundError(f"{entry_id!r} is not a trash entry id; list entries with trash()", path=entry_id)
    meta = root / TRASH_DIR / entry_id / ENTRY_FILE
    try:
        data = json.loads(meta.read_text("utf-8"))
        return TrashEntry(
            id=entry_id,
            original_path=str(data["original_path"]),
            deleted_at=str(data["deleted_at"]),
            actor=str(data.get("actor", "unknown")),
            session=data.get("session"),
            is_dir=bool(data.get("is_dir", False)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        raise NotFoundError(f"trash entry {entry_id!r} does not exist or is damaged; list entries with trash()", path=entry_id) from None


def list_entries(root: Path) -> list[TrashEntry]:
    """All entries, oldest first."""
    folder = root / TRASH_DIR
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    entries = []
    for name in names:
        if is_entry_id(name):
            try:
                entries.append(load_entry(root, name))
            except NotFoundError:
                continue
    return entries


def entry_files(root: Path, entry: TrashEntry) -> list[str]:
    """Root-relative paths of every file an entry holds (the meta file included)."""
    base = root / TRASH_DIR / entry.id
    out = []
    for dirpath, _dirs, files in os.walk(base):
        for name in files:
            out.append((Path(dirpath) / name).relative_to(root).as_posix())
    return sorted(out)


def age_of(entry: TrashEntry) -> float:
    """Seconds since the entry was deleted."""
    try:
        when = datetime.fromisoformat(entry.deleted_at.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (clock.now() - when).total_seconds()
