"""The LangGraph store contract, run against ContextStore with LangGraph's InMemoryStore as a control.

LangGraph ships no store test suite; these cases restate those of its in-memory and
SQLite store tests and of its graph tests that pass ``store=`` (batch order, puts and
deletes, filters, pagination, namespace listing with prefixes, suffixes, wildcards and
depth, semantic search with fields and per-put index settings). Every contract test runs
on both stores; the contextfs-only tests after them look at files, commits and names.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is part of the dev install")

from langchain_core.embeddings import Embeddings  # noqa: E402
from langgraph.store.base import (  # noqa: E402
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore  # noqa: E402

from conftest import assert_clean, commit_count, git  # noqa: E402
from contextfs import ContextFSError, InvalidArgumentError  # noqa: E402
from contextfs.integrations.langgraph_store import ContextStore  # noqa: E402


class LetterEmbeddings(Embeddings):
    """Deterministic: letter frequencies projected on fixed random directions, unit length."""

    def __init__(self, dims: int = 64) -> None:
        rng = random.Random(7)
        self.dims = dims
        self._axes: dict[str, list[float]] = {}
        self._rng = rng

    def _axis(self, ch: str) -> list[float]:
        if ch not in self._axes:
            self._axes[ch] = [self._rng.gauss(0, 1) for _ in range(self.dims)]
        return self._axes[ch]

    def _one(self, text: str) -> list[float]:
        counts = Counter(text.lower())
        vec = [0.0] * self.dims
        for ch, n in sorted(counts.items()):
            for i, x in enumerate(self._axis(ch)):
                vec[i] += n * x
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


@pytest.fixture(params=["contextfs", "inmemory-control"])
def make_store(request, ctx):
    def make(index=None):
        if request.param == "contextfs":
            return ContextStore(ctx, index=index)
        return InMemoryStore(index=index)
    make.kind = request.param
    return make


@pytest.fixture
def store(make_store):
    return make_store()


def vector_store(make_store, fields=None):
    emb = LetterEmbeddings()
    return make_store({"dims": emb.dims, "embed": emb, **({"fields": fields} if fields else {})}), emb


# ------------------------------------------------------------------ the contract (both stores)
def test_batch_order_reads_before_writes(store) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch([
        GetOp(("test", "foo"), "key1"),
        PutOp(("test", "bar"), "key2", {"data": "value2"}),
        SearchOp(("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(("test",), "key3"),
    ])
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"}
    assert results[0].namespace == ("test", "foo") and results[1] is None
    assert [i.key for i in results[2]] == ["key1"]
    assert ("test", "foo") in results[3] and ("test", "bar") in results[3]
    assert results[4] is None
    again = store.batch([PutOp(("test",), "key3", {"data": "value3"}), GetOp(("test",), "key3")])
    assert again[1] is None  # the put lands after the reads of the same batch
    assert store.get(("test",), "key3").value == {"data": "value3"}


def test_batch_puts_and_deletes(store) -> None:
    assert store.batch([PutOp(("test",), "key1", {"data": "value1"}), PutOp(("test",), "key2", {"data": "value2"}),
                        PutOp(("test",), "key3", None)]) == [None, None, None]
    assert store.get(("test",), "key1").value == {"data": "value1"}
    assert store.get(("test",), "key3") is None
    store.delete(("test",), "key1")
    assert store.get(("test",), "key1") is None
    store.delete(("test",), "never-there")  # deleting nothing is fine


def test_basic_ops_update_and_other_namespaces(store) -> None:
    ns = ("test", "documents")
    store.put(ns, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(ns, "doc1")
    assert item.namespace == ns and item.key == "doc1"
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}
    assert item.created_at is not None and item.updated_at is not None
    store.put(ns, "doc1", {"title": "Updated", "content": "Hello, LangGraph!"})
    updated = store.get(ns, "doc1")
    assert updated.value == {"title": "Updated", "content": "Hello, LangGraph!"}
    assert updated.updated_at >= item.updated_at
    assert store.get(("test", "other"), "doc1") is None
    nested = {"n": 1, "f": 2.5, "b": True, "none": None, "list": [1, "two", {"three": 3}], "d": {"e": {"f": "g"}}}
    store.put(ns, "shapes", nested)
    assert store.get(ns, "shapes").value == nested


def test_search_filters_and_pagination(store) -> None:
    data = [(("test", "docs"), "doc1", {"title": "First", "author": "Alice", "tags": ["important"], "score": 4.5}),
            (("test", "docs"), "doc2", {"title": "Second", "author": "Bob", "tags": ["draft"], "score": 3.0}),
            (("test", "images"), "img1", {"title": "Image", "author": "Alice", "tags": ["final"], "score": 4.0})]
    for ns, key, value in data:
        store.put(ns, key, value)
    assert len(store.search(("test",))) == 3
    assert {i.key for i in store.search(("test", "docs"))} == {"doc1", "doc2"}
    assert {i.key for i in store.search(("test",), filter={"author": "Alice"})} == {"doc1", "img1"}
    assert {i.key for i in store.search(("test",), filter={"score": {"$gt": 3.5}})} == {"doc1", "img1"}
    assert {i.key for i in store.search(("test",), filter={"score": {"$gte": 4.0}, "author": "Alice"})} == {"doc1", "img1"}
    assert {i.key for i in store.search(("test",), filter={"author": {"$ne": "Alice"}})} == {"doc2"}
    assert {i.key for i in store.search(("test",), filter={"tags": ["draft"]})} == {"doc2"}
    assert len(store.search(("test",), limit=2)) == 2
    assert len(store.search(("test",), offset=2)) == 1
    keys = [i.key for i in store.search(("test",), limit=2)] + [i.key for i in store.search(("test",), limit=2, offset=2)]
    assert sorted(keys) == ["doc1", "doc2", "img1"]
    assert store.search(("nothing",)) == []


NAMESPACES = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
              ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789")]


def test_list_namespaces(store) -> None:
    for i, ns in enumerate(NAMESPACES):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == [("a", "b", "c"), ("a", "b", "d", "e"),
                                                                  ("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [("a", "b", "c"), ("a", "b", "d"),
                                                                             ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    assert sorted(store.list_namespaces(max_depth=2)) == [("a", "b"), ("a", "c"), ("admin", "users"), ("b", "a"),
                                                          ("users", "123"), ("users", "456")]
    assert sorted(store.list_namespaces()) == sorted(NAMESPACES)
    ops = store.batch([ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("f",)),), max_depth=None,
                                        limit=10, offset=0)])
    assert all(ns[-1] == "f" for ns in ops[0])


def test_list_namespaces_pagination_and_empty(store) -> None:
    assert store.list_namespaces() == []
    for i in range(20):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=5) == [
        ("namespace", f"sub_{i:02d}") for i in range(5, 10)]


def test_namespace_rules_of_the_public_api(store) -> None:
    doc = {"foo": "bar"}
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", doc)
    store.put(("foo", "langgraph", "foo"), "bar", doc)
    assert store.get(("foo", "langgraph", "foo"), "bar").value == doc
    assert store.search(("foo", "langgraph", "foo"))[0].value == doc
    store.delete(("foo", "langgraph", "foo"), "bar")
    assert store.get(("foo", "langgraph", "foo"), "bar") is None
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])  # past the public API
    assert store.get(("langgraph", "foo"), "bar").value == doc


def test_async_api(store) -> None:
    async def run():
        await store.aput(("a",), "k", {"n": 1})
        got = await store.aget(("a",), "k")
        found = await store.asearch(("a",))
        names = await store.alist_namespaces()
        await store.adelete(("a",), "k")
        return got, found, names, await store.aget(("a",), "k")

    got, found, names, gone = asyncio.run(run())
    assert got.value == {"n": 1} and found[0].key == "k" and names == [("a",)] and gone is None


def test_vector_search_ranks_by_meaning(make_store) -> None:
    store, _ = vector_store(make_store)
    for key, value in [("doc1", {"text": "short text"}), ("doc2", {"text": "longer text document"}),
                       ("doc3", {"text": "longest text document here"}), ("doc4", {"description": "text in description"}),
                       ("doc5", {"content": "text in content field"}), ("doc6", {"body": "text in body field"})]:
        store.put(("test",), key, value)
    keys = [r.key for r in store.search(("test",), query="long text")]
    assert "doc2" in keys and "doc3" in keys
    assert all(r.score is not None for r in store.search(("test",), query="long text"))


def test_vector_update_reindexes_and_index_false_skips(make_store) -> None:
    store, _ = vector_store(make_store)
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    first = store.search(("test",), query="Zany Xerxes")
    assert first[0].key == "doc1"
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = next(r.score for r in store.search(("test",), query="Zany Xerxes") if r.key == "doc1")
    assert after < first[0].score
    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert not any(r.key == "doc4" for r in store.search(("test",), query="new text about dogs", limit=3))


def test_vector_search_with_filters_pagination_and_edges(make_store) -> None:
    store, _ = vector_store(make_store)
    for key, value in [("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
                       ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
                       ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
                       ("doc4", {"text": "blue car", "color": "blue", "score": 3.5})]:
        store.put(("test",), key, value)
    assert [r.key for r in store.search(("test",), query="apple", filter={"color": "red"})][0] == "doc1"
    assert len(store.search(("test",), query="apple", filter={"color": "red"})) == 2
    assert len(store.search(("test",), query="blue", filter={"score": {"$gt": 3.2}})) == 3
    assert [r.key for r in store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})] == ["doc3"]
    page1 = store.search(("test",), query="car", limit=2)
    page2 = store.search(("test",), query="car", limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 2 and {r.key for r in page1}.isdisjoint({r.key for r in page2})
    assert page1[0].score >= page1[1].score >= page2[0].score
    for query in ("", None, "car " * 100, "car!@#$%^&*()"):
        assert len(store.search(("test",), query=query)) == 4


def test_fields_and_per_put_index(make_store) -> None:
    store, emb = vector_store(make_store, fields=["key0", "key1", "key3"])
    store.put(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})
    store.put(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})
    hits = store.search(("test",), query="xxx")
    assert len(hits) == 2 and hits[0].score > 0.9 and hits[1].score > 0.9
    assert store.search(("test",), query="uuu")[0].key == "doc2"
    assert store.search(("test",), query="zzz")[0].key == "doc1"
    assert all(h.score < 0.9 for h in store.search(("test",), query="www"))  # key2 is not indexed
    store.put(("test",), "doc3", {"key0": "aaa", "key1": "bbb"}, index=["key0"])
    assert store.search(("test",), query="aaa")[0].key == "doc3"
    expected = sum(a * b for a, b in zip(emb.embed_query("aaa"), emb.embed_query("aaa"), strict=True))
    assert store.search(("test",), query="aaa")[0].score == pytest.approx(expected, abs=1e-6)


def test_a_graph_with_the_store(make_store) -> None:
    """Nodes read and write long-term memory through ``store=`` across threads, as in LangGraph's graph tests."""
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.store.base import BaseStore

    class State(TypedDict):
        user: str
        said: str
        recalled: list[str]

    def remember(state: State, *, store: BaseStore) -> dict:
        store.put(("memories", state["user"]), f"m{len(store.search(('memories', state['user'])))}",
                  {"text": state["said"]})
        return {}

    def recall(state: State, *, store: BaseStore) -> dict:
        return {"recalled": sorted(i.value["text"] for i in store.search(("memories", state["user"])))}

    store = make_store()
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(checkpointer=InMemorySaver(), store=store)
    graph.invoke({"user": "u1", "said": "likes tea", "recalled": []}, {"configurable": {"thread_id": "t1"}})
    out = graph.invoke({"user": "u1", "said": "plays chess", "recalled": []}, {"configurable": {"thread_id": "t2"}})
    assert out["recalled"] == ["likes tea", "plays chess"]
    other = graph.invoke({"user": "u2", "said": "hates rain", "recalled": []}, {"configurable": {"thread_id": "t3"}})
    assert other["recalled"] == ["hates rain"]


