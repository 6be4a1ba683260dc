"""A fast BM25F top-k for the common query shape: plain words OR-ed over the text fields.

Why this exists: Whoosh scores an OR query one posting at a time through a tree of
matcher objects (several Python calls per posting per field). An agent's question is
mostly common words, each in half the notes, so at 10,000 notes one query touches ~17,000
postings and Whoosh needs ~80 ms. This module reads the same postings a block at a time
into numpy arrays (kept per segment and term, process-wide and bounded: segments never
change) and sums the same BM25F contributions with array arithmetic into dense
per-segment score arrays. The arithmetic is the same per posting (``c * w / (w + norm)``),
added term by term where Whoosh adds along its matcher tree, so a score equals Whoosh's to
the last bit or two (a relative difference under 1e-15 on queries of dozens of words, none
on a few). Ties are broken by :func:`~contextfs.text.analysis.tie_key`'s rule, as every ranker
breaks them: the newest ``updated`` first, then path and line (settled by the caller,
which reads those), never by document number, which depends on how segments were merged.

Only queries that are a term or an OR of terms on the text fields, touching enough postings
to be worth numpy's import, take this path (:mod:`.planning` decides); everything else (phrases, AND/NOT, wildcards, ranges, ``*``) goes through Whoosh. Here,
and only here, a document can also count more than its words say (``prefer``): the
rankers' rule that a turn of a speaker the question names, or a note or turn dated in a
period it names, counts :data:`~contextfs.text.scoring.PRIOR` times (a product, applied before
the top k are picked, so it changes which documents come back, not just their order).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any

import numpy as np
from whoosh.util.numeric import byte_to_length

from ..text.scoring import SCORE_DIGITS
from .codec import block_arrays, length_bytes

__all__ = ["SEGMENT_CACHE_BYTES", "SPACE", "top_docs"]

log = logging.getLogger(__name__)

# Decoded postings and field lengths are kept per segment (segments never change; deleted
# documents are applied separately), so they outlive a searcher: after a write only the new
# segment's terms are decoded again. The bound is in bytes (a posting costs 12: an int32 id
# and a float64 weight); ~32 MB holds a few hundred common terms at 10,000 notes.
SEGMENT_CACHE_BYTES = 32_000_000


class _SegmentCache:
    """A byte-bounded, least-recently-used map from (segment, what) to numpy arrays."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.items: OrderedDict[Any, tuple[np.ndarray, ...]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Any) -> tuple[np.ndarray, ...] | None:
        with self.lock:
            got = self.items.get(key)
            if got is not None:
                self.items.move_to_end(key)
            return got

    def put(self, key: Any, value: tuple[np.ndarray, ...]) -> None:
        nbytes = sum(arr.nbytes for arr in value)
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.size -= sum(arr.nbytes for arr in old)
            self.items[key] = value
            self.size += nbytes
            while self.size > self.limit and len(self.items) > 1:
                _, dropped = self.items.popitem(last=False)
                self.size -= sum(arr.nbytes for arr in dropped)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.size = 0


_SEGMENTS = _SegmentCache(SEGMENT_CACHE_BYTES)
#: The key in a searcher's cache naming its index (the folder), for the process-wide segment cache.
SPACE = "index-space"

# Byte -> field length, as Whoosh decodes it (byte 0 means "no length": 0, as the scalar path).
_BYTE_LENGTHS = np.array(
    [0.0] + [float(byte_to_length(b)) for b in range(1, 256)], dtype=np.float64
)


def _segment_key(reader: Any, space: str) -> Any:
    """A key naming the segment behind ``reader`` for good, or None for unknown readers.

    ``space`` names the index (its folder): Whoosh's segment ids come from the ``random``
    module, so two indexes in one process can draw the same id (a seeded ``random`` makes
    them equal), and a key without the index would hand one index the other's postings.
    """
    segment = getattr(reader, "segment", None)
    if segment is None:
        return None
    seg = segment()
    return (space, seg.indexname, seg.segment_id(), reader.doc_count_all())


def _cached(
    reader: Any, what: tuple[Any, ...], cache: dict[Any, Any], make: Any, *args: Any
) -> tuple[np.ndarray, ...]:
    """``make(*args)`` once per segment (process-wide) or, for unnamed readers, per searcher."""
    seg = _segment_key(reader, cache.get(SPACE, ""))
    if seg is None:
        key = (id(reader), *what)
        got = cache.get(key)
        if got is None:
            got = cache[key] = make(*args)
        return got
    key = (seg, *what)
    got = _SEGMENTS.get(key)
    if got is None:
        got = make(*args)
        _SEGMENTS.put(key, got)
    return got


def _raw_lengths(reader: Any, fieldname: str, ndocs: int) -> np.ndarray | None:
    """All of a segment's field lengths at once (about 75 ms for 10,000 notes and four fields
    when decoded one document per call, paid by the first query after a segment appears)."""
    perdoc = getattr(reader, "_perdoc", None)
    raw = None if perdoc is None else length_bytes(perdoc, fieldname, ndocs)
    return None if raw is None else _BYTE_LENGTHS[np.frombuffer(raw, dtype=np.uint8)]


