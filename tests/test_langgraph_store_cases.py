"""Cases from LangGraph's own store tests (langgraph ``libs/checkpoint-sqlite/tests/test_store.py``)
that ContextStore failed while LangGraph's stores pass them, run on ContextStore and on
LangGraph's InMemoryStore as the control: namespace labels with a trailing newline, and a
value holding NaN or an infinity kept as it was put."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is part of the dev install")

from langgraph.store.memory import InMemoryStore  # noqa: E402

from contextfs.integrations.langgraph_store import ContextStore  # noqa: E402


@pytest.fixture(params=["contextfs", "inmemory-control"])
def store(request: pytest.FixtureRequest, ctx):
    return ContextStore(ctx) if request.param == "contextfs" else InMemoryStore()


def test_namespace_labels_with_trailing_newline(store) -> None:
    """Labels may contain newlines, and must not match a differently-named label."""
    store.put(("users", "alice"), "k", {"v": 1})
    store.put(("users", "alice\n"), "k", {"v": 2})
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {("users", "alice")}
    assert set(store.list_namespaces(prefix=["users", "alice"], limit=100)) == {("users", "alice")}
    assert store.get(("users", "alice\n"), "k").value == {"v": 2}
    assert store.get(("users", "alice"), "k").value == {"v": 1}


def test_keys_with_trailing_newline_are_their_own_items(store) -> None:
    store.put(("notes",), "k", {"v": 1})
    store.put(("notes",), "k\n", {"v": 2})
    assert store.get(("notes",), "k").value == {"v": 1} and store.get(("notes",), "k\n").value == {"v": 2}


def test_nan_and_infinities_round_trip(store) -> None:
    store.put(("items",), "x", {"price": float("nan"), "max": float("inf"), "min": float("-inf"), "n": 1})
    value = store.get(("items",), "x").value
    assert math.isnan(value["price"]) and value["max"] == math.inf and value["min"] == -math.inf
    assert value["n"] == 1


def test_numeric_filter_safety(store) -> None:
    store.put(("items",), "item1", {"price": 10, "quantity": 5})
    store.put(("items",), "item2", {"price": 20, "quantity": 3})
    store.put(("items",), "item3", {"price": 30, "quantity": 1})
    assert len(store.search(("items",), filter={"price": {"$gt": 15}})) == 2
    assert len(store.search(("items",), filter={"price": {"$lt": float("inf")}})) == 3
    assert len(store.search(("items",), filter={"price": {"$gt": float("-inf")}})) == 3
    assert len(store.search(("items",), filter={"price": {"$eq": float("nan")}})) == 0
    assert len(store.search(("items",), filter={"price": {"$lt": 10**100}})) == 3
