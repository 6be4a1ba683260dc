"""Conversation (recall) memory: ``sessions/<session>.jsonl``, one JSON object per message.

The log is a record of what was said, so it never refuses a line: a message the
poisoning guard flags is logged marked ``untrusted`` (policy ``tag``) or
``quarantined``, and recall fences or hides it. Search is BM25 over the messages that
pass the filters (:func:`~.text.bm25`), newest first on ties.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

from contextfs import clock
from contextfs.errors import ContentError
from contextfs.manager import ContextManager
from contextfs.poisoning import assess

from ..arguments import check_int, check_strings, check_text
from .records import (
    ROLES,
    SESSIONS_DIR,
    MemoryHit,
    MemorySettings,
    Message,
    newest_first,
    parse_time,
    provenance,
)
from .text import bm25

__all__ = ["ConversationLog"]

log = logging.getLogger(__name__)


class ConversationLog:
    """Append to and search the per-session conversation logs."""

    def __init__(self, ctx: ContextManager, settings: MemorySettings) -> None:
        self._ctx = ctx
        self._settings = settings

    def path(self, session: str | None = None) -> str:
        """``sessions/<session>.jsonl`` (default: the current session)."""
        sid = session or self._ctx.current_provenance.session
        if not sid:
            raise ContentError("no session is set; open the manager with session=... or use ctx.provenance(session=...)")
        return f"{SESSIONS_DIR}/{sid}.jsonl"

    def make_message(self, role: str, content: str) -> Message:
        """A message stamped with the current session, turn and time (not yet logged)."""
        if role not in ROLES:
            raise ContentError(f"role {role!r} is not accepted; use one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise ContentError(f"message content must be a string, got {type(content).__name__}; pass text")
        verdict = assess(content)
        # The log is a record of what was said, so it never refuses a line; flagged lines
        # are marked so recall fences them (or, under refuse/quarantine, hides them).
        trust = "trusted" if not verdict.suspicious else ("untrusted" if self._settings.policy == "tag" else "quarantined")
        session, turn, _ = provenance(self._ctx)
        return Message(role=role, content=content, time=clock.iso(), turn=turn, session=session, trust=trust)

    def append(self, messages: Sequence[Message]) -> None:
        """Append messages to their sessions' logs (call inside a transaction to batch)."""
        by_path: dict[str, list[str]] = defaultdict(list)
        for m in messages:
            by_path[self.path(m.session)].append(m.to_json() + "\n")
        with self._ctx.library_write():  # the logs are this layer's own
            for rel, lines in by_path.items():
                self._ctx.append(rel, "".join(lines))

    def log(self, role: str, content: str) -> Message:
        """Append one message to this session's log (one commit)."""
        msg = self.make_message(role, content)
        with self._ctx.transaction(f"memory: log {self.path()}", op="memory-log", trailers={"Contextfs-Memory": "recall"}):
            self.append([msg])
        return msg

    def messages(self, session: str | None = None) -> list[Message]:
        """Every logged message of one session (default: the current one), oldest first."""
        return list(self._read(self.path(session)))

    def _read(self, rel: str) -> Iterable[Message]:
        body = self._ctx.read(rel)
        if body is None:
            return
        sid = rel[len(SESSIONS_DIR) + 1 : -len(".jsonl")]
        for n, line in enumerate(body.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                yield Message(role=str(data["role"]), content=str(data["content"]), time=str(data.get("time", "")),
                              turn=None if data.get("turn") is None else str(data["turn"]), session=sid,
                              trust=str(data.get("trust", "trusted")))
            except (ValueError, KeyError, TypeError):
                log.warning("%s line %d is not a message; skipping it", rel, n)

    def search(
        self,
        query: str = "",
        session: str | None = None,
        roles: Sequence[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = 10,
        *,
        include_quarantined: bool = False,
    ) -> list[MemoryHit]:
        """Old messages matching ``query`` (all sessions unless one is named), best first."""
        check_text(query, "query", fix="pass a few words, or '' for the newest messages", error=ContentError)
        limit = max(1, check_int(limit, "limit", fix="pass how many messages to return, e.g. 10"))
        start, end = parse_time(since, "since"), parse_time(until, "until")
        if roles is not None:
            roles = check_strings(roles, "roles", fix=f"pass some of {', '.join(ROLES)}", error=ContentError)
            bad = [r for r in roles if r not in ROLES]
            if bad:
                raise ContentError(f"role {bad[0]!r} is not accepted; use some of {', '.join(ROLES)}")
        logs = [self.path(session)] if session else [p for p in self._ctx.list(SESSIONS_DIR) if p.endswith(".jsonl")]
        pool: list[tuple[Message, str, int]] = []
        for rel in logs:
            for i, m in enumerate(self._read(rel)):
                if roles is not None and m.role not in roles:
                    continue
                if m.trust == "quarantined" and not include_quarantined:
                    continue
                if start or end:
                    t = parse_time(m.time, "time") if m.time else None
                    if t is None or (start and t < start) or (end and t > end):
                        continue
                pool.append((m, rel, i))
        scores = bm25([m.content for m, _, _ in pool], query) if query.strip() else [0.0] * len(pool)
        ranked = [(s, m, rel, i) for s, (m, rel, i) in zip(scores, pool, strict=True) if s > 0 or not query.strip()]
        ranked.sort(key=lambda r: (-round(r[0], 6), newest_first(r[1].time), r[2], -r[3]))
        return [
            MemoryHit(path=f"{rel}#L{i + 1}", text=m.content, score=s, source=m.source, session=m.session,
                      turn=m.turn, updated=m.time, tags=(), trust=m.trust, role=m.role)
            for s, m, rel, i in ranked[:limit]
        ]