# ------------------------------------------------------------------ contextfs only: files, commits, names
def test_items_are_readable_files_and_batches_are_commits(ctx) -> None:
    store = ContextStore(ctx)
    before = commit_count(ctx.root)
    store.put(("users", "42"), "prefs", {"content": "Prefers dark mode and short answers.", "kind": "pref"})
    store.put(("users", "42"), "tz", {"zone": "Europe/Berlin"})
    assert commit_count(ctx.root) == before + 2
    assert ctx.read("store/users/42/prefs.md").startswith("Prefers dark mode and short answers.\n\n```json\n")
    assert '"zone": "Europe/Berlin"' in ctx.read("store/users/42/tz.md")
    store.batch([PutOp(("a",), f"k{i}", {"n": i}) for i in range(5)])
    assert commit_count(ctx.root) == before + 3
    store.delete(("users", "42"), "tz")
    assert [e.original_path for e in ctx.trash()] == ["store/users/42/tz.md"]
    assert set(git(ctx.root, "log", "--format=%an", "-n", "4").split()) == {"agent:langgraph"}
    assert_clean(ctx.root)


def test_text_search_finds_any_value_by_its_text(ctx) -> None:
    store = ContextStore(ctx)
    store.put(("mem",), "a", {"text": "Likes hiking in the Alps"})
    store.put(("mem",), "b", {"content": "Prefers tea", "kind": "preference"})
    store.put(("mem",), "c", {"facts": [{"what": "owns a kayak"}]})
    store.put(("mem",), "d", {"text": "also hiking"}, index=False)
    assert [h.key for h in store.search(("mem",), query="hiking")] == ["a"]
    assert [h.key for h in store.search(("mem",), query="preference")] == ["b"]
    assert [h.key for h in store.search(("mem",), query="kayak")] == ["c"]
    assert store.search(("mem",), query="hiking")[0].score > 0
    only_text = ContextStore(ctx, index={"fields": ["text"]})
    assert [h.key for h in only_text.search(("mem",), query="kayak")] == []
    assert [h.key for h in only_text.search(("mem",), query="hiking")] == ["a"]


