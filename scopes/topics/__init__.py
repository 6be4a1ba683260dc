"""Topics: isolated contexts for one agent that talks about many things (``contextfs.scopes.topics``).

The Topic-Scoped Virtual Context (TSVC) model, on files: each topic is an isolated
context, like a process with its own address space, kept in ``topics/<slug>/`` as four
plain files a person can edit (:mod:`.files`). A topic is ``active`` (the one being
worked on), ``paged`` (on disk, resumable), ``closed`` (done, still listed) or
``archived`` (out of sight). Switching pages the outgoing topic out and returns the
target's *boot context*: its where-are-we state, decision chains with their reasons,
recent exchanges, the shared facts layer (``memory/facts.md`` and pinned
``memory/core/``) and the small topic index, packed under a token budget. Nothing from
another topic's folder is ever a candidate; the index line (title and one-line
summary) is the only thing every topic sees of the others: the awareness layer.

Beside the status, the ``open`` flag says whether a topic's summary is shown in the
context block (:mod:`.block`) or only its name and cue description.

Modules: :mod:`.facade` (:class:`Topics`), :mod:`.catalog` (reading topics, the write
transaction), :mod:`.lifecycle` (create, close, switch, spawn), :mod:`.boot` (the boot
view), :mod:`.index` (the awareness layer), :mod:`.where`, :mod:`.decisions`,
:mod:`.exchanges`, :mod:`.vocabulary`, :mod:`.block`, :mod:`.routing` (one concern each),
:mod:`.detection` (the deterministic detector), :mod:`.config` (``[topics]``),
:mod:`.records` (the values handed out) and :mod:`.files` (the on-disk format).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextfs.lazy import exports

if TYPE_CHECKING:
    from .block import ALREADY_VISIBLE, DOES_NOT_EXIST, Block
    from .boot import BootContext
    from .config import InitialTopic, TopicsConfig, load_topics_config
    from .decisions import Decisions
    from .detection import Detection
    from .exchanges import Exchanges
    from .facade import Topics
    from .files import (
        SECTIONS,
        Decision,
        Exchange,
        WhereAreWe,
        check_slug,
        item_text,
        parse_decisions,
        parse_exchanges,
        render_decisions,
        slugify,
    )
    from .records import STATUSES, IndexEntry, RouteResult, Spawned, Topic, open_section
    from .routing import Routing
    from .vocabulary import Vocabulary
    from .where import WhereState

__all__ = [
    "ALREADY_VISIBLE",
    "Block",
    "BootContext",
    "DOES_NOT_EXIST",
    "Decision",
    "Decisions",
    "Detection",
    "Exchange",
    "Exchanges",
    "IndexEntry",
    "InitialTopic",
    "RouteResult",
    "Routing",
    "SECTIONS",
    "STATUSES",
    "Spawned",
    "Topic",
    "Topics",
    "TopicsConfig",
    "Vocabulary",
    "WhereAreWe",
    "WhereState",
    "check_slug",
    "item_text",
    "load_topics_config",
    "open_section",
    "parse_decisions",
    "parse_exchanges",
    "render_decisions",
    "slugify",
]

# Loaded from their modules on first use (PEP 562): ``contextfs context`` reaches this
# package only for the file names in :mod:`.files`, and importing every topic module
# made that call about 20 ms slower (141 against 120 ms, measured back to back).
_HOMES = {
    **dict.fromkeys(("ALREADY_VISIBLE", "DOES_NOT_EXIST", "Block"), ".block"),
    "BootContext": ".boot",
    **dict.fromkeys(("InitialTopic", "TopicsConfig", "load_topics_config"), ".config"),
    "Decisions": ".decisions",
    "Detection": ".detection",
    "Exchanges": ".exchanges",
    "Topics": ".facade",
    **dict.fromkeys(
        (
            "SECTIONS",
            "Decision",
            "Exchange",
            "WhereAreWe",
            "check_slug",
            "item_text",
            "parse_decisions",
            "parse_exchanges",
            "render_decisions",
            "slugify",
        ),
        ".files",
    ),
    **dict.fromkeys(
        ("STATUSES", "IndexEntry", "RouteResult", "Spawned", "Topic", "open_section"), ".records"
    ),
    "Routing": ".routing",
    "Vocabulary": ".vocabulary",
    "WhereState": ".where",
}

__getattr__, __dir__ = exports(__name__, _HOMES)
