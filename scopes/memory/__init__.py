"""Memory tiers on files, the MemGPT pattern (``contextfs.scopes.memory``).

:class:`Memory` is the façade with the tool names agents know (``core_memory_append``,
``archival_memory_search``, ``conversation_search``, ...); :class:`ConversationBuffer`
keeps a session's recent window under a token budget, backed by the full log.

Modules: :mod:`.facade` (:class:`Memory`), :mod:`.core_blocks` (pinned core blocks),
:mod:`.archive` (archival notes and their search), :mod:`.dedupe` (near-duplicate
index), :mod:`.conversation` (session logs and recall search), :mod:`.buffer` (the
conversation window and its summarizers), :mod:`.records` (the values handed out, the
folders). Every word, stop-word, fingerprint and BM25 rule comes from :mod:`contextfs.text.analysis`.
"""

from __future__ import annotations

from contextfs.text.analysis import fingerprint

from .buffer import ConversationBuffer, ExtractiveSummarizer, LLMSummarizer, Summarizer
from .dedupe import word_set
from .facade import Memory
from .records import (
    ARCHIVE_DIR,
    CORE_DIR,
    DEFAULT_CORE_LIMIT,
    SESSIONS_DIR,
    ArchivalNote,
    CoreBlock,
    CoreBlocks,
    MemoryHit,
    MemoryHits,
    MemorySettings,
    Message,
)

__all__ = [
    "ARCHIVE_DIR",
    "CORE_DIR",
    "DEFAULT_CORE_LIMIT",
    "SESSIONS_DIR",
    "ArchivalNote",
    "ConversationBuffer",
    "CoreBlock",
    "CoreBlocks",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "Memory",
    "MemoryHit",
    "MemoryHits",
    "MemorySettings",
    "Message",
    "Summarizer",
    "fingerprint",
    "word_set",
]
