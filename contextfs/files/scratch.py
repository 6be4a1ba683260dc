"""Editor and operating-system scratch files: never content, never committed.

Editors save through side files (vim's ``.name.swp`` and ``name~``, emacs's ``#name#``,
JetBrains' ``name___jb_tmp___``, ...) and desktops drop folder metadata (``.DS_Store``,
``Thumbs.db``) next to a person's notes. None of it is context. This module is the one
list of them, used in three places so they cannot disagree:

* :func:`is_scratch` -- ``ContextManager.sync()`` and the watcher skip these paths;
* :data:`GITIGNORE` -- the same patterns in the managed ``.gitignore``, so ``git status``
  (what ``sync()`` reads) and a person's own ``git add`` skip them too.

A pattern matches one path component, as a ``.gitignore`` line without a slash does: a
matching folder (``.Trashes/``) hides everything inside it. Matching is case-sensitive,
like git's default.

>>> is_scratch("memory/.facts.md.swp"), is_scratch("memory/facts.md~"), is_scratch("memory/facts.md")
(True, True, False)
"""

from __future__ import annotations

import fnmatch
import functools
import re

__all__ = ["GITIGNORE", "PATTERNS", "is_scratch"]

#: ``(glob, what writes it)``; globs use ``*``, ``?`` and ``[...]`` as in ``.gitignore``.
PATTERNS: tuple[tuple[str, str], ...] = (
    # vim and neovim
    (".*.sw[a-p]", "vim swap file (.name.swp, then .swo, .swn, ... for more sessions)"),
    (".sw[a-p]", "vim swap file of a buffer without a name"),
    (".*.un~", "vim persistent undo file"),
    ("4913", "vim's probe, written and removed to check that a folder is writable"),
    # backups: vim (writebackup), emacs, gedit, Kate, nano; emacs numbered ones end in ~ too
    ("*~", "backup copy made while saving (name~, emacs's name.~1~)"),
    # emacs
    ("#*#", "emacs auto-save file (#name#)"),
    (".#*", "emacs lock file (.#name, a symlink to the editing session)"),
    # JetBrains IDEs' "safe write": new content to a temp name, old file renamed aside
    ("*___jb_tmp___", "JetBrains safe write: the new content before the rename"),
    ("*___jb_old___", "JetBrains safe write: the previous content"),
    # VS Code
    ("*.vsctmp", "VS Code atomic write"),
    ("*.crswap", "VS Code in a browser (file system access swap file)"),
    # GNOME (gedit, Text Editor) and KDE (Kate, KWrite)
    (".goutputstream-*", "GNOME applications: GIO's temp file for a replacing save"),
    ("*.kate-swp", "Kate and KWrite swap file"),
    (".directory", "KDE Dolphin folder settings"),
    # office suites
    (".~lock.*#", "LibreOffice lock file"),
    ("~$*", "Microsoft Office owner file"),
    # macOS
    (".DS_Store", "macOS Finder folder settings"),
    ("._*", "macOS AppleDouble file (metadata on a foreign file system)"),
    (".Spotlight-V100", "macOS Spotlight index of a volume"),
    (".Trashes", "macOS trash of a volume"),
    (".fseventsd", "macOS file system event log of a volume"),
    # Windows
    ("Thumbs.db", "Windows Explorer thumbnail cache"),
    ("ehthumbs.db", "Windows Media Center thumbnail cache"),
    ("desktop.ini", "Windows folder settings"),
    ("$RECYCLE.BIN", "Windows recycle bin of a drive"),
    # Linux and network file systems
    (".Trash-*", "Linux desktop trash on a removable drive"),
    (".fuse_hidden*", "FUSE: a file deleted while still open"),
    (".nfs*", "NFS: a file deleted while still open"),
)


@functools.cache
def _matcher() -> re.Pattern[str]:
    # Compiled on first use: about 1 ms, which a CLI call that never syncs should not pay.
    return re.compile("|".join(f"(?:{fnmatch.translate(glob)})" for glob, _ in PATTERNS))


def is_scratch(rel: str) -> bool:
    """True when any component of the root-relative path ``rel`` is a scratch name."""
    match = _matcher().match
    return any(match(part) for part in rel.split("/") if part)


def _gitignore_line(glob: str) -> str:
    # A leading '#' starts a comment and a leading '!' negates in .gitignore: escape both.
    return "\\" + glob if glob[:1] in "#!" else glob


#: The block of the managed ``.gitignore`` that lists :data:`PATTERNS`.
GITIGNORE = "# editor and OS scratch files (contextfs.files.scratch)\n" + "".join(
    f"{_gitignore_line(glob)}\n" for glob, _ in PATTERNS
)
