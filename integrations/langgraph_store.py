"""A LangGraph ``BaseStore`` whose items are markdown files in a context root.

Install with the ``langgraph`` extra (``pip install 'contextfs-git[langgraph]'``). A
namespace ``("users", "42")`` is the folder ``<prefix>/users/42/`` and a key is one file
``<key>.md`` in it; labels and keys that are not plain lowercase names are encoded
reversibly (see :mod:`.store_names`), so any label or key LangGraph accepts can be
stored, and none can reach outside ``<prefix>/``. All ops, whether they come through
``put``/``get``/``search``/``list_namespaces`` or straight to ``batch``/``abatch``, become
paths in one place, :meth:`ContextStore._path`.

An item's file is readable markdown: a string ``content`` in the value is the body (a
person editing the file edits what the graph reads back), and the rest of the value
follows as a fenced JSON block. The whole file is searchable, so ``search(query=...)``
finds any value by its text; with ``index={"embed": ..., "dims": ...}`` queries are
ranked by meaning instead (vectors are derived state, never committed). Every batch of
writes is one commit by the store's actor (the one given to the store, else the one set on
the manager, else ``agent:langgraph``); deletes go to the trash. TTLs are refused:
expiring an item on reads would mean a commit per read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from contextfs.document import as_content
from contextfs.errors import ContentError, ContextFSError, InvalidArgumentError
from contextfs.extras import require

require("langgraph.store.base", "langgraph")  # the optional extra: its install line when missing
from langgraph.store.base import (  # noqa: E402 - after the check above
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from . import store_names  # noqa: E402
from .store_index import Embedder, ItemIndex, cosine, query_words  # noqa: E402

if TYPE_CHECKING:
    from contextfs import ContextManager

__all__ = ["ContextStore"]

_FENCE = "```json\n"
#: Who the store writes as when neither it nor its manager was given an actor.
_DEFAULT_ACTOR = "agent:langgraph"
_END = "\n```\n"
_MAX_SCAN = 1000


@dataclass(frozen=True)
class _Stored:
    rel: str
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created: datetime
    updated: datetime
    version: str
    index: Any  # None (store default), False or a list of fields


def _own(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """The store's own frontmatter table of an item file ({} when missing or not a table)."""
    own = meta.get("langgraph")
    return own if isinstance(own, Mapping) else {}


def _when(text: object) -> datetime:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return datetime.fromtimestamp(0, timezone.utc)


