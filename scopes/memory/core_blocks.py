"""Core memory: a few small blocks, ``memory/core/<label>.md``, pinned into every scope.

Each block has a token ``limit`` in its frontmatter (default 500); a write that would
exceed it raises :class:`MemoryLimitError` saying by how much. Nothing is cut silently,
because a fact that quietly vanishes from the prompt is worse than a refused write. A
block is read on every turn, so text the poisoning guard flags marks the block
untrusted, and under the ``quarantine`` policy never reaches it at all.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from contextfs.document import as_content
from contextfs.errors import (
    ContentError,
    ContextFSError,
    InvalidPathError,
    MemoryLimitError,
    NotFoundError,
)
from contextfs.manager import ContextManager
from contextfs.poisoning import Verdict, apply_policy, assess, trust_of
from contextfs.replacing import replace_once

from ..packing import DroppedItem
from .archive import Archive
from .records import CORE_DIR, CoreBlock, CoreBlocks, MemorySettings, provenance

__all__ = ["CoreMemory"]

log = logging.getLogger(__name__)

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")
_MANAGED = ("created", "updated", "author", "session", "turn")


class CoreMemory:
    """Read and change the pinned core blocks."""

    def __init__(self, ctx: ContextManager, settings: MemorySettings, archive: Archive) -> None:
        self._ctx = ctx
        self._settings = settings
        self._archive = archive

    def path(self, label: str) -> str:
        """``memory/core/<label>.md`` for an accepted label (InvalidPathError otherwise)."""
        if not isinstance(label, str) or not _LABEL.match(label):
            raise InvalidPathError(
                f"core block label {label!r} is not accepted; use 1-64 letters, digits, '_' or '-', e.g. 'user_profile'"
            )
        return f"{CORE_DIR}/{label}.md"

    def _limit_of(self, meta: Mapping[str, Any], path: str) -> int:
        value = meta.get("limit", self._settings.core_limit)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise MemoryLimitError(f"{path} has limit {value!r} in its frontmatter; set 'limit' to a positive number of tokens")
        return value

    def _tokens(self, body: str) -> int:
        """A block's size: its text, without the line end the store adds after it (a block
        whose text is exactly at its limit is at its limit, not one token over)."""
        return self._settings.counter.count(body.rstrip("\n"))

    def _block(self, label: str, path: str, body: str, meta: Mapping[str, Any], verdict: Verdict | None = None,
               quarantined_to: str | None = None) -> CoreBlock:
        return CoreBlock(label=label, path=path, text=body, limit=self._limit_of(meta, path),
                         tokens=self._tokens(body), trust=trust_of(meta),
                         verdict=verdict or Verdict(False, ()), quarantined_to=quarantined_to)

    def blocks(self) -> CoreBlocks:
        """Every readable core block, by label; unreadable block files are logged and listed in ``.skipped``."""
        out: list[CoreBlock] = []
        skipped: list[DroppedItem] = []
        for rel in self._ctx.list(CORE_DIR):
            if rel.endswith(".md") and rel.count("/") == 2:
                try:
                    doc = self._ctx.get(rel)
                    out.append(self._block(rel.rsplit("/", 1)[1][:-3], rel, doc.body, doc.metadata))
                except ContextFSError as exc:
                    log.warning("leaving core block %s out: %s", rel, exc)
                    skipped.append(DroppedItem(rel, f"unreadable: {exc}"))
        return CoreBlocks(out, skipped)

    def block(self, label: str) -> CoreBlock:
        """One core block (NotFoundError when it does not exist yet)."""
        path = self.path(label)
        doc = self._ctx.get(path)
        return self._block(label, path, doc.body, doc.metadata)

    def _write(self, label: str, new_text: str, make_body: Callable[[str], str], op: str) -> CoreBlock:
        ctx = self._ctx
        path = self.path(label)
        if not isinstance(new_text, str):
            raise ContentError(f"core memory text must be a string, got {type(new_text).__name__}; pass text")
        verdict = assess(new_text)
        trust = apply_policy(verdict, self._settings.policy, what=f"text for core block {label!r}")
        if trust == "quarantined":
            # A pinned block is read on every turn; quarantined text must never reach it.
            note = self._archive.insert(new_text, tags=["quarantined-core", label.lower()])
            log.warning("quarantined text meant for core block %r in %s", label, note.path)
            try:
                current = self.block(label)
            except NotFoundError:
                current = CoreBlock(label, path, "", self._settings.core_limit, 0)
            return dataclasses.replace(current, verdict=verdict, quarantined_to=note.path)
        with ctx.transaction(f"memory: core {op} {label}", op=f"memory-core-{op}",
                             trailers={"Contextfs-Memory": "core"}):
            old = ctx.get(path) if ctx.exists(path) else None
            meta: dict[str, Any] = dict(old.metadata) if old else {
                "title": label.replace("_", " ").replace("-", " ").capitalize(),
                "tags": ["core", "pinned"],
                "limit": self._settings.core_limit,
            }
            body = make_body(old.body if old else "")
            limit = self._limit_of(meta, path)
            tokens = self._tokens(body)
            if tokens > limit:
                raise MemoryLimitError(
                    f"core block {label!r} would be {tokens} tokens, {tokens - limit} over its limit of {limit}; "
                    "shorten the text, move detail to archival memory (archival_memory_insert), "
                    f"or raise 'limit' in {path}"
                )
            whole = assess(body)
            meta["trust"] = "untrusted" if whole.suspicious else "trusted"
            if whole.suspicious:
                meta["flagged"] = list(whole.reasons)
            else:
                meta.pop("flagged", None)
            meta["source"] = provenance(ctx)[2]
            meta = {k: v for k, v in meta.items() if k not in _MANAGED}
            ctx.write(path, as_content(path, body), meta, expected_version=old.version if old else None)
        doc = ctx.get(path)
        return self._block(label, path, doc.body, doc.metadata, verdict)

    def append(self, label: str, text: str) -> CoreBlock:
        """Pin ``text`` as a new line of a core block (creating the block if needed)."""
        def body(old: str) -> str:
            if not old.strip():
                return text.rstrip("\n") + "\n"
            return old.rstrip("\n") + "\n" + text.rstrip("\n") + "\n"
        return self._write(label, text, body, "append")

    def replace(self, label: str, old: str, new: str) -> CoreBlock:
        """Replace ``old`` with ``new`` in a core block; ``old`` must occur exactly once."""
        if not isinstance(old, str) or not old:
            raise ContentError("core_memory_replace needs the exact old text; quote it from the block")
        path = self.path(label)
        if not self._ctx.exists(path):
            raise NotFoundError(f"core block {label!r} does not exist; create it with core_memory_append", path=path)

        def body(current: str) -> str:
            return replace_once(current, old, new, where=f"core block {label!r}", path=path)
        return self._write(label, new, body, "replace")

    def rethink(self, label: str, text: str) -> CoreBlock:
        """Rewrite a core block as a whole (the old version stays in git history)."""
        return self._write(label, text, lambda _old: text.rstrip("\n") + "\n", "rethink")
