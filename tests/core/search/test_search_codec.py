"""The packed postings codec must read back exactly what Whoosh's own codec stores.

Two real Whoosh indexes are built from the same documents, one with Whoosh's default
codec and one with ``PackedCodec``; every posting (id, weight, value) of every term and
the results and scores of Whoosh queries must be the same, across many blocks, several
segments, deletions and a merge. Weights cover the packed uint16 and float64 layouts.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from whoosh import index as windex
from whoosh import query as wq
from whoosh.codec.whoosh3 import W3Codec
from whoosh.fields import ID, TEXT, Schema

from contextfs.search import rank as search_rank
from contextfs.search.codec import BLOCK_LIMIT, PackedCodec, PackedLeafMatcher, block_arrays

WORDS = ["alpha", "beta", "gamma", "delta", "retry", "queue", "webhook", "tenant", "shard", "lease"]


def _schema() -> Schema:
    return Schema(
        path=ID(unique=True, stored=True),
        body=TEXT(phrase=True),  # positions: variable-size values
        freq=TEXT(phrase=False),  # frequencies: fixed-size values
        boosted=TEXT(phrase=False, field_boost=1.5),  # weights that are not whole numbers
    )


def _doc(rng: random.Random, i: int) -> dict[str, str]:
    # "alpha" in every note with varying counts: its postings span several packed blocks.
    body = " ".join(["alpha"] * (1 + i % 5) + rng.choices(WORDS, k=rng.randint(3, 30)))
    return {
        "path": f"n{i}",
        "body": body,
        "freq": body,
        "boosted": " ".join(rng.choices(WORDS, k=rng.randint(1, 9))),
    }


def _build(folder: Path, codec: Any, docs: list[dict[str, str]]) -> Any:
    folder.mkdir()
    ix = windex.create_in(str(folder), _schema())
    half = len(docs) // 2
    for chunk in (docs[:half], docs[half:]):  # two segments
        writer = ix.writer(codec=codec)
        for doc in chunk:
            writer.add_document(**doc)
        writer.commit(merge=False)
    writer = ix.writer(codec=codec)
    for i in range(0, len(docs), 7):  # deletions in both segments
        writer.delete_by_term("path", f"n{i}")
    writer.commit(merge=False)
    return ix


def _postings(ix: Any) -> dict[tuple[str, bytes], list[tuple[int, float, bytes]]]:
    out = {}
    with ix.searcher() as searcher:
        reader = searcher.reader()
        for fieldname in ("body", "freq", "boosted"):
            for btext in reader.lexicon(fieldname):
                m = reader.postings(fieldname, btext)
                items = []
                while m.is_active():
                    items.append((m.id(), m.weight(), m.value()))
                    m.next()
                out[fieldname, btext] = items
    return out


def _results(ix: Any) -> list[list[tuple[int, float]]]:
    queries = [
        wq.Term("body", "alpha"),
        wq.Or([wq.Term("body", w) for w in ("retry", "queue", "webhook")]),
        wq.And([wq.Term("freq", "tenant"), wq.Term("freq", "shard")]),
        wq.Phrase("body", ["alpha", "alpha", "retry"]),
        wq.Phrase("body", ["gamma", "delta"]),
        wq.Or([wq.Term("boosted", "lease"), wq.Term("body", "beta")]),
        wq.Prefix("body", "de"),
    ]
    with ix.searcher() as searcher:
        return [
            [(hit.docnum, round(hit.score, 12)) for hit in searcher.search(q, limit=None)]
            for q in queries
        ]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    rng = random.Random(11)
    docs = [_doc(rng, i) for i in range(BLOCK_LIMIT + 600)]
    base = tmp_path_factory.mktemp("codec")
    return _build(base / "stock", W3Codec(), docs), _build(base / "packed", PackedCodec(), docs)


def test_every_posting_reads_back_the_same(pair: tuple[Any, Any]) -> None:
    stock, packed = pair
    want, got = _postings(stock), _postings(packed)
    assert got == want
    assert len(want["body", b"alpha"]) > BLOCK_LIMIT  # more than one packed block
    assert any(w % 1 for items in want.values() for _, w, _ in items)  # fractional weights seen


def test_whoosh_queries_score_the_same(pair: tuple[Any, Any]) -> None:
    stock, packed = pair
    want = _results(stock)
    assert all(want[:2]) and want[3]
    assert _results(packed) == want


def test_merged_segments_stay_identical(pair: tuple[Any, Any], tmp_path: Path) -> None:
    stock, packed = pair
    stock.optimize(codec=W3Codec())
    packed.optimize(codec=PackedCodec())
    with packed.searcher() as searcher:
        ((reader, _),) = searcher.reader().leaf_readers()
        assert isinstance(reader.postings("body", b"alpha"), PackedLeafMatcher)
    assert _postings(packed) == _postings(stock)
    assert _results(packed) == _results(stock)


def test_ranker_views_packed_blocks_as_arrays(pair: tuple[Any, Any]) -> None:
    """search_rank reads packed blocks without Whoosh's per-posting decode, to the same values."""
    _, packed = pair
    schema = packed.schema
    with packed.searcher() as searcher:
        for reader, _ in searcher.reader().leaf_readers():
            for fieldname, word in (("body", "alpha"), ("boosted", "lease"), ("freq", "webhook")):
                btext = schema[fieldname].to_bytes(word)
                raw = reader._terms.matcher(fieldname, btext, schema[fieldname].format)
                assert block_arrays(raw) is not None
                ids, weights = search_rank._read_postings(
                    reader, fieldname, btext, schema[fieldname]
                )
                m = reader._terms.matcher(fieldname, btext, schema[fieldname].format)
                want_ids, want_weights = [], []
                while m.is_active():
                    want_ids.append(m.id())
                    want_weights.append(m.weight())
                    m.next()
                assert ids.tolist() == want_ids and weights.tolist() == want_weights


def test_every_block_layout_is_exercised(pair: tuple[Any, Any]) -> None:
    """The tests above cover uint16 ids and both packed weight layouts (uint16 and float32)."""
    _, packed = pair
    id_codes, weight_codes = set(), set()
    with packed.searcher() as searcher:
        for reader, _ in searcher.reader().leaf_readers():
            for fieldname in ("body", "freq", "boosted"):
                fmt = packed.schema[fieldname].format
                for btext in reader.lexicon(fieldname):
                    m = reader._terms.matcher(fieldname, btext, fmt)
                    while isinstance(m, PackedLeafMatcher) and m.is_active():
                        (id_code, _), weights, _ = block_arrays(m)
                        id_codes.add(id_code)
                        weight_codes.add(
                            weights[0] if isinstance(weights, tuple) else type(weights).__name__
                        )
                        m._next_block()
    assert id_codes == {"H"}
    assert {"H", "f"} <= weight_codes