def test_text_search_with_fields_reads_words_as_every_ranker_does(ctx) -> None:
    store = ContextStore(ctx, index={"fields": ["text"]})
    store.put(("mem",), "a", {"text": "Went hiking in the Alps twice"})
    store.put(("mem",), "f", {"text": "The weather report", "topic": "alps hikes"})
    # Stems meet ("hikes"/"hiking"); question and stop words ("what", "the") match nothing.
    assert [h.key for h in store.search(("mem",), query="What are the hikes in the Alps?")] == ["a"]
    assert store.search(("mem",), query="what is the") == []


def test_editor_edits_reach_the_graph(ctx) -> None:
    store = ContextStore(ctx)
    store.put(("notes",), "n1", {"content": "old text"})
    doc = ctx.get("store/notes/n1.md")
    ctx.write("store/notes/n1.md", "new text from an editor", dict(doc.metadata))
    assert store.get(("notes",), "n1").value == {"content": "new text from an editor"}


@pytest.mark.parametrize("label,key", [
    ("Users", "Key"), ("users", "key"), ("a?b", 'k:*|"'), ("back\\slash", "tab\tkey"), ("con", "nul"),
    ("e\u0301", "\u00e9"), ("\u00e9", "e\u0301"), ("\u202eevil", "\x1b[31m"), ("x" * 300, "y" * 2000),
    ("..", "../../x"), (".git", ".trash"), ("a/b", "c/d"), ("~", "~~"), ("store", ""), ("COM1", "lpt9.txt"),
])
def test_any_label_and_key_round_trip_inside_the_prefix(ctx, label: str, key: str) -> None:
    store = ContextStore(ctx)
    # Straight to batch(): LangGraph's public methods refuse dotted labels before any store sees them.
    store.batch([PutOp((label, "x"), key, {"v": f"{label}|{key}"})])
    got, found, names = store.batch([GetOp((label, "x"), key), SearchOp((label,)),
                                     ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0)])
    assert got.value == {"v": f"{label}|{key}"} and got.key == key and got.namespace == (label, "x")
    assert [i.key for i in found] == [key]
    assert names == [(label, "x")]
    assert all(f.startswith("store/") for f in ctx.list(""))
    store.batch([PutOp((label, "x"), key, None)])
    assert store.batch([GetOp((label, "x"), key)]) == [None]
    assert_clean(ctx.root)


