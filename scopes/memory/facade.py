"""The :class:`Memory` façade: the three MemGPT memory tiers of one root, with the tool names agents call.

* **Core memory** (:mod:`.core_blocks`): a few small blocks pinned into every scope,
  each within a token limit; nothing is cut silently.
* **Archival memory** (:mod:`.archive`, :mod:`.dedupe`): one note per file, duplicates
  returned instead of stored twice, searched through the index.
* **Conversation (recall) memory** (:mod:`.conversation`): the session logs;
  :class:`~contextfs.scopes.memory.buffer.ConversationBuffer` holds the recent window.

Every write records its source (session and turn) from the manager's provenance, never
from the text, and every recalled fact comes back with it. Text that reads as an
instruction to the agent goes through :mod:`contextfs.scopes.poisoning`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from contextfs.config import check_keys
from contextfs.errors import ConfigError, ContentError
from contextfs.gate.poisoning import check_policy, policy_from_config
from contextfs.manager import ContextManager
from contextfs.text.tokens import TokenCounter, get_counter

from ..arguments import check_text
from .archive import Archive
from .conversation import ConversationLog
from .core_blocks import CoreMemory
from .records import (
    DEFAULT_CORE_LIMIT,
    DEFAULT_NEAR_DUPLICATE,
    ArchivalNote,
    CoreBlock,
    CoreBlocks,
    MemoryHit,
    MemoryHits,
    MemorySettings,
    Message,
)

__all__ = ["Memory"]


def _int_option(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(
            f"{name} must be an integer >= {low}, got {value!r}; fix it in [memory] of config.toml"
        )
    return value


#: The keys of ``[memory]`` in config.toml (``poisoning`` also sets the write gate's policy).
MEMORY_KEYS = ("core_limit", "encoding", "near_duplicate", "poisoning")


class Memory:
    """The three memory tiers of one context root, with the tool surface agents call.

    >>> mem = Memory(ctx)                                    # doctest: +SKIP
    >>> mem.core_memory_append("user_profile", "Priya, Hyderabad, 2027 batch")  # doctest: +SKIP
    >>> mem.archival_memory_insert("Priya has an Infosys offer at 4.5 LPA", tags=["offer"])  # doctest: +SKIP
    >>> mem.archival_memory_search("existing offer")[0].source   # doctest: +SKIP
    'session:monday turn:1'
    """

    def __init__(
        self,
        ctx: ContextManager,
        *,
        policy: str | None = None,
        core_limit: int | None = None,
        near_duplicate: float | None = None,
        encoding: str | None = None,
    ) -> None:
        self.ctx = ctx
        section = ctx.parts.config.get("memory", {})
        if not isinstance(section, Mapping):
            raise ConfigError(
                "[memory] in config.toml must be a table; write it as [memory] with key = value lines"
            )
        check_keys("memory", section, MEMORY_KEYS)
        chosen = (
            check_policy(policy) if policy is not None else policy_from_config(ctx.parts.config)
        )
        limit = _int_option(
            core_limit if core_limit is not None else section.get("core_limit", DEFAULT_CORE_LIMIT),
            "core_limit",
            1,
        )
        near = (
            near_duplicate
            if near_duplicate is not None
            else section.get("near_duplicate", DEFAULT_NEAR_DUPLICATE)
        )
        if isinstance(near, bool) or not isinstance(near, (int, float)) or not 0 < near <= 1:
            raise ConfigError(
                f"near_duplicate must be a number in (0, 1], got {near!r}; fix it in [memory] of config.toml"
            )
        self.settings = MemorySettings(
            policy=chosen,
            core_limit=limit,
            near_duplicate=float(near),
            counter=get_counter(encoding or section.get("encoding")),
        )
        self._archive = Archive(ctx, self.settings)
        self._core = CoreMemory(ctx, self.settings, self._archive)
        self._log = ConversationLog(ctx, self.settings)

    @property
    def policy(self) -> str:
        """The poisoning policy: ``tag``, ``refuse`` or ``quarantine``."""
        return self.settings.policy

    @property
    def core_limit(self) -> int:
        """The token limit of new core blocks."""
        return self.settings.core_limit

    @property
    def near_duplicate(self) -> float:
        """The word-set Jaccard at which two archival notes are the same fact."""
        return self.settings.near_duplicate

    @property
    def counter(self) -> TokenCounter:
        return self.settings.counter

    # ------------------------------------------------------------ core memory
    def core_blocks(self) -> CoreBlocks:
        """Every readable core block, by label (a list).

        A block file that cannot be read (binary, not UTF-8, broken frontmatter) is left
        out with a logged warning and listed in the result's ``skipped`` as
        ``DroppedItem(path, "unreadable: ...")``, so one bad file never hides the others.
        """
        return self._core.blocks()

    # A block is named by its ``label`` everywhere: these calls, the agent tools'
    # arguments, the CLI's LABEL and CoreBlock.label.
    def core(self, label: str) -> CoreBlock:
        """One core block (NotFoundError when it does not exist yet)."""
        return self._core.block(label)

    def core_memory_append(self, label: str, text: str) -> CoreBlock:
        """Pin ``text`` as a new line of a core block (creating the block if needed)."""
        return self._core.append(label, text)

    def core_memory_replace(self, label: str, old: str, new: str) -> CoreBlock:
        """Replace ``old`` with ``new`` in a core block; ``old`` must occur exactly once."""
        return self._core.replace(label, old, new)

    def core_memory_rethink(self, label: str, text: str) -> CoreBlock:
        """Rewrite a core block as a whole (the old version stays in git history)."""
        return self._core.rethink(label, text)

    # ------------------------------------------------------------ archival memory
    def archival_memory_insert(
        self,
        text: str,
        tags: Sequence[str] | None = None,
        *,
        extra: Mapping[str, Any] | None = None,
        replacing: str | None = None,
    ) -> ArchivalNote:
        """Store one fact as its own note; an exact or near duplicate returns the existing note.

        The returned note's ``verdict`` reports whether the poisoning guard flagged it and
        ``trust`` what was stored (``untrusted``/``quarantined`` for flagged text).
        """
        return self._archive.insert(text, tags, extra=extra, replacing=replacing)

    def archival_memory_search(
        self,
        query: str,
        top_k: int = 5,
        tags: Sequence[str] | None = None,
        *,
        include_inactive: bool = False,
        include_quarantined: bool = False,
    ) -> list[MemoryHit]:
        """The ``top_k`` notes best matching ``query``, each with its source.

        Notes of the head commit are ranked by page-in's ranker, as a view pages them in
        (BM25: rare words weigh more; docs/memory.md, "Search"); equal scores go to the most
        recent note. Invalidated, superseded and quarantined notes are left out unless asked for.
        """
        return self._archive.search(
            query,
            top_k,
            tags,
            include_inactive=include_inactive,
            include_quarantined=include_quarantined,
        )

    def note(self, path: str) -> ArchivalNote:
        """Read one archival note with its provenance."""
        return self._archive.note(path)

    def invalidate(self, path: str, reason: str | None = None) -> ArchivalNote:
        """Mark a note as no longer true: kept in the file and history, left out of search."""
        return self._archive.invalidate(path, reason)

    def supersede(self, path: str, text: str, tags: Sequence[str] | None = None) -> ArchivalNote:
        """Replace a note with a new one; the old note points to it and leaves search."""
        return self._archive.supersede(path, text, tags)

    def find_duplicate(self, text: str, *, ignore: str | None = None) -> str | None:
        """The path of an active note saying the same thing as ``text``, if any."""
        check_text(text, "text", fix="pass the fact to look for", error=ContentError)
        return self._archive.duplicates.find(text, ignore=ignore)

    # ------------------------------------------------------------ conversation memory
    def log_path(self, session: str | None = None) -> str:
        """``sessions/<session>.jsonl`` (default: the current session)."""
        return self._log.path(session)

    def make_message(
        self,
        role: str,
        content: str,
        *,
        speaker: str | None = None,
        time: datetime | str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> Message:
        """A message stamped with the current session and turn, said by ``speaker`` at ``time``
        (default now); not yet logged. ``data`` (a JSON-able mapping) is the message as an
        agent framework holds it, kept so the framework can rebuild it exactly."""
        return self._log.make_message(role, content, speaker=speaker, time=time, data=data)

    def log_messages(self, messages: Sequence[Message]) -> None:
        """Append messages to their sessions' logs (call inside a transaction to batch)."""
        self._log.append(messages)

    def log_message(
        self,
        role: str,
        content: str,
        *,
        speaker: str | None = None,
        time: datetime | str | None = None,
    ) -> Message:
        """Append one message to this session's log (one commit)."""
        return self._log.log(role, content, speaker=speaker, time=time)

    def import_transcript(
        self,
        turns: Iterable[Mapping[str, Any] | Sequence[Any]],
        *,
        session: str,
        roles: Mapping[str, str] | None = None,
        default_role: str = "user",
    ) -> list[Message]:
        """Log an existing dated conversation with named speakers into ``sessions/<session>.jsonl``.

        Each turn is ``{"speaker": "Caroline", "text": "...", "time": "2023-05-08T13:56:00Z"}``
        (or a ``(speaker, text, time)`` tuple); ``roles`` maps speakers to roles (default
        ``default_role``). One commit; the messages are searchable and page into views.
        """
        return self._log.import_transcript(
            turns, session=session, roles=roles, default_role=default_role
        )

    def sessions(self) -> list[str]:
        """The sessions that have a conversation log, least recently active first."""
        return self._log.sessions()

    def messages(self, session: str | None = None) -> list[Message]:
        """Every logged message of one session (default: the current one), oldest first."""
        return self._log.messages(session)

    def conversation_search(
        self,
        query: str = "",
        session: str | None = None,
        roles: Sequence[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = 10,
        *,
        speakers: Sequence[str] | None = None,
        include_quarantined: bool = False,
    ) -> MemoryHits:
        """Old messages matching ``query`` (all sessions unless one is named), best first.

        Ranked by the search index, which holds each message as its own document (BM25F:
        rare words count more; question words and stop words do not count; a message
        also counts half of its neighbours' match; a speaker or a day, month or year the
        query names makes that speaker's or that period's messages count double); newer
        messages win ties. ``roles``/``speakers`` keep messages of those roles or named
        speakers; an empty query lists the newest matching messages. A log that cannot be
        read, or a line of one that is not a message, is left out and listed in
        ``skipped`` of the result (a list of :class:`MemoryHit`).
        """
        return self._log.search(
            query,
            session,
            roles,
            since,
            until,
            limit,
            speakers=speakers,
            include_quarantined=include_quarantined,
        )
