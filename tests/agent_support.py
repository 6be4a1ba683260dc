"""A scripted tool-calling chat model that records every prompt, and the prompt-size rule.

The agent-middleware tests fake only the model: the agent loop is LangChain's own
``create_agent``, the files, git and the index are real. :class:`RecordingModel` answers
from a script (a function of the prompt, or a list of replies) and keeps each prompt it
received with the head commit at that moment, so a test can check every prompt and replay
it from git. :func:`prompt_tokens` measures a prompt by the documented rule
(docs/agents.md), written here independently of the library's own accounting.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from contextfs.text.tokens import count_tokens

_ids = itertools.count(1)
_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


def call(tool: str, **args: Any) -> AIMessage:
    """A reply that calls one tool."""
    return AIMessage(
        content="",
        tool_calls=[{"name": tool, "args": args, "id": f"call-{next(_ids)}", "type": "tool_call"}],
    )


def replies(items: Iterable[AIMessage | str]) -> Callable[[list[BaseMessage]], AIMessage]:
    """A script: the next reply on each call (a string is a plain answer)."""
    queue = iter(items)

    def respond(_prompt: list[BaseMessage]) -> AIMessage:
        item = next(queue)
        return AIMessage(content=item) if isinstance(item, str) else item

    return respond


class RecordingModel(BaseChatModel):
    """Answers from ``respond(prompt)``; records every prompt and the head commit it was built at."""

    respond: Any
    ctx: Any = None
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    heads: list[str | None] = Field(default_factory=list)
    tools: list[Any] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording-script"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RecordingModel:  # noqa: ARG002 - LangChain's signature
        self.tools = list(tools)
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        self.heads.append(self.ctx.parts.head() if self.ctx is not None else None)
        reply = self.respond(list(messages))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def texts(self) -> list[str]:
        """Every prompt as one text: the system message and each message, for searching."""
        return ["\n".join(_text(m) for m in p) for p in self.prompts]


def _text(m: BaseMessage) -> str:
    text = str(m.text)
    if isinstance(m, AIMessage) and m.tool_calls:
        calls = "\n".join(
            f"→ {c['name']}({json.dumps(c['args'], ensure_ascii=False, sort_keys=True)})"
            for c in m.tool_calls
        )
        text = f"{text}\n{calls}" if text else calls
    return text


def prompt_tokens(prompt: Sequence[BaseMessage], tools: Sequence[Any] = ()) -> int:
    """A prompt's size by the rule: the system message's text, ``"<name or role>: <text>"`` per
    message joined by newlines, and the tools' JSON schemas (cl100k_base tokens)."""
    system, *history = prompt
    lines = "\n".join(f"{m.name or _ROLES.get(m.type, 'user')}: {_text(m)}" for m in history)
    schemas = sum(
        count_tokens(json.dumps(convert_to_openai_tool(t), ensure_ascii=False, sort_keys=True))
        for t in tools
    )
    return count_tokens(str(system.text)) + count_tokens(lines) + schemas
