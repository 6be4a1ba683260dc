"""Which ranker scores a query, and the BM25F parameters every ranker uses.

Two rankers give the same scores and the same order (ties by document number): Whoosh's
own matchers, which cost a few microseconds per posting, and the block-at-a-time ranker of
:mod:`.rank`, which reads postings into numpy arrays and is many times faster on common
words, but needs numpy, whose import costs 40-100 ms. A query of plain words that touches
fewer than :data:`BLOCK_RANKER_POSTINGS` postings is scored by Whoosh (at most ~5 ms), so a
short-lived process searching a small tree — a ``contextfs search`` call — never imports
numpy; larger queries take the block ranker. This module imports neither numpy nor the
block ranker.
"""

from __future__ import annotations

from typing import Any

from whoosh import query as wq
from whoosh.scoring import BM25F

__all__ = ["BLOCK_RANKER_POSTINGS", "RANKED_FIELDS", "block_terms", "plain_terms", "weighting"]

RANKED_FIELDS = frozenset({"title", "meta", "body", "context"})

#: From this many postings on (summed over the query's terms and fields) the block ranker
#: scores a plain-word query; below it Whoosh's matchers take ~5 µs a posting, less than
#: the block ranker's numpy import would cost a process that runs one query.
BLOCK_RANKER_POSTINGS = 1_000


def weighting() -> BM25F:
    """The BM25F parameters every ranker of the index uses (Whoosh's defaults)."""
    return BM25F(B=0.75, K1=1.2)


def plain_terms(q: wq.Query) -> list[tuple[str, str, float]] | None:
    """``[(field, text, boost), ...]`` when ``q`` is an OR of plain terms on text fields, else None."""
    if isinstance(q, wq.Term):
        leaves = [q]
        outer = 1.0
    elif type(q) is wq.Or and not getattr(q, "scale", None):
        leaves = list(q.subqueries)
        outer = q.boost
        if not all(type(k) is wq.Term for k in leaves):
            return None
    else:
        return None
    out = []
    for leaf in leaves:
        if leaf.fieldname not in RANKED_FIELDS or not isinstance(leaf.text, str):
            return None
        out.append((leaf.fieldname, leaf.text, float(leaf.boost) * float(outer)))
    return out or None


def block_terms(q: wq.Query, searcher: Any) -> list[tuple[str, str, float]] | None:
    """The query's terms when the block ranker should score it (plain words, enough postings)."""
    terms = plain_terms(q)
    if terms is None:
        return None
    postings = sum(searcher.doc_frequency(field, text) for field, text, _ in terms)
    return terms if postings >= BLOCK_RANKER_POSTINGS else None
