"""An MCP server exposing a context root to any MCP client (Claude Desktop, IDEs, agents).

Install with the ``mcp`` extra (``pip install 'contextfs-git[mcp]'``) and run
``contextfs mcp`` (stdio). The tools are the same ones the LangChain integration makes
(one definition of each tool: its schema, description and error handling), plus a
``scoped_context`` tool that returns the assembled view for a scope under a budget.
Writes are attributed to ``agent:mcp``.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from contextfs.errors import ContextFSError

from .langchain_tools import make_tools

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = ["build_server", "load_server_class"]

_INSTALL_HINT = "the MCP server needs the 'mcp' package; install it with pip install 'contextfs-git[mcp]'"


def load_server_class() -> type:
    """MCPServer (mcp 2.x) or FastMCP (mcp 1.x), whichever is installed."""
    try:
        from mcp.server.mcpserver import MCPServer

        return MCPServer
    except ImportError:
        pass
    try:
        from mcp.server.fastmcp import FastMCP

        return FastMCP
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc


def _as_function(tool: Any) -> Any:
    """A plain function with a typed signature built from the tool's argument schema.

    MCP servers derive a tool's input schema from the function signature, while the
    LangChain tools take ``**kwargs`` validated by pydantic; this bridges the two.
    """
    fields = tool.args_schema.model_fields
    params = []
    annotations: dict[str, Any] = {}
    for name, field in fields.items():
        default = inspect.Parameter.empty if field.is_required() else field.default
        annotation = Annotated[field.annotation, Field(description=field.description)] if field.description else field.annotation
        annotations[name] = annotation
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))

    def call(**kwargs: Any) -> str:
        return tool.invoke(kwargs)

    call.__name__ = tool.name
    call.__doc__ = tool.description
    call.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    call.__annotations__ = {**annotations, "return": str}
    return call


def build_server(ctx: ContextManager, *, allow_delete: bool = False, actor: str = "agent:mcp") -> Any:
    """An MCP server with the context tools registered (not yet running)."""
    server_cls = load_server_class()
    server = server_cls(
        name="contextfs",
        instructions=(
            "Context for this project lives in a tree of markdown files. Search before you "
            "write, read the file you change, and keep facts in memory/facts.md."
        ),
    )
    for tool in make_tools(ctx, allow_delete=allow_delete, actor=actor):
        server.add_tool(_as_function(tool), name=tool.name, description=tool.description)

    def scoped_context(scope: str = "task", subtask_id: str | None = None, budget: int = 4000, query: str | None = None) -> str:
        """The context for a scope (project, task or subtask) within a token budget, most important first."""
        from contextfs.scopes import ScopedContext

        try:
            view = ScopedContext(ctx).assemble(scope, subtask_id, budget=budget, query=query)
        except ContextFSError as exc:
            return f"Error: {exc}"
        return view.text

    server.add_tool(scoped_context, name="scoped_context", description=scoped_context.__doc__)
    return server
