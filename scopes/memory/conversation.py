"""Conversation (recall) memory: ``sessions/<session>.jsonl``, one JSON object per message.

The log is a record of what was said, so it never refuses a line: a message the
poisoning guard flags is logged marked ``untrusted`` (policy ``tag``) or
``quarantined``, and recall fences or hides it. Each message has a role, an optional
named speaker ("Caroline") and a time (now, or the time a transcript gives).

Search goes through the search index, which holds every message of every log as its own
document (:mod:`contextfs.turns`): the same BM25F ranking, stop words and stems as
``ctx.search``, filtered by session, role, speaker and time; newest first on ties.

One bad log never breaks recall: a log that cannot be read (not UTF-8, say) and a line
that is not a message are left out, logged as warnings, and listed in the result's
``skipped`` (:class:`~.records.MemoryHits`), as views list unreadable files in ``dropped``.
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from contextfs import clock
from contextfs.errors import ContentError, ContextFSError
from contextfs.manager import ContextManager
from contextfs.poisoning import assess
from contextfs.turns import LOG_SUFFIX, read_turns, session_of, turn_at

from ..arguments import check_int, check_strings, check_text
from ..packing import DroppedItem
from .records import (
    ROLES,
    SESSIONS_DIR,
    MemoryHit,
    MemoryHits,
    MemorySettings,
    Message,
    parse_time,
    provenance,
)

__all__ = ["ConversationLog", "check_speaker"]

log = logging.getLogger(__name__)

_SPEAKER = re.compile(r"^[^\x00-\x1f\x7f:]{1,64}\Z")
_SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")


def check_speaker(speaker: object) -> str | None:
    """A speaker's name (1-64 characters, one line, no ':'), or None; ContentError otherwise."""
    if speaker is None:
        return None
    if not isinstance(speaker, str) or not _SPEAKER.match(speaker.strip() or "\n"):
        raise ContentError(f"speaker {speaker!r} is not accepted; use a name of 1-64 characters on one line, "
                           "without ':' (e.g. 'Caroline')")
    return speaker.strip()


@lru_cache(maxsize=256)
def _bad_lines(text: str) -> tuple[int, ...]:
    """The lines of a log's text that are not messages (kept: every search re-reads its hits' logs)."""
    return tuple(read_turns(text)[1])


