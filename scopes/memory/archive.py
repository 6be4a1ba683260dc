"""Archival memory: one note per file under ``memory/archive/``, searched through the index.

Inserting a fact that is already there (exactly, or nearly: same words give or take a
few) returns the existing note instead of storing it twice. Search ranks notes the way
page-in ranks passages (:mod:`..pagein`: BM25, a named speaker's notes first, each note
lifted by the notes written just before and after it in its session), with recency
breaking ties. Notes are never deleted to be forgotten: they are *invalidated* or *superseded*
in their frontmatter, which keeps them in history and out of search.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contextfs import clock
from contextfs.errors import ContentError, InvalidPathError, NotFoundError
from contextfs.files.paths import slugify
from contextfs.gate.poisoning import Verdict, apply_policy, assess, trust_of
from contextfs.manager import ContextManager
from contextfs.serializing import as_content
from contextfs.text.analysis import content_words, fingerprint, words

from ..arguments import check_int, check_mapping, check_strings
from ..pagein import rank
from .dedupe import DuplicateIndex
from .records import (
    ARCHIVE_DIR,
    ArchivalNote,
    MemoryHit,
    MemorySettings,
    provenance,
    source_label,
)

__all__ = ["Archive", "check_tags"]

log = logging.getLogger(__name__)

_TAG = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}\Z")

#: How many of a note's words its file name holds. Every view and search result cites a
#: note by its path, so each word of the name is paid each time the note is shown, right
#: above the text it repeats; two words with the day tell a person browsing the folder
#: what a note is about (``2023-05-08-caroline-support-8e29d9.md``).
NAME_WORDS = 2


def check_tags(tags: Iterable[str] | None) -> tuple[str, ...]:
    """Tags lower-cased, spaces joined with '-', de-duplicated; ContentError for one that is not accepted."""
    if tags is None:
        return ()
    out: list[str] = []
    for tag in check_strings(
        tags, "tags", fix="pass e.g. ['profile', 'offer']", error=ContentError
    ):
        norm = "-".join(tag.strip().lower().split())
        if not _TAG.match(norm):
            raise ContentError(
                f"tag {tag!r} is not accepted; use 1-64 lowercase letters, digits and . _ -"
            )
        if norm not in out:
            out.append(norm)
    return tuple(out)


def _tags_of(meta: Mapping[str, Any]) -> tuple[str, ...]:
    tags = meta.get("tags") or []
    return tuple(str(t) for t in tags) if isinstance(tags, list) else (str(tags),)


def _hit(rel: str, body: str, score: float, meta: Mapping[str, Any]) -> MemoryHit:
    return MemoryHit(
        path=rel,
        text=body.strip("\n"),
        score=score,
        source=str(meta.get("source") or source_label(meta.get("session"), meta.get("turn"))),
        session=meta.get("session"),
        turn=None if meta.get("turn") is None else str(meta.get("turn")),
        updated=meta.get("updated") or meta.get("created"),
        tags=_tags_of(meta),
        trust=trust_of(meta),
        status=str(meta.get("status", "active")),
    )


class Archive:
    """Insert, retire and search archival notes."""

    def __init__(self, ctx: ContextManager, settings: MemorySettings) -> None:
        self._ctx = ctx
        self._settings = settings
        self.duplicates = DuplicateIndex(ctx, settings.near_duplicate)

    # ------------------------------------------------------------ notes
    def _note(
        self, rel: str, *, duplicate: bool = False, verdict: Verdict | None = None
    ) -> ArchivalNote:
        doc = self._ctx.get(rel)
        meta = doc.metadata
        return ArchivalNote(
            path=rel,
            text=doc.body.rstrip("\n"),
            tags=_tags_of(meta),
            trust=trust_of(meta),
            status=str(meta.get("status", "active")),
            source=str(meta.get("source") or source_label(meta.get("session"), meta.get("turn"))),
            session=meta.get("session"),
            turn=None if meta.get("turn") is None else str(meta.get("turn")),
            created=meta.get("created"),
            verdict=verdict
            if verdict is not None
            else Verdict(bool(meta.get("flagged")), tuple(meta.get("flagged") or ())),
            duplicate=duplicate,
        )

    def _path(self, path: str) -> str:
        if (
            not isinstance(path, str)
            or not path.startswith(ARCHIVE_DIR + "/")
            or not path.endswith(".md")
        ):
            raise InvalidPathError(
                f"{path!r} is not an archival note; pass a path like '{ARCHIVE_DIR}/<note>.md'"
            )
        if not self._ctx.exists(path):
            raise NotFoundError(
                f"{path} does not exist; find notes with archival_memory_search", path=path
            )
        return path

    def note(self, path: str) -> ArchivalNote:
        """Read one archival note with its provenance."""
        return self._note(self._path(path))

    def _new_path(self, text: str, fp: str) -> str:
        day = clock.now().strftime("%Y-%m-%d")
        # Words that carry meaning; a contraction's tail ("m" of "I'm") is not one.
        named = [w for w in content_words(text) if len(w) > 1 or w.isdigit()][:NAME_WORDS]
        slug = slugify(" ".join(named) or text, words=NAME_WORDS, default="note")
        return self._ctx.free_path(f"{ARCHIVE_DIR}/{day}-{slug}-{fp[:6]}")

    def insert(
        self,
        text: str,
        tags: Sequence[str] | None = None,
        *,
        extra: Mapping[str, Any] | None = None,
        replacing: str | None = None,
    ) -> ArchivalNote:
        """Store one fact as its own note; an exact or near duplicate returns the existing note."""
        if not isinstance(text, str) or not text.strip():
            raise ContentError(
                "archival_memory_insert needs non-empty text; pass the fact to remember"
            )
        tag_list = check_tags(tags)
        check_mapping(
            extra, "extra", optional=True, fix="pass a dict of frontmatter keys to add, or None"
        )
        verdict = assess(text)
        trust = apply_policy(verdict, self._settings.policy, what="the archival note")
        existing = self.duplicates.find(text, ignore=replacing)
        if existing is not None:
            log.info("not storing a duplicate of %s", existing)
            return self._note(existing, duplicate=True, verdict=verdict)
        # A note is named after its first words: text holding a secret is refused before
        # a name is made from it, so neither the name nor the refusal can carry the secret.
        self._ctx.parts.guard().check_secrets(
            "the archival note", text, actor=self._ctx.parts.current_provenance.actor
        )
        fp = fingerprint(text)
        _session, _turn, source = provenance(self._ctx)
        meta: dict[str, Any] = {
            "tags": list(tag_list),
            "trust": trust,
            "source": source,
            "status": "active",
            "fingerprint": fp,
        }
        if verdict.suspicious:
            meta["flagged"] = list(verdict.reasons)
        meta.update({k: v for k, v in (extra or {}).items() if k not in meta})
        rel = self._new_path(text, fp)
        with self._ctx.transaction(
            f"memory: archive {rel}", op="memory-archive", trailers={"Contextfs-Memory": "archive"}
        ):
            self._ctx.create(rel, as_content(rel, text.strip("\n") + "\n"), meta)
            self.duplicates.refresh(rel, text)
        return self._note(rel, verdict=verdict)

    def invalidate(self, path: str, reason: str | None = None) -> ArchivalNote:
        """Mark a note as no longer true: kept in the file and history, left out of search."""
        rel = self._path(path)
        changes: dict[str, Any] = {"status": "invalidated", "invalidated_at": clock.iso()}
        if reason:
            changes["invalid_reason"] = " ".join(str(reason).split())[:300]
        with self._ctx.transaction(
            f"memory: invalidate {rel}",
            op="memory-invalidate",
            trailers={"Contextfs-Memory": "archive"},
        ):
            self._ctx.update_metadata(rel, changes)
            self.duplicates.refresh(rel)
        return self._note(rel)

    def supersede(self, path: str, text: str, tags: Sequence[str] | None = None) -> ArchivalNote:
        """Replace a note with a new one; the old note points to it and leaves search."""
        rel = self._path(path)
        old = self._note(rel)
        with self._ctx.transaction(
            f"memory: supersede {rel}",
            op="memory-supersede",
            trailers={"Contextfs-Memory": "archive"},
        ):
            # Retire the old note first so the new one is not returned as its near duplicate.
            self._ctx.update_metadata(rel, {"status": "superseded", "superseded_at": clock.iso()})
            self.duplicates.refresh(rel)
            new = self.insert(
                text,
                tags if tags is not None else old.tags,
                extra={"supersedes": rel},
                replacing=rel,
            )
            self._ctx.update_metadata(rel, {"superseded_by": new.path})
        return new

    # ------------------------------------------------------------ search
    def _ranked(
        self, plain: str, limit: int, filters: dict[str, Any], include_quarantined: bool
    ) -> list[tuple[str, float]]:
        """The best ``limit`` notes (or passages of notes) for ``plain``, best first."""
        if include_quarantined:
            # Quarantined notes are kept out of page-in's passages (and so out of views):
            # only the index, which records every note's trust, can list them.
            return [
                (h.path, float(h.score))
                for h in self._ctx.search(plain, path=ARCHIVE_DIR, limit=limit, **filters)
            ]
        # The one ranker of passages (page-in's), over the notes of the head commit.
        inside = f"{ARCHIVE_DIR}/"
        return [
            (p.path, p.score)
            for p in rank(
                self._ctx,
                plain,
                rev=None,
                exclude=set(),
                limit=limit,
                allow=lambda rel: rel.startswith(inside),
            )
        ]

    def search(
        self,
        query: str,
        top_k: int = 5,
        tags: Sequence[str] | None = None,
        *,
        include_inactive: bool = False,
        include_quarantined: bool = False,
    ) -> list[MemoryHit]:
        """The ``top_k`` notes best matching ``query``, each with its source (see ``Memory``)."""
        # Plain words only: an agent's question must not turn into query syntax (AND, tag:, "...").
        plain = " ".join(words(query))[:1900] if isinstance(query, str) else ""
        if not plain:
            raise ContentError(
                "archival_memory_search needs a query; pass a few words about the fact you need"
            )
        top_k = max(1, check_int(top_k, "top_k", fix="pass how many notes to return, e.g. 5"))
        filters: dict[str, Any] = {}
        tag_list = check_tags(tags)
        if tag_list:
            filters["tags"] = list(tag_list)
        limit = top_k + 5
        while True:
            found = self._ranked(plain, limit, filters, include_quarantined)
            hits: list[MemoryHit] = []
            seen: set[str] = set()
            for path, score in found:
                # Reading frontmatter is the costly part: stop once top_k are kept (hits come
                # best first, equal scores newest first: contextfs.text.scoring.tie_order).
                if len(hits) >= top_k:
                    break
                if path in seen:
                    continue  # a long note has several passages: its best one ranks it
                seen.add(path)
                try:
                    doc = self._ctx.get(path)
                except NotFoundError:
                    continue  # the index is behind a delete; files are the truth
                meta = doc.metadata
                status = str(meta.get("status", "active"))
                trust = trust_of(meta)
                if status != "active" and not include_inactive:
                    continue
                if trust == "quarantined" and not include_quarantined:
                    continue
                if tag_list and not set(tag_list) <= {t.strip().lower() for t in _tags_of(meta)}:
                    continue
                hits.append(_hit(path, doc.body, score, meta))
            if len(hits) >= top_k or len(found) < limit or limit >= 100_000:
                break
            limit *= 4
        return hits[:top_k]
