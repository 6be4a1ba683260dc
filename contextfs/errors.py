"""The one exception tree of contextfs, and fixes said in the caller's own terms.

Every failure a public call can raise is a :class:`ContextFSError`; messages end with
the fix, because the reader is often an LLM that will retry with what it is told. A fix
that names an operation is a :class:`Fix`, rendered in the terms of the interface in use
(:func:`contextfs.fixes.speaking`): ``ctx.list('memory')`` from Python, ``contextfs ls memory`` from the
CLI, ``list_context`` from an agent's tools::

    ContextFSError
    ├── InvalidPathError (ValueError)   traversal, absolute, reserved, bad names, symlinks
    ├── InvalidArgumentError (ValueError) an argument of the wrong type or out of range
    ├── NotFoundError (LookupError)     a missing file or trash entry; carries ``.path``
    ├── AlreadyExistsError              create without overwrite, restore onto a live file
    ├── ConflictError                   stale ``expected_version``, edit that matches 0 or 2+ times
    ├── FrontmatterError                bad YAML, non-mapping, alias bombs, too deep
    ├── ContentError                    too large, binary, invalid encoding
    ├── VersioningError                 git missing, repository state, lock timeout
    ├── SearchIndexError                a bad query (the index itself heals silently)
    ├── BudgetError                     a budget that cannot hold its pinned items
    ├── ConfigError                     a malformed ``.contextfs/config.toml`` or option
    ├── TopicError                      unknown topic, bad topic operation
    ├── MemoryLimitError                a core memory block over its token limit
    ├── PoisoningError                  instruction-like text refused by policy
    ├── ReviewError                     nothing to approve, an agent approving, a discarded session
    ├── EvolveError                     a failing or malformed model response
    └── MissingExtraError (ModuleNotFoundError) an optional extra is not installed
"""

from __future__ import annotations

from .fixes import Fix

__all__ = [
    "AlreadyExistsError",
    "BudgetError",
    "ConfigError",
    "ConflictError",
    "ContentError",
    "ContextFSError",
    "EvolveError",
    "FrontmatterError",
    "InvalidArgumentError",
    "InvalidPathError",
    "MemoryLimitError",
    "MissingExtraError",
    "NotFoundError",
    "PoisoningError",
    "ReviewError",
    "SearchIndexError",
    "TopicError",
    "VersioningError",
]

class ContextFSError(Exception):
    """Base of every error contextfs raises on purpose.

    ``fix`` (a :class:`Fix`) is appended to the message when it is shown, in the terms of
    the interface the error was raised through.
    """

    def __init__(self, message: str, *args: object, fix: Fix | None = None) -> None:
        super().__init__(message, *args)
        self.message = message
        self.fix = fix
        if fix is not None:
            self.rendered = f"{message}; {fix.render()}"  # said in the dialect where it was raised

    def __str__(self) -> str:
        return getattr(self, "rendered", None) or super().__str__()


class InvalidPathError(ContextFSError, ValueError):
    """A path argument was refused by the path gate before any I/O happened."""


class InvalidArgumentError(ContextFSError, ValueError):
    """An argument other than a path was refused: wrong type, out of range, unknown name."""


class NotFoundError(ContextFSError, LookupError):
    """A file, folder, revision or trash entry does not exist."""

    def __init__(self, message: str, path: str | None = None, *, fix: Fix | None = None) -> None:
        super().__init__(message, fix=fix)
        self.path = path


class AlreadyExistsError(ContextFSError):
    """The target is occupied and the call promised not to overwrite it."""


class ConflictError(ContextFSError):
    """Someone else changed the file first, or an edit was ambiguous."""


class FrontmatterError(ContextFSError):
    """A document's YAML frontmatter cannot be read safely."""


class ContentError(ContextFSError):
    """The content itself is unacceptable: too large, binary, or not UTF-8."""


class VersioningError(ContextFSError):
    """git failed or the repository is in a state contextfs cannot work with."""


class SearchIndexError(ContextFSError):
    """A search query was malformed or too expensive."""


class BudgetError(ContextFSError):
    """A token budget cannot hold the items that must always be shown."""


class ConfigError(ContextFSError, ValueError):
    """Configuration (config.toml, constructor options) is invalid."""


class TopicError(ContextFSError):
    """A topic operation cannot be carried out."""


class MemoryLimitError(ContextFSError):
    """A core memory block would exceed its token limit."""


class PoisoningError(ContextFSError):
    """Text that reads as an instruction was refused by the poisoning policy."""


class ReviewError(ContextFSError):
    """A review decision cannot be carried out: nothing waits, the caller is an agent, the
    session was discarded."""


class EvolveError(ContextFSError):
    """The evolving agent could not complete a step; nothing was written."""


class MissingExtraError(ContextFSError, ModuleNotFoundError):
    """An optional extra is not installed; the message ends with the ``pip install`` line.

    A ModuleNotFoundError too, so code that catches an ImportError keeps working.
    """

    def __init__(self, message: str, *, name: str | None = None) -> None:
        ContextFSError.__init__(self, message)
        self.name = name
