"""The topic index: the awareness layer every session sees of every topic.

One line per topic — id, title, status, last active, token size of its files and the
one-line summary — small enough to load at every session start, and the only thing any
topic's boot context shows of the others. Token sizes are cached in memory and in a
derived, git-ignored file (:data:`SIZES_FILE`) by (size, mtime), so once the counts are
known the index costs a few stats.
"""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Sequence
from typing import Any

from contextfs.errors import ContextFSError
from contextfs.fencing import seal
from contextfs.files import TMP_SUFFIX
from contextfs.tokens import TokenCounter

from ..derived import CACHE_DIR
from .catalog import Catalog
from .files import TOPICS_DIR, compress
from .records import IndexEntry, summary_line

__all__ = ["SIZES_FILE", "TopicIndex"]

log = logging.getLogger(__name__)

SIZES_FILE = f"{CACHE_DIR}/topic-tokens.json"


class TopicIndex:
    """Index entries, their rendering and the token size of each topic's files."""

    def __init__(self, catalog: Catalog, counter: TokenCounter) -> None:
        self._catalog = catalog
        self._counter = counter
        self._sizes: dict[str, Any] | None = None

    def sizes(self, names: Sequence[str]) -> dict[str, int]:
        """Token size of each named topic's files (cached by size and mtime)."""
        ctx = self._catalog.ctx
        cache_path = ctx.state.file(SIZES_FILE)
        if self._sizes is None:
            try:
                loaded = json.loads(cache_path.read_text("utf-8"))
                self._sizes = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._sizes = {}
        cache = self._sizes
        out: dict[str, int] = {}
        dirty = False
        for name in names:
            total = 0
            try:
                children = ctx.files.listdir(f"{TOPICS_DIR}/{name}")
            except ContextFSError:
                children = []
            for child in sorted(children):
                rel = f"{TOPICS_DIR}/{name}/{child}"
                st = ctx.files.lstat(rel)
                if st is None or not stat.S_ISREG(st.st_mode) or child.endswith(TMP_SUFFIX):
                    continue  # folders, links and temporary files do not count
                key = [st.st_size, st.st_mtime_ns]
                hit = cache.get(rel)
                if isinstance(hit, list) and len(hit) == 3 and hit[:2] == key:
                    total += int(hit[2])
                    continue
                data = ctx.read_raw(rel) or b""
                n = self._counter.count(data.decode("utf-8", "replace"))
                cache[rel] = [*key, n]
                total += n
                dirty = True
            out[name] = total
        if dirty:
            try:
                ctx.state.write_bytes(SIZES_FILE, json.dumps(cache, separators=(",", ":")).encode())
            except ContextFSError:
                log.debug("could not write the topic size cache", exc_info=True)
        return out

    def size(self, name: str) -> int:
        """Tokens in all of a topic's files."""
        slug = self._catalog.get(name).name
        return self.sizes([slug])[slug]

    def entries(self) -> list[IndexEntry]:
        """Every topic's id, title, status, last_active, one-line summary and size."""
        topics = self._catalog.list()
        sizes = self.sizes([t.name for t in topics])
        return [
            IndexEntry(name=t.name, title=t.title, status=t.status, open=t.open, last_active=t.last_active,
                       summary=t.summary or summary_line(t.body or t.description, 160), tokens=sizes[t.name])
            for t in topics
        ]

    def render(self, *, current: str | None = None) -> str:
        """The index as a few markdown lines; ``current`` is marked as this topic."""
        entries = self.entries()
        shown = [e for e in entries if e.status != "archived"]
        lines = [f"{len(shown)} topic(s); only the active one's files are loaded. Switch to read another."]
        for e in shown:
            when = (e.last_active or "never")[:10]
            mark = " ← this topic" if e.name == current else ""
            lines.append(f"- `{e.name}` [{e.status}] {e.title} · last active {when} · ~{e.tokens} tokens"
                         f" — {compress(e.summary, 160)}{mark}")
        archived = len(entries) - len(shown)
        if archived:
            lines.append(f"- ({archived} archived topic(s) not listed)")
        return seal("\n".join(lines), "the topic index (names, titles and summaries from topic files)") + "\n"
