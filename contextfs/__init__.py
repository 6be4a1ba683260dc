"""contextfs: a context store for AI agents and the people who work with them.

Context is a tree of plain markdown files, versioned by git, searchable through a
Whoosh index, and delivered in scopes under token budgets.
"""

from __future__ import annotations

from .document import Document
from .errors import (
    AlreadyExistsError,
    BudgetError,
    ConfigError,
    ConflictError,
    ContentError,
    ContextFSError,
    EvolveError,
    FrontmatterError,
    InvalidArgumentError,
    InvalidPathError,
    MemoryLimitError,
    NotFoundError,
    PoisoningError,
    SearchIndexError,
    TopicError,
    VersioningError,
)
from .manager import ContextManager, HistoryEntry, Provenance, RevertReport
from .trash import TrashEntry

__version__ = "0.1.0"

_LAZY = {"ScopedContext": "contextfs.scopes.scoped", "ContextView": "contextfs.scopes.scoped"}


def __getattr__(name: str) -> object:
    """Re-export the scoped-context entry points lazily (the core never imports scopes)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'contextfs' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

__all__ = [
    "AlreadyExistsError",
    "BudgetError",
    "ConfigError",
    "ConflictError",
    "ContentError",
    "ContextFSError",
    "ContextManager",
    "ContextView",
    "Document",
    "EvolveError",
    "FrontmatterError",
    "HistoryEntry",
    "InvalidArgumentError",
    "InvalidPathError",
    "MemoryLimitError",
    "NotFoundError",
    "PoisoningError",
    "Provenance",
    "RevertReport",
    "ScopedContext",
    "SearchIndexError",
    "TopicError",
    "TrashEntry",
    "VersioningError",
    "__version__",
]
