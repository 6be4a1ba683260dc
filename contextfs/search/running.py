"""Running a query against the index: ranking, phrases, filters, and hits with snippets.

:class:`Queries` runs one parsed query on the searcher :class:`~.index.SearchIndex` keeps
current. Plain words are ranked block-at-a-time by :mod:`.rank` (scores identical to
Whoosh's BM25F); quoted body phrases are found by their words and checked against the
file text; everything else goes through Whoosh's own searcher. Each hit is read back from
the file through the confined file layer, so a snippet never shows text the file no
longer has (or text behind a symlink).

A question (plain words only) is also read for who and when it names, the rankers' rule
in :mod:`contextfs.text.analysis`: turns spoken by a speaker it names (a word of the name is one of
its terms), and notes or turns dated within a day, month or year it names, count
:data:`~contextfs.text.scoring.PRIOR` times as much, each.
"""

from __future__ import annotations

import itertools
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from whoosh import query as wq

from ..embeddings import vectors_for
from ..errors import ContextFSError, SearchIndexError
from ..text import analysis as contextfs_text
from ..text import scoring
from ..text.turns import turn_at
from . import compat, planning
from .hits import SearchHit, make_hit
from .phrases import PhraseCheck, loosen_phrases
from .planning import weighting
from .schema import ALIAS_SEP
from .snippets import strip_frontmatter

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from ..files.confined import RootFiles

__all__ = ["MAX_EXPANSION", "Queries", "Searched", "check_expansion"]


class Searched(Protocol):
    """What running a query needs of the index (:class:`~.index.SearchIndex` provides it)."""

    root: Path
    files: RootFiles
    dir: Path
    schema: Any

    @property
    def searcher(self) -> Any: ...

    def notify(self, paths_: list[str]) -> None: ...


#: How many index terms one wildcard or prefix may expand to before the query is refused.
MAX_EXPANSION = 512


def check_expansion(q: wq.Query, reader: Any) -> None:
    """Refuse wildcards and prefixes that would expand to more than ``MAX_EXPANSION`` terms."""
    for leaf in q.leaves():
        if isinstance(leaf, (wq.Wildcard, wq.Prefix)):
            count = sum(1 for _ in itertools.islice(leaf._btexts(reader), MAX_EXPANSION + 1))
            if count > MAX_EXPANSION:
                raise SearchIndexError(
                    f"{leaf.text!r} matches more than {MAX_EXPANSION} different words; "
                    "make the wildcard more specific"
                )


def _factor(docnum: int, prefer: tuple[tuple[frozenset[int], float], ...]) -> float:
    out = 1.0
    for docs, factor in prefer:
        if docnum in docs:
            out *= factor
    return out


