"""Optional extras: one place that imports a package an extra provides, or says which
``pip install`` line brings it.

Every integration that needs an optional package (LangGraph, MCP, LangChain's model
factory and agents, the review page) imports it through :func:`require`, so a missing extra is always the same typed
error (:class:`~contextfs.errors.MissingExtraError`, an ImportError) whose message ends
with the command to run, and the CLI shows it as its one ``error:`` line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["EXTRAS", "install_line", "require"]

#: Each extra and what it is for (pyproject's optional-dependencies, by name).
EXTRAS = {
    "langgraph": "the LangGraph store (ContextStore)",
    "mcp": "the MCP server (contextfs mcp)",
    "anthropic": "Claude as a model and the SDK's memory-tool base class",
    "llm": "--llm provider:model (LangChain's init_chat_model)",
    "agents": "the agent middleware (ContextMiddleware)",
    "ui": "the review page (contextfs ui)",
}


def install_line(extra: str) -> str:
    return f"pip install 'contextfs-git[{extra}]'"


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` (which the ``extra`` provides), or raise MissingExtraError with the
    install line. Any other import failure inside the package is its own, and propagates."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; use one of {', '.join(EXTRAS)}")
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        if not (module == missing or module.startswith(missing + ".")):
            raise  # the package is there but something it imports is not: not a missing extra
        raise MissingExtraError(
            f"{EXTRAS[extra]} needs the '{extra}' extra ({missing} is not installed); "
            f"install it with: {install_line(extra)}",
            name=missing,
        ) from None