def _field_lengths(reader: Any, fieldname: str) -> tuple[np.ndarray]:
    dfl = reader.doc_field_length
    ndocs = reader.doc_count_all()
    fast = _raw_lengths(reader, fieldname, ndocs)
    if fast is not None:
        return (fast,)
    # Whoosh returns None for an empty field (no posting can then point at it).
    return (
        np.fromiter(
            (dfl(d, fieldname, 1) or 0 for d in range(ndocs)), dtype=np.float64, count=ndocs
        ),
    )


def _segment_norms(
    reader: Any, searcher: Any, fieldname: str, *, B: float, K1: float, cache: dict[Any, Any]
) -> np.ndarray:
    """BM25F length normalisation ``K1 * (1 - B + B * fl / avgfl)`` per document of a segment.

    Written as ``a + b * fl`` exactly as the scalar version was, so every float matches.
    ``avgfl`` depends on the whole searcher, so the norms live in the searcher's cache.
    """
    key = (id(reader), fieldname)
    norms = cache.get(key)
    if norms is None:
        avgfl = searcher.avg_field_length(fieldname) or 1
        a, b = K1 * (1.0 - B), K1 * B / avgfl
        (lengths,) = _cached(
            reader, ("lengths", fieldname), cache, _field_lengths, reader, fieldname
        )
        norms = cache[key] = a + b * lengths
    return norms


# numpy's one-letter codes name the same native C types as the array module's.
_DTYPES = {code: np.dtype(code) for code in "HIfd"}


def _read_packed(matcher: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """A term's postings from packed blocks (search_codec), viewed as arrays; None if not packed.

    Each block's bytes are viewed in place with ``np.frombuffer`` and concatenated once, so
    no Python number is created per posting.
    """
    id_parts: list[np.ndarray] = []
    weight_parts: list[np.ndarray] = []
    while matcher.is_active():
        block = block_arrays(matcher)
        if block is None:  # not a packed segment (a segment is written by one codec)
            return None
        (id_code, id_bytes), weights, count = block
        id_parts.append(np.frombuffer(id_bytes, dtype=_DTYPES[id_code]))
        if weights is None or isinstance(weights, float):
            weight_parts.append(
                np.full(count, 1.0 if weights is None else weights, dtype=np.float64)
            )
        else:
            weight_parts.append(np.frombuffer(weights[1], dtype=_DTYPES[weights[0]]))
        matcher._next_block()
    ids = np.concatenate(id_parts).astype(np.int32) if id_parts else np.zeros(0, np.int32)
    weights_out = np.concatenate(weight_parts).astype(np.float64) if weight_parts else np.zeros(0)
    return ids, weights_out


def _read_postings(
    reader: Any, fieldname: str, btext: bytes, field: Any
) -> tuple[np.ndarray, np.ndarray]:
    """All (ids, weights) of one term in one segment, read a block at a time, converted once."""
    if (fieldname, btext) not in reader:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64)
    raw_terms = getattr(reader, "_terms", None)
    matcher = (
        raw_terms.matcher(fieldname, btext, field.format)
        if raw_terms is not None
        else reader.postings(fieldname, btext)
    )
    packed = _read_packed(matcher)
    if packed is not None:
        return packed
    ids: list[int] = []
    weights: list[float] = []
    if (
        hasattr(matcher, "_read_data")
        and hasattr(matcher, "_next_block")
        and hasattr(matcher, "_byteids")
    ):
        lengths: list[int] = []
        while matcher.is_active():
            if matcher._data is None:
                matcher._read_data()
            block_ids, block_weights = matcher._data[0], matcher._data[1]
            ids.extend(block_ids)
            lengths.append(len(block_ids))
            if block_weights is None or isinstance(block_weights, float):
                weights.extend([1.0 if block_weights is None else block_weights] * len(block_ids))
            else:
                weights.extend(block_weights)
            matcher._next_block()
        out = np.array(ids, dtype=np.int64)
        if not matcher._byteids and len(out):
            # Whoosh's delta_decode restarts in every block: a running sum, less the sum
            # reached at the end of the previous block.
            out = np.cumsum(out)
            if len(lengths) > 1:
                ends = np.cumsum(lengths)
                offsets = np.concatenate(([0], out[ends[:-1] - 1]))
                out -= np.repeat(offsets, lengths)
    else:
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
        out = np.array(ids, dtype=np.int64)
    return out.astype(np.int32), np.array(weights, dtype=np.float64)


def _local_mask(
    docs: set[int] | frozenset[int],
    base: int,
    ndocs: int,
    reader: Any,
    tag: str,
    cache: dict[Any, Any],
) -> np.ndarray:
    """Boolean array over a segment's documents: True where ``base + d`` is in ``docs``.

    Cached by the identity of ``docs`` (the callers keep these sets per searcher); the set
    itself is kept in the entry so its id cannot be reused while the entry lives.
    """
    key = (tag, id(reader))
    got = cache.get(key)
    if got is not None and got[0] is docs:
        return got[1]
    mask = np.zeros(ndocs, dtype=bool)
    local = np.fromiter(docs, dtype=np.int64, count=len(docs)) - base
    mask[local[(local >= 0) & (local < ndocs)]] = True
    cache[key] = (docs, mask)
    return mask


