"""A missing extra always says which pip line to run (one mechanism, contextfs.extras), and
the MCP server speaks like the LangChain tools: a version, and schema violations in the
tools' own words."""

from __future__ import annotations

import asyncio
import importlib.metadata
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contextfs import ContextManager, MissingExtraError
from contextfs.extras import require

# A fresh interpreter in which the named top-level packages cannot be imported.
_HIDE = textwrap.dedent("""
    import sys, importlib.abc
    class Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in {hidden!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
    sys.meta_path.insert(0, Hide())
""")


def run_without(packages: set[str], code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    program = _HIDE.format(hidden=packages) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_require_names_the_install_line_and_leaves_other_failures_alone() -> None:
    assert require("json", "mcp").__name__ == "json"
    with pytest.raises(MissingExtraError, match=r"install it with: pip install 'contextfs-git\[langgraph\]'") as info:
        require("no_such_package_for_contextfs.sub", "langgraph")
    assert isinstance(info.value, ModuleNotFoundError) and info.value.name == "no_such_package_for_contextfs"
    with pytest.raises(ValueError, match="unknown extra"):
        require("json", "nope")


def test_the_langgraph_store_without_its_extra_says_what_to_install(tmp_path: Path) -> None:
    done = run_without({"langgraph"}, """
        try:
            from contextfs.integrations.langgraph_store import ContextStore
        except ImportError as exc:
            print(type(exc).__name__, "|", exc)
    """, tmp_path)
    assert done.returncode == 0, done.stderr
    kind, message = done.stdout.strip().split(" | ")
    assert kind == "MissingExtraError"
    assert message == ("the LangGraph store (ContextStore) needs the 'langgraph' extra (langgraph is not installed); "
                       "install it with: pip install 'contextfs-git[langgraph]'")


def test_the_agent_middleware_without_its_extra_says_what_to_install(tmp_path: Path) -> None:
    done = run_without({"langchain"}, """
        try:
            from contextfs.integrations.middleware import ContextMiddleware
        except ImportError as exc:
            print(type(exc).__name__, "|", exc)
    """, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("MissingExtraError | the agent middleware (ContextMiddleware) needs the 'agents' "
                                   "extra (langchain is not installed); install it with: "
                                   "pip install 'contextfs-git[agents]'")


@pytest.mark.parametrize(("hidden", "args", "line"), [
    ({"mcp"}, ["mcp"], "error: the MCP server (contextfs mcp) needs the 'mcp' extra (mcp is not installed); "
                       "install it with: pip install 'contextfs-git[mcp]'"),
    ({"langchain"}, ["evolve", "cleanup", "--llm", "openai:gpt-4o-mini"],
     "error: --llm provider:model (LangChain's init_chat_model) needs the 'llm' extra (langchain is not "
     "installed); install it with: pip install 'contextfs-git[llm]' langchain-openai"),
    ({"uvicorn"}, ["ui"], "error: the review page (contextfs ui) needs the 'ui' extra (uvicorn is not installed); "
                          "install it with: pip install 'contextfs-git[ui]'"),
])
def test_the_cli_says_it_in_one_line(tmp_path: Path, hidden: set[str], args: list[str], line: str) -> None:
    ContextManager(tmp_path / "ctx").close()
    done = run_without(hidden, f"""
        from contextfs.cli import main
        main(["--root", {str(tmp_path / "ctx")!r}, *{args!r}])
    """, tmp_path)
    assert done.returncode == 1 and done.stderr.strip() == line, done.stderr


def test_mcp_reports_its_version_and_answers_schema_violations_in_words(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is part of the dev install")
    from mcp import Client

    from contextfs.integrations.mcp_server import build_server

    ctx = ContextManager(tmp_path / "ctx")
    ctx.write("memory/facts.md", "- Database: PostgreSQL 16\n")
    server = build_server(ctx)

    async def session() -> tuple:
        async with Client(server) as client:
            info = client.server_info
            too_many = await client.call_tool("search_context", {"query": "database", "limit": 99})
            wrong_type = await client.call_tool("read_context", {"path": 7})
            missing = await client.call_tool("edit_context", {"path": "nothing.md", "old": "a", "new": "b"})
            fine = await client.call_tool("search_context", {"query": "database", "limit": 5})
            return info, too_many, wrong_type, missing, fine

    info, too_many, wrong_type, missing, fine = asyncio.run(session())
    ctx.close()
    assert info.name == "contextfs" and info.version == importlib.metadata.version("contextfs-git")
    text = too_many.content[0].text
    assert too_many.is_error and text == ("Error: invalid tool arguments (limit: Input should be less than or equal "
                                          "to 20); call the tool again with arguments that fit its schema")
    assert "pydantic" not in text and "http" not in text
    assert wrong_type.is_error and wrong_type.content[0].text.startswith("Error: invalid tool arguments (path: ")
    assert missing.is_error and "write_context" in missing.content[0].text  # a refusal keeps its fix
    assert not fine.is_error and "memory/facts.md" in fine.content[0].text
