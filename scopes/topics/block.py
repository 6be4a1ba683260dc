"""The open/closed context block, and what the compactor writes into it.

Beside its status, every topic has an ``open`` flag: an open topic's summary is shown in
the block (within ``max_open_tokens``), a closed one only by name and cue description.
The agent can only *open* a topic (:meth:`Block.open`, also :meth:`Topics.open_topic`);
the compactor (``contextfs.evolve``) rewrites summaries (:meth:`Block.update_summary`),
the general summary, opens and closes topics, and then calls :meth:`Block.mark_compacted`.
The general summary and the opens since the last compaction live in one committed
bookkeeping file, ``topics/_state.md``.

An *isolated* block (``Topics(ctx, isolate=True)``, what an agent loop that switches topics
uses) keeps topics apart while one is active: the active topic is left out (its boot
context holds it, so ``open`` answers "already visible"), and every other topic is listed
by name and cue only, never with its summary, until the agent opens it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from contextfs import clock
from contextfs.document import as_content
from contextfs.errors import NotFoundError
from contextfs.tokens import TokenCounter

from ..arguments import check_text
from .catalog import Catalog
from .config import TopicsConfig
from .files import STATE_FILE, topic_path
from .records import Topic, as_terms, open_section, summary_line

__all__ = ["ALREADY_VISIBLE", "DOES_NOT_EXIST", "Block"]

log = logging.getLogger(__name__)

#: The exact answers of :meth:`Block.open` besides a summary.
ALREADY_VISIBLE = "already visible"
DOES_NOT_EXIST = "doesn't exist"
_MANAGED = ("created", "updated", "author", "session", "turn")


class Block:
    """The context block and the compactor's writes (``topics.block``)."""

    def __init__(self, catalog: Catalog, config: TopicsConfig, counter: TokenCounter,
                 create: Callable[..., Topic], *, isolate: bool = False) -> None:
        self._catalog = catalog
        self._config = config
        self._counter = counter
        self._create = create
        self.isolate = isolate

    # -------------------------------------------------------------- the bookkeeping file
    def _state_doc(self) -> tuple[dict[str, Any], str]:
        try:
            doc = self._catalog.ctx.get(STATE_FILE)
        except NotFoundError:
            return {}, ""
        return dict(doc.metadata), doc.body

    def _write_state(self, op: str, subject: str, changes: Mapping[str, Any], body: str | None = None) -> None:
        meta, old_body = self._state_doc()
        meta = {k: v for k, v in meta.items() if k not in _MANAGED}
        meta.setdefault("title", "Topic bookkeeping: general summary and opens since the last compaction")
        meta.update(changes)
        text = old_body if body is None else (body.strip() + "\n" if body.strip() else "")
        with self._catalog.transaction(op, subject, subject):
            self._catalog.ctx.write(STATE_FILE, as_content(STATE_FILE, text), meta)

    def general_summary(self) -> str:
        """The general summary: what belongs to no topic in particular (written by the compactor)."""
        return self._state_doc()[1].strip()

    def set_general_summary(self, text: str) -> None:
        """Replace the general summary (one commit); None keeps the current one."""
        check_text(text, "text", optional=True, fix="pass the general summary as text")
        self._write_state("general-summary", "general", {}, body=text)

    def opened_since_compaction(self) -> list[str]:
        """Topics the agent opened since the last compaction (the compactor reconsiders them)."""
        return list(as_terms(self._state_doc()[0].get("opened_since_compaction")))

    def last_compaction(self) -> str | None:
        value = self._state_doc()[0].get("last_compaction")
        return str(value) if value else None

    def mark_compacted(self) -> None:
        """Called by the compactor after it wrote topics: forget the opens, stamp the time."""
        self._write_state("compacted", "compaction", {"last_compaction": clock.iso(), "opened_since_compaction": []})

    # -------------------------------------------------------------- topics in the block
    def update_summary(self, name: str, summary: str, *, one_line: str | None = None,
                       description: str | None = None) -> Topic:
        """Rewrite a topic's summary (the body of ``topic.md``) and its one-line index summary."""
        topic = self._catalog.get(name)
        check_text(summary, "summary", fix="pass the topic's new summary as text")
        check_text(one_line, "one_line", optional=True, fix="pass the one-line index summary as text, or None")
        check_text(description, "description", optional=True, fix="pass the new cue description as text, or None")
        meta = {"summary": one_line if one_line is not None else summary_line(summary)}
        if description is not None:
            meta["description"] = " ".join(description.split())
        ctx = self._catalog.ctx
        doc = ctx.get(topic.path())
        merged = dict(doc.metadata)
        merged.update(meta)
        with self._catalog.transaction("summary", topic.name, topic.name):
            text = summary.strip() + "\n" if summary.strip() else ""
            ctx.write(topic.path(), as_content(topic.path(), text), merged)
        return self._catalog.get(topic.name)

    def create_initial(self) -> list[str]:
        """Create the ``[[topics.initial]]`` topics that do not exist yet (one commit); their names."""
        ctx = self._catalog.ctx
        missing = [s for s in self._config.initial if not ctx.exists(topic_path(s.name))]
        if not missing:
            return []
        with ctx.transaction(f"topic-initial: {len(missing)} topic(s)", op="topic-initial",
                             trailers={"Contextfs-Topic": ",".join(s.name for s in missing)}):
            for initial in missing:
                self._create(initial.title or initial.name, initial.description, name=initial.name,
                             summary=initial.summary, open=initial.open)
        return [s.name for s in missing]

    def _focus(self) -> Topic | None:
        """The active topic an isolated block is seen from (None: not isolated, or none active)."""
        return self._catalog.active() if self.isolate else None

    def _layout(self, focus: Topic | None = None) -> tuple[list[Topic], list[Topic]]:
        """(open topics shown with their summaries, closed topics shown as cues).

        Seen from an active ``focus`` (an isolated block), the focus is left out and every
        other topic is a cue.
        """
        shown: list[Topic] = []
        cues: list[Topic] = []
        used = 0
        for topic in self._catalog.list(include_archived=False):  # most recently active first: the freshest keep their place
            if focus is not None:
                if topic.name != focus.name:
                    cues.append(topic)
                continue
            if not topic.open:
                cues.append(topic)
                continue
            cost = self._counter.count(open_section(topic.name, topic.description, topic.body or topic.summary))
            if used + cost <= self._config.max_open_tokens:
                shown.append(topic)
                used += cost
            else:
                log.warning("open topic %s does not fit max_open_tokens=%d; listed as closed",
                            topic.name, self._config.max_open_tokens)
                cues.append(topic)
        return shown, sorted(cues, key=lambda t: t.name)

    def open(self, name: str) -> str:
        """The agent's one topic tool: the topic's summary, or exactly "already visible"
        (open in the block, or opened since the last compaction), or exactly
        "doesn't exist". A first open is remembered (one commit)."""
        slug = self._catalog.resolve(name) if isinstance(name, str) else None
        topic = self._catalog.read(slug) if slug else None
        if topic is None:
            return DOES_NOT_EXIST
        focus = self._focus()
        if focus is not None and focus.name == topic.name:
            return ALREADY_VISIBLE  # the active topic: its boot context holds it
        shown, _ = self._layout(focus)
        opened = self.opened_since_compaction()
        if topic.name in opened or any(t.name == topic.name for t in shown):
            return ALREADY_VISIBLE
        self._write_state("open-topic", topic.name, {"opened_since_compaction": [*opened, topic.name]})
        return topic.body or topic.summary or f"({topic.name} has no summary yet)"

    def render(self) -> str:
        """The block: general summary, open topics with summaries (within ``max_open_tokens``),
        closed topics by name and cue description (an isolated block: see the module)."""
        focus = self._focus()
        shown, cues = self._layout(focus)
        parts = ["[Context block — assembled by contextfs from the topic files; not said by anyone. "
                 "The conversation continues after it.]\n"]
        general = self.general_summary()
        if general:
            parts.append(f"## Summary of earlier conversation\n\n{general}\n")
        if shown:
            as_of = self.last_compaction() or "the latest topic update"
            parts.append(f"## Open topics (current as of {as_of})\n\n"
                         + "\n".join(open_section(t.name, t.description, t.body or t.summary) for t in shown))
        if cues:
            kind = "Other topics" if focus is not None else "Closed topics"
            parts.append(f"## {kind} (call open_topic with a name to read one)\n\n"
                         + "\n".join(f"- {t.name} — {t.description or t.title}" for t in cues) + "\n")
        parts.append("[End of context block]\n")
        return "\n".join(parts)  # views and tools seal it where it reaches an agent
