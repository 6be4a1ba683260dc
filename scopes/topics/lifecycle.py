"""Topic lifecycle and switching: create, close, archive, reopen, open/close, switch and spawn.

A topic is ``active`` (the one being worked on; at most one), ``paged`` (on disk,
resumable), ``closed`` (done, still listed) or ``archived`` (out of sight). Switching
pages the outgoing topic out and activates the target in one commit; spawning moves
the tail of the active topic's exchanges into a new topic and switches to it, also in
one commit. The boot view a switch returns is assembled by the façade
(:class:`contextfs.scopes.topics.Topics`), not here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from contextfs import clock
from contextfs.document import as_content
from contextfs.errors import TopicError

from ..arguments import check_strings, check_text
from .catalog import Catalog
from .exchanges import Exchanges
from .files import (
    DECISIONS_FILE,
    EXCHANGES_FILE,
    WHERE_FILE,
    check_slug,
    new_decisions_body,
    new_where_body,
    slugify,
    topic_path,
)
from .records import STATUSES, Topic, as_terms, summary_line
from .vocabulary import Vocabulary

__all__ = ["Lifecycle"]

log = logging.getLogger(__name__)


class Lifecycle:
    """Status changes of topics; the façade exposes these as ``Topics.create``, ``switch``..."""

    def __init__(self, catalog: Catalog, vocabulary: Vocabulary, exchanges: Exchanges) -> None:
        self._catalog = catalog
        self._vocabulary = vocabulary
        self._exchanges = exchanges

    def create(
        self,
        title: str,
        description: str = "",
        *,
        name: str | None = None,
        summary: str = "",
        one_line: str | None = None,
        open: bool = True,
        status: str = "paged",
        vocabulary: Iterable[str] = (),
        aliases: Iterable[str] = (),
        tasks: Iterable[str] = (),
    ) -> Topic:
        """Create ``topics/<name>/`` with its four files; one commit (see :meth:`Topics.create`)."""
        if not isinstance(title, str) or not title.strip():
            raise TopicError("a topic needs a non-empty title; pass e.g. 'Billing migration'")
        slug = check_slug(name) if name is not None else slugify(title)
        if not slug:
            raise TopicError(f"cannot make a topic name from the title {title!r}; pass name='some-name'")
        check_slug(slug)
        if status not in STATUSES:
            raise TopicError(f"status {status!r} is not one of {', '.join(STATUSES)}; pick one of them")
        check_text(summary, "summary", fix="pass the topic's summary as text ('' for none)")
        check_text(one_line, "one_line", optional=True, fix="pass the one-line index summary as text, or None")
        terms = {key: check_strings(value, key, fix=f"pass {key} as a list of strings")
                 for key, value in (("vocabulary", vocabulary), ("aliases", aliases), ("tasks", tasks))}
        ctx = self._catalog.ctx
        if ctx.exists(topic_path(slug)):
            raise TopicError(f"topic {slug!r} already exists; switch to it, or pick another name with name=...")
        title = " ".join(title.split())
        meta: dict[str, Any] = {
            "name": slug,
            "title": title,
            "description": " ".join(str(description).split()),
            "status": "paged" if status == "active" else status,  # active is per machine
            "open": bool(open),
            "last_active": clock.iso(),
            "summary": one_line if one_line is not None else (summary_line(summary) if summary else ""),
            "vocabulary": list(as_terms(terms["vocabulary"])),
        }
        if terms["aliases"]:
            meta["aliases"] = list(as_terms(terms["aliases"]))
        if terms["tasks"]:
            meta["tasks"] = list(as_terms(terms["tasks"]))
        body = summary.strip() + "\n" if summary.strip() else ""
        with self._catalog.transaction("create", slug, slug):
            ctx.write(topic_path(slug), as_content(topic_path(slug), body), meta)
            ctx.write(topic_path(slug, WHERE_FILE), new_where_body(title), {"title": f"{title}: where are we"})
            ctx.write(topic_path(slug, DECISIONS_FILE), new_decisions_body(title), {"title": f"{title}: decisions"})
            ctx.write(topic_path(slug, EXCHANGES_FILE), "")
        if status == "active":
            self._catalog.set_active(slug)
        log.debug("created topic %s", slug)
        return self._catalog.get(slug)

    def _set_status(self, op: str, name: str, status: str, *, open: bool | None) -> Topic:
        topic = self._catalog.get(name)
        changes: dict[str, Any] = {"status": status, "last_active": clock.iso()}
        if open is not None:
            changes["open"] = open
        with self._catalog.transaction(op, topic.name, topic.name):
            self._catalog.update_meta(topic.name, changes)
        if topic.status == "active" and status != "paged":
            self._catalog.set_active(None)
        if topic.status == "active":
            self._vocabulary.sync()
        return self._catalog.get(topic.name)

    def close(self, name: str) -> Topic:
        topic = self._set_status("close", name, "closed", open=False)
        log.info("topic close: %s", topic.name)
        return topic

    def archive(self, name: str) -> Topic:
        topic = self._set_status("archive", name, "archived", open=False)
        log.info("topic archive: %s", topic.name)
        return topic

    def reopen(self, name: str) -> Topic:
        return self._set_status("reopen", name, "paged", open=True)

    def set_open(self, name: str, is_open: bool) -> Topic:
        topic = self._catalog.get(name)
        if topic.open == bool(is_open):
            return topic
        with self._catalog.transaction("open" if is_open else "unopen", topic.name, topic.name):
            self._catalog.update_meta(topic.name, {"open": bool(is_open)})
        return self._catalog.get(topic.name)

    # -------------------------------------------------------------- switching
    def _activate(self, target: Topic) -> Topic | None:
        """Stamp ``last_active`` on the outgoing and the target topic (inside a transaction).

        Which topic is active is this machine's own state, recorded by the caller once
        the commit is made (:meth:`Catalog.set_active`); the shared files only say
        ``paged`` (a file still saying ``active`` from before is set to ``paged`` here).
        """
        now = clock.iso()
        previous = self._catalog.active()
        if previous is not None and previous.name != target.name:
            self._catalog.update_meta(previous.name, {"last_active": now})
        for name in self._catalog.legacy_active():
            if name != target.name:
                self._catalog.update_meta(name, {"status": "paged"})
        self._catalog.update_meta(target.name, {"status": "paged", "last_active": now})
        return previous

    def switch(self, name: str) -> Topic:
        """Page out the active topic and activate ``name`` (one commit); the target."""
        target = self._catalog.get(name)
        before = self._catalog.active()
        if before is not None and before.name == target.name and not self._catalog.legacy_active():
            return target  # already the active topic: nothing to page out, nothing to commit
        source = before.name if before else "-"
        with self._catalog.transaction("switch", f"{source} -> {target.name}", target.name,
                                       {"Contextfs-Topic-From": source}):
            self._activate(target)
        self._catalog.set_active(target.name)
        log.info("topic switch: %s -> %s", source, target.name)
        self._vocabulary.sync()
        return target

    def spawn(self, title: str, from_line: int, *, description: str = "", name: str | None = None,
              source: str | None = None) -> tuple[Topic, int]:
        """Move exchanges ``from_line``.. of ``source`` (default: the active topic) into a new
        topic and activate it (one commit); the new topic and how many exchanges moved."""
        origin = self._catalog.get(source) if source is not None else self._catalog.active()
        if origin is None:
            raise TopicError("there is no active topic to split; switch to one first or pass source='name'")
        lines = [line for line, _ in self._exchanges.lines(origin.name)]
        if isinstance(from_line, bool) or not isinstance(from_line, int) or not 1 <= from_line <= len(lines):
            raise TopicError(
                f"from_line {from_line!r} is outside {origin.name}'s {len(lines)} exchange(s); "
                f"pass a line number from 1 to {len(lines)} (see exchanges.jsonl)" if lines else
                f"{origin.name} has no exchanges to split; record exchanges first, or start a new topic"
            )
        slug = check_slug(name) if name is not None else slugify(title)
        cue = description or f"{' '.join(title.split())}, split from {origin.title}; relevant when the conversation returns to it"
        keep, moved = lines[: from_line - 1], lines[from_line - 1 :]
        ctx = self._catalog.ctx
        with self._catalog.transaction("spawn", f"{origin.name} -> {slug}", slug, {"Contextfs-Topic-From": origin.name}):
            topic = self.create(title, cue, name=slug)
            ctx.write(origin.path(EXCHANGES_FILE), "".join(line + "\n" for line in keep))
            ctx.write(topic.path(EXCHANGES_FILE), "".join(line + "\n" for line in moved))
            self._activate(topic)
        self._catalog.set_active(slug)
        log.info("topic spawn: %s -> %s (%d exchange(s) moved from line %d)", origin.name, slug, len(moved), from_line)
        self._vocabulary.sync()
        return self._catalog.get(slug), len(moved)

