"""How agents and frameworks reach contextfs (``contextfs.integrations``).

- :func:`make_tools` / :class:`ContextToolkit`: LangChain tools for the store, scoped
  views, memory tiers and topics, built from the one tool table (:func:`all_specs`) that
  the MCP server uses too; :class:`ContextRetriever` is a LangChain retriever.
- :class:`MemoryToolAdapter`: Anthropic's client-side memory tool on a context folder
  (the SDK's abstract memory tool when the ``anthropic`` extra is installed).
- ``contextfs.integrations.langgraph.store.ContextStore`` (extra ``langgraph``) and
  ``contextfs.integrations.mcp_server.build_server`` (extra ``mcp``) import their
  optional packages, so they are not imported here; a missing extra gives an install hint.
"""

from __future__ import annotations

from .langchain_retriever import ContextRetriever
from .langchain_tools import ContextToolkit, make_tools
from .memory_tool.adapter import MEMORY_TOOL_SPEC, MemoryToolAdapter, MemoryToolError
from .tools import GROUPS, Toolkit, ToolSpec, all_specs, select_specs

__all__ = [
    "ContextRetriever",
    "ContextToolkit",
    "GROUPS",
    "MEMORY_TOOL_SPEC",
    "MemoryToolAdapter",
    "MemoryToolError",
    "ToolSpec",
    "Toolkit",
    "all_specs",
    "make_tools",
    "select_specs",
]
