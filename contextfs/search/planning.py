"""Which ranker scores a query, and the BM25F parameters every ranker uses.

Two rankers give the same scores and the same order (ties by document number): Whoosh's
own matchers, which cost a few microseconds per posting plus a matcher per term and
segment, and the block-at-a-time ranker of :mod:`.rank`, which reads postings into numpy
arrays and is many times faster, but needs numpy, whose import costs 40-100 ms once per
process. The choice for a plain-word query is a rent-or-buy decision:

* once numpy is imported (by anything), the block ranker costs nothing more: it is used;
* a query touching at least :data:`BLOCK_RANKER_POSTINGS` postings is worth the import;
* smaller queries are scored by Whoosh until this process has spent
  :data:`NUMPY_IMPORT_SECONDS` doing so — what the import would have cost — and then the
  block ranker takes over (the classic rent-or-buy rule: a process that keeps searching
  pays the import once, and one that searches a little never pays more than about twice
  what it would have paid had it known in advance).

So a short-lived ``contextfs search`` over a small tree never imports numpy, and a
long-running agent pays for it once. This module imports neither numpy nor the block ranker.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from whoosh import query as wq
from whoosh.scoring import BM25F

__all__ = [
    "BLOCK_RANKER_POSTINGS",
    "NUMPY_IMPORT_SECONDS",
    "RANKED_FIELDS",
    "block_terms",
    "plain_terms",
    "spent_in_whoosh",
    "weighting",
]

RANKED_FIELDS = frozenset({"title", "meta", "body", "context", "far"})

#: From this many postings on (summed over the query's terms and fields) the block ranker
#: scores a plain-word query even in a fresh process: Whoosh would take ~5 ms or more.
BLOCK_RANKER_POSTINGS = 1_000
#: What importing numpy costs on a typical machine (40-100 ms measured here).
NUMPY_IMPORT_SECONDS = 0.06

_spent = 0.0  # seconds this process spent scoring plain-word queries with Whoosh's matchers
_lock = threading.Lock()


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


def block_terms(
    terms: list[tuple[str, str, float]], searcher: Any
) -> list[tuple[str, str, float]] | None:
    """``terms`` when the block ranker should score this plain-word query, else None (Whoosh)."""
    if "numpy" in sys.modules or _spent >= NUMPY_IMPORT_SECONDS:
        return terms
    postings = sum(searcher.doc_frequency(field, text) for field, text, _ in terms)
    return terms if postings >= BLOCK_RANKER_POSTINGS else None


def spent_in_whoosh(seconds: float) -> None:
    """Count time spent scoring a plain-word query with Whoosh's matchers (see the module doc)."""
    global _spent
    with _lock:
        _spent += seconds
