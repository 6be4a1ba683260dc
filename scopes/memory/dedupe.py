"""Near-duplicate detection over the archive: is this fact already stored?

An exact duplicate has the same :func:`~.text.fingerprint` (the words in order); a near
duplicate has a word-set Jaccard of at least ``near_duplicate`` and the same numbers and
negations. The index of fingerprints and words is derived from the notes on first use
and kept current by a change listener on the manager; it never returns a note that no
longer exists or is no longer active.
"""

from __future__ import annotations

import math
from collections import defaultdict

from contextfs.errors import ContextFSError
from contextfs.manager import ContextManager

from .records import ARCHIVE_DIR
from .text import fingerprint, guarded_words, hash_order, jaccard, word_set

__all__ = ["DuplicateIndex"]


class DuplicateIndex:
    """Fingerprints and a word index of the archive's notes, built lazily from the files."""

    def __init__(self, ctx: ContextManager, near_duplicate: float) -> None:
        self._ctx = ctx
        self._near = near_duplicate
        self._notes: dict[str, tuple[str, frozenset[str], str]] | None = None
        self._by_fp: dict[str, set[str]] = defaultdict(set)
        self._by_word: dict[str, set[str]] = defaultdict(set)
        ctx.add_listener(self._on_change)

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
            doc = self._ctx.get(rel)
        except ContextFSError:
            return  # gone (deleted or moved) or unreadable: nothing to dedupe against
        status = str(doc.metadata.get("status", "active"))
        words = word_set(doc.body)
        fp = str(doc.metadata.get("fingerprint") or fingerprint(doc.body))
        self._notes[rel] = (fp, words, status)
        self._by_fp[fp].add(rel)
        for w in words:
            self._by_word[w].add(rel)

    def refresh(self, rel: str) -> None:
        """Re-read one note now.

        Inside a transaction the listener fires only at commit; refreshing right after a
        write lets a second insert in the same transaction already see this note.
        """
        if self._notes is not None:
            self._forget(rel)
            self._remember(rel)

    def _load(self) -> None:
        if self._notes is not None:
            return
        self._notes = {}
        for rel in self._ctx.list(ARCHIVE_DIR):
            if rel.endswith(".md"):
                self._remember(rel)

    def _live(self, rel: str, ignore: str | None) -> bool:
        assert self._notes is not None
        if rel == ignore or self._notes[rel][2] != "active":
            return False
        if not self._ctx.exists(rel):  # a rolled-back transaction or an outside delete
            self._forget(rel)
            return False
        return True

    def find(self, text: str, *, ignore: str | None = None) -> str | None:
        """The path of an active note saying the same thing as ``text``, if any."""
        self._load()
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
        order = sorted(words, key=hash_order)
        prefix = order[: len(words) - math.ceil(self._near * len(words)) + 1]
        candidates: set[str] = set()
        for w in prefix:
            candidates |= self._by_word.get(w, set())
        guard = guarded_words(words)
        best: tuple[float, str] | None = None
        for rel in sorted(candidates):
            if rel not in self._notes:
                continue
            other = self._notes[rel][1]
            if guarded_words(other) != guard or not self._live(rel, ignore):
                continue
            score = jaccard(words, other)
            if score >= self._near and (best is None or (score, rel) > best):
                best = (score, rel)
        return best[1] if best else None
