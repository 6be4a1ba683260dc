"""The ``[topics]`` section of ``.contextfs/config.toml``, validated once at construction.

The open/closed model puts rules on the numbers: the block's open section
(``max_open_tokens``) must stay below half the compaction budget, so open topics never
crowd out the recent history beside them, and a compaction answer has at most 32,768
tokens, of which 4,096 are the general summary and about 500 go to each topic it may
rewrite. Initial topics (``[[topics.initial]]``, the topics a root starts with) must fit
those rules too. Every :class:`ConfigError` names the key and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contextfs.config import check_keys
from contextfs.errors import ConfigError, TopicError
from contextfs.text.tokens import get_counter

from . import detection
from .files import TOPICS_DIR, check_slug
from .records import open_section

__all__ = [
    "COMPACTION_ANSWER_TOKENS",
    "DEFAULT_COMPACTION_BUDGET",
    "GENERAL_SUMMARY_TOKENS",
    "InitialTopic",
    "PER_TOPIC_ANSWER_TOKENS",
    "TopicsConfig",
    "load_topics_config",
]

#: A compaction answer: at most 32,768 tokens, of which 4,096 are the general summary,
#: ``max_open_tokens`` the open block, and 500 per topic it may have to rewrite.
COMPACTION_ANSWER_TOKENS = 32_768
GENERAL_SUMMARY_TOKENS = 4_096
PER_TOPIC_ANSWER_TOKENS = 500
DEFAULT_COMPACTION_BUDGET = 16_000
DEFAULT_SHARED = ("memory/core/*.md", "memory/facts.md")
_KNOWN = frozenset(
    {
        "max_open_tokens",
        "compaction_budget",
        "boot_budget",
        "boot_exchanges",
        "exchange_chars",
        "keep_completed",
        "detect_threshold",
        "detect_margin",
        "shared",
        "initial",
    }
)


@dataclass(frozen=True)
class InitialTopic:
    """One ``[[topics.initial]]`` entry: a topic the root starts with."""

    name: str
    description: str
    summary: str = ""
    open: bool = False
    title: str | None = None


@dataclass(frozen=True)
class TopicsConfig:
    """The validated ``[topics]`` section of ``.contextfs/config.toml``."""

    max_open_tokens: int = 4000
    compaction_budget: int = DEFAULT_COMPACTION_BUDGET
    boot_budget: int = 6000
    boot_exchanges: int = 20
    exchange_chars: int = 600
    keep_completed: int = 10
    detect_threshold: float = detection.DEFAULT_THRESHOLD
    detect_margin: float = detection.DEFAULT_MARGIN
    shared: tuple[str, ...] = DEFAULT_SHARED
    initial: tuple[InitialTopic, ...] = field(default_factory=tuple)


def _int(section: Mapping[str, Any], key: str, default: int, *, minimum: int = 1) -> int:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(
            f"[topics] {key} = {value!r} is not valid; set it to a whole number of at least {minimum} "
            f"(default {default}) in .contextfs/config.toml"
        )
    return value


def _float(section: Mapping[str, Any], key: str, default: float) -> float:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(
            f"[topics] {key} = {value!r} is not valid; set it to a positive number (default {default}) "
            "in .contextfs/config.toml"
        )
    return float(value)


def load_topics_config(config: Mapping[str, Any], encoding: str | None = None) -> TopicsConfig:
    """Validate ``[topics]`` (and the compaction budget it must respect); ConfigError names the key.

    ``max_open_tokens`` must be below half the compaction budget, so open topics never
    crowd out the recent history beside them; initial topics need unique non-empty names,
    their open ones must fit ``max_open_tokens``, and the first compaction must be able
    to rewrite all of them at once (each one's summary plus 500 tokens, beside the
    4,096-token general summary and the open block, within 32,768).
    """
    section = config.get("topics", {})
    if not isinstance(section, Mapping):
        raise ConfigError(
            "[topics] must be a table; write it as a '[topics]' section in .contextfs/config.toml"
        )
    check_keys("topics", section, _KNOWN)
    max_open = _int(section, "max_open_tokens", 4000)
    compaction = config.get("compaction", {})
    check_keys("compaction", compaction, ("max_tokens",))
    fallback = (
        compaction.get("max_tokens", DEFAULT_COMPACTION_BUDGET)
        if isinstance(compaction, Mapping)
        else DEFAULT_COMPACTION_BUDGET
    )
    if "compaction_budget" in section:
        budget = _int(section, "compaction_budget", DEFAULT_COMPACTION_BUDGET)
        budget_key = "[topics] compaction_budget"
    else:
        budget = _int(
            {"compaction_budget": fallback}, "compaction_budget", DEFAULT_COMPACTION_BUDGET
        )
        budget_key = (
            "[compaction] max_tokens"
            if isinstance(compaction, Mapping) and "max_tokens" in compaction
            else "the default compaction budget"
        )
    if max_open * 2 >= budget:
        raise ConfigError(
            f"[topics] max_open_tokens = {max_open} is not below half of {budget_key} ({budget} / 2 = {budget // 2}); "
            f"raise the compaction budget above {max_open * 2} or lower max_open_tokens below {(budget + 1) // 2}"
        )
    cap = COMPACTION_ANSWER_TOKENS - GENERAL_SUMMARY_TOKENS
    if max_open > cap:
        raise ConfigError(
            f"[topics] max_open_tokens = {max_open} leaves no room in a compaction answer; keep it at most {cap}"
        )
    shared = section.get("shared", list(DEFAULT_SHARED))
    if not isinstance(shared, list) or not all(isinstance(s, str) and s.strip() for s in shared):
        raise ConfigError(
            '[topics] shared must be a list of paths or globs; e.g. shared = ["memory/facts.md"]'
        )
    for pattern in shared:
        if (
            pattern.lstrip("./").startswith(f"{TOPICS_DIR}/")
            or pattern.strip("/") == TOPICS_DIR
            or pattern.startswith(("*", "**"))
        ):
            raise ConfigError(
                f"[topics] shared entry {pattern!r} could reach into topic folders and leak one topic into another; "
                "list shared files outside topics/, e.g. 'memory/facts.md'"
            )
    initial = _initial_topics(section.get("initial", []), max_open, cap, encoding)
    return TopicsConfig(
        max_open_tokens=max_open,
        compaction_budget=budget,
        boot_budget=_int(section, "boot_budget", 6000, minimum=200),
        boot_exchanges=_int(section, "boot_exchanges", 20, minimum=0),
        exchange_chars=_int(section, "exchange_chars", 600, minimum=40),
        keep_completed=_int(section, "keep_completed", 10, minimum=0),
        detect_threshold=_float(section, "detect_threshold", detection.DEFAULT_THRESHOLD),
        detect_margin=_float(section, "detect_margin", detection.DEFAULT_MARGIN),
        shared=tuple(shared),
        initial=initial,
    )


def _initial_topics(
    raw: Any, max_open: int, cap: int, encoding: str | None
) -> tuple[InitialTopic, ...]:
    if not isinstance(raw, list) or not all(isinstance(s, Mapping) for s in raw):
        raise ConfigError(
            "[topics] initial must be an array of tables; write each initial topic as a '[[topics.initial]]' block "
            "with name, description, summary and open"
        )
    topics: list[InitialTopic] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw, 1):
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(
                f"[[topics.initial]] #{i} has an empty name; give every initial topic a non-empty name"
            )
        try:
            check_slug(name)
        except TopicError as exc:
            raise ConfigError(f"[[topics.initial]] #{i} name: {exc}") from None
        if name in seen:
            raise ConfigError(
                f"[[topics.initial]] name {name!r} is used twice; initial topic names must be unique"
            )
        seen.add(name)
        description = entry.get("description", "")
        summary = entry.get("summary", "")
        is_open = entry.get("open", False)
        if (
            not isinstance(description, str)
            or not isinstance(summary, str)
            or not isinstance(is_open, bool)
        ):
            raise ConfigError(
                f"[[topics.initial]] {name!r}: description and summary must be strings and open true or false; fix the entry"
            )
        title = entry.get("title")
        topics.append(
            InitialTopic(
                name=name,
                description=description,
                summary=summary,
                open=is_open,
                title=title if isinstance(title, str) and title.strip() else None,
            )
        )
    if topics:
        counter = get_counter(encoding)
        open_tokens = sum(
            counter.count(open_section(s.name, s.description, s.summary)) for s in topics if s.open
        )
        if open_tokens > max_open:
            raise ConfigError(
                f"[[topics.initial]] the open topics' summaries take {open_tokens} tokens, over [topics] max_open_tokens = "
                f"{max_open}; shorten their summaries, start some with open = false, or raise max_open_tokens"
            )
        answer = sum(counter.count(s.summary) + PER_TOPIC_ANSWER_TOKENS for s in topics)
        room = cap - max_open
        if answer > room:
            raise ConfigError(
                f"[[topics.initial]] {len(topics)} topics need about {answer} tokens for the first compaction to rewrite "
                f"them all (summary + {PER_TOPIC_ANSWER_TOKENS} each), over the {room} left beside max_open_tokens; "
                "start with fewer topics or shorten their summaries"
            )
    return tuple(topics)
