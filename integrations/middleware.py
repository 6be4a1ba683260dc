"""contextfs as LangChain agent middleware: scopes, topics, compaction and memory in a live agent loop.

>>> agent = create_agent(model, tools, middleware=[ContextMiddleware(ctx, actor="agent:planner")])  # doctest: +SKIP

One :class:`ContextMiddleware` gives an agent built with ``langchain.agents.create_agent``
the whole context engine (:mod:`.agent_context`), through LangChain's hooks:

``before_model``
    logs the new messages to conversation memory, switches topic when the user names
    another one (and follows any switch made elsewhere), files results tagged for a paged
    topic there, compacts the history into topics past its budget, and replaces the
    message history with the conversation window when it changed;
``wrap_model_call``
    puts the context for the turn in the system message and fits the whole prompt in its
    budget (:mod:`.agent_prompt`);
``wrap_tool_call``
    runs every tool as the agent's actor, session and turn; shortens a switch's answer
    (the boot context is in the system message) and routes tagged results;
``after_agent``
    logs the answer, records the turn's exchange in its topic and runs the evolving
    agent's after-task step when ``task=`` says a task ended.

It also offers the model the tools it needs (``open_topic``, ``switch_topic``,
``conversation_search`` and the memory tools; ``tools=`` changes the list). Any chat model
works: the middleware only ever changes the request's messages and system message.
:meth:`ContextMiddleware.replay` rebuilds the prompt of a past call from git.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool

from contextfs.extras import require

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
        hook_config,
    )
    from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.runtime import Runtime
    from langgraph.types import Command
except ImportError:
    # Without the extra, require() raises MissingExtraError with its pip line; any other
    # failure of the import is its own.
    require("langchain.agents.middleware", "agents")
    raise

from contextfs.evolve import EvolvingAgent, LanguageModel
from contextfs.manager import ContextManager

from .agent_context import ContextEngine, TaskCheck, TaskDone
from .agent_replay import replay
from .agent_settings import DEFAULT_TOOLS, AgentSettings

__all__ = ["DEFAULT_TOOLS", "ContextMiddleware", "TaskDone"]

ModelResult = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]


class ContextMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """The contextfs context engine as one LangChain agent middleware.

    ``ctx`` is the context root; ``actor`` (``agent:<name>``) and ``session`` are recorded on
    every write. Budgets (tokens, counted as :mod:`.agent_messages` says): ``budget`` for the
    whole prompt (default 16,000), ``history_budget`` for the conversation window (half),
    ``pressure`` (0.7) for the memory-pressure note, ``compaction_budget`` and
    ``keep_recent`` when a ``compactor`` model is given. ``scope``/``subtask`` pick the view;
    ``topics``/``detect`` turn topic switching off; ``page_in=True`` pages in passages that
    match the user's latest message; ``user`` names the user in the log. ``evolve`` (an
    :class:`~contextfs.evolve.EvolvingAgent` or a chat model) with ``task`` (a function of the
    run's messages returning :class:`TaskDone` or None) runs the after-task step.
    """

    def __init__(
        self,
        ctx: ContextManager,
        *,
        compactor: LanguageModel | None = None,
        evolve: EvolvingAgent | LanguageModel | None = None,
        task: TaskCheck | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        settings = AgentSettings.build(ctx.config, compacting=compactor is not None, **options)
        self.engine = ContextEngine(ctx, settings, compactor=compactor, evolve=evolve, task=task)
        self.tools: Sequence[BaseTool] = self.engine.tools()
        self._system: SystemMessage | None = None
        self._offered: list[BaseTool | dict[str, Any]] = list(self.tools)

    @property
    def name(self) -> str:
        return "ContextMiddleware"

    # ------------------------------------------------------------ hooks
    @hook_config(can_jump_to=["end"])
    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        window = self.engine.before_model(state["messages"])
        update: dict[str, Any] = {}
        if window is not None:
            update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *window]
        if self.engine.nothing_new:  # all that arrived was filed for paged topics: nothing to answer
            update["jump_to"] = "end"
        return update or None

    # The async hooks do the same file and git work synchronously: a few milliseconds a call,
    # and the write lock already serialises it.
    @hook_config(can_jump_to=["end"])
    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        self._system, self._offered = request.system_message, list(request.tools)
        system, messages = self.engine.prompt(
            request.system_message, request.messages, request.tools
        )
        # The history holds the same kinds of messages the request did (a window of the state).
        return request.override(system_message=system, messages=cast("list[AnyMessage]", messages))

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResult:
        return handler(self._request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResult:
        return await handler(self._request(request))

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        with self.engine.writing():
            result = handler(request)
        return self.engine.tool_result(request.tool_call, result)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        with self.engine.writing():
            result = await handler(request)
        return self.engine.tool_result(request.tool_call, result)

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self.engine.after_agent(state["messages"])
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    # ------------------------------------------------------------ looking back
    def replay(
        self,
        as_of: str,
        *,
        system_prompt: str | SystemMessage | None = None,
        tools: Sequence[BaseTool | dict[str, Any]] | None = None,
    ) -> list[BaseMessage]:
        """The prompt a model call got when ``as_of`` was the head: system message, then history.

        Rebuilt from the files of that commit alone (the log holds every message whole), with
        this middleware's settings; the developer's system prompt and the tools default to
        those of the last call.
        """
        system = SystemMessage(system_prompt) if isinstance(system_prompt, str) else system_prompt
        return replay(
            self.engine,
            as_of,
            system=system if system_prompt is not None else self._system,
            tools=self._offered if tools is None else tools,
        )
