"""The typed error for an OSError met on a file of the root (one convention for all of them)."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator

from .errors import ContentError, ContextFSError

__all__ = ["io_error", "typed_io"]


def io_error(rel: str, exc: OSError) -> ContextFSError:
    """The typed error for an OSError met while working on ``rel``."""
    if exc.errno == errno.ENOSPC or exc.errno == errno.EDQUOT:
        return ContentError(f"{rel}: no space left on the device; free disk space and retry")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ContentError(f"{rel}: {exc.strerror}; check that the folder is writable")
    return ContentError(f"{rel}: {exc.strerror or exc}; check permissions and free disk space")


@contextlib.contextmanager
def typed_io(what: str) -> Iterator[None]:
    """Turn an OSError escaping the block into the typed error for ``what``."""
    try:
        yield
    except OSError as exc:
        raise io_error(what, exc) from None
