"""Memory tiers on files (the MemGPT pattern): core, archival and conversation memory.

* **Core memory** is a few small blocks, ``memory/core/<label>.md``, pinned into every
  scope. Each has a token ``limit`` in its frontmatter (default 500); a write that would
  exceed it raises :class:`MemoryLimitError` saying by how much. Nothing is cut silently,
  because a fact that quietly vanishes from the prompt is worse than a refused write.
* **Archival memory** is one note per file under ``memory/archive/``. Inserting a fact
  that is already there (exactly, or nearly: same words give or take a few) returns the
  existing note instead of storing it twice. Search ranks through the Whoosh index (BM25,
  so rare words count more than common ones) with recency breaking ties. Notes are never
  deleted to be forgotten: they are *invalidated* or *superseded* in their frontmatter,
  which keeps them in history and out of search.
* **Conversation (recall) memory** is ``sessions/<session>.jsonl``, one JSON object per
  message. :class:`~contextfs.scopes.buffer.ConversationBuffer` holds the recent window.

Every write records its source (session and turn) from the manager's provenance, never
from the text, and every recalled fact comes back with it. Text that reads as an
instruction to the agent goes through :mod:`contextfs.scopes.poisoning`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from contextfs import clock
from contextfs.errors import (
    ConfigError,
    ConflictError,
    ContentError,
    ContextFSError,
    InvalidPathError,
    MemoryLimitError,
    NotFoundError,
)
from contextfs.manager import ContextManager
from contextfs.paths import slugify
from contextfs.tokens import get_counter

from .poisoning import (
    Verdict,
    apply_policy,
    assess,
    check_policy,
    policy_from_config,
    render_memory,
    trust_of,
)

__all__ = [
    "ARCHIVE_DIR",
    "CORE_DIR",
    "DEFAULT_CORE_LIMIT",
    "SESSIONS_DIR",
    "ArchivalNote",
    "CoreBlock",
    "Memory",
    "MemoryHit",
    "Message",
    "fingerprint",
    "word_set",
]

log = logging.getLogger(__name__)

CORE_DIR = "memory/core"
ARCHIVE_DIR = "memory/archive"
SESSIONS_DIR = "sessions"
DEFAULT_CORE_LIMIT = 500
DEFAULT_NEAR_DUPLICATE = 0.85
ROLES = ("user", "assistant", "system", "tool")
#: Archival note states; only ``active`` notes are searched by default.
STATUSES = ("active", "invalidated", "superseded")

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NEGATIONS = frozenset({"not", "no", "never", "nor", "without", "isn", "aren", "wasn", "don", "doesn", "didn", "won", "cannot"})
_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "i", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with"]
)


# ---------------------------------------------------------------- records
@dataclass(frozen=True)
class CoreBlock:
    """One pinned core block as it is now (after the call that returned it)."""

    label: str
    path: str
    text: str
    limit: int
    tokens: int
    trust: str = "trusted"
    verdict: Verdict = field(default_factory=lambda: Verdict(False, ()))
    #: Under the ``quarantine`` policy, suspicious text goes to this archival note instead.
    quarantined_to: str | None = None

    @property
    def remaining(self) -> int:
        return self.limit - self.tokens


@dataclass(frozen=True)
class ArchivalNote:
    """One archival note; ``duplicate`` is True when an insert returned an existing note."""

    path: str
    text: str
    tags: tuple[str, ...]
    trust: str
    status: str
    source: str
    session: str | None
    turn: str | None
    created: str | None
    verdict: Verdict = field(default_factory=lambda: Verdict(False, ()))
    duplicate: bool = False


@dataclass(frozen=True)
class MemoryHit:
    """A recalled fact with where it came from; ``rendered`` is what goes into a prompt."""

    path: str
    text: str
    score: float
    source: str
    session: str | None
    turn: str | None
    updated: str | None
    tags: tuple[str, ...]
    trust: str
    status: str = "active"
    role: str | None = None  # set for conversation hits

    @property
    def rendered(self) -> str:
        """Trusted text with its source cited; anything else fenced as quoted data."""
        return render_memory(self.text, f"{self.source}, {self.path}", self.trust)


@dataclass(frozen=True)
class Message:
    """One line of a conversation log."""

    role: str
    content: str
    time: str
    turn: str | None = None
    session: str | None = None
    trust: str = "trusted"

    def to_json(self) -> str:
        data: dict[str, Any] = {"role": self.role, "content": self.content, "time": self.time, "turn": self.turn}
        if self.trust != "trusted":
            data["trust"] = self.trust
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    @property
    def source(self) -> str:
        return _source(self.session, self.turn)

    def render(self) -> str:
        """The message as one prompt line (untrusted content is fenced)."""
        if self.trust == "trusted":
            return f"{self.role}: {self.content}"
        return f"{self.role}: " + render_memory(self.content, self.source, self.trust)


# ---------------------------------------------------------------- text helpers
def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def word_set(text: str) -> frozenset[str]:
    """The distinct words of ``text``, case- and width-folded (for near-duplicate checks)."""
    return frozenset(_WORD.findall(_norm(text)))


def fingerprint(text: str) -> str:
    """A hash of the words in order, so case, punctuation and spacing do not matter."""
    words = " ".join(_WORD.findall(_norm(text)))
    return hashlib.sha1(words.encode("utf-8")).hexdigest()[:20]


def _guarded_words(words: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    # Numbers and negations change a fact's meaning while barely moving Jaccard, so two
    # notes only count as near duplicates when these agree exactly.
    numbers = frozenset(w for w in words if any(ch.isdigit() for ch in w))
    return numbers, words & _NEGATIONS


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _hash_order(word: str) -> bytes:
    return hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()


def _source(session: str | None, turn: object) -> str:
    out = f"session:{session or 'unknown'}"
    return out + (f" turn:{turn}" if turn not in (None, "") else "")


def _tags(tags: Iterable[str] | None) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str):
        tags = [tags]
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise ContentError(f"tags must be strings, got {type(tag).__name__}; pass e.g. ['profile', 'offer']")
        norm = "-".join(tag.strip().lower().split())
        if not _TAG.match(norm):
            raise ContentError(f"tag {tag!r} is not accepted; use 1-64 lowercase letters, digits and . _ -")
        if norm not in out:
            out.append(norm)
    return tuple(out)


def _when(value: datetime | str | None, name: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ContentError(f"{name}={value!r} is not an ISO-8601 time; pass e.g. '2026-10-02T09:00:00Z'") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _int_option(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}; fix it in [memory] of config.toml")
    return value


# ---------------------------------------------------------------- the façade
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
        section = ctx.config.get("memory", {})
        if not isinstance(section, Mapping):
            raise ConfigError("[memory] in config.toml must be a table; write it as [memory] with key = value lines")
        self.policy = check_policy(policy) if policy is not None else policy_from_config(ctx.config)
        self.core_limit = _int_option(core_limit if core_limit is not None else section.get("core_limit", DEFAULT_CORE_LIMIT), "core_limit", 1)
        near = near_duplicate if near_duplicate is not None else section.get("near_duplicate", DEFAULT_NEAR_DUPLICATE)
        if isinstance(near, bool) or not isinstance(near, (int, float)) or not 0 < near <= 1:
            raise ConfigError(f"near_duplicate must be a number in (0, 1], got {near!r}; fix it in [memory] of config.toml")
        self.near_duplicate = float(near)
        self.counter = get_counter(encoding or section.get("encoding"))
        # Dedupe cache over the archive: derived from the files, refreshed by a listener.
        self._notes: dict[str, tuple[str, frozenset[str], str]] | None = None
        self._by_fp: dict[str, set[str]] = defaultdict(set)
        self._by_word: dict[str, set[str]] = defaultdict(set)
        ctx.add_listener(self._on_change)

    # ------------------------------------------------------------ provenance
    def _prov(self) -> tuple[str | None, str | None, str]:
        prov = self.ctx.current_provenance
        return prov.session, prov.turn, _source(prov.session, prov.turn)

    # ------------------------------------------------------------ core memory
    def _core_path(self, label: str) -> str:
        if not isinstance(label, str) or not _LABEL.match(label):
            raise InvalidPathError(
                f"core block label {label!r} is not accepted; use 1-64 letters, digits, '_' or '-', e.g. 'user_profile'"
            )
        return f"{CORE_DIR}/{label}.md"

    def _limit_of(self, meta: Mapping[str, Any], path: str) -> int:
        value = meta.get("limit", self.core_limit)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise MemoryLimitError(f"{path} has limit {value!r} in its frontmatter; set 'limit' to a positive number of tokens")
        return value

    def _block(self, label: str, path: str, body: str, meta: Mapping[str, Any], verdict: Verdict | None = None,
               quarantined_to: str | None = None) -> CoreBlock:
        return CoreBlock(label=label, path=path, text=body, limit=self._limit_of(meta, path),
                         tokens=self.counter.count(body), trust=trust_of(meta),
                         verdict=verdict or Verdict(False, ()), quarantined_to=quarantined_to)

    def core_blocks(self) -> list[CoreBlock]:
        """Every core block, by label."""
        out = []
        for rel in self.ctx.list(CORE_DIR):
            if rel.endswith(".md") and rel.count("/") == 2:
                doc = self.ctx.get(rel)
                out.append(self._block(rel.rsplit("/", 1)[1][:-3], rel, doc.body, doc.metadata))
        return out

    def core(self, section: str) -> CoreBlock:
        """One core block (NotFoundError when it does not exist yet)."""
        path = self._core_path(section)
        doc = self.ctx.get(path)
        return self._block(section, path, doc.body, doc.metadata)

    def _write_core(self, section: str, new_text: str, make_body: Any, op: str) -> CoreBlock:
        path = self._core_path(section)
        if not isinstance(new_text, str):
            raise ContentError(f"core memory text must be a string, got {type(new_text).__name__}; pass text")
        verdict = assess(new_text)
        trust = apply_policy(verdict, self.policy, what=f"text for core block {section!r}")
        if trust == "quarantined":
            # A pinned block is read on every turn; quarantined text must never reach it.
            note = self.archival_memory_insert(new_text, tags=["quarantined-core", section.lower()])
            log.warning("quarantined text meant for core block %s in %s", section, note.path)
            try:
                current = self.core(section)
            except NotFoundError:
                current = CoreBlock(section, path, "", self.core_limit, 0)
            return dataclasses.replace(current, verdict=verdict, quarantined_to=note.path)
        with self.ctx.transaction(f"memory: core {op} {section}", op=f"memory-core-{op}",
                                  trailers={"Contextfs-Memory": "core"}):
            old = self.ctx.get(path) if self.ctx.exists(path) else None
            meta: dict[str, Any] = dict(old.metadata) if old else {
                "title": section.replace("_", " ").replace("-", " ").capitalize(),
                "tags": ["core", "pinned"],
                "limit": self.core_limit,
            }
            body = make_body(old.body if old else "")
            limit = self._limit_of(meta, path)
            tokens = self.counter.count(body)
            if tokens > limit:
                raise MemoryLimitError(
                    f"core block {section!r} would be {tokens} tokens, {tokens - limit} over its limit of {limit}; "
                    "shorten the text, move detail to archival memory (archival_memory_insert), "
                    f"or raise 'limit' in {path}"
                )
            whole = assess(body)
            meta["trust"] = "untrusted" if whole.suspicious else "trusted"
            if whole.suspicious:
                meta["flagged"] = list(whole.reasons)
            else:
                meta.pop("flagged", None)
            meta["source"] = self._prov()[2]
            meta = {k: v for k, v in meta.items() if k not in ("created", "updated", "author", "session", "turn")}
            self.ctx.write(path, body, meta, expected_version=old.version if old else None)
        doc = self.ctx.get(path)
        return self._block(section, path, doc.body, doc.metadata, verdict)

    def core_memory_append(self, section: str, text: str) -> CoreBlock:
        """Pin ``text`` as a new line of a core block (creating the block if needed)."""
        def body(old: str) -> str:
            if not old.strip():
                return text.rstrip("\n") + "\n"
            return old.rstrip("\n") + "\n" + text.rstrip("\n") + "\n"
        return self._write_core(section, text, body, "append")

    def core_memory_replace(self, section: str, old: str, new: str) -> CoreBlock:
        """Replace ``old`` with ``new`` in a core block; ``old`` must occur exactly once."""
        if not isinstance(old, str) or not old:
            raise ContentError("core_memory_replace needs the exact old text; quote it from the block")
        path = self._core_path(section)
        if not self.ctx.exists(path):
            raise NotFoundError(f"core block {section!r} does not exist; create it with core_memory_append", path=path)

        def body(current: str) -> str:
            count = current.count(old)
            if count != 1:
                how = "does not occur" if count == 0 else f"occurs {count} times"
                raise ConflictError(f"the text to replace {how} in core block {section!r}; quote a longer, unique passage")
            return current.replace(old, new, 1)
        return self._write_core(section, new, body, "replace")

    def core_memory_rethink(self, section: str, text: str) -> CoreBlock:
        """Rewrite a core block as a whole (the old version stays in git history)."""
        return self._write_core(section, text, lambda _old: text.rstrip("\n") + "\n", "rethink")

    # ------------------------------------------------------------ archive: dedupe cache
    def _on_change(self, changed: list[str]) -> None:
        if self._notes is None:
            return
        for rel in changed:
            if rel.startswith(ARCHIVE_DIR + "/") and rel.endswith(".md"):
                self._forget(rel)
                self._remember(rel)

    def _forget(self, rel: str) -> None:
        assert self._notes is not None
        entry = self._notes.pop(rel, None)
        if entry is None:
            return
        fp, words, _status = entry
        self._by_fp[fp].discard(rel)
        for w in words:
            self._by_word[w].discard(rel)

    def _remember(self, rel: str) -> None:
        assert self._notes is not None
        try:
            doc = self.ctx.get(rel)
        except ContextFSError:
            return  # gone (deleted or moved) or unreadable: nothing to dedupe against
        status = str(doc.metadata.get("status", "active"))
        words = word_set(doc.body)
        fp = str(doc.metadata.get("fingerprint") or fingerprint(doc.body))
        self._notes[rel] = (fp, words, status)
        self._by_fp[fp].add(rel)
        for w in words:
            self._by_word[w].add(rel)

    def _refresh(self, rel: str) -> None:
        # Inside a transaction the listener fires only at commit; update the cache now so
        # a second insert in the same transaction already sees this note.
        if self._notes is not None:
            self._forget(rel)
            self._remember(rel)

    def _load_notes(self) -> None:
        if self._notes is not None:
            return
        self._notes = {}
        for rel in self.ctx.list(ARCHIVE_DIR):
            if rel.endswith(".md"):
                self._remember(rel)

    def _live(self, rel: str, ignore: str | None) -> bool:
        assert self._notes is not None
        if rel == ignore or self._notes[rel][2] != "active":
            return False
        if not self.ctx.exists(rel):  # a rolled-back transaction or an outside delete
            self._forget(rel)
            return False
        return True

    def find_duplicate(self, text: str, *, ignore: str | None = None) -> str | None:
        """The path of an active note saying the same thing as ``text``, if any."""
        self._load_notes()
        assert self._notes is not None
        fp = fingerprint(text)
        for rel in sorted(self._by_fp.get(fp, set()).copy()):
            if self._live(rel, ignore):
                return rel
        words = word_set(text)
        if not words:
            return None
        # Prefix filtering: two sets with Jaccard >= t must share one of the first
        # |A| - ceil(t*|A|) + 1 words of A under any fixed global order.
        order = sorted(words, key=_hash_order)
        prefix = order[: len(words) - math.ceil(self.near_duplicate * len(words)) + 1]
        candidates: set[str] = set()
        for w in prefix:
            candidates |= self._by_word.get(w, set())
        guard = _guarded_words(words)
        best: tuple[float, str] | None = None
        for rel in sorted(candidates):
            if rel not in self._notes:
                continue
            other = self._notes[rel][1]
            if _guarded_words(other) != guard or not self._live(rel, ignore):
                continue
            score = _jaccard(words, other)
            if score >= self.near_duplicate and (best is None or (score, rel) > best):
                best = (score, rel)
        return best[1] if best else None

    # ------------------------------------------------------------ archive: notes
    def _note(self, rel: str, *, duplicate: bool = False, verdict: Verdict | None = None) -> ArchivalNote:
        doc = self.ctx.get(rel)
        meta = doc.metadata
        tags = meta.get("tags") or []
        return ArchivalNote(
            path=rel,
            text=doc.body.rstrip("\n"),
            tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (str(tags),),
            trust=trust_of(meta),
            status=str(meta.get("status", "active")),
            source=str(meta.get("source") or _source(meta.get("session"), meta.get("turn"))),
            session=meta.get("session"),
            turn=None if meta.get("turn") is None else str(meta.get("turn")),
            created=meta.get("created"),
            verdict=verdict if verdict is not None else Verdict(bool(meta.get("flagged")), tuple(meta.get("flagged") or ())),
            duplicate=duplicate,
        )

    def note(self, path: str) -> ArchivalNote:
        """Read one archival note with its provenance."""
        return self._note(self._archive_path(path))

    def _archive_path(self, path: str) -> str:
        if not isinstance(path, str) or not path.startswith(ARCHIVE_DIR + "/") or not path.endswith(".md"):
            raise InvalidPathError(f"{path!r} is not an archival note; pass a path like '{ARCHIVE_DIR}/<note>.md'")
        if not self.ctx.exists(path):
            raise NotFoundError(f"{path} does not exist; find notes with archival_memory_search", path=path)
        return path

    def _new_note_path(self, text: str, fp: str) -> str:
        day = clock.now().strftime("%Y-%m-%d")
        slug = slugify(text, words=6, default="note")
        return self.ctx.free_path(f"{ARCHIVE_DIR}/{day}-{slug}-{fp[:6]}")

    def archival_memory_insert(self, text: str, tags: Sequence[str] | None = None, *,
                               extra: Mapping[str, Any] | None = None, replacing: str | None = None) -> ArchivalNote:
        """Store one fact as its own note; an exact or near duplicate returns the existing note.

        The returned note's ``verdict`` reports whether the poisoning guard flagged it and
        ``trust`` what was stored (``untrusted``/``quarantined`` for flagged text).
        """
        if not isinstance(text, str) or not text.strip():
            raise ContentError("archival_memory_insert needs non-empty text; pass the fact to remember")
        tag_list = _tags(tags)
        verdict = assess(text)
        trust = apply_policy(verdict, self.policy, what="the archival note")
        existing = self.find_duplicate(text, ignore=replacing)
        if existing is not None:
            log.info("not storing a duplicate of %s", existing)
            return self._note(existing, duplicate=True, verdict=verdict)
        fp = fingerprint(text)
        session, turn, source = self._prov()
        meta: dict[str, Any] = {"tags": list(tag_list), "trust": trust, "source": source, "status": "active", "fingerprint": fp}
        if verdict.suspicious:
            meta["flagged"] = list(verdict.reasons)
        meta.update({k: v for k, v in (extra or {}).items() if k not in meta})
        rel = self._new_note_path(text, fp)
        with self.ctx.transaction(f"memory: archive {rel}", op="memory-archive", trailers={"Contextfs-Memory": "archive"}):
            self.ctx.create(rel, text.strip("\n") + "\n", meta)
            self._refresh(rel)
        return self._note(rel, verdict=verdict)

    def invalidate(self, path: str, reason: str | None = None) -> ArchivalNote:
        """Mark a note as no longer true: kept in the file and history, left out of search."""
        rel = self._archive_path(path)
        changes: dict[str, Any] = {"status": "invalidated", "invalidated_at": clock.iso()}
        if reason:
            changes["invalid_reason"] = " ".join(str(reason).split())[:300]
        with self.ctx.transaction(f"memory: invalidate {rel}", op="memory-invalidate", trailers={"Contextfs-Memory": "archive"}):
            self.ctx.update_metadata(rel, changes)
            self._refresh(rel)
        return self._note(rel)

    def supersede(self, path: str, text: str, tags: Sequence[str] | None = None) -> ArchivalNote:
        """Replace a note with a new one; the old note points to it and leaves search."""
        rel = self._archive_path(path)
        old = self._note(rel)
        with self.ctx.transaction(f"memory: supersede {rel}", op="memory-supersede", trailers={"Contextfs-Memory": "archive"}):
            # Retire the old note first so the new one is not returned as its near duplicate.
            self.ctx.update_metadata(rel, {"status": "superseded", "superseded_at": clock.iso()})
            self._refresh(rel)
            new = self.archival_memory_insert(text, tags if tags is not None else old.tags,
                                              extra={"supersedes": rel}, replacing=rel)
            self.ctx.update_metadata(rel, {"superseded_by": new.path})
        return new

    # ------------------------------------------------------------ archive: search
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

        Ranking is the index's BM25 score (rare words weigh more); equal scores go to the
        most recently updated note. Invalidated, superseded and quarantined notes are left
        out unless asked for.
        """
        # Plain words only: an agent's question must not turn into query syntax (AND, tag:, "...").
        words = " ".join(_WORD.findall(_norm(query))) if isinstance(query, str) else ""
        if not words:
            raise ContentError("archival_memory_search needs a query; pass a few words about the fact you need")
        top_k = max(1, int(top_k))
        filters: dict[str, Any] = {}
        tag_list = _tags(tags)
        if tag_list:
            filters["tags"] = list(tag_list)
        limit = top_k + 5
        while True:
            raw = self.ctx.search(words, path=ARCHIVE_DIR, limit=limit, **filters)
            hits: list[MemoryHit] = []
            for hit in raw:
                # Reading frontmatter is the costly part: stop once top_k are kept and the
                # next score is lower (equal scores are still read, for the recency tie-break).
                if len(hits) >= top_k and round(float(hit.score), 6) < round(hits[top_k - 1].score, 6):
                    break
                if hit.trust == "quarantined" and not include_quarantined:
                    continue  # the index knows trust; no need to open the file
                try:
                    doc = self.ctx.get(hit.path)
                except NotFoundError:
                    continue  # the index is behind a delete; files are the truth
                meta = doc.metadata
                status = str(meta.get("status", "active"))
                trust = trust_of(meta)
                if status != "active" and not include_inactive:
                    continue
                if trust == "quarantined" and not include_quarantined:
                    continue
                hits.append(self._hit(hit.path, doc.body, float(hit.score), meta))
            if len(hits) >= top_k or len(raw) < limit or limit >= 1000:
                break
            limit *= 4
        hits.sort(key=lambda h: (-round(h.score, 6), _neg_time(h.updated), h.path))
        return hits[:top_k]

    @staticmethod
    def _hit(rel: str, body: str, score: float, meta: Mapping[str, Any]) -> MemoryHit:
        tags = meta.get("tags") or []
        return MemoryHit(
            path=rel,
            text=body.strip("\n"),
            score=score,
            source=str(meta.get("source") or _source(meta.get("session"), meta.get("turn"))),
            session=meta.get("session"),
            turn=None if meta.get("turn") is None else str(meta.get("turn")),
            updated=meta.get("updated") or meta.get("created"),
            tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (str(tags),),
            trust=trust_of(meta),
            status=str(meta.get("status", "active")),
        )

    # ------------------------------------------------------------ conversation log
    def log_path(self, session: str | None = None) -> str:
        sid = session or self.ctx.current_provenance.session
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
        trust = "trusted" if not verdict.suspicious else ("untrusted" if self.policy == "tag" else "quarantined")
        session, turn, _ = self._prov()
        return Message(role=role, content=content, time=clock.iso(), turn=turn, session=session, trust=trust)

    def log_messages(self, messages: Sequence[Message]) -> None:
        """Append messages to their sessions' logs (call inside a transaction to batch)."""
        by_path: dict[str, list[str]] = defaultdict(list)
        for m in messages:
            by_path[self.log_path(m.session)].append(m.to_json() + "\n")
        for rel, lines in by_path.items():
            self.ctx.append(rel, "".join(lines))

    def log_message(self, role: str, content: str) -> Message:
        """Append one message to this session's log (one commit)."""
        msg = self.make_message(role, content)
        with self.ctx.transaction(f"memory: log {self.log_path()}", op="memory-log", trailers={"Contextfs-Memory": "recall"}):
            self.log_messages([msg])
        return msg

    def messages(self, session: str | None = None) -> list[Message]:
        """Every logged message of one session (default: the current one), oldest first."""
        return list(self._read_log(self.log_path(session)))

    def _read_log(self, rel: str) -> Iterable[Message]:
        body = self.ctx.read(rel)
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

    def conversation_search(
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
        """Old messages matching ``query`` (all sessions unless one is named), best first.

        Scored with BM25 over the messages that pass the filters, so rare words count more;
        newer messages win ties. An empty query lists the newest matching messages.
        """
        start, end = _when(since, "since"), _when(until, "until")
        if roles is not None:
            roles = [roles] if isinstance(roles, str) else list(roles)
            bad = [r for r in roles if r not in ROLES]
            if bad:
                raise ContentError(f"role {bad[0]!r} is not accepted; use some of {', '.join(ROLES)}")
        logs = [self.log_path(session)] if session else [p for p in self.ctx.list(SESSIONS_DIR) if p.endswith(".jsonl")]
        pool: list[tuple[Message, str, int]] = []
        for rel in logs:
            for i, m in enumerate(self._read_log(rel)):
                if roles is not None and m.role not in roles:
                    continue
                if m.trust == "quarantined" and not include_quarantined:
                    continue
                if start or end:
                    t = _when(m.time, "time") if m.time else None
                    if t is None or (start and t < start) or (end and t > end):
                        continue
                pool.append((m, rel, i))
        scores = _bm25([m.content for m, _, _ in pool], query) if query.strip() else [0.0] * len(pool)
        ranked = [(s, m, rel, i) for s, (m, rel, i) in zip(scores, pool, strict=True) if s > 0 or not query.strip()]
        ranked.sort(key=lambda r: (-round(r[0], 6), _neg_time(r[1].time), r[2], -r[3]))
        return [
            MemoryHit(path=f"{rel}#L{i + 1}", text=m.content, score=s, source=m.source, session=m.session,
                      turn=m.turn, updated=m.time, tags=(), trust=m.trust, role=m.role)
            for s, m, rel, i in ranked[: max(1, int(limit))]
        ]


def _neg_time(value: str | None) -> float:
    """Sort key putting newer times first; unknown times last."""
    if not value:
        return math.inf
    try:
        return -_when(value, "time").timestamp()  # type: ignore[union-attr]
    except ContextFSError:
        return math.inf


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(_norm(text)) if w not in _STOP]


def _bm25(docs: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Okapi BM25 of ``query`` against each of ``docs`` (IDF from ``docs`` themselves)."""
    terms = set(_terms(query))
    if not docs or not terms:
        return [0.0] * len(docs)
    tfs = [Counter(_terms(d)) for d in docs]
    avg = sum(sum(tf.values()) for tf in tfs) / len(tfs) or 1.0
    df = Counter(t for tf in tfs for t in terms if t in tf)
    n = len(docs)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    out = []
    for tf in tfs:
        length = sum(tf.values())
        score = 0.0
        for t in terms:
            f = tf.get(t, 0)
            if f:
                score += idf[t] * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avg))
        out.append(score)
    return out
