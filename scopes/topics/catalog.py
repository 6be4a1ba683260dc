"""The topics on disk: which exist, what each ``topic.md`` says, and the one way to write them.

Every concern module of the topics package reads topics through a :class:`Catalog` and
writes through :meth:`Catalog.transaction`, so each mutating call is one git commit with
a ``Contextfs-Topic:`` trailer and ``git log topics/<slug>`` is the topic's audit trail.
"""

from __future__ import annotations

import builtins  # annotations in Catalog, whose list() method shadows the builtin
import contextlib
import dataclasses
import logging
import stat
from collections.abc import Iterator, Mapping
from typing import Any

from contextfs.errors import ContextFSError, NotFoundError, TopicError
from contextfs.fixes import Fix
from contextfs.manager import ContextManager

from ..derived import ACTIVE_TOPIC_FILE
from .files import TOPIC_FILE, TOPICS_DIR, check_slug, slugify, topic_path
from .records import STATUSES, Topic, as_terms

__all__ = ["Catalog"]

log = logging.getLogger(__name__)


def _topic_from(name: str, meta: Mapping[str, Any], body: str, version: str | None) -> Topic:
    status = str(meta.get("status", "paged"))
    if status not in STATUSES:
        status = "paged"
    last = meta.get("last_active")
    return Topic(
        name=name,
        title=str(meta.get("title") or name),
        description=" ".join(str(meta.get("description") or "").split()),
        status=status,
        open=bool(meta.get("open", False)),
        last_active=str(last) if last else None,
        summary=" ".join(str(meta.get("summary") or "").split()),
        body=body.strip("\n"),
        vocabulary=as_terms(meta.get("vocabulary")),
        aliases=as_terms(meta.get("aliases")),
        tasks=as_terms(meta.get("tasks")),
        version=version,
    )


#: Statuses a topic keeps in its shared ``topic.md``; ``active`` is this machine's alone.
SHARED_STATUSES = ("paged", "closed", "archived")


