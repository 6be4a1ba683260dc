"""Which context an agent sees, and how much of it (``contextfs.scopes``).

- :class:`ScopedContext` assembles project / task / subtask views under hard token
  budgets, stepping items down tiers (full → excerpt → overview → abstract → cue)
  before dropping anything, and paging in the best matches for a query.
- :class:`Topics` keeps each topic's context isolated on disk, with a small index,
  decision chains, routed notifications and open/closed topics under a budget.
- :class:`Memory` and :class:`ConversationBuffer` are the MemGPT-style tiers: pinned
  core blocks, an archive searched by the index, and a recall log with eviction.
"""

from __future__ import annotations

from .memory import ArchivalNote, ConversationBuffer, CoreBlock, Memory, MemoryHit, Message
from .packing import Candidate, ContextView, DroppedItem, ViewItem, pack
from .poisoning import Verdict, assess, render_untrusted
from .rules import Rule, ScopeRules, default_rules
from .scoped import ScopedContext
from .topics import IndexEntry, RouteResult, Topic, Topics

__all__ = [
    "ArchivalNote",
    "Candidate",
    "ContextView",
    "ConversationBuffer",
    "CoreBlock",
    "DroppedItem",
    "IndexEntry",
    "Memory",
    "MemoryHit",
    "Message",
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
