"""LangChain tools for the whole library, from the one tool table in :mod:`.tools`.

>>> tools = make_tools(ctx, groups=["store", "memory"], allow_delete=True)   # doctest: +SKIP
>>> ContextToolkit(ctx=ctx, actor="agent:planner").get_tools()               # doctest: +SKIP

A refused call (a bad path, a stale edit, a missing topic, an argument out of bounds)
comes back as a ``ToolMessage`` with ``status="error"`` whose text is ``Error:`` and the
message with its fix, so the agent loop goes on and the model can retry. The conversion
from :class:`~contextfs.ContextFSError` happens in one place, :func:`tool_from_spec`;
anything else (a bug) is raised, as it should be.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, BaseToolkit, StructuredTool, ToolException
from pydantic import ConfigDict, ValidationError

from contextfs.errors import ContextFSError

from .tools import DEFAULT_ACTOR, GROUPS, Toolkit, ToolSpec, format_error, select_specs

if TYPE_CHECKING:
    from contextfs import ContextManager

__all__ = [
    "DEFAULT_ACTOR",
    "GROUPS",
    "ContextToolkit",
    "format_error",
    "make_tools",
    "tool_from_spec",
]

log = logging.getLogger(__name__)


def validation_message(exc: ValidationError | Any) -> str:
    """Arguments that do not fit the schema: which ones and why (never the values sent)."""
    try:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err.get('loc', ())) or 'input'}: {err.get('msg', 'invalid')}"
            for err in exc.errors()
        )
    except Exception:  # pydantic v1 errors or anything odd: keep the tool answering
        problems = type(exc).__name__
    return f"Error: invalid tool arguments ({problems}); call the tool again with arguments that fit its schema"


def tool_from_spec(kit: Toolkit, spec: ToolSpec[Any]) -> BaseTool:
    """One spec of the table as a LangChain tool bound to ``kit`` (its actor, session and layers)."""

    def run(**kwargs: Any) -> str:
        try:
            return kit.call(spec, spec.args(**kwargs))
        except ContextFSError as exc:
            log.info("tool %s refused: %s", spec.name, exc)
            raise ToolException(format_error(exc)) from exc

    run.__name__ = spec.name
    return StructuredTool.from_function(
        func=run,
        name=spec.name,
        description=spec.description,
        args_schema=spec.args,
        handle_tool_error=True,
        handle_validation_error=validation_message,
        metadata={"group": spec.group, "access": spec.access, "destructive": spec.destructive},
    )


def make_tools(
    ctx: ContextManager,
    *,
    groups: Iterable[str] | str | None = None,
    allow_write: bool = True,
    allow_delete: bool = False,
    actor: str | None = None,
    session: str | None = None,
) -> list[BaseTool]:
    """LangChain tools for ``ctx``: every group by default; reading always, writing and deleting when allowed.

    ``groups`` picks from ``store``, ``scopes``, ``memory`` and ``topics``. ``actor``
    (``agent:<name>``) and ``session`` are recorded on every write the tools make; they
    are checked now, so a bad name fails here rather than on the model's first write.
    Without ``actor`` the tools write as the actor set on ``ctx`` (``ContextManager(...,
    actor=...)``), or as :data:`DEFAULT_ACTOR` when none was.
    ``allow_delete`` needs ``allow_write`` (deleting is a write); asking for it alone is a
    :class:`~contextfs.ConfigError`.
    """
    specs = select_specs(groups, allow_write=allow_write, allow_delete=allow_delete)
    kit = Toolkit(ctx, actor=actor, session=session)
    return [tool_from_spec(kit, spec) for spec in specs]


class ContextToolkit(BaseToolkit):
    """The same tools as a LangChain ``BaseToolkit`` (``get_tools()``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ctx: Any
    groups: tuple[str, ...] = GROUPS
    allow_write: bool = True
    allow_delete: bool = False
    actor: str | None = None
    session: str | None = None

    def get_tools(self) -> list[BaseTool]:
        return make_tools(
            self.ctx,
            groups=self.groups,
            allow_write=self.allow_write,
            allow_delete=self.allow_delete,
            actor=self.actor,
            session=self.session,
        )
