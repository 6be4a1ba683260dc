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

__all__ = [
    "AlreadyExistsError",
    "BudgetError",
    "ConfigError",
    "ConflictError",
    "ContentError",
    "ContextFSError",
    "ContextManager",
    "Document",
    "EvolveError",
    "FrontmatterError",
    "HistoryEntry",
    "InvalidPathError",
    "MemoryLimitError",
    "NotFoundError",
    "PoisoningError",
    "Provenance",
    "RevertReport",
    "SearchIndexError",
    "TopicError",
    "TrashEntry",
    "VersioningError",
    "__version__",
]
