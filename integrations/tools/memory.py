"""The memory-tier tools (MemGPT's tool surface) over :class:`contextfs.scopes.Memory`.

Core memory is pinned into every scope, so its tools say how much room a block has left;
archival memory is searched by meaning words and every hit comes back with its source;
conversation search reads the session logs. Every call into ``Memory`` lives in this
module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from contextfs.scopes import CoreBlock, Memory

from .output import as_data
from .spec import ToolSpec

if TYPE_CHECKING:
    from .spec import Toolkit

__all__ = ["MEMORY_TOOLS"]

_LABEL = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
_ROLE = r"^(user|assistant|system|tool)$"


Tag = Annotated[
    str,
    Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$", description="A lowercase tag, e.g. 'billing'."),
]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CoreAppendArgs(_Args):
    label: str = Field(
        pattern=_LABEL, description="The core block to add to, e.g. 'user_profile' or 'persona'."
    )
    text: str = Field(
        min_length=1,
        max_length=4000,
        description="One short line to pin, e.g. 'Prefers metric units'.",
    )


class CoreReplaceArgs(_Args):
    label: str = Field(pattern=_LABEL, description="The core block to change, e.g. 'user_profile'.")
    old: str = Field(
        min_length=1,
        max_length=4000,
        description="Exact text now in the block; it must occur once.",
    )
    new: str = Field(max_length=4000, description="Text to put in its place (empty removes it).")


class ArchivalInsertArgs(_Args):
    text: str = Field(
        min_length=1, max_length=20_000, description="One fact to remember, in a sentence or two."
    )
    tags: list[Tag] = Field(
        default_factory=list,
        max_length=10,
        description="Optional lowercase tags, e.g. ['billing', 'decision'].",
    )


class ArchivalSearchArgs(_Args):
    query: str = Field(
        min_length=1,
        max_length=1000,
        description="Words about the fact you need, e.g. 'existing job offer'.",
    )
    top_k: int = Field(default=5, ge=1, le=20, description="How many notes to return (1-20).")
    tags: list[Tag] = Field(
        default_factory=list, max_length=10, description="Only notes with all of these tags."
    )


class ConversationSearchArgs(_Args):
    query: str = Field(
        default="",
        max_length=1000,
        description="Words to look for; empty lists the newest messages.",
    )
    role: str | None = Field(
        default=None,
        pattern=_ROLE,
        description="Only messages by this role (user, assistant, system, tool).",
    )
    session: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_.:@-]{1,128}$",
        description="Only this session's log; leave it out to search every session.",
    )
    limit: int = Field(default=5, ge=1, le=50, description="How many messages to return (1-50).")


def _memory(kit: Toolkit) -> Memory:
    return kit.layer("memory", lambda: Memory(kit.ctx))


def _block_answer(block: CoreBlock, verb: str) -> str:
    if block.quarantined_to:
        return (
            f"Not pinned: the text reads as an instruction, so it was stored for review in {block.quarantined_to} "
            "instead of core memory. Rephrase it as a fact (e.g. 'the user said: ...') to pin it."
        )
    flagged = (
        " (flagged by the poisoning guard: it is stored as untrusted and shown quoted)"
        if block.trust != "trusted"
        else ""
    )
    return (
        f"{verb} core block {block.label!r}: {block.tokens} of {block.limit} tokens used, "
        f"{block.remaining} left{flagged}."
    )


def core_append(kit: Toolkit, a: CoreAppendArgs) -> str:
    return _block_answer(_memory(kit).core_memory_append(a.label, a.text), "Pinned to")


def core_replace(kit: Toolkit, a: CoreReplaceArgs) -> str:
    return _block_answer(_memory(kit).core_memory_replace(a.label, a.old, a.new), "Updated")


def archival_insert(kit: Toolkit, a: ArchivalInsertArgs) -> str:
    note = _memory(kit).archival_memory_insert(a.text, tags=a.tags)
    if note.duplicate:
        return f"Already remembered in {note.path}; nothing new was stored."
    flagged = (
        f" It reads as an instruction ({', '.join(note.verdict.reasons)}), so it is stored as {note.trust}."
        if note.trust != "trusted"
        else ""
    )
    return f"Remembered in {note.path} (source {note.source}).{flagged}"


def archival_search(kit: Toolkit, a: ArchivalSearchArgs) -> str:
    hits = _memory(kit).archival_memory_search(a.query, top_k=a.top_k, tags=a.tags or None)
    if not hits:
        return f"No archival notes match {a.query!r}. Try other words, or archival_memory_insert the fact first."
    parts = [
        f"{n}. {h.path} (score {h.score:.2f}; tags {', '.join(h.tags) or '-'})\n"
        + as_data(h.text, f"{h.path} · {h.source}", trust=h.trust)
        for n, h in enumerate(hits, 1)
    ]
    return "\n".join(parts)


def conversation_search(kit: Toolkit, a: ConversationSearchArgs) -> str:
    hits = _memory(kit).conversation_search(
        a.query, session=a.session, roles=[a.role] if a.role else None, limit=a.limit
    )
    skipped = hits.skipped
    left_out = (
        (
            "\n(left out, could not be read: "
            + "; ".join(f"{d.path} ({d.reason})" for d in skipped[:10])
            + (f" and {len(skipped) - 10} more" if len(skipped) > 10 else "")
            + ")"
        )
        if skipped
        else ""
    )
    if not hits:
        return (
            "No logged messages match."
            + (" Try other words." if a.query.strip() else "")
            + left_out
        )
    parts = [
        f"{n}. {h.path} · {h.role or 'message'} · {h.updated or 'unknown time'}\n"
        + as_data(h.text, f"{h.path} · {h.role or 'message'} · {h.source}", trust=h.trust)
        for n, h in enumerate(hits, 1)
    ]
    return "\n".join(parts) + left_out


MEMORY_TOOLS: list[ToolSpec[Any]] = [
    ToolSpec(
        "core_memory_append",
        "memory",
        "Pin a short fact into a core memory block, which is shown in every context from now on. Use it for what you "
        "must never forget about the user or your persona; put everything else in archival memory.",
        CoreAppendArgs,
        core_append,
        access="write",
        example={"label": "user_profile", "text": "Prefers metric units"},
    ),
    ToolSpec(
        "core_memory_replace",
        "memory",
        "Change text in a core memory block (quote the old text exactly). Use it when a pinned fact is no longer true.",
        CoreReplaceArgs,
        core_replace,
        access="write",
        destructive=True,
        example={"label": "user_profile", "old": "Lives in Pune", "new": "Lives in Hyderabad"},
    ),
    ToolSpec(
        "archival_memory_insert",
        "memory",
        "Store one fact in archival memory (searchable, not shown unless searched). Use it for details worth keeping "
        "that do not belong in core memory; duplicates are detected and not stored twice.",
        ArchivalInsertArgs,
        archival_insert,
        access="write",
        example={"text": "The staging database is refreshed every Monday", "tags": ["ops"]},
    ),
    ToolSpec(
        "archival_memory_search",
        "memory",
        "Search archival memory by words and get the best notes with their sources. Use it before answering from "
        "memory, and before inserting a fact that may already be stored.",
        ArchivalSearchArgs,
        archival_search,
        idempotent=True,
        example={"query": "staging database"},
    ),
    ToolSpec(
        "conversation_search",
        "memory",
        "Search past conversation messages (all sessions, or one) by words, optionally by role. Use it to recall what "
        "was said earlier that is no longer in the prompt.",
        ConversationSearchArgs,
        conversation_search,
        idempotent=True,
        example={"query": "deadline"},
    ),
]