def _updated(reader: Any) -> tuple[np.ndarray]:
    """Every document's ``updated`` of a segment (Whoosh's ticks), from the sortable column."""
    column = reader.column_reader("updated", translate=False)
    return (np.fromiter(column, dtype=np.int64, count=reader.doc_count_all()),)


def _best(rounded: np.ndarray, updated: np.ndarray, keep: np.ndarray, k: int) -> np.ndarray:
    """Local docnums of the ``k`` best kept documents by (score, newest), best first, and
    every further document tied with the k-th on both (the caller settles those by path)."""
    idx = np.flatnonzero(keep)
    scores = rounded[idx]
    if len(idx) > k:
        threshold = np.partition(scores, len(idx) - k)[len(idx) - k]  # the k-th largest score
        chosen = scores >= threshold
        idx, scores = idx[chosen], scores[chosen]
    order = np.lexsort((idx, -updated[idx], -scores))
    if len(order) > k:
        last = order[k - 1]
        rest = order[k:]
        tied = (scores[rest] == scores[last]) & (updated[idx[rest]] == updated[idx[last]])
        order = order[: k + int(np.argmin(tied) if not tied.all() else len(rest))]
    return idx[order]


def top_docs(
    searcher: Any,
    terms: list[tuple[str, str, float]],
    k: int,
    *,
    B: float,
    K1: float,
    allow: set[int] | frozenset[int] | None,
    deny: set[int] | frozenset[int] | None,
    cache: dict[Any, Any],
    prefer: tuple[tuple[frozenset[int], float], ...] = (),
) -> list[tuple[float, int]]:
    """The ``k`` best ``(score, docnum)`` for the OR of ``terms``, best first (newest first
    on equal scores), and every further document tied with the k-th on both.

    ``allow``: only these global docnums (a filter); ``deny``: never these (a mask);
    ``prefer``: (docnums, factor) pairs, each multiplying the scores of its documents.
    ``cache`` belongs to the searcher: length normalisation arrays and filter masks live
    there; decoded postings and field lengths are cached per segment (``_SEGMENTS``).
    """
    schema = searcher.schema
    ranked: list[tuple[float, float, int, int]] = []  # (score, rounded score, updated, docnum)
    for reader, base in searcher.reader().leaf_readers():
        ndocs = reader.doc_count_all()
        if not ndocs:
            continue
        acc = np.zeros(ndocs, dtype=np.float64)
        touched = False
        for fieldname, text, boost in terms:
            field = schema[fieldname]
            btext = field.to_bytes(text)
            # Cached per segment, absent terms too (as empty arrays): a warm query then makes
            # no term-table lookups at all.
            ids, weights = _cached(
                reader,
                ("postings", fieldname, btext),
                cache,
                _read_postings,
                reader,
                fieldname,
                btext,
                field,
            )
            if not len(ids):
                continue
            idf = searcher.idf(fieldname, btext)
            c = boost * idf * (K1 + 1.0)
            norms = _segment_norms(reader, searcher, fieldname, B=B, K1=K1, cache=cache)
            # Each id occurs once per term, so fancy-index += adds exactly one contribution;
            # the arithmetic is the scalar version's, ``c * w / (w + norm)``, per posting.
            acc[ids] += c * weights / (weights + norms[ids])
            touched = True
        if not touched:
            continue
        for n, (docs, factor) in enumerate(prefer):
            acc[_local_mask(docs, base, ndocs, reader, f"prefer{n}", cache)] *= factor
        keep = acc > 0.0
        if reader.has_deletions():
            deleted = reader.deleted_docs_set
            if deleted:
                keep[np.fromiter(deleted, dtype=np.int64, count=len(deleted))] = False
        if allow is not None:
            keep &= _local_mask(allow, base, ndocs, reader, "allow", cache)
        if deny:
            keep &= ~_local_mask(deny, base, ndocs, reader, "deny", cache)
        rounded = np.round(acc, SCORE_DIGITS)
        (updated,) = _cached(reader, ("updated",), cache, _updated, reader)
        idx = _best(rounded, updated, keep, k)
        ranked.extend(
            zip(  # noqa: B905 - four views of the same index array: equal lengths
                acc[idx].tolist(),
                rounded[idx].tolist(),
                updated[idx].tolist(),
                (idx + base).tolist(),
            )
        )
    ranked.sort(key=lambda item: (-item[1], -item[2], item[3]))
    if len(ranked) > k:
        last = ranked[k - 1]
        end = k
        while end < len(ranked) and ranked[end][1] == last[1] and ranked[end][2] == last[2]:
            end += 1
        ranked = ranked[:end]
    return [(score, docnum) for score, _r, _u, docnum in ranked]
