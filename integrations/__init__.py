"""How agents and frameworks reach contextfs (``contextfs.integrations``).

- :func:`make_tools` / :class:`ContextRetriever`: LangChain tools and retriever
  (langchain-core is a core dependency).
- :class:`MemoryToolAdapter`: Anthropic's client-side memory tool on a context folder.
- ``contextfs.integrations.langgraph_store.ContextStore`` (extra ``langgraph``) and
  ``contextfs.integrations.mcp_server.build_server`` (extra ``mcp``) import their
  optional packages, so they are not imported here; a missing extra gives an install hint.
"""

from __future__ import annotations

from .langchain_retriever import ContextRetriever
from .langchain_tools import make_tools
from .memory_tool import MEMORY_TOOL_SPEC, MemoryToolAdapter

__all__ = ["ContextRetriever", "MEMORY_TOOL_SPEC", "MemoryToolAdapter", "make_tools"]
