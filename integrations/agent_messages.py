"""An agent's messages in the conversation log, and what they cost in a prompt.

A LangChain message becomes one line of ``sessions/<session>.jsonl``: its role, its text
(the text content, then one line per tool call, so recall can find what was asked of a
tool) and its speaker, plus the whole message as the framework holds it (``data``: ids,
tool calls, content blocks, metadata) so it can be rebuilt exactly — after a restart
without a checkpointer, and when a prompt is replayed from git.

Prompt accounting, the one rule every budget of the agent middleware is checked with:
a message costs the tokens of ``"<who>: <text>"``, messages are joined by newlines, the
system message costs the tokens of its text, and the tools cost the tokens of their JSON
schemas. :func:`fit_history` shortens a history that does not fit its share, always
leaving a sequence a chat model accepts (every tool result after the call that asked for
it, the turn's question first).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from contextfs.scopes.memory import Message
from contextfs.tokens import TokenCounter

__all__ = [
    "ROLES",
    "cut_text",
    "fit_history",
    "from_log",
    "history_cost",
    "log_fields",
    "message_cost",
    "message_text",
    "role_of",
    "tools_cost",
]

#: The log role of each LangChain message type.
ROLES = {
    "human": "user",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "tool": "tool",
    "function": "tool",
    "system": "system",
}
_SPEAKER = re.compile(r"^[^\x00-\x1f\x7f:]{1,64}\Z")
#: Where a shortened message's full text is, so the model can fetch it.
_CUT = (
    "\n[... cut to fit the prompt: {shown} of {total} tokens shown; the whole message is in the conversation "
    "log, conversation_search finds it]"
)


def role_of(msg: BaseMessage) -> str:
    """``user``, ``assistant``, ``tool`` or ``system``."""
    if msg.type == "chat":
        role = str(getattr(msg, "role", "user"))
        return role if role in ("user", "assistant", "tool", "system") else "user"
    return ROLES.get(msg.type, "user")


def message_text(msg: BaseMessage) -> str:
    """The text a message is logged and counted by: its text, then one line per tool call."""
    text = str(msg.text)
    if isinstance(msg, AIMessage) and msg.tool_calls:
        calls = "\n".join(
            f"→ {c['name']}({json.dumps(c.get('args', {}), ensure_ascii=False, sort_keys=True, default=str)})"
            for c in msg.tool_calls
        )
        text = f"{text}\n{calls}" if text else calls
    return text


def _speaker(name: object) -> str | None:
    return name.strip() if isinstance(name, str) and _SPEAKER.match(name.strip() or "\n") else None


def who(msg: BaseMessage, *, user: str | None = None, agent: str | None = None) -> str | None:
    """The speaker a message is logged with: its ``name``, else the user's or the agent's name
    for their messages; a tool result is spoken by its tool."""
    named = _speaker(getattr(msg, "name", None))
    if named:
        return named
    role = role_of(msg)
    return _speaker(user) if role == "user" else _speaker(agent) if role == "assistant" else None


def log_fields(
    msg: BaseMessage, *, user: str | None = None, agent: str | None = None
) -> dict[str, Any]:
    """``role``, ``content``, ``speaker`` and ``data`` for :meth:`ConversationBuffer.add`.

    ``data`` is the message as LangChain holds it; its ``content`` is left out when it is
    the logged text itself (the line already holds it), and so are fields at their defaults.
    """
    text = message_text(msg)
    # Fields at their defaults (no name, no metadata, no tool calls) are left out: the message
    # rebuilds the same without them, and the log line stays short.
    data = {k: v for k, v in message_to_dict(msg)["data"].items() if v is not None and v != {} and v != []}
    if data.get("content") == text:
        del data["content"]
    # Values LangChain keeps that JSON cannot hold (an artifact object, a datetime) are kept
    # as text: they never reach a model.
    data = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    return {
        "role": role_of(msg),
        "content": text,
        "speaker": who(msg, user=user, agent=agent),
        "data": data,
    }


def from_log(m: Message, index: int) -> BaseMessage:
    """The LangChain message a log line holds (exactly, when the line has ``data``).

    A line written without ``data`` (a plain chat log) becomes a human or AI message with
    its text; ``index`` (its place in the session) makes a stable id for it.
    """
    if m.data and isinstance(m.data.get("type"), str):
        fields = dict(m.data)
        fields.setdefault("content", m.content)
        kind = "ai" if fields["type"] == "AIMessageChunk" else fields["type"]
        fields["type"] = kind
        return messages_from_dict([{"type": kind, "data": fields}])[0]
    stable = str(uuid.uuid5(uuid.NAMESPACE_URL, f"contextfs:{m.session}:{index}"))
    if m.role == "assistant":
        return AIMessage(content=m.content, id=stable)
    if m.role == "user":
        return HumanMessage(content=m.content, id=stable, name=m.speaker)
    return HumanMessage(content=f"[{m.who}] {m.content}", id=stable)


def message_cost(counter: TokenCounter, msg: BaseMessage, text: str | None = None) -> int:
    """Tokens of ``"<who>: <text>"`` for one message (its role when it has no name)."""
    body = message_text(msg) if text is None else text
    return counter.count(f"{who(msg) or role_of(msg)}: {body}")


def history_cost(counter: TokenCounter, messages: Sequence[BaseMessage]) -> int:
    """Tokens of the history: its messages' lines joined by newlines."""
    return counter.count("\n".join(f"{who(m) or role_of(m)}: {message_text(m)}" for m in messages))


