"""Replacing a passage that must occur exactly once: the one check ``edit`` and a memory
block's replace share, with a fix for each way it can fail.

A passage that does not occur was usually quoted from memory (other spacing or case, an
old version of the file): the fix is to copy it from what the file holds now. A passage
that occurs more than once needs more of its surroundings: the message names the lines.
"""

from __future__ import annotations

from .errors import ConflictError
from .fixes import Fix

__all__ = ["replace_once"]


def _lines(text: str, passage: str) -> list[int]:
    found, at = [], text.find(passage)
    while at >= 0:
        found.append(text.count("\n", 0, at) + 1)
        at = text.find(passage, at + 1)
    return found


def replace_once(text: str, old: str, new: str, *, where: str, path: str) -> str:
    """``text`` with its one occurrence of ``old`` replaced by ``new``; ConflictError otherwise.

    ``where`` names the text in the message ("memory/facts.md", "core block 'persona'") and
    ``path`` is the file a reader opens to copy the passage exactly.
    """
    count = text.count(old)
    if count == 1:
        return text.replace(old, new, 1)
    if count == 0:
        near = " ".join(old.split()).casefold()
        similar = bool(near) and near in " ".join(text.split()).casefold()
        raise ConflictError(
            f"the text to replace does not occur in {where}"
            + (" (it does with other spacing or case)" if similar else "")
            + "; copy it exactly as the file has it now",
            fix=Fix("read", path),
        )
    lines = _lines(text, old)
    shown = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
    raise ConflictError(
        f"the text to replace occurs {count} times in {where} (lines {shown}); "
        "quote a longer passage, with the words around it, that occurs once"
    )
