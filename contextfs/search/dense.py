"""Optional dense ranking: vectors from the caller's LangChain ``Embeddings``, fused with the words.

Off unless a caller turns it on with ``ctx.index.use_embeddings(embeddings)`` (any object
with LangChain's ``embed_documents(texts)`` and ``embed_query(text)``). Then questions
(plain words) are ranked twice, by the lexical rules of :mod:`contextfs.text.analysis` and by
cosine similarity of vectors, and the two orders are fused by reciprocal rank:
``1 / (DENSE_K + rank)`` for the lexical rank plus :data:`DENSE_WEIGHT` times the same for
the dense rank. Both rankings cover every document, so the first k hits are still the
first k of any larger search. ``ctx.search`` (and so ``conversation_search`` and
``archival_memory_search``) and page-in (``ScopedContext`` views and ``passages``) fuse.

Page-in ranks passages, which have neighbours, so it fuses one order more: each passage
read with the one before and after it (:func:`in_context`). A reply rarely names what it
answers ("Yes, every Sunday" after "Do you still go running?"), so a question finds the
pair where it misses the reply alone. Weighted less (:data:`CONTEXT_WEIGHT`), it leaves
the lead to the passage's own order and the words'.

Vectors are derived state, like the index: kept in the state folder under ``.git/``
(never committed, never synced), one file per embedding model, keyed by what was embedded
(a document's version and line, a passage's text hash), computed for new text at the next
search, and rebuilt when the file is missing or damaged. This module imports numpy; it is
only imported once embeddings are in use, so a root without them never pays for it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from ..document import blob_version
from ..errors import ConfigError
from ..text.scoring import PRIOR, SCORE_DIGITS

__all__ = [
    "CONTEXT_WEIGHT",
    "DENSE_K",
    "DENSE_WEIGHT",
    "Embeddings",
    "Vectors",
    "dated",
    "fuse",
    "in_context",
    "similar",
]

log = logging.getLogger(__name__)

#: The rank offset of reciprocal-rank fusion, and how much the dense rank counts against the
#: lexical one. Chosen on LoCoMo's development conversations, where 0.8 was best for both
#: all-MiniLM-L6-v2 and all-mpnet-base-v2 (docs/bench-locomo.md): a small offset, because the
#: lexical top few are usually right.
DENSE_K = 10
DENSE_WEIGHT = 0.8
#: How much the order of passages read with their neighbours counts (0.75 of DENSE_WEIGHT).
#: Chosen on LoCoMo's development conversations with all-mpnet-base-v2, where every weight
#: from 0.2 to 0.8 ranked better than fusing without it (docs/bench-locomo.md).
CONTEXT_WEIGHT = 0.6
#: How many texts go to the model in one call.
_BATCH = 64


class Embeddings(Protocol):
    """What contextfs needs of a LangChain ``Embeddings``."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def check_embeddings(embeddings: object) -> Embeddings:
    """``embeddings`` when it has LangChain's two methods, else a ConfigError saying so."""
    if not all(
        callable(getattr(embeddings, name, None)) for name in ("embed_documents", "embed_query")
    ):
        raise ConfigError(
            f"use_embeddings() takes a LangChain Embeddings object (with embed_documents and "
            f"embed_query), not {type(embeddings).__name__}; pass e.g. HuggingFaceEmbeddings(...)"
        )
    return embeddings  # type: ignore[return-value]


def _model_key(embeddings: object) -> str:
    """A name for the model's vectors file: its class and model name, so two models never mix."""
    name = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None) or ""
    return hashlib.sha1(
        f"{type(embeddings).__module__}.{type(embeddings).__qualname__}|{name}".encode()
    ).hexdigest()[:16]


