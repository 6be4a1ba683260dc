"""The :class:`Topics` façade: one object per context root, for one agent that talks about many things.

The façade holds what an agent does with whole topics — read them, create and close
them, switch (getting the boot view back), look at the index — and the four calls it
makes every turn (:meth:`~Topics.detect`, :meth:`~Topics.open_topic`,
:meth:`~Topics.route`, :meth:`~Topics.record`). Each other concern is an attribute with
its own small API:

========================  ==============================================================
``topics.where``          where-are-we state (:class:`~.where.WhereState`)
``topics.decisions``      decision chains (:class:`~.decisions.Decisions`)
``topics.exchanges``      recent exchanges (:class:`~.exchanges.Exchanges`)
``topics.vocabulary``     transcription terms (:class:`~.vocabulary.Vocabulary`)
``topics.block``          the open/closed block and the compactor's writes (:class:`~.block.Block`)
``topics.routing``        detection details and task tags (:class:`~.routing.Routing`)
``topics.boot_context``   a switch's boot context, as candidates or packed (:class:`~.boot.BootContext`)
========================  ==============================================================
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable

from contextfs.errors import TopicError
from contextfs.manager import ContextManager
from contextfs.text.tokens import get_counter

from ..packing import ContextView
from .block import Block
from .boot import BootContext
from .catalog import Catalog
from .config import TopicsConfig, load_topics_config
from .decisions import Decisions
from .exchanges import Exchanges
from .files import Exchange
from .index import TopicIndex
from .lifecycle import Lifecycle
from .records import IndexEntry, RouteResult, Spawned, Topic
from .routing import Routing
from .vocabulary import Vocabulary
from .where import WhereState

__all__ = ["Topics"]


class Topics:
    """Topic contexts on one root: isolated folders, a small index, switching under a budget.

    >>> topics = Topics(ctx)                                   # doctest: +SKIP
    >>> topics.create("Family logistics", description="Kids' school runs and holidays; "
    ...               "relevant when the family calendar comes up")  # doctest: +SKIP
    >>> view = topics.switch("family-logistics")               # doctest: +SKIP
    >>> topics.where.append("family-logistics", "Key Facts", "Pickup is 15:10")  # doctest: +SKIP
    """

    where: WhereState
    decisions: Decisions
    exchanges: Exchanges
    vocabulary: Vocabulary
    block: Block
    routing: Routing
    boot_context: BootContext

    def __init__(
        self,
        ctx: ContextManager,
        *,
        encoding: str | None = None,
        config: TopicsConfig | None = None,
        isolate: bool = False,
    ) -> None:
        """``isolate=True`` keeps the block to the active topic's view (see :mod:`.block`): what
        an agent loop that switches topics needs, so no other topic's summary reaches it."""
        self.ctx = ctx
        self.encoding = encoding
        self.counter = get_counter(encoding)
        self.config = (
            config if config is not None else load_topics_config(ctx.parts.config, encoding)
        )
        self._catalog = Catalog(ctx)
        self.where = WhereState(self._catalog, self.config)
        self.decisions = Decisions(self._catalog)
        self.exchanges = Exchanges(self._catalog, self.config)
        self.vocabulary = Vocabulary(self._catalog, self.where)
        self._lifecycle = Lifecycle(self._catalog, self.vocabulary, self.exchanges)
        self._index = TopicIndex(self._catalog, self.counter)
        self.block = Block(
            self._catalog, self.config, self.counter, self._lifecycle.create, isolate=isolate
        )
        self.routing = Routing(self._catalog, self.config, self.where)
        self.boot_context = BootContext(
            self._catalog,
            self.config,
            decisions=self.decisions,
            exchanges=self.exchanges,
            index=self._index,
            encoding=encoding,
        )

    # -------------------------------------------------------------- reading
    def names(self) -> list[str]:
        """Every topic's name (folders under ``topics/`` that hold a ``topic.md``), sorted."""
        return self._catalog.names()

    def list(self, *, include_archived: bool = True) -> list[Topic]:
        """All topics, most recently active first."""
        return self._catalog.list(include_archived=include_archived)

    def get(self, name: str) -> Topic:
        """The topic called ``name`` (slug, title or alias); TopicError when there is none."""
        return self._catalog.get(name)

    def exists(self, name: str) -> bool:
        return self._catalog.exists(name)

    def resolve(self, name: str) -> str | None:
        """The slug a name, slug-ish spelling, exact title or alias refers to (None when unknown)."""
        return self._catalog.resolve(name)

    def active(self) -> Topic | None:
        """The active topic (the most recently active one if a hand edit left several)."""
        return self._catalog.active()

    # -------------------------------------------------------------- lifecycle
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
        """Create ``topics/<name>/`` with its four files; one commit.

        ``description`` is a cue: who or what the topic is and when it becomes relevant
        ("Lisa, the player's childhood friend; relevant when she appears or is
        mentioned"). ``summary`` is the topic's summary (the body of ``topic.md``); the
        one-line index summary defaults to its first sentence.
        """
        return self._lifecycle.create(
            title,
            description,
            name=name,
            summary=summary,
            one_line=one_line,
            open=open,
            status=status,
            vocabulary=vocabulary,
            aliases=aliases,
            tasks=tasks,
        )

    def close(self, name: str) -> Topic:
        """Close a topic: status ``closed`` and not open (listed as a cue); reopen any time."""
        return self._lifecycle.close(name)

    def archive(self, name: str) -> Topic:
        """Archive a topic: kept on disk and in git, left out of the index block and detection."""
        return self._lifecycle.archive(name)

    def reopen(self, name: str) -> Topic:
        """Bring a closed or archived topic back as ``paged`` and open."""
        return self._lifecycle.reopen(name)

    def set_open(self, name: str, is_open: bool) -> Topic:
        """Flip only the open flag (the compactor's open/close); the status is left alone."""
        return self._lifecycle.set_open(name, is_open)

    # -------------------------------------------------------------- switching
    def switch(self, name: str, *, budget: int | None = None) -> ContextView:
        """Page out the active topic, activate ``name``, and return its boot context (one commit)."""
        target = self._lifecycle.switch(name)
        return self.boot(target.name, budget=budget)

    def spawn(
        self,
        title: str,
        from_line: int,
        *,
        description: str = "",
        name: str | None = None,
        source: str | None = None,
        budget: int | None = None,
    ) -> Spawned:
        """Move exchanges ``from_line``.. (1-based) of the active topic into a new topic, switch to it.

        The lines are moved, not copied: each exchange belongs to exactly one topic.
        Creation, the move and the switch are one commit.
        """
        topic, moved = self._lifecycle.spawn(
            title, from_line, description=description, name=name, source=source
        )
        return Spawned(topic=topic, moved=moved, view=self.boot(topic.name, budget=budget))

    def boot(
        self, name: str, *, budget: int | None = None, as_of: str | None = None
    ) -> ContextView:
        """The boot context of a topic without switching: state first, then decisions,
        exchanges, the topic's own summary, the shared facts layer and the index.

        Candidates come only from ``topics/<name>/``, the shared layer and the index, so
        no other topic's files can appear. Packed by :func:`contextfs.scopes.packing.pack`.
        """
        return self.boot_context.view(name, budget=budget, as_of=as_of)

    # -------------------------------------------------------------- the index
    def index(self) -> builtins.list[IndexEntry]:  # `list` is a method name in this class
        """The awareness layer: every topic's id, title, status, last_active, one-line summary, size."""
        return self._index.entries()

    def render_index(self, *, current: str | None = None) -> str:
        """The index as a few markdown lines, small enough to load at every session start."""
        return self._index.render(current=current)

    def size(self, name: str) -> int:
        """Tokens in all of a topic's files."""
        return self._index.size(name)

    # -------------------------------------------------------------- every turn
    def detect(self, message: str) -> Topic | None:
        """The topic a message is about (deterministic, free: names first, then BM25), or None.

        ``topics.routing.explain(message)`` gives the method and scores behind the answer.
        """
        return self.routing.detect(message)

    def open_topic(self, name: str) -> str:
        """The agent's one topic tool: the topic's summary, or exactly "already visible",
        or exactly "doesn't exist" (see :meth:`Block.open`)."""
        return self.block.open(name)

    def route(self, result_text: str, task_id: str | None = None) -> RouteResult:
        """Send an asynchronous result to the topic that owns it (see :meth:`Routing.route`)."""
        return self.routing.route(result_text, task_id)

    def record(self, user: str, agent: str, *, topic: str | None = None) -> Exchange:
        """Append one compressed exchange to a topic (default: the active one); one commit."""
        target = self._catalog.get(topic) if topic is not None else self._catalog.active()
        if target is None:
            raise TopicError(
                "there is no active topic to record into; switch to one or pass topic='name'"
            )
        return self.exchanges.record(target, user, agent)
