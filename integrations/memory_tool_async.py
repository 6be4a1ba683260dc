"""The memory-tool adapter for async code: the SDK's ``BetaAsyncAbstractMemoryTool``.

``client.beta.messages.tool_runner`` on an ``AsyncAnthropic`` client takes async tools
only. :class:`AsyncMemoryToolAdapter` answers every command exactly as
:class:`~contextfs.integrations.memory_tool.MemoryToolAdapter` does — it holds one and
runs each command in a worker thread, one at a time, so the event loop never waits on
git or the disk and two commands never interleave their commits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contextfs.extras import require

from .memory_tool import DEFAULT_MEMORY_ACTOR, MemoryToolAdapter

require("anthropic.lib.tools", "anthropic")  # the optional extra: its install line when missing
import anyio  # noqa: E402 - the SDK's own dependency, present with it
from anthropic.lib.tools import BetaAsyncAbstractMemoryTool  # noqa: E402

if TYPE_CHECKING:
    from anthropic.types.beta import BetaCacheControlEphemeralParam, BetaMemoryTool20250818Param

    from contextfs import ContextManager

__all__ = ["AsyncMemoryToolAdapter"]


class AsyncMemoryToolAdapter(BetaAsyncAbstractMemoryTool):
    """Memory-tool commands on ``<root>/<folder>`` for async tool runners; see MemoryToolAdapter."""

    def __init__(self, ctx: ContextManager, *, folder: str = "memories", actor: str = DEFAULT_MEMORY_ACTOR,
                 session: str | None = None, cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self.sync = MemoryToolAdapter(ctx, folder=folder, actor=actor, session=session, cache_control=cache_control)
        self.ctx = ctx
        self._one_at_a_time = anyio.Lock()

    def to_dict(self) -> BetaMemoryTool20250818Param:
        return self.sync.to_dict()

    async def _run(self, name: str, command: Any) -> str:
        async with self._one_at_a_time:
            result: str = await anyio.to_thread.run_sync(getattr(self.sync, name), command)
            return result

    async def call(self, input: object) -> str:  # noqa: A002 - the SDK's parameter name
        return await self._run("execute", input)

    async def execute(self, command: Any) -> str:
        return await self._run("execute", command)

    async def view(self, command: Any) -> str:
        return await self._run("view", command)

    async def create(self, command: Any) -> str:
        return await self._run("create", command)

    async def str_replace(self, command: Any) -> str:
        return await self._run("str_replace", command)

    async def insert(self, command: Any) -> str:
        return await self._run("insert", command)

    async def delete(self, command: Any) -> str:
        return await self._run("delete", command)

    async def rename(self, command: Any) -> str:
        return await self._run("rename", command)

    async def clear_all_memory(self) -> str:
        async with self._one_at_a_time:
            result: str = await anyio.to_thread.run_sync(self.sync.clear_all_memory)
            return result
