"""Which roots rank with dense vectors: the switch, without the numpy that dense ranking needs.

``ctx.index.use_embeddings(embeddings)`` records the root's :class:`contextfs.search.dense.Vectors` here;
the rankers (the index's questions, page-in) ask :func:`vectors_for` and import
:mod:`.dense` (numpy) only when the answer is not None, so a root without embeddings
never loads it.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["attach", "vectors_for"]

_ROOTS: dict[str, Any] = {}
_LOCK = threading.Lock()


def attach(root: str, vectors: Any | None) -> None:
    """Rank ``root``'s questions with ``vectors`` too (None: words alone again)."""
    with _LOCK:
        if vectors is None:
            _ROOTS.pop(root, None)
        else:
            _ROOTS[root] = vectors


def vectors_for(root: str) -> Any | None:
    """The root's :class:`contextfs.search.dense.Vectors`, or None when it ranks by words alone."""
    return _ROOTS.get(root)
