"""The author a person audits is the one they set: on the manager, or on the tool adapter.

``ContextManager(..., actor="agent:planner")`` followed by ``make_tools(ctx)`` (the
README's own snippet) commits as ``agent:planner``; so do the LangGraph store, the memory
tool and the MCP server built on that manager. An actor given to the adapter itself wins;
with neither, each adapter keeps its own default name.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import git

from contextfs import ContextManager
from contextfs.integrations import make_tools
from contextfs.integrations.langgraph.store import ContextStore
from contextfs.integrations.memory_tool.adapter import MemoryToolAdapter


def _author(root: Path) -> str:
    return git(root, "log", "-1", "--format=%an").strip()


def _tool_write(ctx: ContextManager, **kwargs: object) -> None:
    tool = next(t for t in make_tools(ctx, **kwargs) if t.name == "write_context")  # type: ignore[arg-type]
    tool.invoke({"path": "memory/facts.md", "content": "- from a tool\n"})


@pytest.mark.parametrize(
    ("manager_actor", "adapter_actor", "expected"),
    [
        ("agent:planner", None, "agent:planner"),
        ("agent:planner", "agent:coder", "agent:coder"),
        (None, None, "agent:langchain"),
    ],
)
def test_the_langchain_tools_write_as_the_actor_that_was_set(
    tmp_path: Path, manager_actor: str | None, adapter_actor: str | None, expected: str
) -> None:
    ctx = ContextManager(
        tmp_path / "ctx", index=False, **({"actor": manager_actor} if manager_actor else {})
    )
    _tool_write(ctx, **({"actor": adapter_actor} if adapter_actor else {}))
    assert _author(ctx.root) == expected
    assert ctx.get("memory/facts.md").metadata["author"] == expected


def test_the_langgraph_store_writes_as_the_managers_actor(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:planner", index=False)
    ContextStore(ctx).put(("users", "42"), "prefs", {"content": "dark mode"})
    assert _author(ctx.root) == "agent:planner"
    ContextStore(ctx, actor="agent:graph").put(("users", "42"), "prefs", {"content": "light mode"})
    assert _author(ctx.root) == "agent:graph"
    ContextStore(ContextManager(tmp_path / "other", index=False)).put(("u",), "k", {"content": "x"})
    assert _author(tmp_path / "other") == "agent:langgraph"


def test_the_memory_tool_writes_as_the_managers_actor(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:planner", index=False)
    MemoryToolAdapter(ctx).execute(
        {"command": "create", "path": "/memories/a.md", "file_text": "one\n"}
    )
    assert _author(ctx.root) == "agent:planner"


def test_a_provenance_block_around_a_tool_call_is_the_author(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:planner", index=False)
    with ctx.provenance(actor="agent:reviewer"):
        _tool_write(ctx)
    assert _author(ctx.root) == "agent:reviewer"
