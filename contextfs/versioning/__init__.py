"""git, the way contextfs uses it: the only package that imports GitPython and gitdb.

- :mod:`.objects` writes and reads loose objects and rebuilds trees (tree surgery);
- :mod:`.refs` reads HEAD and moves the branch with git's lock-file protocol;
- :mod:`.staging` records paths in git's index in-process (:mod:`.indexfile` is the file
  format, :mod:`.indexentries` its entries, :mod:`.ewah` the split index's bitmaps);
- :mod:`.gitcmd` runs the few git subprocesses with risky configuration disabled;
- :mod:`.repository` is the :class:`GitStore` façade the rest of contextfs uses.

Names are loaded from their module on first use (PEP 562). GitPython and gitdb cost
about 37 ms to import, which a root opened read-only never needs: it finds its
repository from the filesystem and reads files directly. So ``from contextfs.versioning
import operation_in_progress`` loads :mod:`.refs` alone, and only ``GitStore``,
``Prepared`` and the other names of :mod:`.repository` and :mod:`.objects` bring
GitPython in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
    from .commits import Author, Commit, Prepared
    from .gitcmd import check_rev
    from .objects import EXEC_MODE, FILE_MODE
    from .refs import operation_in_progress
    from .repository import GitStore

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

#: The module (relative to this package) each public name lives in.
_HOMES = {
    "EXEC_MODE": ".objects",
    "FILE_MODE": ".objects",
    "Author": ".commits",
    "Commit": ".commits",
    "GitStore": ".repository",
    "Prepared": ".commits",
    "check_rev": ".gitcmd",
    "operation_in_progress": ".refs",
}

__getattr__, __dir__ = exports(__name__, _HOMES)
