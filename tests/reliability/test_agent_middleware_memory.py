"""The context middleware over a long conversation: the budget, eviction and recall, compaction, persistence.

Through LangChain's real ``create_agent`` loop with a scripted model that records every
prompt. ``make test`` runs the long conversation for 60 turns; ``make stress``
(``CONTEXTFS_STRESS``) for 200, replaying every prompt from git.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from agent_support import RecordingModel, call, prompt_tokens, replies
from helpers import SAMPLE, git
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    messages_to_dict,
)
from langgraph.checkpoint.memory import InMemorySaver

from contextfs import ContextManager
from contextfs.evolve import EvolvingAgent
from contextfs.integrations.middleware import ContextMiddleware, TaskDone
from contextfs.scopes import Memory, Topics
from contextfs.scopes.topics import open_section
from contextfs.text.tokens import count_tokens

STRESS = bool(os.environ.get("CONTEXTFS_STRESS"))
CORE = "Dana Okafor, senior backend engineer at Tidewater"


@pytest.fixture
def sample(tmp_path: Path) -> ContextManager:
    root = tmp_path / "ctx"
    shutil.copytree(SAMPLE, root)
    manager = ContextManager(root, actor="human", session="setup", durable=False)
    yield manager
    manager.close()


@pytest.fixture
def empty(tmp_path: Path) -> ContextManager:
    manager = ContextManager(tmp_path / "ctx", actor="human", session="setup", durable=False)
    manager.write(
        "memory/core/persona.md", "I am Mara's game master. I keep the story consistent.\n"
    )
    yield manager
    manager.close()


def ask(agent, text: str, **config) -> list[BaseMessage]:  # noqa: ANN001 - the compiled graph
    return agent.invoke({"messages": [HumanMessage(text)]}, config or None)["messages"]


def compaction_answer(
    summary: str, topics: list[dict] | None = None, new: list[dict] | None = None
) -> str:
    return json.dumps({"summary": summary, "topics": topics or [], "new_topics": new or []})


def test_a_long_conversation_never_exceeds_its_budget_and_loses_no_message(
    sample: ContextManager,
) -> None:
    turns = 200 if STRESS else 60
    compactions = []

    def compactor(
        messages: list[BaseMessage],
    ) -> str:  # the compactor's model: keeps the active topic open
        compactions.append(messages)
        active = Topics(sample).active()
        kept = (
            [
                {
                    "name": active.name,
                    "open": True,
                    "summary": f"Compaction {len(compactions)} of the talk.",
                }
            ]
            if active
            else []
        )
        return compaction_answer(
            f"Span {len(compactions)}: questions about webhooks, billing and nodes.", kept
        )

    topics_by_turn = {
        25: "the billing migration from Chargebee to Stripe Billing",
        90: "the Kubernetes cost reduction and spot instances",
        150: "the Acme Freight onboarding and their SFTP feed",
    }

    made: list[AIMessage] = []

    def respond(prompt: list[BaseMessage]) -> AIMessage:
        made.append(reply(prompt))
        return made[-1]

    def reply(prompt: list[BaseMessage]) -> AIMessage:
        last = prompt[-1]
        turn = sum(1 for m in prompt if isinstance(m, HumanMessage))
        if isinstance(last, HumanMessage) and "search" in str(last.text):
            return call("conversation_search", query="PERIWINKLE-42")
        if isinstance(last, HumanMessage) and len(model.prompts) % 9 == 4:
            return call(
                "archival_memory_insert",
                text=f"Fact number {len(model.prompts)} about the retry schedule",
            )
        return AIMessage(
            content=f"Answer {len(model.prompts)} (turn {turn}): the retry schedule doubles each "
            "attempt with full jitter, capped at six hours, and dead letters after twelve."
        )

    model = RecordingModel(respond=respond, ctx=sample)
    mw = ContextMiddleware(
        sample,
        actor="agent:planner",
        session="long",
        budget=6000,
        history_budget=2400,
        compactor=compactor,
        max_open_tokens=800,
    )
    agent = create_agent(model, [], middleware=[mw], system_prompt="You are Tidewater's agent.")
    ask(agent, "Note PERIWINKLE-42: the customer's endpoint id for the retry tests.")
    for turn in range(2, turns):
        about = topics_by_turn.get(turn, "the webhook retry work")
        ask(
            agent,
            f"Question {turn} about {about}: what should the next step be, and why, in some detail?",
        )
    found = ask(agent, "Please search the conversation for the endpoint id I gave first.")

    sizes = [prompt_tokens(p, model.tools) for p in model.prompts]
    assert max(sizes) <= 6000, max(sizes)
    assert all(CORE in str(p[0].text) for p in model.prompts)
    assert (
        compactions
        and git(sample.root, "log", "--grep=Contextfs-Task: compact", "--format=%s").strip()
    )
    assert any("## Memory pressure" in str(p[0].text) for p in model.prompts)
    # the first message left the prompt long ago, and recall finds it
    assert all(
        "PERIWINKLE-42" not in "\n".join(str(m.text) for m in p[1:]) for p in model.prompts[-5:-1]
    )
    result = [m for m in found if isinstance(m, ToolMessage) and m.name == "conversation_search"][
        -1
    ]
    assert "PERIWINKLE-42: the customer's endpoint id" in result.content
    # every message is in the log exactly once, with its speaker and time
    logged = Memory(sample).messages("long")
    assert len(logged) == turns + len(made) + sum(len(r.tool_calls) for r in made)
    assert len({m.data["id"] for m in logged if m.data}) == len(logged)
    assert all(m.time for m in logged) and {m.speaker for m in logged if m.role == "assistant"} == {
        "planner"
    }
    # prompts are replayed from git byte for byte (every one under make stress, a sample otherwise)
    picked = range(len(model.prompts)) if STRESS else range(0, len(model.prompts), 15)
    for i in picked:
        assert json.dumps(messages_to_dict(mw.replay(model.heads[i]))) == json.dumps(
            messages_to_dict(model.prompts[i])
        )


def test_compaction_writes_topics_and_a_closed_topic_reaches_the_model_only_when_opened(
    empty: ContextManager,
) -> None:
    lisa = "Lisa dyed her hair blue before leaving town."
    ferry = "The ferryman wants a silver coin per crossing and knew Mara's sister."
    compactor = RecordingModel(
        respond=replies(
            [
                compaction_answer(
                    "Mara reached the drowned chapel and bargained with the ferryman.",
                    new=[
                        {
                            "name": "lisa",
                            "description": "Lisa, Mara's childhood friend; relevant when she is mentioned",
                            "summary": lisa,
                            "open": True,
                        },
                        {
                            "name": "ferryman",
                            "description": "The ferryman of the chapel; relevant on the river",
                            "summary": ferry,
                            "open": False,
                        },
                    ],
                )
            ]
        )
    )
    story = [
        f"Scene {i}: Mara walks on through the rain and the story goes on for a while."
        for i in range(18)
    ]
    model = RecordingModel(
        respond=replies(
            [*story, call("open_topic", name="ferryman"), "He wants a coin.", "Noted."]
        ),
        ctx=empty,
    )
    mw = ContextMiddleware(
        empty,
        actor="agent:dm",
        session="game",
        budget=3000,
        history_budget=1000,
        compaction_budget=700,
        max_open_tokens=300,
        compactor=compactor,
        detect=False,
    )
    agent = create_agent(model, [], middleware=[mw])
    for i in range(18):
        ask(
            agent,
            f"Move {i}: Mara talks to Lisa, then to the ferryman, at length about the river and the chapel.",
        )
    assert mw.engine.last_compaction is not None and mw.engine.last_compaction.commit
    assert set(Topics(empty).names()) == {"lisa", "ferryman"}
    assert (
        git(empty.root, "log", "-1", "--format=%an", mw.engine.last_compaction.commit).strip()
        == "agent:dm"
    )
    compacted_at = next(
        i
        for i, p in enumerate(model.prompts)
        if "Mara reached the drowned chapel" in str(p[0].text)
    )
    after = model.prompts[compacted_at]
    assert "## Open topics" in str(after[0].text) and lisa in str(after[0].text)
    assert "- ferryman — The ferryman of the chapel" in str(after[0].text)  # a cue, not its summary
    assert len(after) < len(
        model.prompts[compacted_at - 1]
    )  # the history was replaced by the recent turns
    open_tokens = sum(
        count_tokens(open_section(t.name, t.description, t.body))
        for t in Topics(empty).list()
        if t.open
    )
    assert open_tokens <= 300
    assert all(ferry not in text for text in model.texts())
    messages = ask(agent, "What does the ferryman want again?")
    opened = next(m for m in messages if isinstance(m, ToolMessage))
    assert ferry in opened.content and ferry in model.texts()[-1]


def test_the_window_evicts_to_recall_with_memory_pressure_and_search_finds_what_left(
    empty: ContextManager,
) -> None:
    answers = [
        f"Reply {i}: noted, and here is a long answer to keep the window busy for a while."
        for i in range(16)
    ]
    model = RecordingModel(
        respond=replies([*answers, call("conversation_search", query="TANGERINE-9"), "Found."]),
        ctx=empty,
    )
    mw = ContextMiddleware(
        empty, actor="agent:dm", session="chat", budget=2500, history_budget=600, topics=False
    )
    agent = create_agent(model, [], middleware=[mw])
    ask(agent, "The code word is TANGERINE-9; remember it.")
    for i in range(15):
        ask(
            agent,
            f"Message {i}: let us keep talking about the weather, the harbour and the boats for a while.",
        )
    assert mw.engine.buffer.evicted > 0
    last = model.prompts[-1]
    assert "TANGERINE-9" not in "\n".join(str(m.text) for m in last[1:])  # left the history...
    assert "## Earlier in this conversation" in str(last[0].text)  # ...for the running summary
    assert any(
        "## Memory pressure" in str(p[0].text)
        and "conversation_search finds them" in str(p[0].text)
        for p in model.prompts
    )
    messages = ask(agent, "What was the code word?")
    found = next(m for m in messages if isinstance(m, ToolMessage))
    assert "The code word is TANGERINE-9" in found.content
    assert all(prompt_tokens(p, model.tools) <= 2500 for p in model.prompts)


def test_a_turn_longer_than_the_window_is_shortened_in_the_prompt_and_kept_whole_in_the_log(
    empty: ContextManager,
) -> None:
    from langchain_core.tools import tool

    @tool
    def fetch(page: int) -> str:
        """Fetch one page of a long report."""
        return (
            f"Page {page}. " + "The harbour ledger lists every boat, its cargo and its berth. " * 60
        )

    script = [call("fetch", page=i) for i in range(6)] + ["Summarised."]
    model = RecordingModel(respond=replies(script), ctx=empty)
    mw = ContextMiddleware(
        empty, actor="agent:dm", session="long-turn", budget=3000, history_budget=1200, topics=False
    )
    agent = create_agent(model, [fetch], middleware=[mw])
    ask(agent, "Read the whole harbour report.")
    assert all(prompt_tokens(p, model.tools) <= 3000 for p in model.prompts)
    assert all(isinstance(p[1], HumanMessage) for p in model.prompts)  # the question always leads
    logged = Memory(empty).messages("long-turn")
    assert sum(1 for m in logged if m.role == "tool") == 6 and all(
        m.content.count("harbour ledger") == 60 for m in logged if m.role == "tool"
    )


def test_without_a_checkpointer_the_conversation_continues_from_the_files(
    empty: ContextManager,
) -> None:
    model = RecordingModel(respond=replies(["First.", "Second.", "Third."]), ctx=empty)
    agent = create_agent(
        model, [], middleware=[ContextMiddleware(empty, actor="agent:dm", session="s")]
    )
    ask(agent, "one")
    ask(agent, "two")
    # a new process: a new middleware on the same session, a fresh agent, no checkpointer
    again = create_agent(
        model, [], middleware=[ContextMiddleware(empty, actor="agent:dm", session="s")]
    )
    ask(again, "three")
    assert [str(m.text) for m in model.prompts[-1][1:]] == [
        "one",
        "First.",
        "two",
        "Second.",
        "three",
    ]


def test_a_conversation_resumed_on_another_clone_carries_its_topic(
    sample: ContextManager, tmp_path: Path
) -> None:
    model = RecordingModel(respond=replies(["Blocked on proration.", "Still blocked."]), ctx=sample)
    first = ContextMiddleware(sample, actor="agent:planner", session="travel")
    ask(
        create_agent(model, [], middleware=[first]),
        "Where are we with the billing migration from Chargebee?",
    )
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(sample.root), str(clone)], check=True)
    other = ContextManager(
        clone, actor="human", durable=False
    )  # a machine with no active topic of its own
    try:
        assert Topics(other).active() is None or Topics(other).active().name != "billing-migration"
        model.ctx = other
        again = ContextMiddleware(other, actor="agent:planner", session="travel")
        ask(create_agent(model, [], middleware=[again]), "And what is next?")
        assert Topics(other).active().name == "billing-migration"
        last = model.prompts[-1]
        assert "INV-2026-008841" in str(last[0].text)
        assert [str(m.text) for m in last[1:]] == [
            "Where are we with the billing migration from Chargebee?",
            "Blocked on proration.",
            "And what is next?",
        ]
    finally:
        other.close()


def test_with_a_checkpointer_and_asynchronously_the_state_is_the_window(
    empty: ContextManager,
) -> None:
    model = RecordingModel(respond=replies(["A.", "B."]), ctx=empty)
    mw = ContextMiddleware(empty, actor="agent:dm", session="thread-1")
    agent = create_agent(model, [], middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "thread-1"}}
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("hello")]}, config))
    state = asyncio.run(agent.ainvoke({"messages": [HumanMessage("again")]}, config))
    assert [str(m.text) for m in state["messages"]] == ["hello", "A.", "again", "B."]
    assert [str(m.text) for m in model.prompts[-1][1:]] == ["hello", "A.", "again"]
    assert len(Memory(empty).messages("thread-1")) == 4  # nothing logged twice


def test_the_evolving_agents_step_runs_after_a_task_in_one_commit(sample: ContextManager) -> None:
    evolver = EvolvingAgent(
        sample, RecordingModel(respond=replies(['[{"text": "Webhook retries cap at six hours"}]']))
    )
    model = RecordingModel(respond=replies(["Shipped the retry schedule."]), ctx=sample)

    def task(messages: list[BaseMessage]) -> TaskDone | None:
        return (
            TaskDone("Ship the retry schedule", str(messages[-1].text))
            if "ship" in str(messages[0].text)
            else None
        )

    mw = ContextMiddleware(sample, actor="agent:planner", session="work", evolve=evolver, task=task)
    agent = create_agent(model, [], middleware=[mw])
    ask(agent, "ship it")
    assert "Webhook retries cap at six hours" in sample.read("memory/facts.md")
    head = git(sample.root, "log", "-1", "--format=%an|%s%n%(trailers:only,unfold)")
    assert (
        head.startswith("agent:planner|evolve: Ship the retry schedule")
        and "Contextfs-Session: work" in head
    )
