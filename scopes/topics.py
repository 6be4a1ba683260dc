"""Topics: isolated contexts for one agent that talks about many things.

TSVC's process model, on files. Each topic lives in ``topics/<slug>/`` (see
:mod:`contextfs.scopes.topic_files`) and is one of ``active`` (the one being worked on),
``paged`` (on disk, resumable), ``closed`` (done, still listed) or ``archived`` (out of
sight). Switching pages the outgoing topic out and returns the target's *boot context*:
its where-are-we state, decision chains with their reasons, recent exchanges, the shared
facts layer (``memory/facts.md`` and pinned ``memory/core/``) and the small topic index —
packed under a token budget by the scoped-context assembler. Nothing else from any other
topic's folder is ever a candidate, so nothing else can leak into the view; the index
line (title + one-line summary) is the only thing every topic sees of the others, on
purpose: it is the awareness layer.

Seed 002's open/closed model sits beside the status: the ``open`` flag says whether a
topic's summary is shown in :meth:`Topics.render_block` (within ``max_open_tokens``) or
only its name and cue description. The agent can only *open* (:meth:`Topics.open_topic`);
the compactor (``contextfs.evolve``) writes summaries, opens and closes topics through
:meth:`update_summary`, :meth:`set_open`, :meth:`close`, :meth:`create` and then calls
:meth:`mark_compacted`.

Every mutating operation is one git commit with a ``Contextfs-Topic:`` trailer, so
``git log topics/<slug>`` is the topic's audit trail.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock, store
from ..errors import ConfigError, ContextFSError, NotFoundError, TopicError
from ..manager import ContextManager
from ..tokens import get_counter
from . import topic_detect
from .topic_files import (
    DECISIONS_FILE,
    EXCHANGES_FILE,
    STATE_FILE,
    TOPIC_FILE,
    TOPICS_DIR,
    WHERE_FILE,
    Decision,
    Exchange,
    WhereAreWe,
    canonical_section,
    check_slug,
    compress,
    item_text,
    new_decisions_body,
    new_where_body,
    parse_decisions,
    parse_exchanges,
    render_decisions,
    render_exchange_line,
    slugify,
    topic_path,
)

if TYPE_CHECKING:
    from .packing import ContextView

__all__ = [
    "ALREADY_VISIBLE",
    "DOES_NOT_EXIST",
    "STATUSES",
    "IndexEntry",
    "RouteResult",
    "SeedTopic",
    "Spawned",
    "Topic",
    "Topics",
    "TopicsConfig",
    "load_topics_config",
]

log = logging.getLogger(__name__)

STATUSES = ("active", "paged", "closed", "archived")
#: The exact answers of :meth:`Topics.open_topic` (seed 002).
ALREADY_VISIBLE = "already visible"
DOES_NOT_EXIST = "doesn't exist"

#: Seed 002's compaction answer: at most 32,768 tokens, of which 4,096 are the general
#: summary, ``max_open_tokens`` the open block, and 500 per topic it may have to rewrite.
COMPACTION_ANSWER_TOKENS = 32_768
GENERAL_SUMMARY_TOKENS = 4_096
PER_TOPIC_ANSWER_TOKENS = 500
DEFAULT_COMPACTION_BUDGET = 16_000

VOCABULARY_FILE = ".contextfs/active-vocabulary.txt"
_SIZE_CACHE = ".contextfs/cache/topic-tokens.json"
_TASK_TAG = re.compile(r"\[task:([A-Za-z0-9_.:@/-]{1,128})\]")
_DEFAULT_SHARED = ("memory/core/*.md", "memory/facts.md")


# ------------------------------------------------------------------ data
@dataclass(frozen=True)
class Topic:
    """One topic as its ``topic.md`` describes it."""

    name: str
    title: str
    description: str = ""
    status: str = "paged"
    open: bool = False
    last_active: str | None = None
    summary: str = ""  # the one-line summary shown in the index
    body: str = ""  # the topic's summary (seed 002), what open_topic answers with
    vocabulary: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    version: str | None = None

    @property
    def folder(self) -> str:
        return f"{TOPICS_DIR}/{self.name}"

    def path(self, file: str = TOPIC_FILE) -> str:
        return f"{self.folder}/{file}"


@dataclass(frozen=True)
class IndexEntry:
    """One line of the awareness layer, with the token size of the topic's files."""

    name: str
    title: str
    status: str
    open: bool
    last_active: str | None
    summary: str
    tokens: int


@dataclass(frozen=True)
class RouteResult:
    """Where a result went: ``delivered`` (the owner is active; process it now),
    ``filed`` (under the paged owner's Pending Notifications) or ``unmatched``."""

    action: str
    topic: str | None
    text: str
    task_id: str | None = None
    via: str | None = None  # "task" or "keyword"
    notification: str | None = None
    message: str = ""


@dataclass(frozen=True)
class Spawned:
    """What :meth:`Topics.spawn` did: the new topic, how many exchanges moved, its boot view."""

    topic: Topic
    moved: int
    view: ContextView