def _iso(value: datetime | str | None, name: str) -> str:
    """A message time as ISO-8601 UTC with a 'Z' (now when None)."""
    if value is None:
        return clock.iso()
    moment = parse_time(value, name)
    assert moment is not None
    return clock.iso(moment)


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
        return f"{SESSIONS_DIR}/{sid}{LOG_SUFFIX}"

    def make_message(self, role: str, content: str, *, speaker: str | None = None,
                     time: datetime | str | None = None, data: Mapping[str, Any] | None = None) -> Message:
        """A message stamped with the current session and turn, and ``time`` (default now); not yet logged.

        ``data`` is the message as an agent framework holds it (a JSON-able mapping), kept
        in the log line so the framework can rebuild the message exactly.
        """
        if role not in ROLES:
            raise ContentError(f"role {role!r} is not accepted; use one of {', '.join(ROLES)} "
                               "(name the person with speaker=...)")
        if not isinstance(content, str):
            raise ContentError(f"message content must be a string, got {type(content).__name__}; pass text")
        name = check_speaker(speaker)
        stamp = _iso(time, "time")
        verdict = assess(content)
        # The log is a record of what was said, so it never refuses a line; flagged lines
        # are marked so recall fences them (or, under refuse/quarantine, hides them).
        trust = "trusted" if not verdict.suspicious else ("untrusted" if self._settings.policy == "tag" else "quarantined")
        if data is not None:
            if not isinstance(data, Mapping):
                raise ContentError(f"message data must be a mapping, got {type(data).__name__}; pass a dict or None")
            try:
                json.dumps(data, ensure_ascii=False)
            except (TypeError, ValueError) as exc:
                raise ContentError(f"message data cannot be stored as JSON ({exc}); pass plain dicts, lists, "
                                   "strings and numbers") from None
        session, turn, _ = provenance(self._ctx)
        return Message(role=role, content=content, time=stamp, turn=turn, session=session, trust=trust, speaker=name,
                       data=dict(data) if data else None)

    def append(self, messages: Sequence[Message]) -> None:
        """Append messages to their sessions' logs (call inside a transaction to batch)."""
        by_path: dict[str, list[str]] = defaultdict(list)
        for m in messages:
            by_path[self.path(m.session)].append(m.to_json() + "\n")
        with self._ctx.library_write():  # the logs are this layer's own
            for rel, lines in by_path.items():
                self._ctx.append(rel, "".join(lines))

    def log(self, role: str, content: str, *, speaker: str | None = None, time: datetime | str | None = None) -> Message:
        """Append one message to this session's log (one commit)."""
        msg = self.make_message(role, content, speaker=speaker, time=time)
        with self._ctx.transaction(f"memory: log {self.path()}", op="memory-log", trailers={"Contextfs-Memory": "recall"}):
            self.append([msg])
        return msg

    def import_transcript(self, turns: Iterable[Mapping[str, Any] | Sequence[Any]], *, session: str,
                          roles: Mapping[str, str] | None = None, default_role: str = "user") -> list[Message]:
        """Log an existing conversation: each turn with its speaker, text and time, in one commit.

        A turn is a mapping with ``text`` (or ``content``), ``speaker`` and ``time`` (ISO
        string or datetime; optional ``role``), or a ``(speaker, text, time)`` tuple.
        ``roles`` maps speaker names to roles (default ``default_role``). Each message's
        ``turn`` is its number in the transcript, so citations point at it.
        """
        if not isinstance(session, str) or not _SESSION.match(session):
            raise ContentError(f"session {session!r} is not accepted; use 1-128 letters, digits and . _ - "
                               "(e.g. 'session-2023-05-08')")
        roles = dict(roles or {})
        msgs: list[Message] = []
        with self._ctx.provenance(session=session):
            for n, raw in enumerate(turns, 1):
                if isinstance(raw, Mapping):
                    speaker, text, when = raw.get("speaker"), raw.get("text", raw.get("content")), raw.get("time")
                    role = raw.get("role") or roles.get(str(speaker), default_role)
                elif isinstance(raw, Sequence) and not isinstance(raw, str) and len(raw) == 3:
                    speaker, text, when = raw
                    role = roles.get(str(speaker), default_role)
                else:
                    raise ContentError(f"turn {n} of the transcript is not accepted; pass a mapping with "
                                       "speaker, text and time, or a (speaker, text, time) tuple")
                with self._ctx.provenance(turn=n):
                    msgs.append(self.make_message(str(role), text, speaker=speaker, time=when))
            if msgs:
                with self._ctx.transaction(f"memory: import {len(msgs)} message(s) into {self.path()}",
                                           op="memory-import", trailers={"Contextfs-Memory": "recall"}):
                    self.append(msgs)
        return msgs

    def messages(self, session: str | None = None) -> list[Message]:
        """Every logged message of one session (default: the current one), oldest first."""
        return list(self._read(self.path(session)))

    def sessions(self) -> list[str]:
        """The sessions that have a log, oldest last message first (unreadable logs are logged and left out)."""
        out = []
        for rel in self._ctx.list(SESSIONS_DIR):
            if rel.endswith(LOG_SUFFIX) and rel.count("/") == 1:
                try:
                    msgs = list(self._read(rel))
                except ContextFSError as exc:
                    log.warning("leaving out the conversation log %s: %s", rel, exc)
                    continue
                out.append((msgs[-1].time if msgs else "", session_of(rel)))
        return [sid for _time, sid in sorted(out)]

    def _read(self, rel: str) -> Iterable[Message]:
        body = self._ctx.read(rel)
        if body is None:
            return
        sid = session_of(rel)
        turns, bad = read_turns(body)
        for n in bad:
            log.warning("%s line %d is not a message; skipping it", rel, n)
        for t in turns:
            yield Message(role=t.role, content=t.content, time=t.time, turn=t.turn, session=sid, trust=t.trust,
                          speaker=t.speaker, data=t.data)

    def search(
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

        Logs that cannot be read, and lines that are not messages, of the logs the hits
        come from are left out and listed in the result's ``skipped``.
        """
        check_text(query, "query", fix="pass a few words, or '' for the newest messages", error=ContentError)
        limit = max(1, check_int(limit, "limit", fix="pass how many messages to return, e.g. 10"))
        start, end = parse_time(since, "since"), parse_time(until, "until")
        filters: dict[str, Any] = {"trust": ["trusted", "untrusted", "quarantined"] if include_quarantined
                                   else ["trusted", "untrusted"]}
        if roles is not None:
            roles = check_strings(roles, "roles", fix=f"pass some of {', '.join(ROLES)}", error=ContentError)
            bad = [r for r in roles if r not in ROLES]
            if bad:
                raise ContentError(f"role {bad[0]!r} is not accepted; use some of {', '.join(ROLES)}")
            filters["role"] = list(roles)
        if speakers is not None:
            filters["speaker"] = [check_speaker(s) for s in
                                  check_strings(speakers, "speakers", fix="pass names like ['Caroline']", error=ContentError)]
        if start is not None:
            filters["since"] = start
        if end is not None:
            filters["until"] = end
        where = self.path(session) if session else SESSIONS_DIR
        words = " ".join(query.split())[:1900]
        hits = self._ctx.search(words or "*", path=where, limit=min(1000, limit + 10), **filters)
        texts: dict[str, str | None] = {}
        skipped: list[DroppedItem] = []
        out: list[MemoryHit] = []
        for hit in hits:
            if hit.line is None:
                continue  # a summary or other file under sessions/
            if hit.path not in texts:
                texts[hit.path] = self._readable(hit.path, skipped)
            body = texts[hit.path]
            turn = turn_at(body, hit.line) if body is not None else None
            if turn is None:
                continue
            sid = session_of(hit.path)
            msg = Message(role=turn.role, content=turn.content, time=turn.time, turn=turn.turn, session=sid,
                          trust=turn.trust, speaker=turn.speaker)
            out.append(MemoryHit(path=f"{hit.path}#L{turn.line}", text=turn.content, score=float(hit.score),
                                 source=msg.source, session=sid, turn=turn.turn, updated=turn.time or None, tags=(),
                                 trust=turn.trust, role=turn.role, speaker=turn.speaker))
        # The index's order already puts the newest message first among equal scores
        # (contextfs.text.tie_order); sorting again here would make the first hits depend on the limit.
        return MemoryHits(out[:limit], skipped)

    def _readable(self, rel: str, skipped: list[DroppedItem]) -> str | None:
        """A log's text for recall, or None when it cannot be read; what is left out goes to ``skipped``."""
        try:
            text = self._ctx.read(rel)
        except ContextFSError as exc:
            log.warning("leaving out the conversation log %s: %s", rel, exc)
            skipped.append(DroppedItem(rel, f"unreadable: {exc}"))
            return None
        if text is not None:
            for n in _bad_lines(text):
                log.warning("%s line %d is not a message; leaving it out", rel, n)
                skipped.append(DroppedItem(f"{rel}#L{n}", "not a message: fix or delete the line"))
        return text
