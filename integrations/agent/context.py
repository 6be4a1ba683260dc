"""The context engine behind the agent middleware: one conversation, kept in the context files.

:class:`ContextEngine` holds what the agent middleware does between model calls, for one
agent (its actor) and one conversation (its session), with nothing kept that the files do
not also hold:

* **the conversation** is a :class:`~contextfs.scopes.memory.ConversationBuffer`: every
  message is logged (with its speaker, time and the whole LangChain message) the moment it
  is seen, and the agent's history is the buffer's window. The window evicts to a running
  summary, never the turn being answered, and restarts at a topic switch or a compaction;
* **topics** (:class:`~contextfs.scopes.topics.Topics`, isolated): a user message that
  names another topic switches to it before the model sees it (the library's detection,
  no model call); whatever made the switch — detection, the ``switch_topic`` tool, a
  spawn from code or the command line — the window restarts with the current turn, so no
  message of the other topic stays in the history. Results tagged ``[task:ID]`` for a
  paged topic are filed there instead of shown;
* **compaction**: when the history passes the compaction budget, the compactor
  (:func:`contextfs.evolve.compaction.compact`) writes the general summary and the topics,
  and the window restarts with the recent messages;
* **after the task**: the evolving agent's step, when the caller says a task ended.

Every write runs as the agent's actor and session, with the turn (one per user message);
the writes of one hook are one commit. The system message is assembled by
:mod:`.agent_prompt`; a prompt is replayed from git by :mod:`.agent_replay`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool

from contextfs.errors import ConfigError, ContextFSError
from contextfs.evolve import EvolvingAgent, LanguageModel
from contextfs.evolve.compaction import CompactionResult, compact
from contextfs.manager import ContextManager
from contextfs.scopes import ScopedContext
from contextfs.scopes.memory import ConversationBuffer, Memory, Message
from contextfs.scopes.topics import Topics, load_topics_config
from contextfs.scopes.topics.routing import task_tag
from contextfs.text.tokens import get_counter

from ..langchain_tools import tool_from_spec
from ..tools import Toolkit, all_specs
from .messages import from_log, log_fields, message_text, role_of
from .prompt import PromptBuilder
from .settings import AgentSettings

__all__ = ["ContextEngine", "TaskDone"]

log = logging.getLogger(__name__)

SWITCH_TOOLS = ("switch_topic",)


@dataclass(frozen=True)
class TaskDone:
    """What a finished run accomplished, for the evolving agent's after-task step."""

    task: str
    result: str
    success: bool = True


#: ``task(messages) -> TaskDone | None``: whether a finished run completed a task.
TaskCheck = Callable[[Sequence[BaseMessage]], "TaskDone | None"]


