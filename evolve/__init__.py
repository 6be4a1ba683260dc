"""How context improves itself after work (``contextfs.evolve``).

:class:`EvolvingAgent` records lessons and facts after each task (one commit, hygiene
and the poisoning guard applied first), ``summarize``/``summarize_all`` write better
abstracts and overviews, ``compact`` turns a long span into topic updates, and
``EvolvingAgent.cleanup`` (or ``contextfs.evolve.cleanup.cleanup``) archives what
nobody has read in a while. Any LangChain chat model works (:data:`LanguageModel`);
steps that need one say so instead of pretending.
"""

from __future__ import annotations

from .agent import EvolvingAgent, Outcome
from .cleanup import CleanupReport, track_access
from .compaction import CompactionResult, compact
from .llm import LanguageModel, resolve_llm
from .summaries import Summary, summarize, summarize_all

__all__ = [
    "CleanupReport",
    "CompactionResult",
    "EvolvingAgent",
    "LanguageModel",
    "Outcome",
    "Summary",
    "compact",
    "resolve_llm",
    "summarize",
    "summarize_all",
    "track_access",
]
