"""Routing and detection: which topic owns a message, and where an asynchronous result goes.

Reached as ``topics.routing``; the calls an agent makes every turn are also on the
façade (:meth:`Topics.detect`, :meth:`Topics.route`). Detection runs before the model
sees a message, so it is deterministic and spends no tokens (the algorithm is in
:mod:`.detection`). A routed result's owner is found by its task id first, then by
keywords of topic names; a paged owner gets it under Pending Notifications, an active
owner gets it back, and a result nobody owns is returned, never dropped.
"""

from __future__ import annotations

import logging
import re

from contextfs.errors import ContextFSError, TopicError

from ..arguments import check_text
from . import detection
from .catalog import Catalog
from .config import TopicsConfig
from .records import RouteResult, Topic
from .where import WhereState

__all__ = ["Routing", "task_tag"]

log = logging.getLogger(__name__)

_TASK_TAG = re.compile(r"\[task:([A-Za-z0-9_.:@/-]{1,128})\]")


def task_tag(text: str) -> str | None:
    """The task id of a ``[task:ID]`` tag in ``text`` (a sub-agent's result names its task so), or None."""
    found = _TASK_TAG.search(text) if isinstance(text, str) else None
    return found.group(1) if found else None


class Routing:
    """Detect a message's topic, route results, tag tasks (``topics.routing``)."""

    def __init__(self, catalog: Catalog, config: TopicsConfig, where: WhereState) -> None:
        self._catalog = catalog
        self._config = config
        self._where = where

    # -------------------------------------------------------------- detection
    def explain(self, message: str) -> detection.Detection:
        """Detection with its method and scores (for logs and the CLI)."""
        docs = [
            detection.DetectionDoc(
                name=t.name,
                names=(t.name.replace("-", " "), t.title, *t.aliases),
                text=" ".join(
                    [t.title, t.description, t.summary, " ".join(t.vocabulary), " ".join(t.aliases)]
                ),
            )
            for t in self._catalog.list(include_archived=False)
        ]
        return detection.detect(
            message,
            docs,
            threshold=self._config.detect_threshold,
            margin=self._config.detect_margin,
        )

    def detect(self, message: str) -> Topic | None:
        """The topic a message is about (deterministic, free: names first, then BM25), or None."""
        found = self.explain(message)
        return self._catalog.get(found.name) if found.name else None

    # -------------------------------------------------------------- routing
    def tag_task(self, name: str, task_id: str) -> Topic:
        """Record that ``task_id`` belongs to a topic, so its results route there."""
        topic = self._catalog.get(name)
        check_text(task_id, "task_id", fix="pass the task id as text, e.g. 'TW-3001'")
        if not _TASK_TAG.fullmatch(f"[task:{task_id}]"):
            raise TopicError(
                f"task id {task_id!r} is not accepted; use letters, digits and . _ : @ / -"
            )
        if task_id in topic.tasks:
            return topic
        with self._catalog.transaction(
            "tag-task", f"{topic.name} {task_id}", topic.name, {"Contextfs-Task": task_id}
        ):
            self._catalog.update_meta(topic.name, {"tasks": [*topic.tasks, task_id]})
        return self._catalog.get(topic.name)

    def _owner_of_task(self, task_id: str) -> str | None:
        for topic in self._catalog.list():
            if task_id in topic.tasks:
                return topic.name
        ctx = self._catalog.ctx
        rel = f"task/subtasks/{task_id}.md"
        try:
            if ctx.exists(rel):
                owner = ctx.get(rel).metadata.get("topic")
                if isinstance(owner, str) and self._catalog.resolve(owner):
                    return self._catalog.resolve(owner)
        except ContextFSError:
            return None
        return None

    def _owner_by_keywords(self, text: str) -> str | None:
        words = detection.keywords(text)
        scored = []
        for topic in self._catalog.list(include_archived=False):
            phrases = (topic.name.replace("-", " "), topic.title, *topic.aliases)
            if any(detection.fuzzy_match(text, p) for p in phrases):
                scored.append((100, topic.name))
                continue
            title_words = detection.keywords(" ".join(phrases))
            hits = len(words & title_words)
            if hits >= min(2, len(title_words)) and hits:
                scored.append((hits, topic.name))
        scored.sort(reverse=True)
        if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
            return None
        return scored[0][1]

    def route(self, result_text: str, task_id: str | None = None) -> RouteResult:
        """Send an asynchronous result to the topic that owns it.

        Owner: the ``[task:ID]`` tag (or ``task_id``) looked up in topics' ``tasks`` and in
        ``task/subtasks/<ID>.md`` ``topic:`` frontmatter; else keywords of topic titles.
        A paged (or closed) owner gets it under Pending Notifications; an active owner gets
        it back for normal processing; no owner is reported, with the text returned.
        """
        if not isinstance(result_text, str) or not result_text.strip():
            raise TopicError("the result text is empty; pass the sub-agent's result")
        tag = _TASK_TAG.search(result_text)
        task = task_id or (tag.group(1) if tag else None)
        owner, via = None, None
        if task:
            owner, via = self._owner_of_task(task), "task"
        if owner is None:
            owner, via = self._owner_by_keywords(_TASK_TAG.sub(" ", result_text)), "keyword"
        if owner is None:
            log.warning("routed result matched no topic (task %r)", task)
            return RouteResult(
                action="unmatched",
                topic=None,
                text=result_text,
                task_id=task,
                via=None,
                message="no topic owns this result; handle it in the current conversation "
                "or tag its task with topics.routing.tag_task()",
            )
        topic = self._catalog.get(owner)
        if topic.status == "active":
            return RouteResult(
                action="delivered",
                topic=topic.name,
                text=result_text,
                task_id=task,
                via=via,
                message=f"{topic.name} is active; process the result now",
            )
        body = result_text.strip()
        if task and not tag:
            body = f"[task:{task}] {body}"
        raw = self._where.file_notification(topic, body, task)
        return RouteResult(
            action="filed",
            topic=topic.name,
            text=result_text,
            task_id=task,
            via=via,
            notification=raw,
            message=f"{topic.name} is {topic.status}; filed under its Pending Notifications",
        )