@dataclass(frozen=True)
class SeedTopic:
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
    detect_threshold: float = topic_detect.DEFAULT_THRESHOLD
    detect_margin: float = topic_detect.DEFAULT_MARGIN
    shared: tuple[str, ...] = _DEFAULT_SHARED
    initial: tuple[SeedTopic, ...] = field(default_factory=tuple)


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

    Seed 002's rules: ``max_open_tokens`` must be below half the compaction budget, so
    open topics never crowd out the recent history beside them; seeded topics need
    unique non-empty names, their open ones must fit ``max_open_tokens``, and the first
    compaction must be able to rewrite every seed at once (each seed's summary plus 500
    tokens, beside the 4,096-token general summary and the open block, within 32,768).
    """
    section = config.get("topics", {})
    if not isinstance(section, Mapping):
        raise ConfigError("[topics] must be a table; write it as a '[topics]' section in .contextfs/config.toml")
    known = {
        "max_open_tokens", "compaction_budget", "boot_budget", "boot_exchanges", "exchange_chars",
        "keep_completed", "detect_threshold", "detect_margin", "shared", "initial",
    }
    unknown = sorted(set(section) - known)
    if unknown:
        raise ConfigError(
            f"[topics] {unknown[0]} is not a known key; use one of {', '.join(sorted(known))} or remove it"
        )
    max_open = _int(section, "max_open_tokens", 4000)
    compaction = config.get("compaction", {})
    fallback = compaction.get("max_tokens", DEFAULT_COMPACTION_BUDGET) if isinstance(compaction, Mapping) else DEFAULT_COMPACTION_BUDGET
    if "compaction_budget" in section:
        budget = _int(section, "compaction_budget", DEFAULT_COMPACTION_BUDGET)
        budget_key = "[topics] compaction_budget"
    else:
        budget = _int({"compaction_budget": fallback}, "compaction_budget", DEFAULT_COMPACTION_BUDGET)
        budget_key = "[compaction] max_tokens" if isinstance(compaction, Mapping) and "max_tokens" in compaction else "the default compaction budget"
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
    shared = section.get("shared", list(_DEFAULT_SHARED))
    if not isinstance(shared, list) or not all(isinstance(s, str) and s.strip() for s in shared):
        raise ConfigError("[topics] shared must be a list of paths or globs; e.g. shared = [\"memory/facts.md\"]")
    for pattern in shared:
        if pattern.lstrip("./").startswith(f"{TOPICS_DIR}/") or pattern.strip("/") == TOPICS_DIR or pattern.startswith(("*", "**")):
            raise ConfigError(
                f"[topics] shared entry {pattern!r} could reach into topic folders and leak one topic into another; "
                "list shared files outside topics/, e.g. 'memory/facts.md'"
            )
    seeds = _seeds(section.get("initial", []), max_open, cap, encoding)
    return TopicsConfig(
        max_open_tokens=max_open,
        compaction_budget=budget,
        boot_budget=_int(section, "boot_budget", 6000, minimum=200),
        boot_exchanges=_int(section, "boot_exchanges", 20, minimum=0),
        exchange_chars=_int(section, "exchange_chars", 600, minimum=40),
        keep_completed=_int(section, "keep_completed", 10, minimum=0),
        detect_threshold=_float(section, "detect_threshold", topic_detect.DEFAULT_THRESHOLD),
        detect_margin=_float(section, "detect_margin", topic_detect.DEFAULT_MARGIN),
        shared=tuple(shared),
        initial=seeds,
    )


def _seeds(raw: Any, max_open: int, cap: int, encoding: str | None) -> tuple[SeedTopic, ...]:
    if not isinstance(raw, list) or not all(isinstance(s, Mapping) for s in raw):
        raise ConfigError(
            "[topics] initial must be an array of tables; write each seed as a '[[topics.initial]]' block "
            "with name, description, summary and open"
        )
    seeds: list[SeedTopic] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw, 1):
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"[[topics.initial]] #{i} has an empty name; give every seeded topic a non-empty name")
        try:
            check_slug(name)
        except TopicError as exc:
            raise ConfigError(f"[[topics.initial]] #{i} name: {exc}") from None
        if name in seen:
            raise ConfigError(f"[[topics.initial]] name {name!r} is used twice; seeded topic names must be unique")
        seen.add(name)
        description = entry.get("description", "")
        summary = entry.get("summary", "")
        is_open = entry.get("open", False)
        if not isinstance(description, str) or not isinstance(summary, str) or not isinstance(is_open, bool):
            raise ConfigError(
                f"[[topics.initial]] {name!r}: description and summary must be strings and open true or false; fix the entry"
            )
        title = entry.get("title")
        seeds.append(SeedTopic(name=name, description=description, summary=summary, open=is_open,
                               title=title if isinstance(title, str) and title.strip() else None))
    if seeds:
        counter = get_counter(encoding)
        open_tokens = sum(counter.count(_open_section(s.name, s.description, s.summary)) for s in seeds if s.open)
        if open_tokens > max_open:
            raise ConfigError(
                f"[[topics.initial]] the open seeds' summaries take {open_tokens} tokens, over [topics] max_open_tokens = "
                f"{max_open}; shorten their summaries, seed some with open = false, or raise max_open_tokens"
            )
        answer = sum(counter.count(s.summary) + PER_TOPIC_ANSWER_TOKENS for s in seeds)
        room = cap - max_open
        if answer > room:
            raise ConfigError(
                f"[[topics.initial]] {len(seeds)} seeds need about {answer} tokens for the first compaction to rewrite "
                f"them all (summary + {PER_TOPIC_ANSWER_TOKENS} each), over the {room} left beside max_open_tokens; "
                "seed fewer topics or shorten their summaries"
            )
    return tuple(seeds)


def _open_section(name: str, description: str, summary: str) -> str:
    head = f"### {name} — {description}" if description else f"### {name}"
    return f"{head}\n{summary.strip()}\n" if summary.strip() else head + "\n"


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return ()


def _one_line(text: str, limit: int = 200) -> str:
    first = " ".join(str(text).split())
    match = re.match(r"(.+?[.!?])(\s|$)", first)
    if match and len(match.group(1)) >= 20:
        first = match.group(1)
    return compress(first, limit)


# ------------------------------------------------------------------ the API
class Topics:
    """Topic contexts on one root: create, switch, spawn, close, state, decisions, routing.

    >>> topics = Topics(ctx)                                   # doctest: +SKIP
    >>> topics.create("Family logistics", description="Kids' school runs and holidays; "
    ...               "relevant when the family calendar comes up")  # doctest: +SKIP
    >>> view = topics.switch("family-logistics")               # doctest: +SKIP
    """

    def __init__(self, ctx: ContextManager, *, encoding: str | None = None, config: TopicsConfig | None = None) -> None:
        self.ctx = ctx
        self.encoding = encoding
        self.counter = get_counter(encoding)
        self.config = config if config is not None else load_topics_config(ctx.config, encoding)
        self._cache: dict[str, tuple[tuple[int, int, int], Topic]] = {}
        self._size_cache: dict[str, Any] | None = None

    # -------------------------------------------------------------- reading topics
    def _topic_from(self, name: str, meta: Mapping[str, Any], body: str, version: str | None) -> Topic:
        status = str(meta.get("status", "paged"))
        if status not in STATUSES:
            status = "paged"
        last = meta.get("last_active")
        return Topic(
            name=name,
            title=str(meta.get("title") or name),
            description=" ".join(str(meta.get("description") or "").split()),
            status=status,
            open=bool(meta.get("open", False)),
            last_active=str(last) if last else None,
            summary=" ".join(str(meta.get("summary") or "").split()),
            body=body.strip("\n"),
            vocabulary=_as_tuple(meta.get("vocabulary")),
            aliases=_as_tuple(meta.get("aliases")),
            tasks=_as_tuple(meta.get("tasks")),
            version=version,
        )

    def _read(self, name: str) -> Topic | None:
        """One topic, parsed at most once per version of its ``topic.md``.

        YAML parsing dominates a switch otherwise (the index and detection read every
        topic), so parsed topics are kept per (inode, size, mtime): an atomic write or an
        editor's save changes at least one of them.
        """
        rel = topic_path(name)
        try:
            st = (self.ctx.root / rel).stat()
        except OSError:
            self._cache.pop(name, None)
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        try:
            doc = self.ctx.get(rel)
        except NotFoundError:
            return None
        topic = self._topic_from(name, doc.metadata, doc.body, doc.version)
        self._cache[name] = (key, topic)
        return topic

    def names(self) -> list[str]:
        """Every topic's name (folders under ``topics/`` that hold a ``topic.md``), sorted."""
        out = []
        for rel in self._fast_names():
            parts = rel.split("/")
            if len(parts) == 3 and parts[2] == TOPIC_FILE:
                try:
                    out.append(check_slug(parts[1]))
                except TopicError:
                    log.warning("ignoring topic folder %r: not a valid topic name", parts[1])
        return sorted(out)

    def _fast_names(self) -> list[str]:
        """``topics/<x>/topic.md`` for each folder, without walking every file (exchanges can be big)."""
        base = self.ctx.root / TOPICS_DIR
        if not base.is_dir() or base.is_symlink():
            return []
        out = []
        for child in base.iterdir():
            if child.is_dir() and not child.is_symlink() and (child / TOPIC_FILE).is_file() \
                    and not (child / TOPIC_FILE).is_symlink():
                out.append(f"{TOPICS_DIR}/{child.name}/{TOPIC_FILE}")
        return out

    def list(self, *, include_archived: bool = True) -> list[Topic]:
        """All topics, most recently active first."""
        topics = [t for t in (self._read(n) for n in self.names()) if t is not None]
        if not include_archived:
            topics = [t for t in topics if t.status != "archived"]
        return sorted(topics, key=lambda t: (t.last_active or "", t.name), reverse=True)

    def resolve(self, name: str) -> str | None:
        """The slug a name, slug-ish spelling or exact title refers to (None when unknown)."""
        if not isinstance(name, str) or not name.strip():
            return None
        raw = name.strip()
        names = self.names()
        if raw in names:
            return raw
        slug = slugify(raw)
        if slug in names:
            return slug
        folded = " ".join(raw.split()).casefold()
        for topic in self.list():
            if topic.title.casefold() == folded or folded in (a.casefold() for a in topic.aliases):
                return topic.name
        return None

    def get(self, name: str) -> Topic:
        """The topic called ``name`` (slug, title or alias); TopicError when there is none."""
        slug = self.resolve(name)
        topic = self._read(slug) if slug else None
        if topic is None:
            known = ", ".join(self.names()) or "none yet"
            raise TopicError(f"no topic named {name!r} (topics: {known}); create it with Topics.create() or 'contextfs topic new'")
        return topic

    def exists(self, name: str) -> bool:
        return self.resolve(name) is not None

    def active(self) -> Topic | None:
        """The active topic (the most recently active one if a hand edit left several)."""
        active = [t for t in self.list() if t.status == "active"]
        return active[0] if active else None

    # -------------------------------------------------------------- writing helpers
    def _txn(self, op: str, subject: str, topic: str, extra: Mapping[str, str] | None = None):  # type: ignore[no-untyped-def]
        trailers = {"Contextfs-Topic": topic, **(extra or {})}
        return self.ctx.transaction(f"topic-{op}: {subject}", op=f"topic-{op}", trailers=trailers)

    def _meta(self, name: str, changes: Mapping[str, Any]) -> None:
        self.ctx.update_metadata(topic_path(name), changes)

    # -------------------------------------------------------------- create / lifecycle
    def create(
        self,
        title: str,
        description: str = "",
        *,
        name: str | None = None,
        summary: str = "",
        one_line: str | None = None,
        open: bool = True,
        status: str = "paged",
        vocabulary: Iterable[str] = (),
        aliases: Iterable[str] = (),
        tasks: Iterable[str] = (),
    ) -> Topic:
        """Create ``topics/<name>/`` with its four files; one commit.

        ``description`` is a cue: who or what the topic is and when it becomes relevant
        ("Lisa, the player's childhood friend; relevant when she appears or is
        mentioned"). ``summary`` is the topic's summary (the body of ``topic.md``); the
        one-line index summary defaults to its first sentence.
        """
        if not isinstance(title, str) or not title.strip():
            raise TopicError("a topic needs a non-empty title; pass e.g. 'Billing migration'")
        slug = check_slug(name) if name is not None else slugify(title)
        if not slug:
            raise TopicError(f"cannot make a topic name from the title {title!r}; pass name='some-name'")
        check_slug(slug)
        if status not in STATUSES:
            raise TopicError(f"status {status!r} is not one of {', '.join(STATUSES)}; pick one of them")
        if self.ctx.exists(topic_path(slug)):
            raise TopicError(f"topic {slug!r} already exists; switch to it, or pick another name with name=...")
        title = " ".join(title.split())
        meta: dict[str, Any] = {
            "name": slug,
            "title": title,
            "description": " ".join(str(description).split()),
            "status": status,
            "open": bool(open),
            "last_active": clock.iso(),
            "summary": one_line if one_line is not None else (_one_line(summary) if summary else ""),
            "vocabulary": list(_as_tuple(list(vocabulary))),
        }
        if aliases:
            meta["aliases"] = list(_as_tuple(list(aliases)))
        if tasks:
            meta["tasks"] = list(_as_tuple(list(tasks)))
        body = summary.strip() + "\n" if summary.strip() else ""
        with self._txn("create", slug, slug):
            self.ctx.write(topic_path(slug), body, meta)
            self.ctx.write(topic_path(slug, WHERE_FILE), new_where_body(title), {"title": f"{title}: where are we"})
            self.ctx.write(topic_path(slug, DECISIONS_FILE), new_decisions_body(title), {"title": f"{title}: decisions"})
            self.ctx.write(topic_path(slug, EXCHANGES_FILE), "")
        log.debug("created topic %s", slug)
        return self.get(slug)

    def seed_initial(self) -> list[str]:
        """Create the ``[[topics.initial]]`` topics that do not exist yet (one commit); their names."""
        missing = [s for s in self.config.initial if not self.ctx.exists(topic_path(s.name))]
        if not missing:
            return []
        with self.ctx.transaction(f"topic-seed: {len(missing)} topic(s)", op="topic-seed",
                                  trailers={"Contextfs-Topic": ",".join(s.name for s in missing)}):
            for seed in missing:
                self.create(seed.title or seed.name, seed.description, name=seed.name, summary=seed.summary,
                            open=seed.open)
        return [s.name for s in missing]

    def _set_status(self, op: str, name: str, status: str, *, open: bool | None) -> Topic:
        topic = self.get(name)
        changes: dict[str, Any] = {"status": status, "last_active": clock.iso()}
        if open is not None:
            changes["open"] = open
        with self._txn(op, topic.name, topic.name):
            self._meta(topic.name, changes)
        if topic.status == "active" and status != "active":
            self.sync_vocabulary()
        return self.get(topic.name)

    def close(self, name: str) -> Topic:
        """Close a topic: status ``closed`` and not open (listed as a cue); reopen any time."""
        topic = self._set_status("close", name, "closed", open=False)
        log.info("topic close: %s", topic.name)
        return topic

    def archive(self, name: str) -> Topic:
        """Archive a topic: kept on disk and in git, left out of the index block and detection."""
        topic = self._set_status("archive", name, "archived", open=False)
        log.info("topic archive: %s", topic.name)
        return topic

    def reopen(self, name: str) -> Topic:
        """Bring a closed or archived topic back as ``paged`` and open."""
        return self._set_status("reopen", name, "paged", open=True)

    def set_open(self, name: str, is_open: bool) -> Topic:
        """Flip only the open flag (the compactor's open/close); the status is left alone."""
        topic = self.get(name)
        if topic.open == bool(is_open):
            return topic
        with self._txn("open" if is_open else "unopen", topic.name, topic.name):
            self._meta(topic.name, {"open": bool(is_open)})
        return self.get(topic.name)

    def update_summary(self, name: str, summary: str, *, one_line: str | None = None,
                       description: str | None = None) -> Topic:
        """Rewrite a topic's summary (the body of ``topic.md``) and its one-line index summary."""
        topic = self.get(name)
        meta = {"summary": one_line if one_line is not None else _one_line(summary)}
        if description is not None:
            meta["description"] = " ".join(description.split())
        doc = self.ctx.get(topic.path())
        merged = {k: v for k, v in doc.metadata.items()}
        merged.update(meta)
        with self._txn("summary", topic.name, topic.name):
            self.ctx.write(topic.path(), summary.strip() + "\n" if summary.strip() else "", merged)
        return self.get(topic.name)

    # -------------------------------------------------------------- switch / spawn
    def _activate(self, target: Topic) -> Topic | None:
        """Page out every other active topic and make ``target`` active (inside a transaction)."""
        now = clock.iso()
        previous = None
        for other in self.list():
            if other.status == "active" and other.name != target.name:
                previous = previous or other
                self._meta(other.name, {"status": "paged", "last_active": now})
        self._meta(target.name, {"status": "active", "last_active": now})
        return previous

    def switch(self, name: str, *, budget: int | None = None) -> ContextView:
        """Page out the active topic, activate ``name``, and return its boot context (one commit)."""
        target = self.get(name)
        before = self.active()
        source = before.name if before else "-"
        with self._txn("switch", f"{source} -> {target.name}", target.name, {"Contextfs-Topic-From": source}):
            self._activate(target)
        log.info("topic switch: %s -> %s", source, target.name)
        self.sync_vocabulary()
        return self.boot(target.name, budget=budget)

    def spawn(self, title: str, from_line: int, *, description: str = "", name: str | None = None,
              source: str | None = None, budget: int | None = None) -> Spawned:
        """Move exchanges ``from_line``.. (1-based) of the active topic into a new topic, switch to it.

        The lines are moved, not copied: each exchange belongs to exactly one topic.
        Creation, the move and the switch are one commit.
        """
        origin = self.get(source) if source is not None else self.active()
        if origin is None:
            raise TopicError("there is no active topic to split; switch to one first or pass source='name'")
        lines = [line for line, _ in self._exchange_lines(origin.name)]
        if isinstance(from_line, bool) or not isinstance(from_line, int) or not 1 <= from_line <= len(lines):
            raise TopicError(
                f"from_line {from_line!r} is outside {origin.name}'s {len(lines)} exchange(s); "
                f"pass a line number from 1 to {len(lines)} (see exchanges.jsonl)" if lines else
                f"{origin.name} has no exchanges to split; record exchanges first or use create()"
            )
        slug = check_slug(name) if name is not None else slugify(title)
        cue = description or f"{' '.join(title.split())}, split from {origin.title}; relevant when the conversation returns to it"
        keep, moved = lines[: from_line - 1], lines[from_line - 1 :]
        with self._txn("spawn", f"{origin.name} -> {slug}", slug, {"Contextfs-Topic-From": origin.name}):
            topic = self.create(title, cue, name=slug)
            self.ctx.write(origin.path(EXCHANGES_FILE), "".join(line + "\n" for line in keep))
            self.ctx.write(topic.path(EXCHANGES_FILE), "".join(line + "\n" for line in moved))
            self._activate(topic)
        log.info("topic spawn: %s -> %s (%d exchange(s) moved from line %d)", origin.name, slug, len(moved), from_line)
        self.sync_vocabulary()
        return Spawned(topic=self.get(slug), moved=len(moved), view=self.boot(slug, budget=budget))

    # -------------------------------------------------------------- boot context
    def boot(self, name: str, *, budget: int | None = None, as_of: str | None = None) -> ContextView:
        """The boot context of a topic without switching: state first, then decisions,
        exchanges, the topic's own summary, the shared facts layer and the index.

        Candidates come only from ``topics/<name>/``, the shared layer and the index, so
        no other topic's files can appear. Packed by :func:`contextfs.scopes.packing.pack`.
        """
        from .packing import Candidate, pack

        topic = self.get(name)
        # The packer shows pinned items first (core memory, the "kernel"), then the rest by
        # priority, lower = more important and the last to step down a tier. The index
        # never changes tier (min_tier="full"): at a tiny budget it is dropped whole, before
        # any of the topic's own state.
        order = ["where", "decisions", "exchanges", "topic", "facts", "index"]
        prio = {key: i for i, key in enumerate(order)}
        candidates: list[Candidate] = []
        candidates.append(Candidate(path=topic.path(WHERE_FILE), reason=f"where we were in {topic.name}: resume from here",
                                    priority=prio["where"], title=f"Where are we: {topic.title}"))
        decisions = self.render_decisions(topic.name)
        if decisions:
            candidates.append(Candidate(path=topic.path(DECISIONS_FILE), reason="decision chains with their reasons",
                                        priority=prio["decisions"], body=decisions, title=f"Decisions: {topic.title}"))
        recent = self.render_exchanges(topic.name)
        if recent:
            candidates.append(Candidate(path=topic.path(EXCHANGES_FILE), reason="recent exchanges in this topic",
                                        priority=prio["exchanges"], body=recent, title=f"Recent exchanges: {topic.title}"))
        candidates.append(Candidate(path=topic.path(), reason="what this topic is about", priority=prio["topic"],
                                    body=self._topic_card(topic), title=f"Topic: {topic.title}"))
        for rel in self._shared_paths():
            pinned = rel.startswith("memory/core/")
            candidates.append(Candidate(path=rel, reason="core memory (pinned)" if pinned else "shared facts layer",
                                        priority=prio["facts"], pinned=pinned))
        candidates.append(Candidate(path=f"{TOPICS_DIR}/index", reason="topic index: what other topics exist",
                                    priority=prio["index"], body=self.render_index(current=topic.name),
                                    min_tier="full", title="Topic index"))
        header = f"# Topic: {topic.title} ({topic.name})"
        return pack(self.ctx, candidates, budget or self.config.boot_budget, encoding=self.encoding,
                    as_of=as_of, header=header)

    def _topic_card(self, topic: Topic) -> str:
        lines = [f"**{topic.title}** (`{topic.name}`, {topic.status})"]
        if topic.description:
            lines.append(f"Relevant: {topic.description}")
        if topic.body:
            lines.append("")
            lines.append(topic.body)
        elif topic.summary:
            lines.append(topic.summary)
        return "\n".join(lines) + "\n"

    def _shared_paths(self) -> list[str]:
        from fnmatch import fnmatchcase

        out: list[str] = []
        for pattern in self.config.shared:
            pattern = pattern.lstrip("./") if pattern.startswith("./") else pattern
            if any(ch in pattern for ch in "*?["):
                folder = pattern.split("*")[0].split("?")[0].split("[")[0].rsplit("/", 1)[0]
                matches = [p for p in self.ctx.list(folder) if fnmatchcase(p, pattern)]
            else:
                matches = [pattern] if self.ctx.exists(pattern) else []
            for rel in matches:
                if rel not in out and not rel.startswith(f"{TOPICS_DIR}/"):
                    out.append(rel)
        return out

    # -------------------------------------------------------------- index
    def _sizes(self, names: Sequence[str]) -> dict[str, int]:
        """Token size of each topic's files, cached in memory and in a derived, git-ignored
        file by (size, mtime), so the index costs a few stats once the counts are known."""
        cache_path = self.ctx.root / _SIZE_CACHE
        if self._size_cache is None:
            try:
                loaded = json.loads(cache_path.read_text("utf-8"))
                self._size_cache = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._size_cache = {}
        cache = self._size_cache
        out: dict[str, int] = {}
        dirty = False
        for name in names:
            folder = self.ctx.root / TOPICS_DIR / name
            total = 0
            try:
                children = sorted(folder.iterdir())
            except OSError:
                children = []
            for full in children:
                if not full.is_file() or full.is_symlink() or full.name.endswith(store.TMP_SUFFIX):
                    continue
                rel = f"{TOPICS_DIR}/{name}/{full.name}"
                st = full.stat()
                key = [st.st_size, st.st_mtime_ns]
                hit = cache.get(rel)
                if isinstance(hit, list) and len(hit) == 3 and hit[:2] == key:
                    total += int(hit[2])
                    continue
                data = self.ctx.read_raw(rel) or b""
                n = self.counter.count(data.decode("utf-8", "replace"))
                cache[rel] = [*key, n]
                total += n
                dirty = True
            out[name] = total
        if dirty:
            try:
                store.atomic_write(cache_path, json.dumps(cache, separators=(",", ":")).encode())
            except ContextFSError:
                log.debug("could not write the topic size cache", exc_info=True)
        return out

    def size(self, name: str) -> int:
        """Tokens in all of a topic's files."""
        slug = self.get(name).name
        return self._sizes([slug])[slug]

    def index(self) -> list[IndexEntry]:
        """The awareness layer: every topic's id, title, status, last_active, one-line summary, size."""
        topics = self.list()
        sizes = self._sizes([t.name for t in topics])
        return [
            IndexEntry(name=t.name, title=t.title, status=t.status, open=t.open, last_active=t.last_active,
                       summary=t.summary or _one_line(t.body or t.description, 160), tokens=sizes[t.name])
            for t in topics
        ]

    def render_index(self, *, current: str | None = None) -> str:
        """The index as a few markdown lines, small enough to load at every session start."""
        entries = self.index()
        shown = [e for e in entries if e.status != "archived"]
        lines = [f"{len(shown)} topic(s); only the active one's files are loaded. Switch to read another."]
        for e in shown:
            when = (e.last_active or "never")[:10]
            mark = " ← this topic" if e.name == current else ""
            lines.append(f"- `{e.name}` [{e.status}] {e.title} · last active {when} · ~{e.tokens} tokens"
                         f" — {compress(e.summary, 160)}{mark}")
        archived = len(entries) - len(shown)
        if archived:
            lines.append(f"- ({archived} archived topic(s) not listed)")
        return "\n".join(lines) + "\n"

    # -------------------------------------------------------------- detection
    def detect_explain(self, message: str) -> topic_detect.Detection:
        """Detection with its method and scores (for logs and the CLI)."""
        docs = [
            topic_detect.DetectionDoc(
                name=t.name,
                names=(t.name.replace("-", " "), t.title, *t.aliases),
                text=" ".join([t.title, t.description, t.summary, " ".join(t.vocabulary), " ".join(t.aliases)]),
            )
            for t in self.list(include_archived=False)
        ]
        return topic_detect.detect(message, docs, threshold=self.config.detect_threshold,
                                   margin=self.config.detect_margin)

    def detect(self, message: str) -> Topic | None:
        """The topic a message is about (deterministic, free: names first, then BM25), or None."""
        found = self.detect_explain(message)
        return self.get(found.name) if found.name else None

    # -------------------------------------------------------------- where-are-we state
    def state(self, name: str) -> WhereAreWe:
        """The parsed ``where-are-we.md`` of a topic (all five sections present)."""
        topic = self.get(name)
        body = self.ctx.read(topic.path(WHERE_FILE))
        return WhereAreWe.parse(body if body is not None else new_where_body(topic.title))

    def _save_state(self, topic: Topic, op: str, state: WhereAreWe) -> None:
        rel = topic.path(WHERE_FILE)
        meta = None if self.ctx.exists(rel) else {"title": f"{topic.title}: where are we"}
        with self._txn(op, topic.name, topic.name):
            self.ctx.write(rel, state.render(), meta)

    def append_state(self, name: str, section: str, text: str) -> str:
        """Add an item to a where-are-we section; returns the raw item written."""
        topic = self.get(name)
        state = self.state(topic.name)
        raw = state.append(canonical_section(section), text)
        self._save_state(topic, "state", state)
        return raw

    def complete(self, name: str, item: str) -> str:
        """Move the In Progress item matching ``item`` to Recently Completed (checked)."""
        topic = self.get(name)
        state = self.state(topic.name)
        index = state.find("In Progress", item)
        raw = state.section("In Progress").pop(index)
        done = "- [x] " + item_text(raw) if raw.startswith("- [ ]") else raw
        state.section("Recently Completed").append(done)
        self._save_state(topic, "complete", state)
        return done

    def finalize(self, name: str, keep: int | None = None) -> list[str]:
        """End-of-session tidy-up: keep the newest ``keep`` Recently Completed items.

        Older ones leave the file (git history keeps every version); returns them.
        """
        topic = self.get(name)
        keep = self.config.keep_completed if keep is None else max(0, int(keep))
        state = self.state(topic.name)
        done = state.section("Recently Completed")
        dropped = done[: max(0, len(done) - keep)]
        del done[: len(dropped)]
        with self._txn("finalize", topic.name, topic.name):
            self.ctx.write(topic.path(WHERE_FILE), state.render())
            self._meta(topic.name, {"last_active": clock.iso()})
        return dropped

    def clear_notifications(self, name: str) -> list[str]:
        """Empty Pending Notifications (once they have been read); returns what was there."""
        topic = self.get(name)
        state = self.state(topic.name)
        cleared = list(state.section("Pending Notifications"))
        if cleared:
            state.section("Pending Notifications").clear()
            self._save_state(topic, "clear-notifications", state)
        return cleared

    # -------------------------------------------------------------- decisions
    def decisions(self, name: str) -> list[Decision]:
        topic = self.get(name)
        body = self.ctx.read(topic.path(DECISIONS_FILE)) or ""
        return parse_decisions(body)[1]

    def decide(self, topic: str, text: str, depends_on: str | Sequence[str] | None = None,
               supersedes: str | None = None, reason: str | None = None, *, title: str | None = None) -> str:
        """Record a decision with why it was taken and what it rests on; returns its id (``D<n>``).

        A superseded decision stays in the file, marked ``superseded_by``; nothing is removed.
        """
        t = self.get(topic)
        if not isinstance(text, str) or not text.strip():
            raise TopicError("a decision needs its text; pass what was decided")
        rel = t.path(DECISIONS_FILE)
        raw = self.ctx.read(rel)
        preamble, items = parse_decisions(raw if raw is not None else new_decisions_body(t.title))
        by_id = {d.id: d for d in items}
        deps = [depends_on] if isinstance(depends_on, str) else list(depends_on or [])
        deps = [d.strip() for d in deps if d and d.strip()]
        for dep in deps:
            if dep not in by_id:
                raise TopicError(
                    f"{t.name} has no decision {dep!r} to depend on (ids: {', '.join(by_id) or 'none'}); "
                    "record that reason as a decision first and depend on its id"
                )
        if supersedes is not None:
            old = by_id.get(supersedes)
            if old is None:
                raise TopicError(f"{t.name} has no decision {supersedes!r} to supersede; check the id with chain or show")
            if old.superseded_by:
                raise TopicError(f"{supersedes} is already superseded by {old.superseded_by}; supersede {old.superseded_by} instead")
        new_id = f"D{max((d.number for d in items), default=0) + 1}"
        heading = title or compress(text.strip().split("\n")[0], 80)
        decision = Decision(id=new_id, title=heading, text=text.strip(), reason=(reason or "").strip(),
                            depends_on=deps, supersedes=supersedes, time=clock.iso())
        if supersedes is not None:
            by_id[supersedes].superseded_by = new_id
        items.append(decision)
        meta = None if raw is not None else {"title": f"{t.title}: decisions"}
        with self._txn("decide", f"{t.name} {new_id}", t.name, {"Contextfs-Decision": new_id}):
            self.ctx.write(rel, render_decisions(preamble, items), meta)
        return new_id

    def chain_of(self, topic: str, decision_id: str) -> list[Decision]:
        """The decision and everything it rests on, roots first (a topological order)."""
        items = {d.id: d for d in self.decisions(topic)}
        if decision_id not in items:
            raise TopicError(f"{topic} has no decision {decision_id!r} (ids: {', '.join(items) or 'none'}); check the id")
        seen: dict[str, Decision] = {}

        def visit(did: str, path: tuple[str, ...]) -> None:
            if did in seen or did in path or did not in items:
                return
            for dep in items[did].depends_on:
                visit(dep, (*path, did))
            seen[did] = items[did]

        visit(decision_id, ())
        return list(seen.values())

    def chain(self, topic: str, decision_id: str) -> str:
        """The dependency chain of a decision from its root, each step with its reason."""
        chain = self.chain_of(topic, decision_id)
        all_items = {d.id: d for d in self.decisions(topic)}
        depth: dict[str, int] = {}
        for d in chain:
            depth[d.id] = 1 + max((depth[p] for p in d.depends_on if p in depth), default=-1)
        lines = [f"Decision chain for {decision_id} in {self.get(topic).name} (root first):"]
        for d in chain:
            lines.extend(self._decision_lines(d, depth[d.id], all_items))
        return "\n".join(lines) + "\n"

    @staticmethod
    def _decision_lines(d: Decision, level: int, items: Mapping[str, Decision]) -> list[str]:
        pad = "    " * level
        arrow = "└─► " if level else ""
        tags = []
        if d.superseded_by:
            tags.append(f"SUPERSEDED by {d.superseded_by}")
        if d.supersedes:
            old = items.get(d.supersedes)
            tags.append(f"supersedes {d.supersedes}" + (f" ({old.title})" if old else ""))
        if len(d.depends_on) > 1:
            tags.append("depends on " + ", ".join(d.depends_on))
        suffix = f" [{'; '.join(tags)}]" if tags else ""
        out = [f"{pad}{arrow}{d.id}: {d.title}{suffix}"]
        inner = pad + ("    " if level else "") + "  "
        if d.text and d.text != d.title:
            out.append(f"{inner}{d.text}")
        out.append(f"{inner}because: {d.reason or '(no reason recorded)'}")
        return out

    def render_decisions(self, name: str) -> str:
        """All decisions as chains from their roots, with reasons; superseded ones marked, not hidden."""
        items = self.decisions(name)
        if not items:
            return ""
        by_id = {d.id: d for d in items}
        children: dict[str, list[Decision]] = {d.id: [] for d in items}
        roots = []
        for d in items:
            parents = [p for p in d.depends_on if p in by_id]
            if parents:
                children[parents[0]].append(d)  # shown under its first parent; others named in a tag
            else:
                roots.append(d)
        lines: list[str] = []
        shown: set[str] = set()

        def walk(d: Decision, level: int) -> None:
            if d.id in shown:
                return
            shown.add(d.id)
            lines.extend(self._decision_lines(d, level, by_id))
            for child in children[d.id]:
                walk(child, level + 1)

        for root in roots:
            walk(root, 0)
        for d in items:  # cycles a hand edit may have made: still shown, never lost
            walk(d, 0)
        return "\n".join(lines) + "\n"

    # -------------------------------------------------------------- exchanges
    def _exchange_lines(self, name: str) -> list[tuple[str, Exchange | None]]:
        data = self.ctx.read_raw(topic_path(name, EXCHANGES_FILE))
        return parse_exchanges(data.decode("utf-8", "replace")) if data else []

    def exchanges(self, name: str) -> list[Exchange]:
        return [ex for _, ex in self._exchange_lines(self.get(name).name) if ex is not None]

    def record(self, user: str, agent: str, *, topic: str | None = None) -> Exchange:
        """Append one compressed exchange to a topic (default: the active one)."""
        target = self.get(topic) if topic is not None else self.active()
        if target is None:
            raise TopicError("there is no active topic to record into; switch to one or pass topic='name'")
        limit = self.config.exchange_chars
        exchange = Exchange(time=clock.iso(), user=compress(user, limit), agent=compress(agent, limit),
                            session=self.ctx.current_provenance.session)
        with self._txn("exchange", target.name, target.name):
            self.ctx.append(target.path(EXCHANGES_FILE), render_exchange_line(exchange) + "\n")
        return exchange

    def render_exchanges(self, name: str, limit: int | None = None) -> str:
        limit = self.config.boot_exchanges if limit is None else limit
        if limit <= 0:
            return ""
        data = self.ctx.read_raw(topic_path(name, EXCHANGES_FILE))
        if not data:
            return ""
        raw_lines = [ln for ln in data.decode("utf-8", "replace").split("\n") if ln.strip()]
        start = max(0, len(raw_lines) - limit)
        lines = parse_exchanges("\n".join(raw_lines[start:]))  # parse only the tail shown
        out = []
        for number, (raw, ex) in enumerate(lines, start + 1):
            if ex is None:
                out.append(f"{number}. (unreadable line) {compress(raw, 200)}")
            else:
                out.append(f"{number}. [{ex.time[:16]}] user: {ex.user}\n   agent: {ex.agent}")
        return "\n".join(out) + "\n"

    # -------------------------------------------------------------- vocabulary
    def vocabulary(self, name: str) -> list[str]:
        """A topic's transcription terms: ``vocabulary`` frontmatter plus any Key Facts line
        starting ``Vocabulary:`` or ``Whisper prompt:``; de-duplicated, in order."""
        topic = self.get(name)
        terms = list(topic.vocabulary)
        for raw in self.state(topic.name).section("Key Facts"):
            text = item_text(raw)
            match = re.match(r"(?i)(vocabulary|whisper prompt)\s*:\s*(.+)$", text)
            if match:
                terms.extend(t.strip(" \"'`") for t in match.group(2).split(","))
        seen: set[str] = set()
        out = []
        for term in terms:
            if term and term.casefold() not in seen:
                seen.add(term.casefold())
                out.append(term)
        return out

    def set_vocabulary(self, name: str, terms: Iterable[str]) -> list[str]:
        topic = self.get(name)
        with self._txn("vocabulary", topic.name, topic.name):
            self._meta(topic.name, {"vocabulary": list(_as_tuple(list(terms)))})
        if topic.status == "active":
            self.sync_vocabulary()
        return self.vocabulary(topic.name)

    def sync_vocabulary(self) -> Path:
        """Write the active topic's terms to ``.contextfs/active-vocabulary.txt`` (derived state)
        for a speech transcriber's prompt; empty when no topic is active."""
        active = self.active()
        text = ", ".join(self.vocabulary(active.name)) + "\n" if active else ""
        target = self.ctx.root / VOCABULARY_FILE
        if store.read_bytes(target) != text.encode("utf-8"):
            store.atomic_write(target, text.encode("utf-8"))
        return target

    # -------------------------------------------------------------- routing
    def tag_task(self, name: str, task_id: str) -> Topic:
        """Record that ``task_id`` belongs to a topic, so its results route there."""
        topic = self.get(name)
        if not _TASK_TAG.fullmatch(f"[task:{task_id}]"):
            raise TopicError(f"task id {task_id!r} is not accepted; use letters, digits and . _ : @ / -")
        if task_id in topic.tasks:
            return topic
        with self._txn("tag-task", f"{topic.name} {task_id}", topic.name, {"Contextfs-Task": task_id}):
            self._meta(topic.name, {"tasks": [*topic.tasks, task_id]})
        return self.get(topic.name)

    def _owner_of_task(self, task_id: str) -> str | None:
        for topic in self.list():
            if task_id in topic.tasks:
                return topic.name
        rel = f"task/subtasks/{task_id}.md"
        try:
            if self.ctx.exists(rel):
                owner = self.ctx.get(rel).metadata.get("topic")
                if isinstance(owner, str) and self.resolve(owner):
                    return self.resolve(owner)
        except ContextFSError:
            return None
        return None

    def _owner_by_keywords(self, text: str) -> str | None:
        words = topic_detect.keywords(text)
        scored = []
        for topic in self.list(include_archived=False):
            phrases = (topic.name.replace("-", " "), topic.title, *topic.aliases)
            if any(topic_detect.fuzzy_match(text, p) for p in phrases):
                scored.append((100, topic.name))
                continue
            title_words = topic_detect.keywords(" ".join(phrases))
            hits = len(words & title_words)
            if hits >= min(2, len(title_words)) and hits:
                scored.append((hits, topic.name))
        scored.sort(reverse=True)
        if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
            return None
        return scored[0][1]

    def route(self, result_text: str, task_id: str | None = None) -> RouteResult:
        """Send an asynchronous result to the topic that owns it.

        Owner: the ``[task:ID]`` tag (or ``task_id``) looked up in topics' ``tasks`` and in
        ``task/subtasks/<ID>.md`` ``topic:`` frontmatter; else keywords of topic titles.
        A paged (or closed) owner gets it under Pending Notifications; an active owner gets
        it back for normal processing; no owner is reported, with the text returned.
        """
        if not isinstance(result_text, str) or not result_text.strip():
            raise TopicError("the result text is empty; pass the sub-agent's result")
        tag = _TASK_TAG.search(result_text)
        task = task_id or (tag.group(1) if tag else None)
        owner, via = None, None
        if task:
            owner, via = self._owner_of_task(task), "task"
        if owner is None:
            owner, via = self._owner_by_keywords(_TASK_TAG.sub(" ", result_text)), "keyword"
        if owner is None:
            log.warning("routed result matched no topic (task %s)", task)
            return RouteResult(action="unmatched", topic=None, text=result_text, task_id=task, via=None,
                               message="no topic owns this result; handle it in the current conversation "
                                       "or tag its task with Topics.tag_task()")
        topic = self.get(owner)
        if topic.status == "active":
            return RouteResult(action="delivered", topic=topic.name, text=result_text, task_id=task, via=via,
                               message=f"{topic.name} is active; process the result now")
        body = result_text.strip()
        if task and not tag:
            body = f"[task:{task}] {body}"
        state = self.state(topic.name)
        raw = state.append("Pending Notifications", body)
        with self._txn("route", topic.name, topic.name, {"Contextfs-Task": task or ""}):
            self.ctx.write(topic.path(WHERE_FILE), state.render())
        return RouteResult(action="filed", topic=topic.name, text=result_text, task_id=task, via=via,
                           notification=raw,
                           message=f"{topic.name} is {topic.status}; filed under its Pending Notifications")

    # -------------------------------------------------------------- open/closed (seed 002)
    def _state_doc(self) -> tuple[dict[str, Any], str]:
        try:
            doc = self.ctx.get(STATE_FILE)
        except NotFoundError:
            return {}, ""
        return dict(doc.metadata), doc.body

    def _write_state(self, op: str, subject: str, changes: Mapping[str, Any], body: str | None = None) -> None:
        meta, old_body = self._state_doc()
        meta = {k: v for k, v in meta.items() if k not in ("created", "updated", "author", "session", "turn")}
        meta.setdefault("title", "Topic bookkeeping: general summary and opens since the last compaction")
        meta.update(changes)
        text = old_body if body is None else (body.strip() + "\n" if body.strip() else "")
        with self._txn(op, subject, subject):
            self.ctx.write(STATE_FILE, text, meta)

    def general_summary(self) -> str:
        """The general summary: what belongs to no topic in particular (written by the compactor)."""
        return self._state_doc()[1].strip()

    def set_general_summary(self, text: str) -> None:
        self._write_state("general-summary", "general", {}, body=text)

    def opened_since_compaction(self) -> list[str]:
        """Topics the agent opened since the last compaction (the compactor reconsiders them)."""
        return list(_as_tuple(self._state_doc()[0].get("opened_since_compaction")))

    def last_compaction(self) -> str | None:
        value = self._state_doc()[0].get("last_compaction")
        return str(value) if value else None

    def mark_compacted(self) -> None:
        """Called by the compactor after it wrote topics: forget the opens, stamp the time."""
        self._write_state("compacted", "compaction", {"last_compaction": clock.iso(), "opened_since_compaction": []})

    def _layout(self) -> tuple[list[Topic], list[Topic]]:
        """(open topics shown with their summaries, closed topics shown as cues) for the block."""
        topics = self.list(include_archived=False)
        shown: list[Topic] = []
        cues: list[Topic] = []
        used = 0
        for topic in topics:  # most recently active first, so the freshest keep their place
            if not topic.open:
                cues.append(topic)
                continue
            cost = self.counter.count(_open_section(topic.name, topic.description, topic.body or topic.summary))
            if used + cost <= self.config.max_open_tokens:
                shown.append(topic)
                used += cost
            else:
                log.warning("open topic %s does not fit max_open_tokens=%d; listed as closed",
                            topic.name, self.config.max_open_tokens)
                cues.append(topic)
        return shown, sorted(cues, key=lambda t: t.name)

    def open_topic(self, name: str) -> str:
        """The agent's one topic tool (seed 002): the topic's summary, or exactly
        "already visible" (open in the block, or opened since the last compaction), or
        exactly "doesn't exist". A first open is remembered (one commit)."""
        slug = self.resolve(name) if isinstance(name, str) else None
        topic = self._read(slug) if slug else None
        if topic is None:
            return DOES_NOT_EXIST
        shown, _ = self._layout()
        opened = self.opened_since_compaction()
        if topic.name in opened or any(t.name == topic.name for t in shown):
            return ALREADY_VISIBLE
        self._write_state("open-topic", topic.name, {"opened_since_compaction": [*opened, topic.name]})
        return topic.body or topic.summary or f"({topic.name} has no summary yet)"

    def render_block(self) -> str:
        """The context block: general summary, open topics with summaries (within
        ``max_open_tokens``), closed topics by name and cue description."""
        shown, cues = self._layout()
        parts = ["[Context block — assembled by contextfs from the topic files; not said by anyone. "
                 "The conversation continues after it.]\n"]
        general = self.general_summary()
        if general:
            parts.append(f"## Summary of earlier conversation\n\n{general}\n")
        if shown:
            as_of = self.last_compaction() or "the latest topic update"
            parts.append(f"## Open topics (current as of {as_of})\n\n"
                         + "\n".join(_open_section(t.name, t.description, t.body or t.summary) for t in shown))
        if cues:
            parts.append("## Closed topics (call open_topic with a name to read one)\n\n"
                         + "\n".join(f"- {t.name} — {t.description or t.title}" for t in cues) + "\n")
        parts.append("[End of context block]\n")
        return "\n".join(parts)

