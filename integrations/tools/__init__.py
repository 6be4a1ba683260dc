"""The one table of agent tools, shared by the LangChain and MCP adapters.

:mod:`.spec` says what a tool is (:class:`~.spec.ToolSpec`) and binds the specs to a root
and an identity (:class:`~.spec.Toolkit`); the tables (:mod:`.store`, :mod:`.review`,
:mod:`.scopes`, :mod:`.memory`, :mod:`.topics`) each build on it, and this package puts
them together. :mod:`.output` holds what every table shares: capping, data rendering,
untrusted-text fencing. Nothing imports this package but the adapters, so the assembly
has no circle.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from contextfs.errors import ConfigError

from .memory import MEMORY_TOOLS
from .review import REVIEW_TOOLS
from .scopes import SCOPE_TOOLS
from .spec import DEFAULT_ACTOR, GROUPS, Toolkit, ToolSpec, format_error
from .store import STORE_TOOLS
from .topics import TOPIC_TOOLS

__all__ = [
    "DEFAULT_ACTOR",
    "GROUPS",
    "ToolSpec",
    "Toolkit",
    "all_specs",
    "format_error",
    "select_specs",
]

_SLUG = re.compile(r"^[a-z][a-z_]*\Z")


def all_specs() -> list[ToolSpec[Any]]:
    """Every tool, grouped in :data:`GROUPS` order."""
    specs = [*STORE_TOOLS, *REVIEW_TOOLS, *SCOPE_TOOLS, *MEMORY_TOOLS, *TOPIC_TOOLS]
    assert all(_SLUG.match(s.name) and s.group in GROUPS for s in specs)
    return specs


def select_specs(
    groups: Iterable[str] | str | None = None,
    *,
    allow_write: bool = True,
    allow_delete: bool = False,
) -> list[ToolSpec[Any]]:
    """The specs a model is offered for these groups and switches.

    ``allow_delete`` needs ``allow_write`` (deleting is a write); asking for it alone, or
    for a group that does not exist, is a :class:`~contextfs.ConfigError`.
    """
    if allow_delete and not allow_write:
        raise ConfigError(
            "allow_delete=True needs allow_write=True (deleting is a write); enable both or neither"
        )
    if groups is None:
        wanted = set(GROUPS)
    else:
        wanted = {groups} if isinstance(groups, str) else set(groups)
        unknown = sorted(wanted - set(GROUPS))
        if unknown or not wanted:
            raise ConfigError(
                f"unknown tool group {unknown[0] if unknown else '(none)'!r}; pick from {', '.join(GROUPS)}"
            )
    allowed = (
        {"read"} | ({"write"} if allow_write else set()) | ({"delete"} if allow_delete else set())
    )
    return [s for s in all_specs() if s.group in wanted and s.access in allowed]
