"""The scoped-view tool over :class:`contextfs.scopes.ScopedContext` (every call into it is here).

The view is assembled by the scope rules and the budget packer, which fences every item
that is untrusted or that the poisoning guard flags (counting the fence in the budget)
and never exceeds the budget; the tool adds a header saying what the view holds and what
was left out, so the model knows whether to ask for more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contextfs.scopes import ContextView, ScopedContext

from .toolkit import ToolSpec

if TYPE_CHECKING:
    from contextfs import ContextManager

    from .toolkit import Toolkit

__all__ = ["SCOPE_TOOLS", "scoped_view", "view_header"]

_ID = r"^[a-z0-9][a-z0-9_-]{0,63}$"


class ScopedArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scope: Literal["project", "task", "subtask"] | None = Field(
        default=None, description="How wide a view: 'project' (always-relevant context), 'task' (plus the current "
                                  "task) or 'subtask' (plus one subtask's notes). Default: 'subtask' when a subtask "
                                  "is named, else 'task'.")
    subtask: str | None = Field(default=None, pattern=_ID,
                                description="The subtask id for scope 'subtask', e.g. 'webhook-retries'.")
    budget: int = Field(default=4000, ge=200, le=32000, description="Most tokens the view may use (200-32000).")
    query: str | None = Field(default=None, max_length=1000,
                              description="Optional words; the best-matching other files are paged in if room is left.")
    topic: str | None = Field(default=None, pattern=_ID, description="Optional topic name whose files join the view.")


def scoped_view(ctx: ContextManager, scope: str | None = None, subtask: str | None = None, budget: int = 4000,
                query: str | None = None, topic: str | None = None) -> ContextView:
    """The packed view (also used by the MCP resource)."""
    return ScopedContext(ctx).assemble(scope, subtask, budget=budget, query=query or None, topic=topic)


def view_header(view: ContextView) -> str:
    shown = ", ".join(f"{i.path} [{i.tier}]" for i in view.items) or "nothing"
    head = f"[scoped view: {view.tokens} of {view.budget} tokens; shown: {shown}"
    if view.dropped:
        head += f"; left out: {', '.join(d.path for d in view.dropped[:20])}"
        if len(view.dropped) > 20:
            head += f" and {len(view.dropped) - 20} more"
    return head + "]"


def get_scoped(kit: Toolkit, a: ScopedArgs) -> str:
    view = scoped_view(kit.ctx, a.scope, a.subtask, a.budget, a.query, a.topic)
    return f"{view_header(view)}\n{view.text}"  # sealed with every answer (Toolkit.call)


SCOPE_TOOLS: list[ToolSpec[Any]] = [
    ToolSpec(
        "get_scoped_context", "scopes",
        "Get the context that matters for the current project, task or subtask (optionally a topic), packed to fit a "
        "token budget, most important first; core memory is always included. Use it at the start of work and "
        "whenever you switch tasks. Untrusted parts are quoted as data.",
        ScopedArgs, get_scoped, idempotent=True, example={"scope": "project", "budget": 1000},
    ),
]