class Vectors:
    """Vectors of texts under keys, computed once per key and kept in the state folder."""

    def __init__(self, embeddings: object, folder: Path) -> None:
        self.embeddings = check_embeddings(embeddings)
        self.file = folder / f"{_model_key(embeddings)}.npz"
        self._lock = threading.Lock()
        self._rows: dict[str, int] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._dirty = False
        self._load()

    def _load(self) -> None:
        try:
            with np.load(self.file, allow_pickle=False) as data:
                keys, matrix = (
                    [str(k) for k in data["keys"]],
                    np.asarray(data["vectors"], dtype=np.float32),
                )
            if matrix.ndim != 2 or len(keys) != len(matrix):
                raise ValueError("keys and vectors differ in length")
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError) as exc:  # damaged: derived state, so it is rebuilt
            log.warning("rebuilding the vectors in %s (%s)", self.file, exc)
            return
        self._rows = {k: i for i, k in enumerate(keys)}
        self._matrix = matrix

    def save(self) -> None:
        """Write new vectors to the state folder (atomically), if any were made."""
        with self._lock:
            if not self._dirty:
                return
            keys = np.array(sorted(self._rows, key=self._rows.__getitem__))
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    np.savez(out, keys=keys, vectors=self._matrix)
                os.replace(tmp, self.file)
            except OSError as exc:  # derived state: a search never fails for it
                log.warning("could not save the vectors to %s: %s", self.file, exc)
                Path(tmp).unlink(missing_ok=True)
            self._dirty = False

    def of(self, keys: Sequence[str], text: Any) -> np.ndarray:
        """Unit vectors for ``keys`` (rows in order); ``text(key)`` gives what to embed for a new key."""
        missing = list(dict.fromkeys(k for k in keys if k not in self._rows))
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            made = _unit(
                np.asarray(
                    self.embeddings.embed_documents([text(k) for k in batch]), dtype=np.float32
                )
            )
            with self._lock:
                if self._matrix.size == 0:
                    self._matrix = np.zeros((0, made.shape[1]), dtype=np.float32)
                base = len(self._matrix)
                self._matrix = np.vstack([self._matrix, made])
                for i, k in enumerate(batch):
                    self._rows[k] = base + i
                self._dirty = True
        if missing:
            self.save()
        if not keys:
            return np.zeros(
                (0, self._matrix.shape[1] if self._matrix.ndim == 2 else 0), dtype=np.float32
            )
        return self._matrix[[self._rows[k] for k in keys]]

    def query(self, text: str) -> np.ndarray:
        return _unit(np.asarray([self.embeddings.embed_query(text)], dtype=np.float32))[0]


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


K = TypeVar("K", bound=Hashable)


def dense_order(keys: Sequence[K], similarities: np.ndarray) -> list[K]:
    """``keys`` by similarity, highest first (ties keep the order given)."""
    order = np.argsort(-np.round(similarities, SCORE_DIGITS), kind="stable")
    return [keys[i] for i in order.tolist()]


def dated(similarities: np.ndarray, inside: Sequence[bool]) -> np.ndarray:
    """``similarities`` with the period rule applied, as the words have it: a text dated within
    a period the question names (``inside``) counts :data:`~contextfs.text.scoring.PRIOR`
    times as much. A message's text never holds the day it was sent, so its vector cannot
    match "in May 2023"; who spoke it is part of the embedded text (``speaker: message``), so
    the speaker rule is left to the words."""
    lifted = np.asarray(inside, dtype=bool) & (similarities > 0)
    return np.where(lifted, similarities * PRIOR, similarities)


def similar(vectors: Vectors, texts: Sequence[str], question: np.ndarray) -> np.ndarray:
    """Each text's cosine similarity to ``question`` (a unit vector); a text is embedded
    once, kept under its hash, so the same text in two places or two commits costs one."""
    keys = [blob_version(text.encode("utf-8")) for text in texts]
    by_key = dict(zip(keys, texts, strict=True))
    return vectors.of(keys, by_key.__getitem__) @ question


def in_context(texts: Sequence[str], i: int) -> str:
    """Passage ``i`` of a file read with its neighbours: the one before it and the one after."""
    return "\n".join(texts[max(i - 1, 0) : i + 2])


def fuse(lexical: Sequence[K], dense: Sequence[K], context: Sequence[K] = ()) -> dict[K, float]:
    """Reciprocal-rank fusion of complete orders: the words', the vectors' and, for passages,
    the vectors' of each passage read with its neighbours. Each key's fused score."""
    out: dict[K, float] = {}
    for weight, order in ((1.0, lexical), (DENSE_WEIGHT, dense), (CONTEXT_WEIGHT, context)):
        for rank, key in enumerate(order):
            out[key] = out.get(key, 0.0) + weight / (DENSE_K + rank + 1)
    return out
