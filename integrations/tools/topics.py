"""The topic tools over :class:`contextfs.scopes.Topics` (every call into it is here).

Topics keep each line of conversation's context apart: the model sees a small index of
all of them, opens one to read its summary, switches to work inside one (its boot
context comes back, packed under a budget), and records decisions with the reasons and
earlier decisions they rest on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from contextfs.scopes import Topics

from .output import as_data
from .spec import ToolSpec

if TYPE_CHECKING:
    from .spec import Toolkit

__all__ = ["TOPIC_TOOLS"]

_NAME = r"^[A-Za-z0-9][A-Za-z0-9 _.'-]{0,79}$"
_DECISION = r"^D[0-9]{1,6}$"


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TopicNameArgs(_Args):
    name: str = Field(
        pattern=_NAME,
        description="The topic's name as list_topics shows it, e.g. 'billing-migration'.",
    )


class ListTopicsArgs(_Args):
    pass


class SwitchArgs(_Args):
    name: str = Field(pattern=_NAME, description="The topic to work in, e.g. 'billing-migration'.")
    budget: int = Field(
        default=3000,
        ge=200,
        le=32000,
        description="Most tokens its boot context may use (200-32000).",
    )


class DecisionArgs(_Args):
    topic: str = Field(
        pattern=_NAME, description="The topic the decision belongs to, e.g. 'billing-migration'."
    )
    text: str = Field(min_length=1, max_length=4000, description="What was decided, in a sentence.")
    reason: str = Field(default="", max_length=4000, description="Why it was decided.")
    depends_on: list[Annotated[str, Field(pattern=_DECISION)]] = Field(
        default_factory=list,
        max_length=20,
        description="Ids of earlier decisions this one rests on, e.g. ['D1'].",
    )
    supersedes: str | None = Field(
        default=None, pattern=_DECISION, description="Id of a decision this one replaces."
    )


class ChainArgs(_Args):
    topic: str = Field(pattern=_NAME, description="The topic, e.g. 'billing-migration'.")
    decision_id: str = Field(pattern=_DECISION, description="The decision to explain, e.g. 'D3'.")


def _topics(kit: Toolkit) -> Topics:
    return kit.layer("topics", lambda: Topics(kit.ctx))


def open_topic(kit: Toolkit, a: TopicNameArgs) -> str:
    topics = _topics(kit)
    slug = topics.resolve(a.name)
    before = topics.block.opened_since_compaction()
    answer = topics.open_topic(a.name)
    # A summary is retrieved text; the topic API's one-line answers ("doesn't exist",
    # "already visible") are its own words and stay exactly as they are.
    opened = (
        slug is not None and slug not in before and slug in topics.block.opened_since_compaction()
    )
    return as_data(answer, f"topic {slug}") if opened else answer


def list_topics(kit: Toolkit, _a: ListTopicsArgs) -> str:
    topics = _topics(kit)
    if not topics.names():
        return "There are no topics yet."
    active = topics.active()
    return as_data(topics.render_index(current=active.name if active else None), "the topic index")


def switch_topic(kit: Toolkit, a: SwitchArgs) -> str:
    view = _topics(kit).switch(a.name, budget=a.budget)
    return f"[switched to topic {a.name}; its boot context: {view.tokens} of {view.budget} tokens]\n{view.text}"


def log_decision(kit: Toolkit, a: DecisionArgs) -> str:
    did = _topics(kit).decisions.decide(
        a.topic,
        a.text,
        depends_on=a.depends_on or None,
        supersedes=a.supersedes,
        reason=a.reason or None,
    )
    return f"Recorded decision {did} in topic {a.topic}; decision_chain with {did!r} shows what it rests on."


def decision_chain(kit: Toolkit, a: ChainArgs) -> str:
    return as_data(
        _topics(kit).decisions.chain(a.topic, a.decision_id), f"decisions of topic {a.topic}"
    )


TOPIC_TOOLS: list[ToolSpec[Any]] = [
    ToolSpec(
        "list_topics",
        "topics",
        "List every topic with its status, size and one-line summary. Use it to see which topics exist before "
        "opening or switching to one.",
        ListTopicsArgs,
        list_topics,
        idempotent=True,
        example={},
    ),
    ToolSpec(
        "open_topic",
        "topics",
        "Read a closed topic's summary without switching to it (its first opening is remembered). Use it when the "
        "conversation touches a topic listed as closed.",
        TopicNameArgs,
        open_topic,
        access="write",
        idempotent=True,
        example={"name": "billing-migration"},
    ),
    ToolSpec(
        "switch_topic",
        "topics",
        "Make a topic the active one and get its boot context: where things stand, its decisions with reasons, "
        "recent exchanges and shared facts. Use it when the conversation moves to that topic.",
        SwitchArgs,
        switch_topic,
        access="write",
        example={"name": "billing-migration", "budget": 1000},
    ),
    ToolSpec(
        "log_decision",
        "topics",
        "Record a decision in a topic with its reason and the earlier decisions it rests on. Use it whenever "
        "something is decided, so later work can see why.",
        DecisionArgs,
        log_decision,
        access="write",
        example={
            "topic": "billing-migration",
            "text": "Move invoices to Postgres",
            "reason": "One database to run",
        },
    ),
    ToolSpec(
        "decision_chain",
        "topics",
        "Show a decision and everything it rests on, root first, each with its reason. Use it before changing or "
        "questioning an earlier decision.",
        ChainArgs,
        decision_chain,
        idempotent=True,
        example={"topic": "billing-migration", "decision_id": "D1"},
    ),
]
