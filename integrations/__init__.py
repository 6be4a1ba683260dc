"""How agents and frameworks reach contextfs (``contextfs.integrations``).

- :func:`make_tools` / :class:`ContextToolkit`: LangChain tools for the store, scoped
  views, memory tiers and topics, built from the one tool table (:func:`all_specs`) that
  the MCP server uses too; :class:`ContextRetriever` is a LangChain retriever.
- :class:`MemoryToolAdapter`: Anthropic's client-side memory tool on a context folder
  (the SDK's abstract memory tool when the ``anthropic`` extra is installed);
  :class:`AsyncMemoryToolAdapter` the same for async tool runners (needs the extra).
- ``contextfs.integrations.langgraph.store.ContextStore`` (extra ``langgraph``) and
  ``contextfs.integrations.mcp_server.build_server`` (extra ``mcp``) import their
  optional packages, so they are not imported here; a missing extra gives an install hint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextfs.lazy import exports

if TYPE_CHECKING:
    from .langchain_retriever import ContextRetriever
    from .langchain_tools import ContextToolkit, make_tools
    from .memory_tool.adapter import MEMORY_TOOL_SPEC, MemoryToolAdapter, MemoryToolError
    from .memory_tool.asynchronous import AsyncMemoryToolAdapter
    from .tools import GROUPS, Toolkit, ToolSpec, all_specs, select_specs

# Every name is imported on first use: the retriever pulls in LangChain's tracers and the
# memory tool the Anthropic SDK (seconds together), which a process that only needs the
# tool table (the MCP server, the agent middleware) or the LangGraph store never uses.
# The async adapter needs the anthropic extra, so this package imports without it.
__getattr__, __dir__ = exports(
    __name__,
    {
        "AsyncMemoryToolAdapter": ".memory_tool.asynchronous",
        "ContextRetriever": ".langchain_retriever",
        "ContextToolkit": ".langchain_tools",
        "make_tools": ".langchain_tools",
        "MEMORY_TOOL_SPEC": ".memory_tool.adapter",
        "MemoryToolAdapter": ".memory_tool.adapter",
        "MemoryToolError": ".memory_tool.adapter",
        "GROUPS": ".tools",
        "ToolSpec": ".tools",
        "Toolkit": ".tools",
        "all_specs": ".tools",
        "select_specs": ".tools",
    },
)

__all__ = [
    "AsyncMemoryToolAdapter",
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