def test_case_and_normalisation_twins_are_distinct_items(ctx) -> None:
    store = ContextStore(ctx)
    for key in ("Key", "key", "KEY", "\u00e9", "e\u0301"):
        store.put(("twins",), key, {"k": key})
    assert sorted(i.value["k"] for i in store.search(("twins",))) == sorted(["Key", "key", "KEY", "\u00e9", "e\u0301"])
    assert store.get(("twins",), "e\u0301").value == {"k": "e\u0301"}


def test_dotted_labels_through_batch_stay_inside_the_prefix(ctx) -> None:
    ctx.write("memory/core/persona.md", "I am careful.\n", {"trust": "trusted"})
    pinned = (ctx.root / "memory" / "core" / "persona.md").read_bytes()
    store = ContextStore(ctx)
    store.batch([PutOp(("..", "memory", "core"), "persona", {"content": "I obey everyone."})])
    store.batch([PutOp(("..", "..", ".."), "x", {"v": 1}), PutOp(("..",), "y", None)])
    assert (ctx.root / "memory" / "core" / "persona.md").read_bytes() == pinned
    assert all(p.startswith("store/") or p == "memory/core/persona.md" for p in ctx.list(""))
    assert ("..", "memory", "core") in store.list_namespaces()
    found = store.batch([SearchOp(("..",))])[0]
    assert [i.namespace for i in found] == [("..", "..", ".."), ("..", "memory", "core")]


def test_refusals_are_typed(ctx) -> None:
    store = ContextStore(ctx)
    head = ctx.git.head()
    for op in (PutOp(("a",), "k", {"v": 1}, ttl=5.0), PutOp((), "k", {"v": 1}), PutOp(("",), "k", {"v": 1}),
               PutOp(("a",), "k", {"v": object()}),
               PutOp(("a",), "\ud800", {"v": 1}), PutOp(("a",), "k", ["not", "a", "dict"]),
               PutOp(("a", 7), "k", {"v": 1})):
        with pytest.raises(ContextFSError):
            store.batch([op])
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(("a",), "k", {"v": 1}, ttl=1)
    with pytest.raises(InvalidArgumentError, match="unsupported store operation"):
        store.batch(["not an op"])
    assert ctx.git.head() == head
