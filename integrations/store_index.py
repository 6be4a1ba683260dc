"""What the LangGraph store indexes of an item, and its vectors for semantic search.

LangGraph's convention: ``index={"fields": [...]}`` names the parts of a value to index
(JSON paths such as ``"text"``, ``"meta.title"``, ``"notes[*].body"``); ``["$"]`` (the
default) is the whole value. A put may override it for one item with ``index=[...]`` or
switch indexing off with ``index=False``. With an ``embed`` function configured, each
indexed text gets a vector and a query is ranked by cosine similarity, best match per item.

Vectors are derived state: they live in memory, keyed by each file's blob id, and are
recomputed from the files when missing (after a restart, or for an item a person edited),
so nothing derived is ever committed. Words are read by :mod:`contextfs.text`, the rules
every ranker of contextfs uses (stop words, stems).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from contextfs import text as contextfs_text
from contextfs.errors import ConfigError
from contextfs.extras import require

require("langgraph.store.base", "langgraph")  # the optional extra: its install line when missing
from langgraph.store.base import ensure_embeddings  # noqa: E402 - after the check above
from langgraph.store.base.embed import get_text_at_path, tokenize_path  # noqa: E402

__all__ = ["Embedder", "ItemIndex", "cosine", "query_words"]

Embedder = Callable[[list[str]], list[list[float]]]


def query_words(text: str | None) -> list[str]:
    """A natural-language query as plain normalised words (no search syntax can slip in)."""
    return contextfs_text.words(text or "")


class ItemIndex:
    """Index settings of one store plus the vector cache."""

    def __init__(self, config: Mapping[str, Any] | None) -> None:
        config = dict(config or {})
        fields = config.get("fields") or ["$"]
        if not isinstance(fields, (list, tuple)) or not all(isinstance(f, str) and f for f in fields):
            raise ConfigError(f"index fields must be a list of JSON paths like ['text'], got {fields!r}")
        self.fields = [str(f) for f in fields]
        self.embeddings = ensure_embeddings(config["embed"]) if config.get("embed") is not None else None
        dims = config.get("dims")
        if self.embeddings is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims <= 0):
            raise ConfigError(f"index with embed needs dims, the vector size as a positive integer; got {dims!r}")
        self.dims = dims
        self._vectors: dict[str, tuple[str, list[list[float]]]] = {}
        self._lock = threading.Lock()

    @property
    def semantic(self) -> bool:
        return self.embeddings is not None

    # ------------------------------------------------------------------ texts
    def texts(self, value: Mapping[str, Any], override: Sequence[str] | bool | None) -> list[str]:
        """The texts to index for one value (LangGraph's ``get_text_at_path`` over the fields)."""
        if override is False:
            return []
        fields = list(override) if isinstance(override, (list, tuple)) else self.fields
        out: list[str] = []
        for path in fields:
            tokens: Any = path if path == "$" else tokenize_path(path)
            out.extend(t for t in get_text_at_path(dict(value), tokens) if t)
        return out

    def matches_words(self, value: Mapping[str, Any], override: Sequence[str] | bool | None, words: list[str]) -> bool:
        """Text search with non-default fields: does a term of the query occur in them?"""
        if override is None and self.fields == ["$"]:
            return True
        wanted = set(contextfs_text.query_terms(" ".join(words)))
        return any(wanted.intersection(contextfs_text.terms(text)) for text in self.texts(value, override))

    # ------------------------------------------------------------------ vectors
    def vectors(self, items: list[tuple[str, str, Mapping[str, Any], Any]], embed: Embedder) -> dict[str, list[list[float]]]:
        """Vectors for (path, version, value, override) items; computes only what is missing."""
        with self._lock:
            missing = [(rel, ver, self.texts(val, ov)) for rel, ver, val, ov in items
                       if self._vectors.get(rel, ("",))[0] != ver]
        todo = [(rel, ver, texts) for rel, ver, texts in missing]
        flat = [t for _, _, texts in todo for t in texts]
        made = embed(flat) if flat else []
        if len(made) != len(flat):
            raise ConfigError(f"the embed function returned {len(made)} vectors for {len(flat)} texts; fix it")
        with self._lock:
            at = 0
            for rel, ver, texts in todo:
                self._vectors[rel] = (ver, [list(map(float, v)) for v in made[at: at + len(texts)]])
                at += len(texts)
            return {rel: self._vectors[rel][1] for rel, _, _, _ in items if rel in self._vectors}

    def forget(self, paths: list[str]) -> None:
        with self._lock:
            for rel in paths:
                self._vectors.pop(rel, None)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
