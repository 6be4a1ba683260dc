"""contextfs: a context store for AI agents and the people who work with them.

Context is a tree of plain markdown files, versioned by git, searchable through a
Whoosh index, and delivered in scopes under token budgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # for type checkers; at run time these load on first use (below)
    from .document import Document
    from .manager import ContextManager, HistoryEntry, Provenance, RevertReport
    from .trash import TrashEntry

__version__ = "0.1.0"

# Re-exported on first use. The manager pulls in GitPython, PyYAML and filelock (about
# 70 ms at import), which a command line that only prints help, or a module that only
# needs the exception tree, should not pay for; the scoped-context names also keep the
# core from importing the scopes layer.
_LAZY = {
    "ContextManager": "contextfs.manager",
    "ContextView": "contextfs.scopes.scoped",
    "Document": "contextfs.document",
    "HistoryEntry": "contextfs.history",
    "Provenance": "contextfs.provenance",
    "RevertReport": "contextfs.history",
    "ScopedContext": "contextfs.scopes.scoped",
    "TrashEntry": "contextfs.trash",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'contextfs' has no attribute {name!r}")
    import importlib  # only here: the lazy re-exports above are the point

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

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
