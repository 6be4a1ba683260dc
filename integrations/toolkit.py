"""The one table of agent tools, shared by the LangChain and MCP adapters.

Each :class:`ToolSpec` says everything about one tool that does not depend on the
protocol: its name, group, description (when to use it), typed arguments with bounds
(a pydantic model), whether it reads, writes or deletes, and the function that does the
work. :mod:`contextfs.integrations.langchain_tools` and
:mod:`contextfs.integrations.mcp_server` turn the same specs into their own tool objects,
so the two can never drift apart.

A :class:`Toolkit` binds the specs to one context root and one identity: every write a
tool makes runs inside ``ctx.provenance(actor=..., session=...)``, so the commit author
and trailers name the toolkit's actor and session whatever the model sends. The actor is
the one given to the toolkit, else the one a person set on the manager
(:attr:`~contextfs.ContextManager.chosen_actor`), else :data:`DEFAULT_ACTOR`. A tool
function either returns the text for the model or raises a
:class:`~contextfs.ContextFSError`; each adapter turns that error into its protocol's
error form in one place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from contextfs.errors import ConfigError
from contextfs.fencing import seal_refusal
from contextfs.fixes import speaking

from .tool_output import cap, check_text_args, seal

if TYPE_CHECKING:
    from contextfs import ContextManager

__all__ = [
    "DEFAULT_ACTOR",
    "GROUPS",
    "ToolSpec",
    "Toolkit",
    "all_specs",
    "format_error",
    "refusal",
    "select_specs",
]

#: Who tool writes are attributed to when neither the toolkit nor the manager was given an actor.
DEFAULT_ACTOR = "agent:langchain"
#: Tool groups, in the order tools are offered.
GROUPS = ("store", "scopes", "memory", "topics")

Access = Literal["read", "write", "delete"]
#: A tool's argument model: the type its ``run`` function takes.
A = TypeVar("A", bound=BaseModel)
L = TypeVar("L")  # a layer object a toolkit keeps


def refusal(exc: Exception) -> str:
    """A refusal's message for a model, sealed: it may quote the request (a path, a name)."""
    return seal_refusal(str(exc), "a refused call, quoting its arguments")


def format_error(exc: Exception) -> str:
    """The text a model sees for a refused call: ``Error:`` then the message and its fix."""
    return f"Error: {refusal(exc)}"


@dataclass(frozen=True)
class ToolSpec(Generic[A]):
    """One tool, independent of the protocol that offers it.

    Generic in its argument model, so a table entry's ``run`` must take the ``args`` it
    names; a table of different tools is a ``list[ToolSpec[Any]]``.
    """

    name: str
    group: str
    description: str
    args: type[A]
    run: Callable[[Toolkit, A], str]
    #: ``read`` tools are always offered; ``write`` needs allow_write; ``delete`` allow_delete.
    access: Access = "read"
    #: May overwrite or remove what is there (MCP ``destructiveHint``); reversible through history.
    destructive: bool = False
    #: Calling it twice with the same arguments has no further effect (MCP ``idempotentHint``).
    idempotent: bool = False
    #: An argument set that succeeds on the example root the toolkit's tests build.
    example: dict[str, Any] | None = None

    @property
    def read_only(self) -> bool:
        return self.access == "read"


class Toolkit:
    """The specs bound to one manager, actor and session; runs one tool call at a time.

    Layer objects (memory tiers, topics, scoped views) are made on first use and kept,
    so their caches live as long as the toolkit.
    """

    def __init__(self, ctx: ContextManager, *, actor: str | None = None, session: str | None = None,
                 default_actor: str = DEFAULT_ACTOR) -> None:
        with ctx.provenance(actor=actor or default_actor, session=session):
            pass  # validates actor and session with the manager's own rules, now rather than later
        self.ctx = ctx
        self._actor = actor
        self._default_actor = default_actor
        self.session = session
        self._layers: dict[str, Any] = {}

    @property
    def actor(self) -> str:
        """Who the next tool write is attributed to (see the module docstring)."""
        return self._actor or self.ctx.chosen_actor or self._default_actor

    def layer(self, name: str, make: Callable[[], L]) -> L:
        """The layer object ``name``, made by ``make()`` the first time."""
        if name not in self._layers:
            self._layers[name] = make()
        return self._layers[name]

    def writing(self) -> Any:
        """The provenance every tool write runs under."""
        return self.ctx.provenance(actor=self.actor, session=self.session)

    def call(self, spec: ToolSpec[A], args: A) -> str:
        """Run one validated call; a refusal is raised as ContextFSError for the adapter to report."""
        check_text_args(args.model_dump())
        with speaking("tools"), self.writing():  # a refusal's fix names the tools, not Python calls
            out = spec.run(self, args)
        return cap(seal(out, f"the {spec.name} answer"))


_SLUG = re.compile(r"^[a-z][a-z_]*\Z")


def all_specs() -> list[ToolSpec[Any]]:
    """Every tool, grouped in :data:`GROUPS` order."""
    # The tool tables import this module (ToolSpec, Toolkit), so they are read when asked for.
    from .tools_memory import MEMORY_TOOLS  # (see above)
    from .tools_review import REVIEW_TOOLS  # (see above)
    from .tools_scopes import SCOPE_TOOLS  # (see above)
    from .tools_store import STORE_TOOLS  # (see above)
    from .tools_topics import TOPIC_TOOLS  # (see above)

    specs = [*STORE_TOOLS, *REVIEW_TOOLS, *SCOPE_TOOLS, *MEMORY_TOOLS, *TOPIC_TOOLS]
    assert all(_SLUG.match(s.name) and s.group in GROUPS for s in specs)
    return specs


def select_specs(
    groups: Iterable[str] | str | None = None, *, allow_write: bool = True, allow_delete: bool = False
) -> list[ToolSpec[Any]]:
    """The specs a model is offered for these groups and switches.

    ``allow_delete`` needs ``allow_write`` (deleting is a write); asking for it alone, or
    for a group that does not exist, is a :class:`~contextfs.ConfigError`.
    """
    if allow_delete and not allow_write:
        raise ConfigError("allow_delete=True needs allow_write=True (deleting is a write); enable both or neither")
    if groups is None:
        wanted = set(GROUPS)
    else:
        wanted = {groups} if isinstance(groups, str) else set(groups)
        unknown = sorted(wanted - set(GROUPS))
        if unknown or not wanted:
            raise ConfigError(
                f"unknown tool group {unknown[0] if unknown else '(none)'!r}; pick from {', '.join(GROUPS)}"
            )
    allowed = {"read"} | ({"write"} if allow_write else set()) | ({"delete"} if allow_delete else set())
    return [s for s in all_specs() if s.group in wanted and s.access in allowed]
