"""A LangGraph ``BaseStore`` whose items are markdown files in a context root.

Install with the ``langgraph`` extra (``pip install 'contextfs-git[langgraph]'``). A
namespace ``("users", "42")`` is the folder ``<prefix>/users/42/`` and a key is one file
``<key>.md`` in it. The item's value lives in the frontmatter under ``value``; when the
value has a string ``content`` it is the file's body instead, so a person editing the
file in an editor edits what the graph reads back. Every batch of writes is one commit
(by ``agent:langgraph``); deletes go to the trash; search uses the Whoosh index.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from contextfs.errors import ContextFSError, InvalidPathError, NotFoundError

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "contextfs.integrations.langgraph_store needs LangGraph; install it with "
        "pip install 'contextfs-git[langgraph]'"
    ) from exc

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = ["ContextStore"]

_OPS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


def _when(text: object) -> datetime:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return datetime.fromtimestamp(0, timezone.utc)


def _matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    for key, want in (flt or {}).items():
        have = value.get(key)
        if isinstance(want, Mapping) and want and all(k in _OPS for k in want):
            try:
                if not all(_OPS[op](have, arg) for op, arg in want.items()):
                    return False
            except TypeError:
                return False
        elif have != want:
            return False
    return True


class ContextStore(BaseStore):
    """LangGraph long-term memory on plain files, versioned by git."""

    supports_ttl = False

    def __init__(self, ctx: ContextManager, *, prefix: str = "store", actor: str = "agent:langgraph") -> None:
        self.ctx = ctx
        self.prefix = prefix.strip("/")
        self.actor = actor

    # ------------------------------------------------------------------ mapping
    def _folder(self, namespace: tuple[str, ...]) -> str:
        for label in namespace:
            if not isinstance(label, str) or not label or "/" in label:
                raise InvalidPathError(
                    f"namespace label {label!r} is not accepted; use non-empty strings without '/'"
                )
        return "/".join((self.prefix, *namespace))

    def _path(self, namespace: tuple[str, ...], key: str) -> str:
        if not isinstance(key, str) or not key or "/" in key:
            raise InvalidPathError(f"key {key!r} is not accepted; use a non-empty string without '/'")
        return f"{self._folder(namespace)}/{key}.md"

    def _split(self, rel: str) -> tuple[tuple[str, ...], str]:
        parts = rel[len(self.prefix) + 1 : -3].split("/")
        return tuple(parts[:-1]), parts[-1]

    def _item(self, rel: str, cls: type[Item] = Item, score: float | None = None) -> Item | None:
        try:
            doc = self.ctx.get(rel)
        except NotFoundError:
            return None
        value = dict(doc.metadata.get("value") or {})
        if doc.metadata.get("value_in_body"):
            value["content"] = doc.body
        namespace, key = self._split(rel)
        kwargs: dict[str, Any] = dict(
            namespace=namespace, key=key, value=value,
            created_at=_when(doc.metadata.get("created")), updated_at=_when(doc.metadata.get("updated")),
        )
        if cls is SearchItem:
            kwargs["score"] = score
        return cls(**kwargs)

    # ------------------------------------------------------------------ ops
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        puts = [(i, op) for i, op in enumerate(ops) if isinstance(op, PutOp)]
        if puts:
            self._apply_puts([op for _, op in puts])
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                results[i] = self._item(self._path(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results[i] = self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._namespaces(op)
            elif not isinstance(op, PutOp):
                raise ContextFSError(f"unsupported store operation {type(op).__name__}; use get, put, search or list_namespaces")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _apply_puts(self, puts: list[PutOp]) -> None:
        # The last write to a key wins, as in LangGraph's own stores.
        final: dict[str, PutOp] = {self._path(op.namespace, op.key): op for op in puts}
        label = ", ".join(sorted(final))[:150]
        with self.ctx.provenance(actor=self.actor), self.ctx.transaction(f"store: {label}", op="store"):
            for rel, op in final.items():
                if op.value is None:
                    if self.ctx.exists(rel):
                        self.ctx.delete(rel)
                    continue
                value = dict(op.value)
                content = value.get("content")
                if isinstance(content, str):
                    meta = {"value": {k: v for k, v in value.items() if k != "content"}, "value_in_body": True}
                    self.ctx.write(rel, content, meta)
                else:
                    self.ctx.write(rel, "", {"value": value})

    def _search(self, op: SearchOp) -> list[SearchItem]:
        folder = self._folder(op.namespace_prefix) if op.namespace_prefix else self.prefix
        if op.query:
            hits = self.ctx.search(op.query, path=folder, limit=max(50, (op.offset + op.limit) * 4))
            ranked = [(h.path, float(h.score)) for h in hits if h.path.endswith(".md")]
        else:
            ranked = []
            for rel in self.ctx.list(folder):
                if rel.endswith(".md"):
                    ranked.append((rel, 0.0))
        items = []
        for rel, score in ranked:
            item = self._item(rel, SearchItem, score if op.query else None)
            if item is not None and _matches(item.value, op.filter):
                items.append(item)
        if not op.query:
            items.sort(key=lambda it: it.updated_at, reverse=True)
        return items[op.offset : op.offset + op.limit]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        base = self.ctx.root / self.prefix
        found: set[tuple[str, ...]] = set()
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
            if any(name.endswith(".md") for name in filenames):
                rel = os.path.relpath(dirpath, base)
                if rel != ".":
                    found.add(tuple(rel.split(os.sep)))
        out = set()
        for ns in found:
            if not all(self._condition(ns, c) for c in op.match_conditions or ()):
                continue
            out.add(ns[: op.max_depth] if op.max_depth is not None else ns)
        return sorted(out)[op.offset : op.offset + op.limit]

    @staticmethod
    def _condition(ns: tuple[str, ...], cond: Any) -> bool:
        path = tuple(cond.path)
        if len(path) > len(ns):
            return False
        part = ns[: len(path)] if cond.match_type == "prefix" else ns[len(ns) - len(path):]
        return all(p == "*" or p == n for p, n in zip(path, part, strict=True))
