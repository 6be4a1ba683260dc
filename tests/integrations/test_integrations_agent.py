"""A full agent loop (LangChain's ``create_agent``) driving the toolkit through tool-call messages.

The model is scripted (langchain-core's ``GenericFakeChatModel``, with ``bind_tools`` so
the agent accepts it); everything else is real: the agent graph, the tools, the files,
git. The script writes a fact, searches it, pins it in core memory, opens a topic, logs
a decision, asks for a scoped view, makes a bad write and undoes it.
"""

from __future__ import annotations

from pathlib import Path

from helpers import assert_clean, git
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from contextfs import ContextManager
from contextfs.integrations import make_tools
from contextfs.scopes import Topics


class ScriptedModel(GenericFakeChatModel):
    """Replies from a script; binding tools changes nothing (the script already names them)."""

    def bind_tools(self, tools, **kwargs):  # noqa: ANN001, ANN003 - LangChain's signature
        return self


def step(n: int, tool: str, **args) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": tool, "args": args, "id": f"call-{n}", "type": "tool_call"}],
    )


def test_agent_loop_writes_searches_pins_decides_views_and_undoes(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", session="setup")
    try:
        Topics(ctx).create(
            "Queue choice",
            "Which job queue the service uses; relevant when jobs come up",
            name="queue-choice",
            summary="We compared arq and celery.",
            open=False,
        )
        script = iter(
            [
                step(
                    1, "write_context", path="memory/facts.md", content="- Queue: arq on Redis 7\n"
                ),
                step(2, "search_context", query="which queue"),
                step(3, "core_memory_append", label="project", text="Jobs run on arq (Redis 7)"),
                step(4, "open_topic", name="queue-choice"),
                step(
                    5,
                    "log_decision",
                    topic="queue-choice",
                    text="Use arq for background jobs",
                    reason="It is async and already on Redis",
                ),
                step(6, "get_scoped_context", scope="project", budget=1500),
                step(
                    7, "write_context", path="memory/facts.md", content="- Queue: celery\n"
                ),  # the bad write
                step(
                    8, "write_context", path="../outside.md", content="escape"
                ),  # refused, loop goes on
                step(9, "context_history", path="memory/facts.md"),
                step(10, "context_diff", path="memory/facts.md", rev="HEAD~1"),
                step(11, "revert_context", path="memory/facts.md", rev="HEAD~1"),
                AIMessage(content="Recorded the queue decision and fixed my mistake."),
            ]
        )
        tools = make_tools(ctx, actor="agent:planner", session="run-7")
        agent = create_agent(ScriptedModel(messages=script), tools)
        result = agent.invoke({"messages": [HumanMessage("Remember our queue decision.")]})
        messages = result["messages"]

        answers = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        assert len(answers) == 11
        assert answers["call-1"].content.startswith("Written to memory/facts.md")
        assert "arq on Redis 7" in answers["call-2"].content
        assert answers["call-3"].content.startswith("Pinned to core block 'project'")
        assert "We compared arq and celery." in answers["call-4"].content
        assert answers["call-5"].content.startswith("Recorded decision D1")
        assert "Jobs run on arq (Redis 7)" in answers["call-6"].content
        assert (
            answers["call-8"].status == "error"
            and "leaves the context root" in answers["call-8"].content
        )
        assert "agent:planner: write: memory/facts.md" in answers["call-9"].content
        assert (
            "+- Queue: celery" in answers["call-10"].content
            or "-- Queue: arq" in answers["call-10"].content
        )
        assert answers["call-11"].content.startswith("Reverted memory/facts.md")
        assert all(m.status == "success" for k, m in answers.items() if k != "call-8")
        assert messages[-1].content == "Recorded the queue decision and fixed my mistake."

        root = ctx.root
        assert ctx.read("memory/facts.md") == "- Queue: arq on Redis 7\n"
        assert "Jobs run on arq (Redis 7)" in ctx.read("memory/core/project.md")
        assert "Use arq for background jobs" in ctx.read("topics/queue-choice/decisions.md")
        assert not (root.parent / "outside.md").exists()
        log = git(root, "log", "--format=%an|%s", "-7").splitlines()
        assert log[0] == "agent:planner|revert: memory/facts.md"
        assert log[1] == "agent:planner|write: memory/facts.md"
        assert all(line.startswith("agent:planner|") for line in log[:6]), log
        sessions = git(
            root, "log", "--format=%(trailers:key=Contextfs-Session,valueonly)", "-6"
        ).split()
        assert set(sessions) == {"run-7"}
        assert_clean(root)
    finally:
        ctx.close()
