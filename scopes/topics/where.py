"""Where-are-we state: the five sections of ``where-are-we.md`` and the calls that change them.

Reached as ``topics.where``. Each change is one commit; the sections a call does not
touch are written back exactly as they were read, hand edits included.
"""

from __future__ import annotations

from contextfs import clock

from ..arguments import check_int
from .catalog import Catalog
from .config import TopicsConfig
from .files import WHERE_FILE, WhereAreWe, canonical_section, item_text, new_where_body
from .records import Topic

__all__ = ["WhereState"]


class WhereState:
    """Read and change a topic's where-are-we sections (``topics.where``)."""

    def __init__(self, catalog: Catalog, config: TopicsConfig) -> None:
        self._catalog = catalog
        self._config = config

    def state(self, name: str) -> WhereAreWe:
        """The parsed ``where-are-we.md`` of a topic (all five sections present)."""
        topic = self._catalog.get(name)
        body = self._catalog.ctx.read(topic.path(WHERE_FILE))
        return WhereAreWe.parse(body if body is not None else new_where_body(topic.title))

    def _save(self, topic: Topic, op: str, state: WhereAreWe, trailers: dict[str, str] | None = None,
              *, title_if_new: bool = True) -> None:
        ctx = self._catalog.ctx
        rel = topic.path(WHERE_FILE)
        meta = {"title": f"{topic.title}: where are we"} if title_if_new and not ctx.exists(rel) else None
        with self._catalog.transaction(op, topic.name, topic.name, trailers):
            ctx.write(rel, state.render(), meta)

    def append(self, name: str, section: str, text: str, *, new_section: bool = False) -> str:
        """Add an item to a where-are-we section; returns the raw item written.

        The section is one the file has (the five standard ones, and any added since);
        ``new_section=True`` starts a new one instead of refusing the name.
        """
        topic = self._catalog.get(name)
        state = self.state(topic.name)
        raw = state.append(canonical_section(section), text, new_section=new_section)
        self._save(topic, "state", state)
        return raw

    def file_notification(self, topic: Topic, text: str, task: str | None) -> str:
        """File ``text`` under a topic's Pending Notifications (what routing does for a paged owner)."""
        state = self.state(topic.name)
        raw = state.append("Pending Notifications", text)
        self._save(topic, "route", state, {"Contextfs-Task": task or ""}, title_if_new=False)
        return raw

    def complete(self, name: str, item: str) -> str:
        """Move the In Progress item matching ``item`` to Recently Completed (checked)."""
        topic = self._catalog.get(name)
        state = self.state(topic.name)
        index = state.find("In Progress", item)
        raw = state.section("In Progress").pop(index)
        done = "- [x] " + item_text(raw) if raw.startswith("- [ ]") else raw
        state.section("Recently Completed").append(done)
        self._save(topic, "complete", state)
        return done

    def finalize(self, name: str, keep: int | None = None) -> list[str]:
        """End-of-session tidy-up: keep the newest ``keep`` Recently Completed items.

        Older ones leave the file (git history keeps every version); returns them.
        """
        topic = self._catalog.get(name)
        if keep is None:
            keep = self._config.keep_completed
        else:
            keep = max(0, check_int(keep, "keep", fix="pass how many Recently Completed items to keep, e.g. 10"))
        state = self.state(topic.name)
        done = state.section("Recently Completed")
        dropped = done[: max(0, len(done) - keep)]
        del done[: len(dropped)]
        with self._catalog.transaction("finalize", topic.name, topic.name):
            self._catalog.ctx.write(topic.path(WHERE_FILE), state.render())
            self._catalog.update_meta(topic.name, {"last_active": clock.iso()})
        return dropped

    def clear_notifications(self, name: str) -> list[str]:
        """Empty Pending Notifications (once they have been read); returns what was there."""
        topic = self._catalog.get(name)
        state = self.state(topic.name)
        cleared = list(state.section("Pending Notifications"))
        if cleared:
            state.section("Pending Notifications").clear()
            self._save(topic, "clear-notifications", state)
        return cleared
