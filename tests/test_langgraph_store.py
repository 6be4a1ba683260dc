"""The LangGraph store on a real root: items are files, batches are commits."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is part of the dev install")

from conftest import assert_clean, commit_count, git  # noqa: E402
from contextfs import InvalidPathError  # noqa: E402
from contextfs.integrations.langgraph_store import ContextStore  # noqa: E402


def test_put_get_search_delete(ctx) -> None:
    store = ContextStore(ctx)
    before = commit_count(ctx.root)
    store.put(("users", "42"), "prefs", {"content": "Prefers dark mode and short answers.", "kind": "pref"})
    store.put(("users", "42"), "tz", {"zone": "Europe/Berlin", "kind": "fact"})
    assert commit_count(ctx.root) == before + 2
    assert ctx.read("store/users/42/prefs.md") == "Prefers dark mode and short answers."
    item = store.get(("users", "42"), "prefs")
    assert item.value == {"kind": "pref", "content": "Prefers dark mode and short answers."}
    assert item.namespace == ("users", "42") and item.key == "prefs"
    assert store.get(("users", "42"), "tz").value == {"zone": "Europe/Berlin", "kind": "fact"}

    hits = store.search(("users",), query="dark mode")
    assert [h.key for h in hits] == ["prefs"] and hits[0].score is not None
    assert [h.key for h in store.search(("users", "42"), filter={"kind": "fact"})] == ["tz"]
    assert store.list_namespaces(prefix=("users",)) == [("users", "42")]

    store.delete(("users", "42"), "tz")
    assert store.get(("users", "42"), "tz") is None
    assert [e.original_path for e in ctx.trash()] == ["store/users/42/tz.md"]
    assert set(git(ctx.root, "log", "--format=%an", "-n", "3").split()) == {"agent:langgraph"}
    assert_clean(ctx.root)


def test_editor_edits_reach_the_graph(ctx) -> None:
    store = ContextStore(ctx)
    store.put(("notes",), "n1", {"content": "old text"})
    doc = ctx.get("store/notes/n1.md")
    ctx.write("store/notes/n1.md", "new text from an editor", dict(doc.metadata))
    assert store.get(("notes",), "n1").value["content"] == "new text from an editor"


def test_batch_is_one_commit_and_async_works(ctx) -> None:
    store = ContextStore(ctx)
    before = commit_count(ctx.root)
    from langgraph.store.base import PutOp

    store.batch([PutOp(("a",), f"k{i}", {"n": i}) for i in range(5)])
    assert commit_count(ctx.root) == before + 1
    got = asyncio.run(store.aget(("a",), "k3"))
    assert got.value == {"n": 3}


@pytest.mark.parametrize("namespace,key", [(("a/b",), "x"), (("a",), "../../x"), (("a",), "b/c"), (("con",), "x")])
def test_hostile_names_are_refused(ctx, namespace, key) -> None:
    store = ContextStore(ctx)
    head = ctx.git.head()
    with pytest.raises(InvalidPathError):
        store.put(namespace, key, {"v": 1})
    assert ctx.git.head() == head


def test_langgraph_refuses_dotted_labels_before_us(ctx) -> None:
    # LangGraph's own validation stops '..' and '.git' labels (periods are not allowed).
    store = ContextStore(ctx)
    with pytest.raises(ValueError):
        store.put(("..",), "x", {"v": 1})