class Queries:
    """Query execution for one index (caches are per searcher: segments never change under it)."""

    def __init__(self, index: Searched) -> None:
        self.index = index
        self._rank_cache: tuple[Any, dict[Any, Any]] | None = None
        self._trash_cache: tuple[Any, set[int]] | None = None

    def run(
        self, parsed: Any, filt: wq.Query | None, include_trash: bool, limit: int
    ) -> list[SearchHit]:
        """Run a parsed query on the index's current searcher."""
        if parsed.query is None:
            return []  # only stop words or punctuation: nothing to match
        searcher = self.index.searcher
        check_expansion(parsed.query, searcher.reader())
        mask = None if include_trash else self._trash_docs(searcher)
        # Over-fetch a little: a hit whose file vanished since indexing is dropped, not shown.
        want = limit
        plain = (
            None if parsed.most_recent or compat.native() else planning.plain_terms(parsed.query)
        )
        terms = None if plain is None else planning.block_terms(plain, searcher)
        cache = self._searcher_cache(searcher)
        prefer = () if parsed.most_recent else self._prefer(searcher, parsed, cache)
        vectors = vectors_for(str(self.index.root)) if parsed.plain else None
        if vectors is not None and plain is not None:
            return self._run_dense(
                searcher, parsed, plain, vectors, filt, mask, want, prefer, cache
            )
        if terms is not None:
            # Plain words: rank with the block-at-a-time BM25F (same scores as Whoosh's).
            allow = self._allowed(searcher, filt, cache)
            from .rank import (  # numpy's import (40-100 ms) is paid where it pays off
                SPACE,
                top_docs,
            )

            cache.setdefault(SPACE, str(self.index.dir))
            bm25 = weighting()
            ranked = top_docs(
                searcher,
                terms,
                want + 5,
                B=bm25.B,
                K1=bm25.K1,
                allow=allow,
                deny=mask,
                cache=cache,
                prefer=prefer,
            )
            return self._hits(searcher, self._settle(searcher, ranked), parsed.words, want)
        started = time.perf_counter()
        hits = self._run_whoosh(searcher, parsed, filt, mask, want, prefer)
        if (
            plain is not None
        ):  # a plain-word query Whoosh scored: what the block ranker would have saved
            planning.spent_in_whoosh(time.perf_counter() - started)
        return hits

    def _allowed(
        self, searcher: Any, filt: wq.Query | None, cache: dict[Any, Any]
    ) -> frozenset[int] | None:
        if filt is None:
            return None
        key = ("filter", repr(filt))
        allow = cache.get(key)
        if allow is None:
            allow = cache[key] = frozenset(searcher.docs_for_query(filt))
        return allow

    def _run_dense(
        self,
        searcher: Any,
        parsed: Any,
        plain: list[tuple[str, str, float]],
        vectors: Any,
        filt: wq.Query | None,
        mask: set[int] | None,
        want: int,
        prefer: tuple[tuple[frozenset[int], float], ...],
        cache: dict[Any, Any],
    ) -> list[SearchHit]:
        """A question ranked by words and by vectors over every document, fused (contextfs.search.dense)."""
        from .dense import dated, dense_order, fuse  # numpy: only with embeddings in use
        from .rank import SPACE, top_docs

        cache.setdefault(SPACE, str(self.index.dir))
        allow = self._allowed(searcher, filt, cache)
        bm25 = weighting()
        docs = [
            d
            for d in searcher.reader().all_doc_ids()
            if (allow is None or d in allow) and not (mask and d in mask)
        ]
        lexical = self._settle(
            searcher,
            top_docs(
                searcher,
                plain,
                max(1, len(docs)),
                B=bm25.B,
                K1=bm25.K1,
                allow=allow,
                deny=mask,
                cache=cache,
                prefer=prefer,
            ),
        )
        keys = [self._doc_key(searcher, d, cache) for d in docs]
        try:
            similarities = vectors.of(keys, self._doc_text) @ vectors.query(
                " ".join(parsed.text.split())
            )
        except ContextFSError:
            raise
        except Exception as exc:  # noqa: BLE001 - the caller's model failed: say so, never heal the index
            raise SearchIndexError(
                f"the embeddings failed ({type(exc).__name__}: {exc}); fix the model, or "
                "turn dense ranking off with ctx.index.use_embeddings(None)"
            ) from exc
        inside = self._dated(searcher, parsed, cache)
        if inside:
            similarities = dated(similarities, [d in inside for d in docs])
        fused = fuse([d for _, d in lexical], dense_order(docs, similarities))
        return self._hits(
            searcher, self._settle(searcher, [(s, d) for d, s in fused.items()]), parsed.words, want
        )

    def _doc_key(self, searcher: Any, docnum: int, cache: dict[Any, Any]) -> str:
        """What a document's vector is filed under: its file, line and version."""
        keys = cache.setdefault("dense-keys", {})
        key = keys.get(docnum)
        if key is None:
            fields = searcher.stored_fields(docnum)
            key = keys[docnum] = (
                f"{fields['rel']}\x00{fields.get('line') or 0}\x00{fields.get('version') or ''}"
            )
        return key

    def _doc_text(self, key: str) -> str:
        """The text a document's vector is made of: a turn's message, a note's body (read from the file)."""
        rel, line, _version = key.split("\x00")
        try:
            data = self.index.files.read(rel)
        except ContextFSError:
            data = None
        text = "" if data is None else data.decode("utf-8", errors="replace")
        if int(line):
            turn = turn_at(text, int(line))
            return "" if turn is None else f"{turn.speaker or turn.role}: {turn.content}"
        return strip_frontmatter(text)[:4000]

    def _run_whoosh(
        self,
        searcher: Any,
        parsed: Any,
        filt: wq.Query | None,
        mask: set[int] | None,
        want: int,
        prefer: tuple[tuple[frozenset[int], float], ...],
    ) -> list[SearchHit]:
        """A query through Whoosh's own matchers (phrases, booleans, ranges, ``*``, small plain queries)."""
        loose = None if parsed.most_recent else loosen_phrases(parsed.query)
        if loose is not None:
            return self._run_phrases(searcher, parsed, loose, filt, mask, want)
        if parsed.most_recent:
            ranked, _ = self._ranked(searcher, parsed.query, filt, mask, want + 5, recent=True)
            return self._hits(searcher, ranked, parsed.words, want)
        if prefer:
            # Whoosh's own scoring has no per-document factor: score everything, then apply
            # the same products top_docs applies.
            every = searcher.search(parsed.query, limit=None, filter=filt, mask=mask)
            scored = [(hit.score * _factor(hit.docnum, prefer), hit.docnum) for hit in every]
            return self._hits(searcher, self._settle(searcher, scored), parsed.words, want)
        ranked, _ = self._ranked(searcher, parsed.query, filt, mask, want + 5)
        return self._hits(searcher, ranked, parsed.words, want)

    def _ranked(
        self,
        searcher: Any,
        q: wq.Query,
        filt: wq.Query | None,
        mask: set[int] | None,
        fetch: int | None,
        *,
        recent: bool = False,
    ) -> tuple[list[tuple[float, int]], bool]:
        """At least ``fetch`` (score, docnum) of ``q`` in the order of :func:`contextfs.text.scoring.tie_order`,
        and whether that is every match.

        Whoosh keeps the lower document numbers among equal scores, so its first ``fetch``
        hits depend on the limit; every hit tied with the ``fetch``-th is fetched too, which
        makes the list the start of the same order for any limit.
        """
        sort: dict[str, Any] = {"sortedby": "updated", "reverse": True} if recent else {}
        limit = fetch
        while True:
            results = searcher.search(q, limit=limit, filter=filt, mask=mask, **sort)
            got = [(0.0 if recent else hit.score, hit.docnum) for hit in results]
            if fetch is None or limit is None or len(got) < limit:
                return self._settle(searcher, got), True
            edge = self._edge(searcher, got[fetch - 1], recent)
            if self._edge(searcher, got[-1], recent) != edge:
                end = fetch
                while (
                    self._edge(searcher, got[end], recent) == edge
                ):  # ties sit together in Whoosh's order
                    end += 1
                return self._settle(searcher, got[:end]), False
            limit *= 4

    def _edge(self, searcher: Any, item: tuple[float, int], recent: bool) -> Any:
        """What makes two hits tie in Whoosh's own order: the score, or (``*``) the time."""
        if recent:
            return self._updated(searcher)[item[1]]
        return round(item[0], scoring.SCORE_DIGITS)

    def _updated(self, searcher: Any) -> Any:
        """Global docnum -> ``updated`` ticks, read from the sortable column (per searcher)."""
        cache = self._searcher_cache(searcher)
        got = cache.get("updated-column")
        if got is None:
            got = cache["updated-column"] = searcher.reader().column_reader(
                "updated", translate=False
            )
        return got

    def _settle(
        self, searcher: Any, ranked: Iterable[tuple[float, int]]
    ) -> list[tuple[float, int]]:
        """``ranked`` in :func:`contextfs.text.scoring.tie_order`: score, newest ``updated``, path, line.

        Path and line are read (stored fields) only for hits equal on score and time.
        """
        ranked = list(ranked)
        if not ranked:
            return []
        column = self._updated(searcher)
        keyed = sorted(
            (
                (-round(score, scoring.SCORE_DIGITS), -column[docnum], score, docnum)
                for score, docnum in ranked
            ),
            key=lambda item: (item[0], item[1], item[3]),
        )
        out: list[tuple[float, int]] = []
        i = 0
        while i < len(keyed):
            j = i + 1
            while j < len(keyed) and keyed[j][:2] == keyed[i][:2]:
                j += 1
            group = keyed[i:j]
            if len(group) > 1:
                group.sort(key=lambda item: self._place(searcher, item[3]))
            out.extend((score, docnum) for _r, _u, score, docnum in group)
            i = j
        return out

    @staticmethod
    def _place(searcher: Any, docnum: int) -> tuple[str, int]:
        fields = searcher.stored_fields(docnum)
        return (fields.get("rel") or "", int(fields.get("line") or 0))

    def _hits(
        self, searcher: Any, ranked: Iterable[tuple[float, int]], words: list[str], want: int
    ) -> list[SearchHit]:
        """The first ``want`` of the ranked (score, docnum) whose files are still there, as hits."""
        hits: list[SearchHit] = []
        for score, docnum in ranked:
            made = self._hit(searcher.stored_fields(docnum), score, words)
            if made is not None:
                hits.append(made)
                if len(hits) >= want:
                    break
        return hits

    def _run_phrases(
        self,
        searcher: Any,
        parsed: Any,
        loose: wq.Query,
        filt: wq.Query | None,
        mask: set[int] | None,
        want: int,
    ) -> list[SearchHit]:
        """Body phrases: Whoosh finds notes holding every word, the file text decides the phrase."""
        check = PhraseCheck(parsed.query, loose, searcher, self.index.schema["body"].analyzer)
        hits: list[SearchHit] = []
        seen: set[int] = set()
        fetch: int | None = want + 5
        while True:
            ranked, every = self._ranked(searcher, loose, filt, mask, fetch)
            for score, docnum in ranked:
                if docnum in seen:
                    continue
                seen.add(docnum)
                made = self._hit(
                    searcher.stored_fields(docnum), score, parsed.words, check=check, docnum=docnum
                )
                if made is not None:
                    hits.append(made)
                    if len(hits) >= want:
                        return hits
            if every:
                return hits
            fetch = None  # most candidates lacked the phrase: take them all in one pass

    def _searcher_cache(self, searcher: Any) -> dict[Any, Any]:
        """Scratch space valid for one searcher (its segments never change underneath it)."""
        cached = self._rank_cache
        if cached is not None and cached[0] is searcher:
            return cached[1]
        fresh: dict[Any, Any] = {}
        self._rank_cache = (searcher, fresh)
        return fresh

    def _prefer(
        self, searcher: Any, parsed: Any, cache: dict[Any, Any]
    ) -> tuple[tuple[frozenset[int], float], ...]:
        """The documents a question names by who spoke them or when they are dated, with PRIOR."""
        if not parsed.plain:
            return ()
        out = []
        speakers = cache.get("speakers")
        if speakers is None:
            speakers = cache["speakers"] = [
                b.decode("utf-8") for b in searcher.reader().lexicon("speaker")
            ]
        aliases = cache.get("aliases")
        if aliases is None:
            pairs = (
                b.decode("utf-8").partition(ALIAS_SEP) for b in searcher.reader().lexicon("alias")
            )
            aliases = cache["aliases"] = [(name, speaker) for name, _, speaker in pairs if speaker]
        named = sorted(
            contextfs_text.names_in(parsed.words, speakers)
            | {
                speaker
                for name, speaker in aliases
                if contextfs_text.names_in(parsed.words, [name])
            }
        )
        wanted: list[tuple[Any, wq.Query]] = []
        if named:
            wanted.append(
                (("speaker", tuple(named)), wq.Or([wq.Term("speaker", n) for n in named]))
            )
        for key, q in wanted:
            docs = cache.get(key)
            if docs is None:
                docs = cache[key] = frozenset(searcher.docs_for_query(q))
            if docs:
                out.append((docs, scoring.PRIOR))
        dated = self._dated(searcher, parsed, cache)
        if dated:
            out.append((dated, scoring.PRIOR))
        return tuple(out)

    def _dated(self, searcher: Any, parsed: Any, cache: dict[Any, Any]) -> frozenset[int]:
        """The documents dated within a period the question names (none when it names none)."""
        if not parsed.periods:
            return frozenset()
        spans = tuple((p.start, p.until) for p in parsed.periods)
        docs = cache.get(("dated", spans))
        if docs is None:
            q = wq.Or(
                [
                    wq.DateRange(
                        "updated",
                        datetime(a.year, a.month, a.day),
                        datetime(b.year, b.month, b.day),
                        endexcl=True,
                    )
                    for a, b in spans
                ]
            )
            docs = cache[("dated", spans)] = frozenset(searcher.docs_for_query(q))
        return docs

    def _trash_docs(self, searcher: Any) -> set[int]:
        """Document numbers of trashed files, computed once per searcher (a mask query costs more)."""
        cached = self._trash_cache
        if cached is not None and cached[0] is searcher:
            return cached[1]
        docs = set(searcher.docs_for_query(wq.Term("trash", "1")))
        self._trash_cache = (searcher, docs)
        return docs

    def _hit(
        self,
        fields: dict[str, Any],
        score: float,
        words: list[str],
        *,
        check: PhraseCheck | None = None,
        docnum: int = -1,
    ) -> SearchHit | None:
        return make_hit(
            self.index.files, self.index.notify, fields, score, words, check=check, docnum=docnum
        )
