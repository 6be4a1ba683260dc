"""Creating the folders of a new root: owner-only, whatever the umask.

A context holds what agents and people remember, so the folders contextfs creates for a
root that does not exist yet — the root and any missing folder above it — are ``0700``
even under a permissive umask (``0``), where ``mkdir(parents=True)`` would leave every
parent but the last world-writable: anyone could then replace the root with a link of
their own between two calls. Each missing folder is created and then set to the mode
(``chmod`` is not subject to the umask). A folder that already exists is left as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PRIVATE_MODE", "make_private_folders"]

PRIVATE_MODE = 0o700


def make_private_folders(path: Path, mode: int = PRIVATE_MODE) -> list[Path]:
    """Create ``path`` and its missing parents with ``mode``; return the folders created."""
    missing: list[Path] = []
    current = path
    while not current.exists() and not current.is_symlink():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    made = []
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=mode)
        except FileExistsError:  # made by someone else meanwhile: theirs, left as it is
            continue
        os.chmod(folder, mode)
        made.append(folder)
    return made