def tools_cost(counter: TokenCounter, tools: Sequence[BaseTool | dict[str, Any]]) -> int:
    """Tokens of the tools' JSON schemas (what a provider sends the model to describe them)."""
    total = 0
    for tool in tools:
        schema = tool if isinstance(tool, dict) else convert_to_openai_tool(tool)
        total += counter.count(json.dumps(schema, ensure_ascii=False, sort_keys=True))
    return total


def cut_text(counter: TokenCounter, text: str, tokens: int) -> str:
    """``text`` within ``tokens``, its head kept and a marker saying where the rest is."""
    total = counter.count(text)
    if total <= tokens:
        return text
    keep = tokens
    while keep > 0:
        head = counter.truncate(text, keep).rstrip()
        cut = head + _CUT.format(shown=counter.count(head), total=total)
        if counter.count(cut) <= tokens:
            return cut
        keep -= max(1, counter.count(cut) - tokens)
    return ""


def _with_text(msg: BaseMessage, text: str) -> BaseMessage:
    """A copy of ``msg`` whose content is ``text`` (tool calls and ids kept)."""
    return msg.model_copy(update={"content": text})


def fit_history(
    counter: TokenCounter, messages: Sequence[BaseMessage], budget: int
) -> list[BaseMessage]:
    """The history within ``budget`` tokens (:func:`history_cost`), as a valid message sequence.

    Older rounds go first: whole turns before the latest question, then, inside the turn,
    the oldest tool rounds (an assistant message with tool calls and their results), then
    the text of what is left is cut from the oldest message on — the latest question and
    the latest round are never removed, only shortened. The full messages stay in the log.
    Deterministic: the same history and budget give the same result.
    """
    msgs = list(messages)
    if history_cost(counter, msgs) <= budget:
        return msgs
    start = max((i for i, m in enumerate(msgs) if role_of(m) == "user"), default=0)
    msgs = msgs[start:]  # the turns before the latest question
    while history_cost(counter, msgs) > budget:
        rounds = [
            i for i, m in enumerate(msgs) if isinstance(m, AIMessage) and m.tool_calls and i > 0
        ]
        if len(rounds) < 2:
            break
        first, nxt = rounds[0], rounds[1]
        del msgs[first:nxt]  # the oldest tool round of the turn (its call and its results)
    for i in range(len(msgs)):
        over = history_cost(counter, msgs) - budget
        if over <= 0:
            break
        text = message_text(msgs[i]) if not isinstance(msgs[i], AIMessage) else str(msgs[i].text)
        own = counter.count(text)
        if own == 0:
            continue
        msgs[i] = _with_text(msgs[i], cut_text(counter, text, max(0, own - over - 2)))
    return msgs
