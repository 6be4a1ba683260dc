"""The boot context of a topic: what a switch hands the agent, packed under a token budget.

Candidates come only from the topic's own folder, the shared facts layer and the topic
index, so no other topic's files can ever appear in the view; the index line (title and
one-line summary) is the only thing a topic sees of the others, on purpose. Packing is
the scoped-context packer's (:func:`contextfs.scopes.packing.pack`).
"""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatchcase

from ..packing import Candidate, ContextView, pack
from .catalog import Catalog
from .config import TopicsConfig
from .decisions import Decisions
from .exchanges import Exchanges
from .files import DECISIONS_FILE, EXCHANGES_FILE, TOPICS_DIR, WHERE_FILE, Exchange
from .index import TopicIndex
from .records import Topic

__all__ = ["BootContext", "boot_candidates", "boot_view"]

# The packer shows pinned items first (core memory, the "kernel"), then the rest by
# priority, lower = more important and the last to step down a tier. The index never
# changes tier (min_tier="full"): at a budget too small for every item at its lowest tier,
# items come in cheapest first, so the index, whole, is left out before the topic's own
# state, whose lowest tiers cost less.
_ORDER = {
    key: i for i, key in enumerate(["where", "decisions", "exchanges", "topic", "facts", "index"])
}


def _topic_card(topic: Topic) -> str:
    lines = [f"**{topic.title}** (`{topic.name}`, {topic.status})"]
    if topic.description:
        lines.append(f"Relevant: {topic.description}")
    if topic.body:
        lines.append("")
        lines.append(topic.body)
    elif topic.summary:
        lines.append(topic.summary)
    return "\n".join(lines) + "\n"


def _shared_paths(catalog: Catalog, config: TopicsConfig) -> list[str]:
    ctx = catalog.ctx
    out: list[str] = []
    for pattern in config.shared:
        pattern = pattern.lstrip("./") if pattern.startswith("./") else pattern
        if any(ch in pattern for ch in "*?["):
            folder = pattern.split("*")[0].split("?")[0].split("[")[0].rsplit("/", 1)[0]
            matches = [p for p in ctx.list(folder) if fnmatchcase(p, pattern)]
        else:
            matches = [pattern] if ctx.exists(pattern) else []
        for rel in matches:
            if rel not in out and not rel.startswith(f"{TOPICS_DIR}/"):
                out.append(rel)
    return out


def boot_candidates(
    catalog: Catalog,
    config: TopicsConfig,
    topic: Topic,
    *,
    decisions: Decisions,
    exchanges: Exchanges,
    index: TopicIndex,
    shown: Callable[[Exchange], bool] | None = None,
) -> list[Candidate]:
    """The boot context's candidates, most important first (lower priority = more important):
    state, decisions, recent exchanges (those ``shown`` keeps), the topic card, the shared
    layer and the index."""
    candidates: list[Candidate] = []
    candidates.append(
        Candidate(
            path=topic.path(WHERE_FILE),
            reason=f"where we were in {topic.name}: resume from here",
            priority=_ORDER["where"],
            title=f"Where are we: {topic.title}",
        )
    )
    rendered = decisions.render(topic.name)
    if rendered:
        candidates.append(
            Candidate(
                path=topic.path(DECISIONS_FILE),
                reason="decision chains with their reasons",
                priority=_ORDER["decisions"],
                body=rendered,
                title=f"Decisions: {topic.title}",
            )
        )
    recent = exchanges.render(topic.name, shown=shown)
    if recent:
        candidates.append(
            Candidate(
                path=topic.path(EXCHANGES_FILE),
                reason="recent exchanges in this topic",
                priority=_ORDER["exchanges"],
                body=recent,
                title=f"Recent exchanges: {topic.title}",
            )
        )
    candidates.append(
        Candidate(
            path=topic.path(),
            reason="what this topic is about",
            priority=_ORDER["topic"],
            body=_topic_card(topic),
            title=f"Topic: {topic.title}",
        )
    )
    for rel in _shared_paths(catalog, config):
        pinned = rel.startswith("memory/core/")
        candidates.append(
            Candidate(
                path=rel,
                reason="core memory (pinned)" if pinned else "shared facts layer",
                priority=_ORDER["facts"],
                pinned=pinned,
            )
        )
    candidates.append(
        Candidate(
            path=f"{TOPICS_DIR}/index",
            reason="topic index: what other topics exist",
            priority=_ORDER["index"],
            body=index.render(current=topic.name),
            min_tier="full",
            title="Topic index",
        )
    )
    return candidates


def boot_view(
    catalog: Catalog,
    config: TopicsConfig,
    topic: Topic,
    *,
    decisions: Decisions,
    exchanges: Exchanges,
    index: TopicIndex,
    budget: int | None,
    as_of: str | None,
    encoding: str | None,
) -> ContextView:
    """State first, then decisions, recent exchanges, the topic card, the shared layer and the index."""
    candidates = boot_candidates(
        catalog, config, topic, decisions=decisions, exchanges=exchanges, index=index
    )
    header = f"# Topic: {topic.title} ({topic.name})"
    return pack(
        catalog.ctx,
        candidates,
        budget or config.boot_budget,
        encoding=encoding,
        as_of=as_of,
        header=header,
    )


class BootContext:
    """A topic's boot context (``topics.boot_context``): its packer candidates, for a caller
    that packs them with more of its own under one budget, and the packed view."""

    def __init__(
        self,
        catalog: Catalog,
        config: TopicsConfig,
        *,
        decisions: Decisions,
        exchanges: Exchanges,
        index: TopicIndex,
        encoding: str | None,
    ) -> None:
        self._catalog = catalog
        self._config = config
        self._decisions = decisions
        self._exchanges = exchanges
        self._index = index
        self._encoding = encoding

    def candidates(
        self, name: str, *, shown: Callable[[Exchange], bool] | None = None
    ) -> list[Candidate]:
        """The candidates of :func:`boot_candidates` for topic ``name`` (the same isolation:
        only its folder, the shared layer and the index); ``shown`` filters the exchanges."""
        topic = self._catalog.get(name)
        return boot_candidates(
            self._catalog,
            self._config,
            topic,
            decisions=self._decisions,
            exchanges=self._exchanges,
            index=self._index,
            shown=shown,
        )

    def view(
        self, name: str, *, budget: int | None = None, as_of: str | None = None
    ) -> ContextView:
        """The packed boot context of topic ``name`` (what :meth:`Topics.boot` returns)."""
        topic = self._catalog.get(name)
        return boot_view(
            self._catalog,
            self._config,
            topic,
            decisions=self._decisions,
            exchanges=self._exchanges,
            index=self._index,
            budget=budget,
            as_of=as_of,
            encoding=self._encoding,
        )
