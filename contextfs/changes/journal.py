"""The intent journal: what an in-flight change is about to do, so a crash can be undone.

Every mutating call writes, before it touches a file, a line saying what it will touch,
what was there (as a git blob id) and what it is about to leave there (the blob id of its
new bytes, or none); once every file is written and the commit objects exist, a ``ready``
line names the commit (and the commit of outside versions under it), and before git's lock
files are taken a ``locks`` line names them by device, inode and content, so recovery can
prove which ones the dead process made. The journal file lives in the root's state
folder under ``.git/`` and is removed when the call returns. A process killed in between
leaves its journal behind, and the next process that takes the root's write lock finds
it (a journal can only belong to a dead process then, because the lock is held for the
whole call) and recovers:

* without a ``ready`` line the change is **rolled back**: every touched path that still
  holds what the dead process left gets its recorded bytes back (a path somebody saved
  since keeps theirs), renames are reversed, temporary files are removed;
* with one it is **rolled forward**: the recorded commit is published (or rebuilt on
  top of whatever HEAD became), with its original author, session and message.

Lines are appended with one ``write`` each, so a kill never tears one; a torn last line is
ignored. Inside a change the journal is not flushed on its own: its lines ride on the
change's flushes (:class:`contextfs.files.durability.Unflushed`), the first of which comes before
the change replaces or removes a byte that was on disk, so the line saying how to put it
back is always durable first.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files.durability import Unflushed, fsync_fd, fsync_path

__all__ = ["Journal", "JournalFile", "Pending"]

log = logging.getLogger(__name__)


@dataclass
class Pending:
    """A journal left by a process that did not finish its change."""

    path: Path
    header: dict[str, Any]
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ready(self) -> dict[str, Any] | None:
        for entry in reversed(self.entries):
            if "ready" in entry:
                return entry["ready"]
        return None

    def marks(self, key: str) -> list[dict[str, Any]]:
        return [e for e in self.entries if key in e]

    def record(self, entry: dict[str, Any]) -> None:
        """Append a line while recovering this change (the caller holds the root's write lock)."""
        line = (json.dumps(entry, separators=(",", ":"), ensure_ascii=True) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.entries.append(entry)


class JournalFile:
    """The journal of one change in progress."""

    def __init__(self, path: Path, durable: bool, unflushed: Unflushed | None = None) -> None:
        self.path = path
        self.durable = durable
        self.unflushed = unflushed
        self._fd: int | None = None

    def record(self, entry: dict[str, Any]) -> None:
        """Append one line; on a durable root, fsync it (and every line before it), or hand
        it to the change's flush."""
        line = (json.dumps(entry, separators=(",", ":"), ensure_ascii=True) + "\n").encode()
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_EXCL, 0o600)
        os.write(self._fd, line)
        if not self.durable:
            return
        if self.unflushed is not None:
            self.unflushed.add(self.path)
        else:
            fsync_fd(self._fd)

    def close(self) -> None:
        """The change is complete (or undone): forget it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


class Journal:
    """The journal folder of one root."""

    def __init__(self, folder: Path, *, durable: bool) -> None:
        self.folder = folder
        self.durable = durable
        #: The flush of the change in progress (None: each durable line is fsynced at once).
        self.unflushed: Unflushed | None = None

    def begin(self, header: dict[str, Any]) -> JournalFile:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns()}-{os.getpid()}-{secrets.token_hex(3)}.jsonl"
        handle = JournalFile(self.folder / name, self.durable, self.unflushed)
        handle.record({"begin": header})
        if self.durable:
            if self.unflushed is not None:
                self.unflushed.add(self.folder)
            else:
                with contextlib.suppress(OSError):
                    fsync_path(self.folder)
        return handle

    def pending(self) -> list[Pending]:
        """Journals of changes that never finished, oldest first."""
        try:
            names = sorted(n for n in os.listdir(self.folder) if n.endswith(".jsonl"))
        except OSError:
            return []
        out = []
        for name in names:
            path = self.folder / name
            try:
                lines = path.read_bytes().split(b"\n")
            except OSError:
                continue
            entries = []
            for raw in lines:
                if not raw.strip():
                    continue
                try:
                    entry = json.loads(raw)
                except ValueError:
                    break  # a torn last line: the step it described never started
                if isinstance(entry, dict):
                    entries.append(entry)
            header = (
                entries[0].get("begin")
                if entries and isinstance(entries[0].get("begin"), dict)
                else None
            )
            if header is None:
                log.warning("removing an unreadable journal %s", path)
                with contextlib.suppress(OSError):
                    path.unlink()
                continue
            out.append(Pending(path, header, entries[1:]))
        return out