class ContextEngine:
    """One agent's conversation in a context root (see the module). Made by the middleware."""

    def __init__(
        self,
        ctx: ContextManager,
        settings: AgentSettings,
        *,
        compactor: LanguageModel | None = None,
        evolve: EvolvingAgent | LanguageModel | None = None,
        task: TaskCheck | None = None,
    ) -> None:
        self.ctx = ctx
        self.settings = settings
        with ctx.provenance(actor=settings.actor, session=settings.session):
            self.session: str = ctx.parts.current_provenance.session or "agent"
        self.counter = get_counter(settings.encoding)
        self.memory = Memory(ctx, encoding=settings.encoding)
        self.topics = (
            Topics(
                ctx,
                encoding=settings.encoding,
                config=_topics_config(ctx, settings, compactor),
                isolate=True,
            )
            if settings.topics
            else None
        )
        self.scoped = ScopedContext(ctx, encoding=settings.encoding)
        self.compactor = compactor
        if compactor is not None and self.topics is None:
            raise ConfigError("compaction writes topics; keep topics=True or leave compactor out")
        if evolve is not None and task is None:
            raise ConfigError(
                "the after-task step needs task=...: a function that says when a run finished a task "
                "(return TaskDone(task, result, success) or None)"
            )
        self.evolver = (
            evolve
            if isinstance(evolve, EvolvingAgent) or evolve is None
            else EvolvingAgent(ctx, evolve)
        )
        self.task = task
        self.last_compaction: CompactionResult | None = None
        self.nothing_new = False
        self._turn = 0
        self._load()
        self._recorded = self._turn  # turns whose exchange is in their topic
        self.adopt_window_topic(force=False)
        if self.topics is not None and self.topics.config.initial:
            with self.writing():
                self.topics.block.create_initial()  # the root's starting topics, in the block from the first call
        self.kit = Toolkit(ctx, actor=settings.actor, session=self.session)
        # The tools share this engine's objects, so their caches and the isolated block too.
        self.kit.layer("memory", lambda: self.memory)
        if self.topics is not None:
            topics = self.topics
            self.kit.layer("topics", lambda: topics)
        self.prompts = PromptBuilder(self)

    def _load(self) -> None:
        """The conversation as the files hold it: the window (resumed from the log and its
        summary file), the ids already logged and the turn count."""
        with self.writing():
            self.buffer = ConversationBuffer(
                self.memory,
                max_tokens=self.settings.history_budget,
                session=self.session,
                keep_turn=True,
                carry=self.settings.carry,
            )
        logged = self.memory.messages(self.session)
        self._known: set[str] = {str(m.data["id"]) for m in logged if m.data and m.data.get("id")}
        self._turn = sum(1 for m in logged if m.role == "user")

    def adopt_window_topic(self, *, force: bool) -> None:
        """Make the topic the conversation's window belongs to this machine's active topic.

        Which topic is active is each machine's own state, while the window's topic is in
        the committed summary file: a conversation resumed on a machine with no active
        topic (another clone, a replay) carries its topic there. With ``force`` (a replay)
        it wins over whatever this machine had active; a switch is one commit.
        """
        label = self.buffer.label
        if self.topics is None or not label or not self.topics.exists(label):
            return
        active = self.topics.active()
        if active is not None and (active.name == label or not force):
            return
        if self.topics.get(label).status in ("closed", "archived"):
            return
        with self.writing():
            self.topics.switch(label)

    @contextlib.contextmanager
    def _step(self, subject: str) -> Iterator[None]:
        """One commit for a hook's writes; on a failure (a write the gate refuses) nothing is
        committed and the in-memory conversation is read back from the files."""
        try:
            with (
                self.writing(),
                self.ctx.transaction(
                    subject, op="agent-step", trailers={"Contextfs-Memory": "recall"}
                ),
            ):
                yield
        except BaseException:
            self._load()
            raise

    # ------------------------------------------------------------ identity
    @property
    def turn(self) -> int:
        """The number of user messages logged in this conversation."""
        return self._turn

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Who writes: the agent's actor and session, at the current turn."""
        with self.ctx.provenance(
            actor=self.settings.actor, session=self.session, turn=self._turn or None
        ):
            yield

    def prompt(
        self,
        system: SystemMessage | None,
        messages: Sequence[BaseMessage],
        tools: Sequence[BaseTool | dict[str, Any]],
    ) -> tuple[SystemMessage, list[BaseMessage]]:
        """The system message (with the context for the turn) and the history, within the budget."""
        return self.prompts.build(system, messages, tools)

    def tools(self) -> list[BaseTool]:
        """The tools the middleware offers the model (from the one tool table)."""
        wanted = [
            n for n in self.settings.tools if self.topics is not None or n not in _TOPIC_TOOLS
        ]
        specs = {s.name: s for s in all_specs()}
        unknown = [n for n in wanted if n not in specs]
        if unknown:
            raise ConfigError(f"unknown tool {unknown[0]!r}; pick from {', '.join(sorted(specs))}")
        return [tool_from_spec(self.kit, specs[n]) for n in wanted]

    # ------------------------------------------------------------ before each model call
    def window_messages(self, state: Sequence[BaseMessage] = ()) -> list[BaseMessage]:
        """The window as LangChain messages (the objects of ``state`` where they are the same)."""
        by_id = {m.id: m for m in state if m.id}
        start = self.buffer.evicted
        out = []
        for i, m in enumerate(self.buffer.recent()):
            mid = m.data.get("id") if m.data else None
            out.append(by_id[mid] if mid in by_id else from_log(m, start + i))
        return out

    def before_model(self, messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
        """Log what is new, follow topic switches, compact; the new history, or None when unchanged.

        :attr:`nothing_new` tells whether everything that arrived was filed for other topics
        (nothing is left for the model to answer).
        """
        arrived = self._new(messages)
        new = self._route(arrived)
        self.nothing_new = bool(arrived) and not new
        questions = [m for m in new if role_of(m) == "user"]
        target = self._detect(questions[-1]) if questions else None
        if new or target is not None or self._moved():
            first, self._turn = self._turn, self._turn + len(questions)
            with self._step(self._subject(new, target)):
                self._log(new, first)
                if target is not None and self.topics is not None:
                    self.topics.switch(target)
                self._follow_topic()
        self._compact()
        window = self.window_messages(messages)
        if [m.id for m in window] == [m.id for m in messages]:
            return None
        return window

    def _subject(self, new: Sequence[BaseMessage], target: str | None) -> str:
        parts = [f"log {len(new)} message(s)"] if new else []
        if target is not None:
            parts.append(f"switch to topic {target}")
        return f"agent: turn {self._turn}: {', '.join(parts) or 'new window'} in {self.buffer.log_path}"

    def _new(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """The messages not logged yet (by id: a message passed again is not logged twice)."""
        return [m for m in messages if not m.id or m.id not in self._known]

    def _route(self, new: Sequence[BaseMessage]) -> list[BaseMessage]:
        """File incoming results tagged ``[task:ID]`` for a paged topic there (one commit each);
        the rest of ``new``. A filed result is not part of this conversation: its record is the
        topic's pending notification."""
        if self.topics is None:
            return list(new)
        kept = []
        for m in new:
            if role_of(m) == "user" and task_tag(message_text(m)) is not None:
                with self.writing():
                    routed = self.topics.route(message_text(m))
                if routed.action == "filed":
                    log.info("filed a result for %s under its pending notifications", routed.topic)
                    if m.id:
                        self._known.add(m.id)
                    continue
            kept.append(m)
        return kept

    def _detect(self, question: BaseMessage) -> str | None:
        """The topic a user message names, when it is not the active one (deterministic, free)."""
        if self.topics is None or not self.settings.detect:
            return None
        found = self.topics.detect(message_text(question))
        active = self.topics.active()
        return (
            found.name
            if found is not None and (active is None or found.name != active.name)
            else None
        )

    def _moved(self) -> bool:
        """Whether the active topic is no longer the one the window belongs to."""
        if self.topics is None:
            return False
        active = self.topics.active()
        return (active.name if active else None) != self.buffer.label

    def _log(self, new: Sequence[BaseMessage], turn: int) -> None:
        """Log new messages in one append (inside the caller's transaction); each user message
        starts a turn, and every message carries the turn it belongs to."""
        made = []
        for m in new:
            if role_of(m) == "user":
                turn += 1
            with self.ctx.provenance(session=self.session, turn=turn or None):
                made.append(
                    self.memory.make_message(
                        **log_fields(m, user=self.settings.user, agent=self.settings.agent_name)
                    )
                )
        self.buffer.extend(made)
        self._known.update(m.id for m in new if m.id)

    def _follow_topic(self) -> None:
        """When the active topic is not the window's, restart the window with the current turn."""
        if not self._moved() or self.topics is None:
            return
        active = self.topics.active()
        self.buffer.restart(self._turn_length(), label=active.name if active else None)

    def _turn_length(self) -> int:
        """How many of the window's newest messages belong to the turn being answered."""
        recent = self.buffer.recent()
        for i in range(len(recent) - 1, -1, -1):
            if recent[i].role == "user":
                return len(recent) - i
        return 0

    # ------------------------------------------------------------ compaction
    def _compact(self) -> None:
        """Past the compaction budget: compact the older history into topics, keep the recent turns."""
        budget = self.settings.compaction_budget
        if (
            self.compactor is None
            or self.topics is None
            or budget is None
            or self.buffer.tokens() <= budget
        ):
            return
        recent = self.buffer.recent()
        keep = self._recent_to_keep(recent, int(budget * self.settings.keep_recent))
        span: list[Mapping[str, str]] = []
        window = self.buffer.window()
        if self.buffer.summary:
            span.append({"role": "system", "content": window[0].content})
        span += [
            {"role": "", "content": m.render()} for m in recent[: len(recent) - keep]
        ]  # "who: text"
        if not span:
            return
        try:
            with self.writing():
                self.last_compaction = compact(
                    span,
                    self.topics,
                    llm=self.compactor,
                    budget=budget,
                    rule=self.settings.compaction_rule,
                    force=True,
                )
        except ContextFSError as exc:
            # The history stays as it was; the window's own eviction keeps the prompt in budget.
            log.warning("compaction failed (%s); the window evicts to its summary instead", exc)
            return
        with self.writing():
            self.buffer.restart(keep, label=self.buffer.label)

    def _recent_to_keep(self, recent: Sequence[Message], room: int) -> int:
        """The current turn, then earlier whole turns while they fit ``room`` tokens."""
        keep = self._turn_length()
        starts = [i for i, m in enumerate(recent) if m.role == "user"]
        for start in reversed(starts[:-1] if starts else []):
            tail = recent[start:]
            if self.counter.count("\n".join(m.render() for m in tail)) > room:
                break
            keep = len(tail)
        return keep

    # ------------------------------------------------------------ tools
    def tool_result(self, call: Mapping[str, Any], result: Any) -> Any:
        """A tool's answer as the conversation keeps it: a successful switch points at the system
        message (which holds the new topic's boot context); a result tagged for a paged topic,
        or from a tool in ``route_tools``, is filed there and replaced by a note."""
        if not isinstance(result, ToolMessage) or result.status == "error" or self.topics is None:
            return result
        name = str(call.get("name", ""))
        if name in SWITCH_TOOLS:
            return result.model_copy(
                update={
                    "content": (
                        "Switched topic. From the next step the new topic's boot context (where things stand, decisions "
                        "with their reasons, recent exchanges) is in the system message; messages of the topic you left "
                        "have left the conversation and stay in its files."
                    )
                }
            )
        text = str(result.text)
        if task_tag(text) is None and name not in self.settings.route_tools:
            return result
        with self.writing():
            routed = self.topics.route(text)
        if routed.action != "filed":
            return result
        return result.model_copy(
            update={
                "content": (
                    f"This result belongs to topic {routed.topic}, which is not active: it was filed under that topic's "
                    "pending notifications and will be shown when the conversation switches there."
                )
            }
        )

    # ------------------------------------------------------------ after the run
    def after_agent(self, messages: Sequence[BaseMessage]) -> None:
        """Log the final answer, record the turn's exchange in its topic, run the after-task step."""
        new = self._route(self._new(messages))
        first = self._turn
        self._turn += sum(1 for m in new if role_of(m) == "user")
        question = next((m for m in reversed(messages) if role_of(m) == "user"), None)
        answer = messages[-1] if messages and isinstance(messages[-1], AIMessage) else None
        exchange = None
        if (
            self.topics is not None
            and self.buffer.label is not None
            and self._turn > self._recorded
            and question is not None
            and answer is not None
            and not answer.tool_calls
        ):
            exchange = (message_text(question), str(answer.text), self.buffer.label)
        quiet = {f"topics/{exchange[2]}/exchanges.jsonl"} if exchange else set()
        if new or exchange:
            with (
                self.prompts.quietly(quiet),
                self._step(f"agent: turn {self._turn}: answered in {self.buffer.log_path}"),
            ):
                self._log(new, first)
                if exchange is not None and self.topics is not None:
                    self.topics.record(exchange[0], exchange[1], topic=exchange[2])
            self._recorded = self._turn
        if self.evolver is not None and self.task is not None:
            done = self.task(messages)
            if done is not None:
                with self.writing():
                    self.evolver.complete_task_sync(done.task, done.result, done.success)


_TOPIC_TOOLS = frozenset(
    {"open_topic", "switch_topic", "list_topics", "log_decision", "decision_chain"}
)


def _topics_config(ctx: ContextManager, settings: AgentSettings, compactor: object) -> Any:
    """``[topics]`` with the middleware's budgets applied, validated by the library's own rules
    (open topics below half the compaction budget, checked when compaction is configured)."""
    config = dict(ctx.parts.config)
    section = dict(config.get("topics", {}) if isinstance(config.get("topics"), Mapping) else {})
    if settings.max_open_tokens is not None:
        section["max_open_tokens"] = settings.max_open_tokens
    if compactor is not None and settings.compaction_budget is not None:
        section["compaction_budget"] = settings.compaction_budget
    config["topics"] = section
    return load_topics_config(config, settings.encoding)
