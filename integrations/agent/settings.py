"""The agent middleware's settings: budgets and switches, checked once, each mistake named with its fix.

The budgets and their rules:

* ``budget`` — the whole prompt: the system message, the history and the tools' schemas,
  counted by the rule of :mod:`.agent_messages`. Every model call fits it.
* ``history_budget`` (default half the budget) — the conversation window: the running
  summary of evicted messages and the recent messages. The system message's context gets
  what the history, the tools and the developer's own system prompt leave.
* ``pressure`` (0.7) — the share of the window at which the model is told memory is
  getting full.
* ``compaction_budget`` (with a compactor; default 80% of the window, or ``[topics]
  compaction_budget`` when the config sets it) — when the history passes it, the compactor
  writes topics. It must be below the window, so compaction runs before the window would
  evict, and the open topics' budget (``max_open_tokens``) must stay below half of it:
  the library's own rule, checked when the middleware is made.
* ``keep_recent`` (0.25) — the share of the compaction budget kept verbatim, in whole
  turns, after a compaction (the turn being answered always stays).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from contextfs.errors import ConfigError
from contextfs.scopes.arguments import (
    check_choice,
    check_int,
    check_number,
    check_strings,
    check_text,
)
from contextfs.scopes.rules import SCOPES

from ..tools.spec import DEFAULT_ACTOR

__all__ = ["DEFAULT_TOOLS", "AgentSettings"]

#: The tools the middleware offers unless told otherwise: reading a closed topic, switching,
#: recall, and the memory tools the pressure note tells the model to use.
DEFAULT_TOOLS = (
    "open_topic",
    "switch_topic",
    "conversation_search",
    "core_memory_append",
    "core_memory_replace",
    "archival_memory_insert",
    "archival_memory_search",
)
MIN_BUDGET = 256


@dataclass(frozen=True)
class AgentSettings:
    """The checked settings of one agent middleware (see the module for the budgets' rules)."""

    actor: str = DEFAULT_ACTOR
    session: str | None = None
    scope: str = "task"
    subtask: str | None = None
    budget: int = 16_000
    history_budget: int = 8_000
    pressure: float = 0.7
    topics: bool = True
    detect: bool = True
    compaction_budget: int | None = None
    max_open_tokens: int | None = None
    compaction_rule: str | None = None
    keep_recent: float = 0.25
    page_in: bool = False
    user: str | None = None
    agent_name: str | None = None
    tools: tuple[str, ...] = DEFAULT_TOOLS
    route_tools: tuple[str, ...] = ()
    carry: bool = False
    encoding: str | None = None

    @classmethod
    def build(cls, config: Mapping[str, Any], *, compacting: bool, **options: Any) -> AgentSettings:
        """Settings from keyword options, every value checked (ConfigError names it and the fix).

        ``config`` is the root's parsed ``config.toml`` (for ``[topics] compaction_budget``);
        ``compacting`` says whether a compactor was given.
        """
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(options) - known)
        if unknown:
            raise ConfigError(
                f"unknown option {unknown[0]!r}; the options are {', '.join(sorted(known))}"
            )
        o = dict(options)
        budget = check_int(
            o.get("budget", 16_000),
            "budget",
            minimum=MIN_BUDGET,
            error=ConfigError,
            expect=f"a whole number of tokens, at least {MIN_BUDGET}",
            fix="pass e.g. budget=16000",
        )
        history = o.get("history_budget")
        history = (
            budget // 2
            if history is None
            else check_int(
                history,
                "history_budget",
                minimum=64,
                error=ConfigError,
                expect="a whole number of tokens, at least 64",
                fix="pass e.g. history_budget=8000",
            )
        )
        if history >= budget:
            raise ConfigError(
                f"history_budget {history} leaves nothing of the budget {budget} for the context; "
                f"keep it below the budget, e.g. history_budget={budget // 2}"
            )
        compaction = o.get("compaction_budget")
        if compacting:
            topics_cfg = config.get("topics") if isinstance(config.get("topics"), Mapping) else {}
            configured = (
                topics_cfg.get("compaction_budget") if isinstance(topics_cfg, Mapping) else None
            )
            compaction = (
                compaction
                if compaction is not None
                else configured
                if configured is not None
                else int(history * 0.8)
            )
            compaction = check_int(
                compaction,
                "compaction_budget",
                minimum=64,
                error=ConfigError,
                expect="a whole number of tokens, at least 64",
                fix="pass e.g. compaction_budget=6000",
            )
            if compaction >= history:
                raise ConfigError(
                    f"compaction_budget {compaction} is not below history_budget {history}: the window would evict "
                    f"before compaction could run; lower it (e.g. compaction_budget={int(history * 0.8)}) or raise "
                    "history_budget"
                )
        elif compaction is not None:
            raise ConfigError(
                "compaction_budget needs a compactor: pass compactor=<chat model>, or leave it out"
            )
        return cls(
            actor=str(o.get("actor", DEFAULT_ACTOR)),
            session=check_text(
                o.get("session"),
                "session",
                optional=True,
                fix="pass a session id or None",
                error=ConfigError,
            ),
            scope=check_choice(o.get("scope", "task"), "scope", SCOPES, error=ConfigError),
            subtask=check_text(
                o.get("subtask"),
                "subtask",
                optional=True,
                fix="pass a subtask id or None",
                error=ConfigError,
            ),
            budget=budget,
            history_budget=history,
            pressure=check_number(
                o.get("pressure", 0.7),
                "pressure",
                low=0,
                high=1,
                low_open=True,
                error=ConfigError,
                fix="pass e.g. pressure=0.7",
            ),
            topics=_flag(o, "topics", True),
            detect=_flag(o, "detect", True),
            compaction_budget=compaction,
            max_open_tokens=None
            if o.get("max_open_tokens") is None
            else check_int(
                o["max_open_tokens"],
                "max_open_tokens",
                minimum=1,
                error=ConfigError,
                fix="pass e.g. max_open_tokens=1000",
            ),
            compaction_rule=check_text(
                o.get("compaction_rule"),
                "compaction_rule",
                optional=True,
                error=ConfigError,
                fix="say in a sentence or two what makes a topic relevant, or pass None",
            ),
            keep_recent=check_number(
                o.get("keep_recent", 0.25),
                "keep_recent",
                low=0,
                high=0.9,
                low_open=True,
                error=ConfigError,
                fix="pass e.g. keep_recent=0.25",
            ),
            page_in=_flag(o, "page_in", False),
            user=check_text(
                o.get("user"),
                "user",
                optional=True,
                error=ConfigError,
                fix="pass the user's name, e.g. 'Dana', or None",
            ),
            agent_name=_agent_name(o.get("agent_name"), str(o.get("actor", DEFAULT_ACTOR))),
            tools=_names(o.get("tools", DEFAULT_TOOLS), "tools"),
            route_tools=_names(o.get("route_tools", ()), "route_tools"),
            carry=_flag(o, "carry", False),
            encoding=check_text(
                o.get("encoding"),
                "encoding",
                optional=True,
                error=ConfigError,
                fix="pass a tiktoken encoding name, e.g. 'cl100k_base'",
            ),
        )


def _flag(options: Mapping[str, Any], name: str, default: bool) -> bool:
    value = options.get(name, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be True or False, got {value!r}; pass {name}={default}")
    return value


def _names(value: Iterable[str] | str, name: str) -> tuple[str, ...]:
    return tuple(
        check_strings(
            value, name, error=ConfigError, fix=f"pass tool names, e.g. {name}=['open_topic']"
        )
    )


def _agent_name(value: Any, actor: str) -> str:
    """The agent's speaker name in the log: given, or the actor's name (``agent:planner`` -> ``planner``)."""
    if value is not None:
        name = check_text(
            value, "agent_name", error=ConfigError, fix="pass a short name, e.g. 'planner'"
        )
        return str(name)
    return actor.split(":", 1)[1] if ":" in actor else actor
