"""Which context an agent sees, and how much of it (``contextfs.scopes``).

- :class:`ScopedContext` assembles project / task / subtask views under hard token
  budgets, stepping items down tiers (full → excerpt → overview → abstract → cue)
  before dropping anything, and paging in the best matches for a query.
- :class:`Topics` keeps each topic's context isolated on disk, with a small index,
  decision chains, routed notifications and open/closed topics under a budget.
- :class:`Memory` and :class:`ConversationBuffer` are the MemGPT-style tiers: pinned
  core blocks, an archive searched by the index, and a recall log with eviction.

Layout: the view assembly sits at the top — :mod:`.scoped` (``ScopedContext``),
:mod:`.rules` (scope rules), :mod:`.packing` (the budget packer), :mod:`.views` (what a view
holds, and loading candidates), :mod:`.tiers` (the five renderings of a file),
:mod:`.passages` (paragraphs, sentence windows and conversation turns), :mod:`.pagein`
(passage ranking for query page-in), :mod:`.poisoning` (the guard
for instruction-like text), :mod:`.arguments` (argument checks), :mod:`.derived` (paths of
derived state) and the ``cli_*`` command modules — beside the :mod:`.topics` and
:mod:`.memory` packages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextfs.lazy import exports

if TYPE_CHECKING:
    from contextfs.gate.poisoning import Verdict, assess, render_untrusted

    from .memory import (
        ArchivalNote,
        ConversationBuffer,
        CoreBlock,
        CoreBlocks,
        Memory,
        MemoryHit,
        Message,
    )
    from .packing import Candidate, ContextView, DroppedItem, ViewItem, pack
    from .rules import Rule, ScopeRules, default_rules
    from .scoped import PassageHit, ScopedContext
    from .topics import IndexEntry, RouteResult, Topic, Topics

__all__ = [
    "ArchivalNote",
    "Candidate",
    "ContextView",
    "ConversationBuffer",
    "CoreBlock",
    "CoreBlocks",
    "DroppedItem",
    "IndexEntry",
    "Memory",
    "MemoryHit",
    "Message",
    "PassageHit",
    "RouteResult",
    "Rule",
    "ScopeRules",
    "ScopedContext",
    "Topic",
    "Topics",
    "Verdict",
    "ViewItem",
    "assess",
    "default_rules",
    "pack",
    "render_untrusted",
]

# The names above are loaded from their modules on first use (PEP 562): importing every
# layer module costs about 60 ms, and ``contextfs context`` needs only the view assembly
# (``ScopedContext``), not topics or memory.
_HOMES = {
    **dict.fromkeys(("Verdict", "assess", "render_untrusted"), "contextfs.gate.poisoning"),
    **dict.fromkeys(
        (
            "ArchivalNote",
            "ConversationBuffer",
            "CoreBlock",
            "CoreBlocks",
            "Memory",
            "MemoryHit",
            "Message",
        ),
        "contextfs.scopes.memory",
    ),
    **dict.fromkeys(
        ("Candidate", "ContextView", "DroppedItem", "ViewItem", "pack"), "contextfs.scopes.packing"
    ),
    **dict.fromkeys(("Rule", "ScopeRules", "default_rules"), "contextfs.scopes.rules"),
    **dict.fromkeys(("PassageHit", "ScopedContext"), "contextfs.scopes.scoped"),
    **dict.fromkeys(("IndexEntry", "RouteResult", "Topic", "Topics"), "contextfs.scopes.topics"),
}

__getattr__, __dir__ = exports(__name__, _HOMES)
