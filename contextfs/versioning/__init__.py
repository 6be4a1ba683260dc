"""git, the way contextfs uses it: the only package that imports GitPython and gitdb.

- :mod:`.objects` writes and reads loose objects and rebuilds trees (tree surgery);
- :mod:`.refs` reads HEAD and moves the branch with git's lock-file protocol;
- :mod:`.gitcmd` runs the few git subprocesses with risky configuration disabled;
- :mod:`.repository` is the :class:`GitStore` façade the rest of contextfs uses.
"""

from __future__ import annotations

from .gitcmd import check_rev
from .objects import EXEC_MODE, FILE_MODE
from .refs import operation_in_progress
from .repository import Author, Commit, GitStore, Prepared

__all__ = [
    "EXEC_MODE",
    "FILE_MODE",
    "Author",
    "Commit",
    "GitStore",
    "Prepared",
    "check_rev",
    "operation_in_progress",
]
