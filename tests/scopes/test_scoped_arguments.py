"""Wrong argument types and values at the public calls of the scopes layer end in typed errors.

Arguments come from language models and JSON tool calls. Every call below is tried with
values of the wrong type or out of range; the only acceptable outcomes are success or a
``ContextFSError`` subclass (never a ``KeyError``, ``TypeError`` or ``AttributeError``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import pytest
from helpers import SAMPLE

from contextfs import ContextManager
from contextfs.errors import (
    BudgetError,
    ConfigError,
    ContentError,
    ContextFSError,
    InvalidArgumentError,
    TopicError,
)
from contextfs.scopes import ConversationBuffer, Memory, ScopedContext, Topics, pack

WRONG = [None, "x", -5, 0, 1.5, [], {}, object(), True, ["x", 3]]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> ContextManager:
    path = tmp_path_factory.mktemp("args") / "sample"
    shutil.copytree(SAMPLE, path)
    ctx = ContextManager(path, actor="agent:test", session="args")
    yield ctx
    ctx.close()


def _calls(ctx: ContextManager) -> dict[str, Callable[[Any], object]]:
    """One call per public argument, with the argument under test as ``v``."""
    scoped, topics, mem = ScopedContext(ctx), Topics(ctx), Memory(ctx)
    return {
        "ScopedContext(budget)": lambda v: ScopedContext(ctx, budget=v),
        "ScopedContext(page_share)": lambda v: ScopedContext(ctx, page_share=v),
        "ScopedContext(pager)": lambda v: ScopedContext(ctx, pager=v),
        "get_context(scope)": lambda v: scoped.get_context(scope=v),
        "get_context(subtask_id)": lambda v: scoped.get_context("subtask", subtask_id=v),
        "assemble(scope)": lambda v: scoped.assemble(v, budget=500),
        "assemble(budget)": lambda v: scoped.assemble("task", budget=v),
        "assemble(query)": lambda v: scoped.assemble("task", budget=500, query=v),
        "assemble(topic)": lambda v: scoped.assemble("task", budget=500, topic=v),
        "assemble(as_of)": lambda v: scoped.assemble("task", budget=500, as_of=v),
        "candidates(scope)": lambda v: scoped.candidates(v),
        "pack(candidates)": lambda v: pack(ctx, v, 100),
        "pack(budget)": lambda v: pack(ctx, [], v),
        "pack(page_share)": lambda v: pack(ctx, [], 100, page_share=v),
        "Memory(core_limit)": lambda v: Memory(ctx, core_limit=v),
        "Memory(near_duplicate)": lambda v: Memory(ctx, near_duplicate=v),
        "Memory(policy)": lambda v: Memory(ctx, policy=v),
        "core(section)": lambda v: mem.core(v),
        "core_memory_append(text)": lambda v: mem.core_memory_append("scratch", v),
        "core_memory_replace(old)": lambda v: mem.core_memory_replace("human", v, "y"),
        "archival_memory_insert(text)": lambda v: mem.archival_memory_insert(v),
        "archival_memory_insert(tags)": lambda v: mem.archival_memory_insert(
            f"probe fact {id(v)}", tags=v
        ),
        "archival_memory_insert(extra)": lambda v: mem.archival_memory_insert(
            f"other fact {id(v)}", extra=v
        ),
        "archival_memory_search(query)": lambda v: mem.archival_memory_search(v),
        "archival_memory_search(top_k)": lambda v: mem.archival_memory_search("retry", top_k=v),
        "archival_memory_search(tags)": lambda v: mem.archival_memory_search("retry", tags=v),
        "invalidate(path)": lambda v: mem.invalidate(v),
        "find_duplicate(text)": lambda v: mem.find_duplicate(v),
        "make_message(role)": lambda v: mem.make_message(v, "hello"),
        "make_message(content)": lambda v: mem.make_message("user", v),
        "conversation_search(query)": lambda v: mem.conversation_search(v),
        "conversation_search(roles)": lambda v: mem.conversation_search("x", roles=v),
        "conversation_search(since)": lambda v: mem.conversation_search("x", since=v),
        "conversation_search(limit)": lambda v: mem.conversation_search("x", limit=v),
        "ConversationBuffer(max_tokens)": lambda v: ConversationBuffer(mem, v),
        "ConversationBuffer(summary_share)": lambda v: ConversationBuffer(
            mem, 100, summary_share=v
        ),
        "ConversationBuffer(headroom)": lambda v: ConversationBuffer(mem, 100, headroom=v),
        "topics.get(name)": lambda v: topics.get(v),
        "topics.switch(name)": lambda v: topics.switch(v),
        "topics.boot(budget)": lambda v: topics.boot("billing-migration", budget=v),
        "topics.create(title)": lambda v: topics.create(v),
        "topics.create(summary)": lambda v: topics.create(
            "Probe summary", name=f"p-s-{id(v)}", summary=v
        ),
        "topics.create(vocabulary)": lambda v: topics.create(
            "Probe vocab", name=f"p-v-{id(v)}", vocabulary=v
        ),
        "topics.spawn(from_line)": lambda v: topics.spawn("Spawn probe", v),
        "topics.route(text)": lambda v: topics.route(v),
        "topics.open_topic(name)": lambda v: topics.open_topic(v),
        "topics.detect(message)": lambda v: topics.detect(v),
        "where.append(section)": lambda v: topics.where.append("billing-migration", v, "an item"),
        "where.complete(item)": lambda v: topics.where.complete("billing-migration", v),
        "where.finalize(keep)": lambda v: topics.where.finalize("billing-migration", keep=v),
        "decisions.decide(depends_on)": lambda v: topics.decisions.decide(
            "billing-migration", "t", depends_on=v
        ),
        "decisions.decide(supersedes)": lambda v: topics.decisions.decide(
            "billing-migration", "t", supersedes=v
        ),
        "decisions.decide(reason)": lambda v: topics.decisions.decide(
            "billing-migration", "t", reason=v
        ),
        "decisions.chain(decision_id)": lambda v: topics.decisions.chain("billing-migration", v),
        "exchanges.render(limit)": lambda v: topics.exchanges.render("billing-migration", v),
        "vocabulary.set(terms)": lambda v: topics.vocabulary.set("k8s-cost-cuts", v),
        "block.update_summary(summary)": lambda v: topics.block.update_summary("k8s-cost-cuts", v),
        "block.set_general_summary(text)": lambda v: topics.block.set_general_summary(v),
        "routing.tag_task(task_id)": lambda v: topics.routing.tag_task("billing-migration", v),
    }


def test_every_wrong_argument_ends_in_success_or_a_typed_error(root: ContextManager) -> None:
    untyped = []
    for label, call in _calls(root).items():
        for value in WRONG:
            try:
                call(value)
            except ContextFSError:
                pass
            except Exception as exc:  # the defect this test exists for
                untyped.append(f"{label} with {value!r}: {type(exc).__name__}: {exc}")
    assert untyped == [], "\n".join(untyped)


@pytest.mark.parametrize(
    ("label", "value", "error", "words"),
    [
        (
            "get_context(scope)",
            "tsk",
            InvalidArgumentError,
            "unknown scope 'tsk'; use one of project, task, subtask",
        ),
        ("assemble(scope)", "tsk", InvalidArgumentError, "use one of project, task, subtask"),
        ("candidates(scope)", ["task"], InvalidArgumentError, "use one of project, task, subtask"),
        ("assemble(budget)", "x", ConfigError, "budget must be a non-negative number of tokens"),
        ("assemble(budget)", -5, ConfigError, "got -5; pass e.g. budget=2000"),
        ("topics.boot(budget)", -5, ConfigError, "non-negative number of tokens"),
        ("ScopedContext(budget)", 0, ConfigError, "positive number of tokens"),
        ("assemble(query)", 7, InvalidArgumentError, "query must be text or None"),
        ("pack(candidates)", None, ConfigError, "a list of Candidate objects"),
        ("pack(page_share)", "x", ConfigError, "page_share must be a number in [0, 1]"),
        ("pack(page_share)", 2, ConfigError, "pass a share such as 0.5"),
        ("topics.switch(name)", "no-such-topic", TopicError, "no topic named 'no-such-topic'"),
        (
            "archival_memory_search(top_k)",
            "5",
            InvalidArgumentError,
            "top_k must be a whole number",
        ),
        ("archival_memory_insert(tags)", 3, ContentError, "tags must be a list of strings"),
        ("conversation_search(limit)", None, InvalidArgumentError, "limit must be a whole number"),
        ("conversation_search(query)", None, ContentError, "query must be text"),
        (
            "ConversationBuffer(summary_share)",
            "x",
            BudgetError,
            "summary_share must be a number in (0, 1)",
        ),
        ("where.finalize(keep)", "x", InvalidArgumentError, "keep must be a whole number"),
        (
            "decisions.decide(depends_on)",
            4,
            InvalidArgumentError,
            "depends_on must be a list of strings",
        ),
        ("exchanges.render(limit)", 1.5, InvalidArgumentError, "limit must be a whole number"),
        ("block.update_summary(summary)", None, InvalidArgumentError, "summary must be text"),
    ],
)
def test_the_error_names_the_argument_and_the_fix(
    root: ContextManager, label: str, value: Any, error: type[ContextFSError], words: str
) -> None:
    with pytest.raises(error) as caught:
        _calls(root)[label](value)
    assert words in str(caught.value)
    assert ";" in str(caught.value)  # the message ends with what to do instead


def test_a_string_of_terms_is_one_term_not_its_letters(root: ContextManager) -> None:
    topics = Topics(root)
    topic = topics.create("Probe terms", name="probe-terms", vocabulary="rota")
    assert topic.vocabulary == ("rota",)
    assert topics.vocabulary.set("probe-terms", "pickup") == ["pickup"]
