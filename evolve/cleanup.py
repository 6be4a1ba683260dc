"""Periodic cleanup: archive what nobody reads, consolidate lessons.

Access times live in a derived cache (:data:`ACCESS_FILE`), never in commits, because
a commit per read would bury real history and make every read a write.
:func:`track_access` registers a read listener on the manager
(``ctx.add_read_listener``); reads through ``ctx.read``/``ctx.get`` then stamp the cache
(throttled to one disk write per file per minute). Like every cache it heals: a corrupt or missing file starts a fresh log, and a
file's age is then counted from when tracking started, so a new or lost cache can never
make everything look stale at once.

:func:`cleanup` moves files not read for ``older_than_days`` to ``archive/<path>``
(a move, so git keeps their history and ``ctx.restore``-style undo is a ``move`` back),
and merges duplicate lessons and facts. Everything happens in one commit;
``dry_run=True`` returns the plan and writes nothing.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import threading
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from contextfs import clock
from contextfs.config import check_keys
from contextfs.document import as_content, decode, parse
from contextfs.errors import ContextFSError, EvolveError
from contextfs.manager import ContextManager
from contextfs.poisoning import assess
from contextfs.scopes.derived import CACHE_DIR
from contextfs.state import StateDir

from . import prompts
from .entries import Change, EntryFile, Kind
from .hygiene import clean
from .llm import LanguageModel, ask, run_sync
from .parsing import extract_json

__all__ = [
    "ACCESS_FILE",
    "DEFAULT_PROTECT",
    "AccessLog",
    "Action",
    "CleanupReport",
    "cleanup",
    "track_access",
]

log = logging.getLogger(__name__)

ACCESS_FILE = f"{CACHE_DIR}/access.json"
ARCHIVE_DIR = "archive"
#: Never archived for being unread: always-loaded files, memory tiers, topics, logs.
DEFAULT_PROTECT = (
    "project/README.md",
    "memory/*",
    "skills/*",
    "task/current.md",
    "topics/*",
    "sessions/*",
    "archive/*",
)
_FLUSH_SECONDS = 60


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


class AccessLog:
    """Last-read times per path, in the derived cache (merged with disk on every flush)."""

    def __init__(self, state: StateDir) -> None:
        self.state = state
        self.path = state.file(ACCESS_FILE)
        self._lock = threading.Lock()
        # Processes reading one root flush the same file: its read-merge-write is taken
        # under a file lock, or one process's flush would drop what another just wrote.
        self._shared = state.lock(ACCESS_FILE + ".lock", timeout=10.0)
        self._corrupt = False
        self.started, self.files = self._load()
        if self._corrupt or not self.path.exists():
            self.flush()  # heal: a missing or unreadable cache is rewritten at once

    def _load(self) -> tuple[datetime, dict[str, str]]:
        data = self.state.read_bytes(ACCESS_FILE)
        if data is not None:
            try:
                raw = json.loads(data)
                started = _parse_time(raw.get("started"))
                files = raw.get("files")
                if started is not None and isinstance(files, dict):
                    return started, {str(k): str(v) for k, v in files.items() if _parse_time(v)}
            except (ValueError, AttributeError):
                pass
            log.warning("access log %s is unreadable; starting a fresh one", self.path)
            self._corrupt = True
        return clock.now(), {}

    def touch(self, rel: str) -> None:
        """Record a read of ``rel`` now (the manager calls this on every read)."""
        now = clock.now()
        with self._lock:
            prev = _parse_time(self.files.get(rel))
            self.files[rel] = clock.iso(now)
            due = prev is None or (now - prev).total_seconds() >= _FLUSH_SECONDS
        if due:
            self.flush()

    def last_read(self, rel: str) -> datetime | None:
        return _parse_time(self.files.get(rel))

    def moved(self, src: str, dst: str) -> None:
        with self._lock:
            stamp = self.files.pop(src, None)
            if stamp:
                self.files[dst] = stamp

    def flush(self) -> None:
        try:
            with self._shared.held():
                self._merge_and_write()
        except ContextFSError as exc:  # a cache must never break a read
            log.warning("could not update the access log: %s", exc)

    def _merge_and_write(self) -> None:
        with self._lock:
            started, on_disk = self._load() if self.path.exists() else (self.started, {})
            for rel, stamp in on_disk.items():
                mine = _parse_time(self.files.get(rel))
                theirs = _parse_time(stamp)
                if mine is None or (theirs is not None and theirs > mine):
                    self.files[rel] = stamp
            self.started = min(self.started, started)
            payload = {"version": 1, "started": clock.iso(self.started), "files": dict(sorted(self.files.items()))}
            try:
                self.state.write_bytes(ACCESS_FILE, json.dumps(payload, indent=1).encode("utf-8"))
            except ContextFSError as exc:  # a cache must never break a read
                log.warning("could not write the access log: %s", exc)


# One access log per manager, registered once as its read listener; weak keys, so a
# closed manager is not kept alive by the tracking.
_TRACKED: weakref.WeakKeyDictionary[ContextManager, AccessLog] = weakref.WeakKeyDictionary()
_TRACKED_LOCK = threading.Lock()


def track_access(ctx: ContextManager) -> AccessLog:
    """Record every ``ctx.read``/``ctx.get`` in the access log (idempotent); return the log."""
    with _TRACKED_LOCK:
        access = _TRACKED.get(ctx)
        if access is None:
            access = _TRACKED[ctx] = AccessLog(ctx.state)
            ctx.add_read_listener(access.touch)
    return access


@dataclass(frozen=True)
class Action:
    """One step of a cleanup: ``archive`` a file, or ``merge`` entries in a memory file."""

    kind: str
    path: str
    to: str | None = None
    reason: str = ""


@dataclass
class CleanupReport:
    """The plan (dry run) or what was done; ``commit`` is None when nothing was written."""

    dry_run: bool
    cutoff: str
    actions: list[Action] = field(default_factory=list)
    commit: str | None = None
    notes: list[str] = field(default_factory=list)


def _protected(rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(rel, pat) for pat in patterns)


def _modified(ctx: ContextManager, rel: str) -> datetime | None:
    data = ctx.read_raw(rel)
    if data is not None:
        try:
            updated = _parse_time(parse(decode(data, rel), rel).metadata.get("updated"))
        except ContextFSError:
            updated = None
        if updated is not None:
            return updated
    entries = ctx.history(rel, limit=1)
    return _parse_time(entries[0].date) if entries else None


def _archive_target(ctx: ContextManager, archive_dir: str, rel: str) -> str:
    target = f"{archive_dir}/{rel}"
    stem, dot, ext = target.rpartition(".")
    n = 2
    while ctx.exists(target):
        target = f"{stem}-{n}.{ext}" if dot else f"{target}-{n}"
        n += 1
    return target


def _stale_files(ctx: ContextManager, access: AccessLog, cutoff: datetime,
                 protect: tuple[str, ...], archive_dir: str) -> list[Action]:
    actions = []
    for rel in ctx.list(""):
        if not rel.endswith(".md") or _protected(rel, protect) or rel.startswith(archive_dir + "/"):
            continue
        seen = [t for t in (access.last_read(rel), _modified(ctx, rel), access.started) if t is not None]
        last = max(seen)
        if last < cutoff:
            days = (clock.now() - last).days
            actions.append(Action("archive", rel, _archive_target(ctx, archive_dir, rel),
                                  f"not read or changed for {days} days (since {clock.iso(last)})"))
    return actions


async def _model_groups(llm: LanguageModel | None, file: EntryFile) -> list[dict[str, Any]]:
    live = [(e.id, e.text) for e in file.entries if e.active]
    if len(live) < 2:
        return []
    text = await ask(llm, prompts.consolidate_messages(live), step="lesson consolidation")
    value = extract_json(text, what="lesson consolidation")
    groups = value.get("groups") if isinstance(value, dict) else value
    if not isinstance(groups, list):
        raise EvolveError("the model's lesson consolidation has no 'groups' list; retry")
    ids = {i for i, _ in live}
    out = []
    for g in groups:
        if not isinstance(g, dict) or not isinstance(g.get("lesson"), str) or not isinstance(g.get("ids"), list):
            raise EvolveError("the model's lesson consolidation has a malformed group; retry")
        members = [i for i in g["ids"] if i in ids]
        if len(members) >= 2:
            out.append({"ids": members, "lesson": g["lesson"], "title": g.get("title")})
    return out


def _consolidate(ctx: ContextManager, path: str, kind: Kind, groups: list[dict[str, Any]]) -> tuple[str | None, list[Change]]:
    body = ctx.read(path)
    if body is None:
        return None, []
    file = EntryFile(body, kind)
    date = clock.now().date().isoformat()
    changes = file.dedupe(date=date)
    for g in groups:
        text = clean(g["lesson"]).text
        if text is None or assess(text).suspicious:
            log.warning("not writing consolidated lesson %r: emotional or instruction-like", g["lesson"])
            continue
        change = file.consolidate(g["ids"], text, title=g.get("title"), date=date, task="cleanup")
        if change is not None:
            changes.append(change)
    rendered = file.render()
    return (rendered if changes and rendered != body else None), changes


def cleanup(
    ctx: ContextManager,
    *,
    older_than_days: float = 30,
    dry_run: bool = False,
    llm: LanguageModel | None = None,
    protect: tuple[str, ...] | None = None,
) -> CleanupReport:
    """Archive files unread for ``older_than_days`` and consolidate lessons; one commit."""
    if older_than_days < 0:
        raise EvolveError("older_than_days must be zero or more; pass e.g. 30")
    settings = ctx.config.get("evolve", {})
    check_keys("evolve", settings, ("archive_dir", "protect"))
    archive_dir = str(settings.get("archive_dir", ARCHIVE_DIR)).strip("/") or ARCHIVE_DIR
    protect = tuple(protect if protect is not None else settings.get("protect", DEFAULT_PROTECT))
    access = track_access(ctx)
    cutoff = clock.now() - timedelta(days=older_than_days)
    report = CleanupReport(dry_run=dry_run, cutoff=clock.iso(cutoff))
    report.actions.extend(_stale_files(ctx, access, cutoff, protect, archive_dir))

    groups: list[dict[str, Any]] = []
    lessons_body = ctx.read_raw("memory/lessons.md")
    if llm is not None and lessons_body is not None and not dry_run:
        file = EntryFile(parse(decode(lessons_body, "memory/lessons.md")).body, "lesson")
        groups = run_sync(_model_groups(llm, file))
    elif llm is None:
        report.notes.append("no model: only exact-duplicate lessons and facts are merged; "
                            "merging lessons that say the same thing in other words needs --llm")

    plans: dict[str, Kind] = {}
    entry_files: tuple[tuple[str, Kind], ...] = (("memory/lessons.md", "lesson"), ("memory/facts.md", "fact"))
    for path, kind in entry_files:
        data = ctx.read_raw(path)
        if data is None:
            continue
        body = parse(decode(data, path), path).body
        file = EntryFile(body, kind)
        dupes = file.dedupe(date=clock.now().date().isoformat())
        for change in dupes:
            report.actions.append(Action("merge", path, None, f"{change.target} duplicate(s) of {change.id}"))
        if kind == "lesson":
            for g in groups:
                report.actions.append(Action("merge", path, None, f"{', '.join(g['ids'])} say the same lesson"))
        plans[path] = kind
    if dry_run or not report.actions:
        return report

    head = ctx.git.head()
    with ctx.transaction(f"evolve: cleanup ({len(report.actions)} action(s))", op="evolve",
                         trailers={"Contextfs-Task": "cleanup"}):
        for action in report.actions:
            if action.kind == "archive" and action.to:
                ctx.move(action.path, action.to)
                ctx.update_metadata(action.to, {"archived_from": action.path, "archived_at": clock.iso(),
                                                "archive_reason": action.reason})
                access.moved(action.path, action.to)
        for path, kind in plans.items():
            rendered, _ = _consolidate(ctx, path, kind, groups if kind == "lesson" else [])
            if rendered is not None:
                ctx.write(path, as_content(path, rendered))
    access.flush()
    after = ctx.git.head()
    report.commit = after if after != head else None
    return report