class ContextStore(BaseStore):
    """LangGraph long-term memory on plain files, versioned by git."""

    supports_ttl = False

    def __init__(self, ctx: ContextManager, *, prefix: str = "store", actor: str | None = None,
                 session: str | None = None, index: IndexConfig | None = None) -> None:
        with ctx.provenance(actor=actor or _DEFAULT_ACTOR, session=session):
            pass  # the manager checks actor and session now, not on the first write
        self.ctx = ctx
        self.prefix = prefix.strip("/")
        ctx.exists(self.prefix)  # the core gate for the prefix itself
        self._actor = actor
        self.session = session
        self.index_config = dict(index) if index else None
        self._index = ItemIndex(index)
        ctx.add_listener(self._index.forget)

    @property
    def actor(self) -> str:
        """Who the store's writes are attributed to: its own actor, the manager's, or its default."""
        return self._actor or self.ctx.chosen_actor or _DEFAULT_ACTOR

    # ------------------------------------------------------------------ the one mapping
    def _folder(self, namespace: tuple[str, ...]) -> str:
        if not isinstance(namespace, tuple):
            raise InvalidArgumentError(f"a namespace is a tuple of strings, not {type(namespace).__name__}")
        return "/".join((self.prefix, *(store_names.encode_label(label) for label in namespace)))

    def _path(self, namespace: tuple[str, ...], key: str) -> str:
        """Where an item lives: every op that names an item comes through here."""
        return f"{self._folder(namespace)}/{store_names.encode_key(key)}.md"

    def _locate(self, rel: str, meta: Mapping[str, Any] | None = None) -> tuple[tuple[str, ...], str] | None:
        """The (namespace, key) a file stands for, or None if it is not an item.

        Names decode by themselves; only a hashed (very long) name needs the original
        from the file's frontmatter, which is read then (or taken from ``meta``).
        """
        if not rel.startswith(self.prefix + "/") or not rel.endswith(".md"):
            return None
        parts = rel[len(self.prefix) + 1: -3].split("/")
        decoded = [store_names.decode(p, key=False) for p in parts[:-1]]
        labels = [label for label in decoded if label is not None]
        hashed_label = len(labels) < len(decoded)
        key = store_names.decode(parts[-1], key=True)
        if not hashed_label and key is not None:
            return tuple(labels), key
        own = _own(self.ctx.get(rel).metadata if meta is None else meta)
        if hashed_label:
            stored = own.get("namespace")
            if not isinstance(stored, list) or [store_names.encode_label(str(x)) for x in stored] != parts[:-1]:
                return None
            labels = [str(x) for x in stored]
        if key is None:
            stored_key = own.get("key")
            if not isinstance(stored_key, str) or store_names.encode_key(stored_key) != parts[-1]:
                return None
            key = stored_key
        return tuple(labels), key

    # ------------------------------------------------------------------ file format
    def _load(self, rel: str) -> _Stored | None:
        if not self.ctx.exists(rel):
            return None
        doc = self.ctx.get(rel)
        where = self._locate(rel, doc.metadata)
        if where is None:
            return None
        own = _own(doc.metadata)
        value = self._parse_body(rel, doc.body, str(own.get("layout", "json")))
        override = own.get("index")
        return _Stored(rel, where[0], where[1], value, _when(doc.metadata.get("created")),
                       _when(doc.metadata.get("updated")), str(doc.version), override)

    @staticmethod
    def _parse_body(rel: str, body: str, layout: str) -> dict[str, Any]:
        if layout == "content":
            return {"content": body}
        content: str | None = None
        if layout == "content+json":
            content, sep, block = body.rpartition("\n\n" + _FENCE)
            if not sep:
                raise ContentError(f"{rel} lost the JSON block after its text; restore the ```json block or revert the file")
        elif layout == "json" and body.startswith(_FENCE):
            block = body[len(_FENCE):]
        else:
            raise ContentError(f"{rel} is not in a store layout contextfs knows ({layout!r}); revert the file")
        if not block.endswith(_END):
            raise ContentError(f"{rel} has an unclosed JSON block; close the ```json block or revert the file")
        try:
            rest = json.loads(block[: -len(_END)])
        except ValueError as exc:
            raise ContentError(f"{rel} holds invalid JSON ({exc}); fix the ```json block or revert the file") from None
        if not isinstance(rest, dict):
            raise ContentError(f"{rel} must hold a JSON object; fix the ```json block or revert the file")
        return rest if content is None else {"content": content, **rest}

    @staticmethod
    def _render(value: Mapping[str, Any]) -> tuple[str, str]:
        """(layout, body): a string ``content`` as prose, the rest as a JSON block.

        A float NaN or infinity is written as Python's json module writes it (``NaN``,
        ``Infinity``) and read back as the same float, as LangGraph's own stores keep it.
        """
        try:
            rest_json = json.dumps({k: v for k, v in value.items() if k != "content"}, ensure_ascii=False,
                                   indent=2)
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(f"the value is not JSON-serializable ({exc}); store strings, numbers, "
                                       "booleans, None, lists and dicts") from None
        content = value.get("content")
        if isinstance(content, str):
            if len(value) == 1:
                return "content", content
            return "content+json", f"{content}\n\n{_FENCE}{rest_json}{_END}"
        whole = json.dumps(dict(value), ensure_ascii=False, indent=2)
        return "json", f"{_FENCE}{whole}{_END}"

    # ------------------------------------------------------------------ ops
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._run(list(ops), self._sync_embed)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        loop = asyncio.get_running_loop()
        embeddings = self._index.embeddings

        def embed(texts: list[str]) -> list[list[float]]:
            assert embeddings is not None
            return asyncio.run_coroutine_threadsafe(embeddings.aembed_documents(texts), loop).result()

        return await asyncio.to_thread(self._run, list(ops), embed)

    def _sync_embed(self, texts: list[str]) -> list[list[float]]:
        assert self._index.embeddings is not None
        return self._index.embeddings.embed_documents(texts)

    def _run(self, ops: list[Op], embed: Embedder) -> list[Result]:
        # Reads see the store as it was before this batch's writes, as in LangGraph's own stores;
        # every put is checked before anything is written.
        puts: dict[str, PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                puts[self._check_put(op)] = op  # the last write to a key wins
            elif not isinstance(op, (GetOp, SearchOp, ListNamespacesOp)):
                raise InvalidArgumentError(f"unsupported store operation {type(op).__name__}; use get, put, search or list_namespaces")
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                stored = self._load(self._path(op.namespace, op.key))
                results.append(self._item(stored) if stored else None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op, embed))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op))
            else:
                results.append(None)
        if puts:
            self._apply(puts, embed)
        return results

    def _check_put(self, op: PutOp) -> str:
        if op.ttl is not None:
            raise InvalidArgumentError(
                "TTL is not supported by ContextStore: items are files kept until deleted (expiring on reads "
                "would need a commit per read); pass ttl=None and delete items yourself"
            )
        if not op.namespace:
            raise InvalidArgumentError("the namespace is empty; put items under a namespace such as ('users', '42')")
        rel = self._path(op.namespace, op.key)
        # Keys and labels reach the tree encoded (base32), where the commit gate cannot read
        # them; the write gate judges them as given.
        self.ctx.guard().check_names([op.key, *op.namespace], what="a store key or namespace label")
        if op.value is not None:
            if not isinstance(op.value, Mapping) or not all(isinstance(k, str) for k in op.value):
                raise InvalidArgumentError("a store value must be a dict with string keys; pass e.g. {'text': '...'}")
            self._render(op.value)
            if op.index not in (None, False) and not (isinstance(op.index, list) and all(isinstance(f, str) for f in op.index)):
                raise InvalidArgumentError(f"index must be None, False or a list of field paths, not {op.index!r}")
        return rel

    def _apply(self, puts: dict[str, PutOp], embed: Embedder) -> None:
        label = ", ".join(sorted(puts))[:150]
        with self.ctx.provenance(actor=self.actor, session=self.session), \
                self.ctx.transaction(f"store: {label}", op="store"):
            for rel, op in puts.items():
                if op.value is None:
                    if self.ctx.exists(rel):
                        self.ctx.delete(rel)
                    continue
                layout, body = self._render(op.value)
                own: dict[str, Any] = {"layout": layout}
                if op.index is not None:
                    own["index"] = op.index
                if any(store_names.is_hashed(p) for p in rel[len(self.prefix) + 1: -3].split("/")[:-1]):
                    own["namespace"] = list(op.namespace)
                if store_names.is_hashed(rel.rsplit("/", 1)[1][:-3]):
                    own["key"] = op.key
                self.ctx.write(rel, as_content(rel, body), {"langgraph": own})
        if self._index.semantic:
            stored = [s for s in (self._load(rel) for rel, op in puts.items() if op.value is not None) if s]
            self._index.vectors([(s.rel, s.version, s.value, s.index) for s in stored], embed)

    @staticmethod
    def _item(s: _Stored) -> Item:
        return Item(namespace=s.namespace, key=s.key, value=s.value, created_at=s.created, updated_at=s.updated)

    @staticmethod
    def _search_item(s: _Stored, score: float | None) -> SearchItem:
        return SearchItem(namespace=s.namespace, key=s.key, value=s.value, created_at=s.created,
                          updated_at=s.updated, score=score)

    # ------------------------------------------------------------------ search
    def _items_under(self, prefix: tuple[str, ...]) -> list[_Stored]:
        folder = self._folder(prefix)
        out = []
        for rel in self.ctx.list(folder):
            try:
                stored = self._load(rel)
            except ContextFSError:
                continue  # a broken file under the prefix is not an item; get() reports it
            if stored is not None and stored.namespace[: len(prefix)] == prefix:
                out.append(stored)
        return out

    def _search(self, op: SearchOp, embed: Embedder) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        limit, offset = max(0, int(op.limit)), max(0, int(op.offset))
        words = query_words(op.query)
        if words and self._index.semantic:
            return self._semantic(op, prefix, embed, limit, offset)
        if words:
            hits = self.ctx.search(" ".join(words), path=self._folder(prefix), limit=_MAX_SCAN)
            ranked: list[tuple[_Stored, float | None]] = []
            for hit in hits:
                stored = self._safe_load(hit.path)
                if (stored and stored.index is not False and _matches(stored.value, op.filter)
                        and stored.namespace[: len(prefix)] == prefix
                        and self._index.matches_words(stored.value, stored.index, words)):
                    ranked.append((stored, float(hit.score)))
        else:
            items = [s for s in self._items_under(prefix) if _matches(s.value, op.filter)]
            items.sort(key=lambda s: (s.updated, s.rel), reverse=True)
            ranked = [(s, None) for s in items]
        return [self._search_item(s, score) for s, score in ranked[offset: offset + limit]]

    def _safe_load(self, rel: str) -> _Stored | None:
        try:
            return self._load(rel)
        except ContextFSError:
            return None

    def _semantic(self, op: SearchOp, prefix: tuple[str, ...], embed: Embedder, limit: int, offset: int) -> list[SearchItem]:
        items = [s for s in self._items_under(prefix) if _matches(s.value, op.filter)]
        vectors = self._index.vectors([(s.rel, s.version, s.value, s.index) for s in items], embed)
        query = embed([op.query or ""])[0]
        scored = [(max(cosine(query, v) for v in vectors[s.rel]), s) for s in items if vectors.get(s.rel)]
        scored.sort(key=lambda pair: (-pair[0], pair[1].rel))
        plain = [s for s in items if not vectors.get(s.rel)]
        ranked: list[tuple[_Stored, float | None]] = [(s, score) for score, s in scored] + [(s, None) for s in plain]
        return [self._search_item(s, score) for s, score in ranked[offset: offset + limit]]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = set()
        for rel in self.ctx.list(self.prefix):
            try:
                where = self._locate(rel)
            except ContextFSError:
                continue
            if where is not None:
                found.add(where[0])
        out = set()
        for ns in found:
            if all(_condition(ns, c) for c in op.match_conditions or ()):
                out.add(ns[: op.max_depth] if op.max_depth is not None else ns)
        return sorted(out)[op.offset: op.offset + op.limit]


def _condition(ns: tuple[str, ...], cond: Any) -> bool:
    path = tuple(cond.path)
    if len(path) > len(ns):
        return False
    part = ns[: len(path)] if cond.match_type == "prefix" else ns[len(ns) - len(path):]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


_OPS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


def _matches(value: Any, flt: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter: equality (nested dicts and lists compared deeply) or ``$op`` comparisons."""
    for key, want in (flt or {}).items():
        if not _compare(value.get(key) if isinstance(value, Mapping) else None, want):
            return False
    return True


def _compare(have: Any, want: Any) -> bool:
    if isinstance(want, Mapping):
        if want and all(isinstance(k, str) and k.startswith("$") for k in want):
            try:
                return all(op in _OPS and _OPS[op](have, arg) for op, arg in want.items())
            except TypeError:
                return False
        return isinstance(have, Mapping) and all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return (isinstance(have, (list, tuple)) and len(have) == len(want)
                and all(_compare(h, w) for h, w in zip(have, want, strict=True)))
    return have == want
