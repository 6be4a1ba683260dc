"""The MCP server in-process: the same tools as LangChain, gated and committed."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("mcp", reason="the mcp extra is part of the dev install")

from conftest import assert_clean, git  # noqa: E402
from contextfs.integrations.mcp_server import build_server  # noqa: E402


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_tools_are_listed_with_described_arguments(ctx) -> None:
    server = build_server(ctx)
    tools = asyncio.run(server.list_tools())
    names = {t.name for t in tools}
    assert {"read_context", "write_context", "search_context", "list_context", "scoped_context"} <= names
    assert "delete_context" not in names
    write = next(t for t in tools if t.name == "write_context")
    schema = write.input_schema if hasattr(write, "input_schema") else write.inputSchema
    assert schema["required"] == ["path", "content"]
    assert schema["properties"]["path"].get("description")


def test_calls_write_commit_and_refuse_hostile_paths(ctx) -> None:
    server = build_server(ctx)

    async def calls():
        ok = await server.call_tool("write_context", {"path": "memory/facts.md", "content": "- Queue: arq on Redis 7"})
        bad = await server.call_tool("read_context", {"path": "../../etc/passwd"})
        found = await server.call_tool("search_context", {"query": "queue redis"})
        scoped = await server.call_tool("scoped_context", {"scope": "project", "budget": 500})
        return ok, bad, found, scoped

    ok, bad, found, scoped = asyncio.run(calls())
    assert "memory/facts.md" in _text(ok)
    assert _text(bad).startswith("Error: ")
    assert "memory/facts.md" in _text(found)
    assert "Queue: arq on Redis 7" in _text(scoped)
    assert git(ctx.root, "log", "-1", "--format=%an").strip() == "agent:mcp"
    assert_clean(ctx.root)
