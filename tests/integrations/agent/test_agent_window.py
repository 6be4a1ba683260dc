"""The library pieces an agent loop stands on: the agent's conversation window, the isolated
topics block, a topic's boot candidates, exchanges by turn, the compaction span, extra
candidates in a scoped view, and log lines that keep the framework's whole message."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from helpers import SAMPLE, assert_clean, commit_count
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from secret_samples import SECRET_KINDS

from contextfs import ContextManager, ScopedContext
from contextfs.errors import ContentError
from contextfs.evolve.compaction import compact
from contextfs.integrations.agent.messages import fit_history, history_cost
from contextfs.scopes import Candidate
from contextfs.scopes.memory import ConversationBuffer, Memory
from contextfs.scopes.topics import Topics
from contextfs.scopes.topics.routing import task_tag
from contextfs.text.tokens import get_counter

# Generated in AWS's shape (AWS's documented example key is a placeholder the gate lets through).
SECRET = SECRET_KINDS["AWS secret access key"](random.Random("agent-window")).text


@pytest.fixture
def ctx(tmp_path: Path) -> ContextManager:
    manager = ContextManager(tmp_path / "ctx", session="monday", index=False)
    yield manager
    manager.close()


@pytest.fixture
def sample(tmp_path: Path) -> ContextManager:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    manager = ContextManager(root, actor="human", session="setup", index=False)
    yield manager
    manager.close()


# ---------------------------------------------------------------- the log line's data
def test_a_log_line_keeps_the_frameworks_message_and_readers_ignore_it(ctx: ContextManager) -> None:
    mem = Memory(ctx)
    data = {"type": "ai", "id": "m-1", "tool_calls": [{"name": "x", "args": {"a": 1}, "id": "c1"}]}
    buf = ConversationBuffer(mem, max_tokens=500, keep_turn=True)
    buf.add("assistant", '→ x({"a": 1})', data=data)
    line = json.loads(ctx.read("sessions/monday.jsonl"))
    assert line["data"] == data and line["content"] == '→ x({"a": 1})'
    assert mem.messages()[0].data == data
    assert ConversationBuffer(mem, max_tokens=500).recent()[0].data == data  # resumed with it
    with pytest.raises(ContentError, match="cannot be stored as JSON"):
        mem.make_message("user", "hi", data={"when": object()})


# ---------------------------------------------------------------- the agent's window
def test_an_agent_window_keeps_the_turn_being_answered_and_never_opens_with_a_tool_result(
    ctx: ContextManager,
) -> None:
    buf = ConversationBuffer(Memory(ctx), max_tokens=80, keep_turn=True)
    buf.add("user", "an earlier question about the harbour")
    buf.add("assistant", "an earlier answer about the harbour")
    buf.add("user", "read the ledger")
    buf.add("assistant", "→ fetch({})")
    big = "The ledger lists every boat, its cargo and its berth. " * 12
    buf.add("tool", big)
    buf.add("tool", big)
    assert [m.content for m in buf.recent()][:2] == [
        "read the ledger",
        "→ fetch({})",
    ]  # the turn stays
    assert buf.tokens() > 80  # the caller fits an over-long turn into its prompt
    buf.add("user", "thanks, next question")
    assert [m.role for m in buf.recent()] == [
        "user"
    ]  # the old turn left whole: no tool result leads
    assert len(Memory(ctx).messages()) == 7  # nothing lost


def test_restart_starts_a_new_window_with_a_label_and_a_new_process_resumes_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "r"
    with ContextManager(root, session="s1", index=False) as ctx:
        buf = ConversationBuffer(Memory(ctx), max_tokens=110, keep_turn=True)
        for i in range(14):
            buf.add(
                "user" if i % 2 == 0 else "assistant",
                f"message {i} about the billing migration cutover",
            )
        assert buf.summary
        before = commit_count(root)
        gone = buf.restart(2, label="k8s-cost-cuts")
        assert commit_count(root) == before + 1 and buf.evicted == 12 and len(gone) >= 1
        kept = [
            "message 12 about the billing migration cutover",
            "message 13 about the billing migration cutover",
        ]
        assert [m.content for m in buf.recent()] == kept
        assert buf.summary == "" and buf.label == "k8s-cost-cuts"
        assert (
            buf.restart(2, label="k8s-cost-cuts") == [] and commit_count(root) == before + 1
        )  # no change
    with ContextManager(root, session="s1", index=False) as ctx:
        again = ConversationBuffer(Memory(ctx), max_tokens=110, keep_turn=True)
        assert again.label == "k8s-cost-cuts" and [m.content for m in again.recent()] == kept
        assert again.summary == "" and len(Memory(ctx).messages()) == 14
    assert_clean(root)


def test_messages_the_write_gate_refuses_leave_the_window_as_it_was(ctx: ContextManager) -> None:
    """Before: the refused message stayed in the in-memory window though never logged."""
    mem = Memory(ctx)
    buf = ConversationBuffer(mem, max_tokens=200)
    buf.add("user", "hello")
    with pytest.raises(ContentError, match="refused"):
        buf.add("user", SECRET)
    assert buf.render() == "user: hello" and [m.content for m in buf.recent()] == ["hello"]
    with ctx.provenance(session="monday"):
        made = [mem.make_message("user", "fine"), mem.make_message("user", SECRET)]
    with pytest.raises(ContentError, match="refused"):
        buf.extend(made)  # several at once: all or nothing
    assert [m.content for m in buf.recent()] == ["hello"] and len(mem.messages()) == 1


def test_extend_logs_several_messages_in_one_commit(ctx: ContextManager) -> None:
    mem = Memory(ctx)
    buf = ConversationBuffer(mem, max_tokens=500, keep_turn=True)
    made = []
    for turn, (role, text) in enumerate(
        [("user", "q"), ("assistant", "→ f({})"), ("tool", "r")], 1
    ):
        with ctx.provenance(session="monday", turn=turn):
            made.append(mem.make_message(role, text))
    before = commit_count(ctx.root)
    buf.extend(made)
    assert commit_count(ctx.root) == before + 1 and [m.turn for m in mem.messages()] == [
        "1",
        "2",
        "3",
    ]
    with ctx.provenance(session="other"):
        stray = mem.make_message("user", "elsewhere")
    with pytest.raises(ContentError, match="messages of session 'monday'"):
        buf.extend([stray])


# ---------------------------------------------------------------- topics
def test_an_isolated_block_shows_no_other_topics_summary_while_one_is_active(
    sample: ContextManager,
) -> None:
    plain, isolated = Topics(sample), Topics(sample, isolate=True)
    assert plain.active().name == "customer-acme-onboarding"
    acme_summary = "Acme Freight Logistics is a Rotterdam-based"
    billing_summary = "Tidewater bills tenants a monthly platform fee"
    assert acme_summary in plain.block.render() and billing_summary in plain.block.render()
    block = isolated.block.render()
    assert acme_summary not in block and billing_summary not in block
    assert (
        "## Other topics (call open_topic" in block
        and "- billing-migration — Moving Tidewater" in block
    )
    assert "customer-acme-onboarding" not in block  # the active one is in its boot context
    assert isolated.open_topic("customer-acme-onboarding") == "already visible"
    assert isolated.open_topic("billing-migration").startswith(
        billing_summary
    )  # not visible here: read it
    assert isolated.open_topic("billing-migration") == "already visible"


def test_boot_candidates_hide_the_exchanges_a_caller_still_holds(sample: ContextManager) -> None:
    topics = Topics(sample)
    with sample.provenance(session="chat", turn=1):
        topics.record("first question", "first answer", topic="billing-migration")
    with sample.provenance(session="chat", turn=2):
        topics.record("second question", "second answer", topic="billing-migration")
    lines = [
        json.loads(x)
        for x in sample.parts.read_raw("topics/billing-migration/exchanges.jsonl")
        .decode()
        .splitlines()
    ]
    assert [x["turn"] for x in lines] == ["1", "2"]
    cands = topics.boot_context.candidates(
        "billing-migration", shown=lambda ex: ex.extra.get("turn") != "2"
    )
    body = next(c.body for c in cands if c.path.endswith("exchanges.jsonl"))
    assert "first question" in body and "second question" not in body
    hidden = topics.boot_context.candidates("billing-migration", shown=lambda ex: False)
    assert not any(
        c.path.endswith("exchanges.jsonl") for c in hidden
    )  # nothing left: no item at all
    assert [c.path for c in cands] == [
        c.path for c in topics.boot_context.candidates("billing-migration")
    ]
    assert (
        topics.boot("billing-migration").text == topics.boot_context.view("billing-migration").text
    )


def test_compaction_reconsiders_the_active_topic_even_when_it_is_closed(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "c", index=False)
    topics = Topics(ctx)
    topics.create(
        "Ferry",
        "The ferryman; relevant on the river",
        name="ferry",
        summary="Wants a coin.",
        open=False,
    )
    topics.switch("ferry")
    answer = {
        "summary": "S.",
        "topics": [{"name": "ferry", "open": True, "summary": "Wants two coins now."}],
    }
    history = [{"role": "user", "content": "The ferryman raises his price. " * 30}]
    result = compact(
        history, topics, llm=FakeListChatModel(responses=[json.dumps(answer)]), budget=10
    )
    assert result.ignored == [] and topics.get("ferry").body == "Wants two coins now."
    ctx.close()


def test_a_task_tag_is_found_in_a_result() -> None:
    assert task_tag("[task:TW-3001] reconcile.py done") == "TW-3001"
    assert task_tag("no tag here") is None and task_tag(None) is None  # type: ignore[arg-type]


# ---------------------------------------------------------------- scoped views
def test_a_scoped_view_packs_extra_candidates_and_a_header_under_one_budget(
    sample: ContextManager,
) -> None:
    scoped = ScopedContext(sample)
    extra = [
        Candidate(
            "agent/notes",
            "the caller's own section",
            1,
            body="CALLER-NOTE: keep the rollout small.\n",
        )
    ]
    view = scoped.assemble("task", budget=900, extra=extra, header="# For the agent")
    assert (
        view.text.startswith("# For the agent\n\n")
        and "CALLER-NOTE" in view.text
        and view.tokens <= 900
    )
    query = "webhook retry backoff dead-letter queue"
    paged = scoped.assemble("task", budget=3000, query=query)
    skipped = scoped.assemble("task", budget=3000, query=query, skip=["task/subtasks"])
    assert any(i.path.startswith("task/subtasks/") for i in paged.items)
    assert not any(i.path.startswith("task/subtasks/") for i in skipped.items)


# ---------------------------------------------------------------- fitting an over-long turn
_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(st.tuples(_TEXT, st.lists(_TEXT, max_size=3), _TEXT), min_size=1, max_size=4),
    budget=st.integers(min_value=0, max_value=1500),
)
def test_a_fitted_history_is_in_budget_and_a_sequence_a_model_accepts(
    turns: list, budget: int
) -> None:
    counter = get_counter()
    history: list[BaseMessage] = []
    for n, (question, results, answer) in enumerate(turns):
        history.append(HumanMessage(question or "?", id=f"h{n}"))
        for k, result in enumerate(results):
            history.append(
                AIMessage(
                    "",
                    id=f"a{n}-{k}",
                    tool_calls=[{"name": "fetch", "args": {"k": k}, "id": f"c{n}-{k}"}],
                )
            )
            history.append(
                ToolMessage(result, tool_call_id=f"c{n}-{k}", name="fetch", id=f"t{n}-{k}")
            )
        history.append(AIMessage(answer, id=f"f{n}"))
    fitted = fit_history(counter, history, budget)
    floor = history_cost(counter, [m.model_copy(update={"content": ""}) for m in fitted])
    assert history_cost(counter, fitted) <= max(budget, floor)
    if history_cost(counter, history) > budget:  # shortened: the latest question still leads
        assert isinstance(fitted[0], HumanMessage) and fitted[0].id == f"h{len(turns) - 1}"
    asked = set()
    for m in fitted:
        if isinstance(m, AIMessage):
            asked |= {c["id"] for c in m.tool_calls}
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in asked  # every result after the call that asked for it
    assert fit_history(counter, history, budget) == fitted  # deterministic
