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
    MissingExtraError,
    NotFoundError,
    PoisoningError,
    ReviewError,
    SearchIndexError,
    TopicError,
    VersioningError,
)
from .lazy import exports

if TYPE_CHECKING:  # for type checkers; at run time these load on first use (below)
    from .document import Document
    from .manager import ContextManager, HistoryEntry, Provenance, RevertReport
    from .trash import TrashEntry

__version__ = "0.1.0"

# Re-exported on first use: the manager and the document codec cost about 15 ms to import,
# which a command line that only prints help, or a module that only needs the exception
# tree, should not pay for; the scoped-context names also keep the core from importing
# the scopes layer.
__getattr__, __dir__ = exports(__name__, {
    "ContextManager": "contextfs.manager",
    "ContextView": "contextfs.scopes.scoped",
    "Document": "contextfs.document",
    "HistoryEntry": "contextfs.history",
    "Provenance": "contextfs.provenance",
    "RevertReport": "contextfs.history",
    "ScopedContext": "contextfs.scopes.scoped",
    "TrashEntry": "contextfs.trash",
})

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
    "MissingExtraError",
    "NotFoundError",
    "PoisoningError",
    "Provenance",
    "RevertReport",
    "ReviewError",
    "ScopedContext",
    "SearchIndexError",
    "TopicError",
    "TrashEntry",
    "VersioningError",
    "__version__",
]