class Catalog:
    """Reading topics (parsed once per version of their ``topic.md``) and the write transaction.

    Which topic is active belongs to one machine (one clone), not to the shared files: it
    is kept in the root's state folder (:data:`~contextfs.scopes.derived.ACTIVE_TOPIC_FILE`),
    and ``topic.md`` says ``paged``, ``closed`` or ``archived``. A root written before that
    (a file saying ``status: active``) still works: until this clone switches, the most
    recently active of those topics is the active one, and only that one.
    """

    def __init__(self, ctx: ContextManager) -> None:
        self.ctx = ctx
        self._cache: dict[str, tuple[tuple[int, int, int], Topic]] = {}

    # -------------------------------------------------------------- reading
    def read(self, name: str) -> Topic | None:
        """One topic with this machine's view of its status (None when absent)."""
        return self._seen(self._read_file(name), self.active_name())

    @staticmethod
    def _seen(topic: Topic | None, active: str | None) -> Topic | None:
        if topic is None or topic.status in ("closed", "archived"):
            return topic
        status = "active" if topic.name == active else "paged"
        return topic if topic.status == status else dataclasses.replace(topic, status=status)

    def _read_file(self, name: str) -> Topic | None:
        """One topic as its file says, parsed at most once per version of its ``topic.md``.

        YAML parsing dominates a switch otherwise (the index and detection read every
        topic), so parsed topics are kept per (inode, size, mtime): an atomic write or an
        editor's save changes at least one of them.
        """
        rel = topic_path(name)
        try:  # through the root's file layer, which sees what a transaction in progress wrote
            st = self.ctx.parts.files.lstat(rel)
        except ContextFSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):
            self._cache.pop(name, None)
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        try:
            doc = self.ctx.get(rel)
        except NotFoundError:
            return None
        topic = _topic_from(name, doc.metadata, doc.body, doc.version)
        self._cache[name] = (key, topic)
        return topic

    def names(self) -> list[str]:
        """Every topic's name (folders under ``topics/`` that hold a ``topic.md``), sorted."""
        out = []
        for rel in self._topic_files():
            parts = rel.split("/")
            if len(parts) == 3 and parts[2] == TOPIC_FILE:
                try:
                    out.append(check_slug(parts[1]))
                except TopicError:
                    log.warning("ignoring topic folder %r: not a valid topic name", parts[1])
        return sorted(out)

    def _topic_files(self) -> list[str]:
        """``topics/<x>/topic.md`` for each folder, without walking every file (exchanges can be big).

        Read through the root's file layer, which sees what a transaction in progress wrote.
        """
        files = self.ctx.parts.files
        out = []
        try:
            if files.kind(TOPICS_DIR) != "dir":
                return []
            names = files.listdir(TOPICS_DIR)
        except ContextFSError:
            return []
        for name in names:
            rel = f"{TOPICS_DIR}/{name}/{TOPIC_FILE}"
            try:
                if files.kind(f"{TOPICS_DIR}/{name}") == "dir" and files.kind(rel) == "file":
                    out.append(rel)
            except ContextFSError:
                continue  # a name the path gate refuses is no topic
        return out

    def list(self, *, include_archived: bool = True) -> list[Topic]:
        """All topics, most recently active first."""
        active = self.active_name()
        topics = [
            t
            for t in (self._seen(self._read_file(n), active) for n in self.names())
            if t is not None
        ]
        if not include_archived:
            topics = [t for t in topics if t.status != "archived"]
        return sorted(topics, key=lambda t: (t.last_active or "", t.name), reverse=True)

    def resolve(self, name: str) -> str | None:
        """The slug a name, slug-ish spelling, exact title or alias refers to (None when unknown)."""
        if not isinstance(name, str) or not name.strip():
            return None
        raw = name.strip()
        names = self.names()
        if raw in names:
            return raw
        slug = slugify(raw)
        if slug in names:
            return slug
        folded = " ".join(raw.split()).casefold()
        for topic in self.list():
            if topic.title.casefold() == folded or folded in (a.casefold() for a in topic.aliases):
                return topic.name
        return None

    def get(self, name: str) -> Topic:
        """The topic called ``name`` (slug, title or alias); TopicError when there is none."""
        slug = self.resolve(name)
        topic = self.read(slug) if slug else None
        if topic is None:
            known = ", ".join(self.names()) or "none yet"
            raise TopicError(f"no topic named {name!r} (topics: {known})", fix=Fix("topics"))
        return topic

    def exists(self, name: str) -> bool:
        return self.resolve(name) is not None

    def active(self) -> Topic | None:
        """This machine's active topic, or None."""
        name = self.active_name()
        return self.read(name) if name is not None else None

    def active_name(self) -> str | None:
        """The name of this machine's active topic (see the class docstring), or None."""
        recorded = self.ctx.parts.state.read_json(ACTIVE_TOPIC_FILE)
        if isinstance(recorded, dict) and "name" in recorded:
            name = recorded["name"]
            topic = self._read_file(name) if isinstance(name, str) and self._valid(name) else None
            return (
                name if topic is not None and topic.status not in ("closed", "archived") else None
            )
        legacy = [
            t
            for t in (self._read_file(n) for n in self.names())
            if t is not None and t.status == "active"
        ]
        return max(legacy, key=lambda t: (t.last_active or "", t.name)).name if legacy else None

    def set_active(self, name: str | None) -> None:
        """Record this machine's active topic (None: none); never committed."""
        self.ctx.parts.state.write_json(ACTIVE_TOPIC_FILE, {"name": name})

    def legacy_active(self) -> builtins.list[str]:
        """Topics whose shared file still says ``status: active`` (written before it became per machine)."""
        return [
            n
            for n in self.names()
            if (t := self._read_file(n)) is not None and t.status == "active"
        ]

    @staticmethod
    def _valid(name: str) -> bool:
        try:
            check_slug(name)
        except TopicError:
            return False
        return True

    # -------------------------------------------------------------- writing
    @contextlib.contextmanager
    def transaction(
        self, op: str, subject: str, topic: str, extra: Mapping[str, str] | None = None
    ) -> Iterator[ContextManager]:
        """One commit ``topic-<op>: <subject>`` with a ``Contextfs-Topic`` trailer (plus ``extra``).

        Topics own their ``exchanges.jsonl`` logs, so their writes are library writes.
        """
        trailers = {"Contextfs-Topic": topic, **(extra or {})}
        with (
            self.ctx.transaction(
                f"topic-{op}: {subject}", op=f"topic-{op}", trailers=trailers
            ) as ctx,
            ctx.parts.library_write(),
        ):
            yield ctx

    def update_meta(self, name: str, changes: Mapping[str, Any]) -> None:
        """Merge ``changes`` into a topic's ``topic.md`` frontmatter (inside a transaction)."""
        self.ctx.update_metadata(topic_path(name), changes)
