"""Compaction into topics: the compactor does all the writing.

When a conversation span outgrows its budget, one model call turns it into a general
summary plus decisions about topics. For every topic open at some point in the span
(open in the block, opened by the agent since the last compaction, or active) the compactor
decides whether it stays open or closes and whether its summary needs rewriting; it may
start topics for subjects likely to come up again. Topics closed throughout the span
are never touched — the answer's opinions about them are ignored. The open topics'
summaries must fit ``max_open_tokens``; when the model overshoots, the topics it listed
last are closed until they fit (closing is safe: reopening is cheap).

The whole answer is validated before anything is written, and everything is written in
one commit; a malformed answer raises :class:`EvolveError` and changes nothing. Without
a model, compaction refuses rather than pretending: deciding what stays relevant is
judgment.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfs.errors import ContextFSError, EvolveError
from contextfs.gate.poisoning import assess
from contextfs.scopes.topics import Topic, Topics, open_section, slugify

from . import prompts
from .llm import LanguageModel, ask, require_model, run_sync
from .parsing import extract_json, message_text

__all__ = ["CompactionResult", "TopicDecision", "compact", "render_history"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TopicDecision:
    """What the compactor decided for one topic."""

    name: str
    open: bool
    summary: str | None = None  # None: keep the current summary
    description: str | None = None
    new: bool = False


@dataclass
class CompactionResult:
    """The outcome; ``compacted`` is False when the span fit its budget."""

    compacted: bool
    tokens: int
    budget: int
    summary: str = ""
    decisions: list[TopicDecision] = field(default_factory=list)
    closed_for_budget: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    commit: str | None = None

    @property
    def opened(self) -> list[str]:
        return [d.name for d in self.decisions if d.open]

    @property
    def closed(self) -> list[str]:
        return [d.name for d in self.decisions if not d.open]


def _role_and_text(item: Any) -> tuple[str, str]:
    if isinstance(item, str):
        return "", item
    if isinstance(item, Mapping):
        return str(item.get("role", "")), message_text(item.get("content", ""))
    role = getattr(item, "type", None) or getattr(item, "role", "") or ""
    return str(role), message_text(item)


def render_history(history: Sequence[Any]) -> str:
    """A transcript of messages (dicts, LangChain messages or strings), one per paragraph."""
    lines = []
    for item in history:
        role, text = _role_and_text(item)
        text = text.strip()
        if text:
            lines.append(f"{role}: {text}" if role else text)
    return "\n\n".join(lines)


def _scrub(text: str, what: str) -> str:
    """Drop sentences the poisoning guard flags: a summary must not carry orders forward."""
    kept = []
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        if assess(sentence).suspicious:
            log.warning(
                "compaction: dropped an instruction-like sentence from %s: %r", what, sentence
            )
            continue
        kept.append(sentence)
    return " ".join(kept).strip()


def _section_cost(topics: Topics, name: str, description: str, summary: str) -> int:
    return topics.counter.count(open_section(name, description, summary))


def _parse_answer(
    value: Any, span: dict[str, Topic], existing: set[str]
) -> tuple[str, list[TopicDecision], list[str]]:
    if not isinstance(value, dict):
        raise EvolveError("the compactor's answer is not a JSON object; retry the compaction")
    summary = value.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise EvolveError("the compactor's answer has no general 'summary'; retry the compaction")
    raw_topics = value.get("topics", [])
    raw_new = value.get("new_topics", [])
    if not isinstance(raw_topics, list) or not isinstance(raw_new, list):
        raise EvolveError(
            "the compactor's 'topics' and 'new_topics' must be lists; retry the compaction"
        )
    decisions: dict[str, TopicDecision] = {}
    ignored: list[str] = []
    for entry in raw_topics:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise EvolveError(
                "the compactor's answer has a topic entry without a name; retry the compaction"
            )
        name = entry["name"].strip()
        if name not in span:
            ignored.append(name)  # closed throughout (or unknown): left untouched
            continue
        new_summary = entry.get("summary")
        if new_summary is not None and not isinstance(new_summary, str):
            raise EvolveError(
                f"the compactor's summary for {name!r} is not text; retry the compaction"
            )
        is_open = entry.get("open", False)
        if not isinstance(is_open, bool):
            raise EvolveError(
                f"the compactor's 'open' for {name!r} is not true/false; retry the compaction"
            )
        decisions[name] = TopicDecision(
            name, is_open, _scrub(new_summary, name) if new_summary else None
        )
    for name in span:
        if name not in decisions:
            log.info(
                "compaction: no decision for open topic %s; closing it (reopening is cheap)", name
            )
            decisions[name] = TopicDecision(name, False, None)
    for entry in raw_new:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("name"), str)
            or not entry["name"].strip()
        ):
            raise EvolveError("the compactor's new topic has no name; retry the compaction")
        slug = slugify(entry["name"])
        if not slug:
            raise EvolveError(
                f"the compactor's new topic name {entry['name']!r} is unusable; retry the compaction"
            )
        description, new_summary = entry.get("description", ""), entry.get("summary", "")
        if not isinstance(description, str) or not isinstance(new_summary, str):
            raise EvolveError(
                f"the compactor's new topic {slug!r} has non-text fields; retry the compaction"
            )
        if slug in existing:
            if slug not in span:
                ignored.append(slug)
            continue
        decisions[slug] = TopicDecision(
            slug,
            bool(entry.get("open", True)),
            _scrub(new_summary, slug),
            " ".join(_scrub(description, slug).split()),
            new=True,
        )
    return _scrub(summary, "the general summary"), list(decisions.values()), ignored


def _fit_budget(
    topics: Topics, decisions: list[TopicDecision], span: dict[str, Topic]
) -> tuple[list[TopicDecision], list[str]]:
    limit = topics.config.max_open_tokens
    out = list(decisions)
    closed: list[str] = []

    def cost(d: TopicDecision) -> int:
        if d.new:
            return _section_cost(topics, d.name, d.description or "", d.summary or "")
        t = span[d.name]
        return _section_cost(
            topics,
            t.name,
            t.description,
            d.summary if d.summary is not None else (t.body or t.summary),
        )

    while sum(cost(d) for d in out if d.open) > limit:
        victim = next(i for i in range(len(out) - 1, -1, -1) if out[i].open)
        d = out[victim]
        out[victim] = TopicDecision(d.name, False, d.summary, d.description, d.new)
        closed.append(d.name)
        log.info("compaction: closed %s to respect max_open_tokens=%d", d.name, limit)
    return out, closed


async def _acompact(
    history: Sequence[Any],
    topics: Topics,
    *,
    llm: LanguageModel | None,
    budget: int | None,
    rule: str | None,
    summary_words: int,
    force: bool,
) -> CompactionResult:
    transcript = render_history(history)
    tokens = topics.counter.count(transcript)
    limit = budget if budget is not None else topics.config.compaction_budget
    if tokens <= limit and not force:
        return CompactionResult(compacted=False, tokens=tokens, budget=limit)
    require_model(llm, "compaction")
    all_topics = topics.list(include_archived=False)
    existing = {t.name for t in topics.list(include_archived=True)}
    opened = set(topics.block.opened_since_compaction())
    # The active topic is where the conversation is, so it is in the span even when closed:
    # what the span established about it must reach its summary.
    span = {t.name: t for t in all_topics if t.open or t.name in opened or t.status == "active"}
    span_info = [
        {"name": t.name, "description": t.description, "summary": t.body or t.summary}
        for t in span.values()
    ]
    closed_names = sorted(existing - set(span))
    messages = prompts.compaction_messages(
        transcript,
        topics.block.general_summary(),
        span_info,
        closed_names,
        rule=rule or prompts.COMPACTION_RULE,
        summary_words=summary_words,
        max_open_tokens=topics.config.max_open_tokens,
    )
    answer = await ask(llm, messages, step="compaction")
    summary, decisions, ignored = _parse_answer(
        extract_json(answer, what="compaction"), span, existing
    )
    decisions, closed_for_budget = _fit_budget(topics, decisions, span)
    return CompactionResult(
        compacted=True,
        tokens=tokens,
        budget=limit,
        summary=summary,
        decisions=decisions,
        closed_for_budget=closed_for_budget,
        ignored=ignored,
    )


def _apply(topics: Topics, result: CompactionResult) -> None:
    ctx = topics.ctx
    names = ",".join(d.name for d in result.decisions) or "none"
    head = ctx.parts.git.head()
    with ctx.transaction(
        f"evolve: compact {result.tokens} tokens into {len(result.decisions)} topic(s)",
        op="evolve",
        trailers={"Contextfs-Task": "compact"},
    ):
        for d in result.decisions:
            if d.new:
                topics.create(
                    d.name.replace("-", " ").capitalize(),
                    d.description or "",
                    name=d.name,
                    summary=d.summary or "",
                    open=d.open,
                )
                continue
            if d.summary is not None:
                topics.block.update_summary(d.name, d.summary)
            topics.set_open(d.name, d.open)
        topics.block.set_general_summary(result.summary)
        topics.block.mark_compacted()
    after = ctx.parts.git.head()
    result.commit = after if after != head else None
    log.info("compaction wrote %s (topics: %s)", result.commit, names)


def compact(
    history: Sequence[Any],
    topics: Topics,
    *,
    llm: LanguageModel | None = None,
    budget: int | None = None,
    rule: str | None = None,
    summary_words: int = 200,
    force: bool = False,
) -> CompactionResult:
    """Compact ``history`` into a general summary and topic updates; one commit.

    ``topics`` is a :class:`contextfs.scopes.topics.Topics`. ``budget`` defaults to the
    configured compaction budget; a span within it is left alone unless ``force``.
    ``rule`` replaces the default relevance rule: say what makes a topic relevant in your
    application (the default is generic, and a specific rule compacts better).
    """
    try:
        result = run_sync(
            _acompact(
                history,
                topics,
                llm=llm,
                budget=budget,
                rule=rule,
                summary_words=summary_words,
                force=force,
            )
        )
    except ContextFSError:
        raise
    except (TypeError, ValueError, json.JSONDecodeError) as exc:
        raise EvolveError(
            f"compaction failed on its input ({exc}); pass a list of messages and a Topics object"
        ) from None
    if result.compacted:
        _apply(topics, result)
    return result
