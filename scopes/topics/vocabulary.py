"""Per-topic vocabulary: the terms a speech transcriber should expect in a topic.

Reached as ``topics.vocabulary``. A topic's terms are its ``vocabulary`` frontmatter
plus any Key Facts item starting ``Vocabulary:`` or ``Whisper prompt:``. The active
topic's terms are kept in a derived, git-ignored file (:data:`VOCABULARY_FILE`) that a
transcriber wrapper can pass as its prompt; every switch, spawn and close rewrites it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..arguments import check_strings
from ..derived import VOCABULARY_FILE
from .catalog import Catalog
from .files import item_text
from .records import as_terms
from .where import WhereState

__all__ = ["VOCABULARY_FILE", "Vocabulary"]

_PREFIX = re.compile(r"(?i)(vocabulary|whisper prompt)\s*:\s*(.+)$")


class Vocabulary:
    """Read, set and publish topics' transcription terms (``topics.vocabulary``)."""

    def __init__(self, catalog: Catalog, where: WhereState) -> None:
        self._catalog = catalog
        self._where = where

    def of(self, name: str) -> list[str]:
        """A topic's terms: frontmatter first, then Key Facts lines; de-duplicated, in order."""
        topic = self._catalog.get(name)
        terms = list(topic.vocabulary)
        for raw in self._where.state(topic.name).section("Key Facts"):
            match = _PREFIX.match(item_text(raw))
            if match:
                terms.extend(t.strip(" \"'`") for t in match.group(2).split(","))
        seen: set[str] = set()
        out = []
        for term in terms:
            if term and term.casefold() not in seen:
                seen.add(term.casefold())
                out.append(term)
        return out

    def set(self, name: str, terms: Iterable[str]) -> list[str]:
        """Replace a topic's frontmatter terms (one commit); republish them if it is active."""
        topic = self._catalog.get(name)
        chosen = check_strings(terms, "terms", fix="pass the terms as a list of strings")
        with self._catalog.transaction("vocabulary", topic.name, topic.name):
            self._catalog.update_meta(topic.name, {"vocabulary": list(as_terms(chosen))})
        if topic.status == "active":
            self.sync()
        return self.of(topic.name)

    def sync(self) -> Path:
        """Write the active topic's terms to :data:`VOCABULARY_FILE` (empty when none is active)."""
        active = self._catalog.active()
        text = ", ".join(self.of(active.name)) + "\n" if active else ""
        target = self._catalog.ctx.parts.state.file(VOCABULARY_FILE)
        state = self._catalog.ctx.parts.state
        if state.read_bytes(VOCABULARY_FILE) != text.encode("utf-8"):
            state.write_bytes(VOCABULARY_FILE, text.encode("utf-8"))
        return target
