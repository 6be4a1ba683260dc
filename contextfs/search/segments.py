"""Segments of the Whoosh index: building them, merging them, and reading the newest ones.

* :func:`fill` writes a fresh index, with two worker processes for large builds;
* :func:`merge_policy` merges segments of similar size, so their number stays small;
* :func:`delete_paths` marks a file's old documents deleted without a query per path;
* :func:`refreshed` points a searcher at the newest segments, reusing unchanged readers;
* :func:`indexed_stats` reads what every stored document says about its file.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

from whoosh import index as windex
from whoosh.reading import EmptyReader, MultiReader, SegmentReader
from whoosh.searching import Searcher

from . import compat
from .planning import weighting

__all__ = [
    "delete_paths",
    "fill",
    "indexed_stats",
    "merge_policy",
    "open_readers",
    "refreshed",
    "stored_stat",
    "tier",
]

log = logging.getLogger(__name__)

#: Rebuilds of at least this many files use worker processes (forking costs ~0.1 s).
_PARALLEL_MIN_FILES = 1000
_PARALLEL_PROCS = 2
#: Memory (MB) each writer may hold postings in before spilling sorted runs to disk. A spill
#: is merged back one posting at a time in Python: at 10,000 notes with 128 MB per worker
#: the rebuild took 34 s, with 512 MB 18 s (each worker peaked at about 400 MB).
_POOL_MB = 512
#: Segments of one size class (see ``tier``) are merged once there are this many.
_SEGMENTS_PER_TIER = 4


def fill(
    ix: Any, schema: Any, files: list[str], docs_of: Callable[[str], Iterable[dict[str, Any]]]
) -> int:
    """Add every file to the fresh index ``ix``; returns the document count.

    Large builds use two worker processes (Whoosh's ``MpWriter``) that analyse and
    write one segment each while this process reads the files: on two cores that is
    about half the single-writer time. Whoosh gives up on a worker's result after a
    second and cannot stop a worker it has started, so the workers are joined or
    terminated here, and a build whose count comes out wrong is redone with one writer.
    """
    procs = min(_PARALLEL_PROCS, os.cpu_count() or 1)
    if procs > 1 and len(files) >= _PARALLEL_MIN_FILES:
        try:
            count = _write_all(
                ix.writer(procs=procs, multisegment=True, limitmb=_POOL_MB, codec=compat.codec()),
                files,
                docs_of,
            )
            with ix.searcher() as check:
                if check.doc_count_all() == count:
                    return count
            log.warning("search index: the parallel build lost documents; building with one writer")
        except Exception as exc:  # noqa: BLE001 - fall back to the plain build below
            log.warning(
                "search index: the parallel build failed (%s); building with one writer", exc
            )
        folder = ix.storage.folder
        for entry in os.scandir(folder):
            os.unlink(entry.path)
        ix = windex.create_in(folder, schema)
    # One writer: Whoosh sorts postings in memory runs and writes one compact segment.
    return _write_all(ix.writer(limitmb=_POOL_MB, codec=compat.codec()), files, docs_of)


def _write_all(
    writer: Any, files: list[str], docs_of: Callable[[str], Iterable[dict[str, Any]]]
) -> int:
    count = 0
    try:
        for rel in files:
            for doc in docs_of(rel):
                writer.add_document(**doc)
                count += 1
        writer.commit()
    except BaseException:
        with contextlib.suppress(Exception):
            writer.cancel()
        raise
    finally:
        for task in getattr(writer, "tasks", ()):  # MpWriter's worker processes
            if task.is_alive():
                task.terminate()
            task.join(timeout=5)
    return count


def open_readers(searcher: Any) -> dict[str, Any]:
    """The searcher's open per-segment readers, by segment id."""
    out: dict[str, Any] = {}
    if searcher is not None:
        for reader, _ in searcher.ixreader.leaf_readers():
            segment = reader.segment()
            if segment is not None:
                out[segment.segment_id()] = reader
    return out


def refreshed(ix: Any, searcher: Any, schema: Any) -> Any:
    """Point the searcher at the latest commit, reopening only segments that changed.

    Whoosh-Reloaded's ``Searcher.refresh()`` keeps readers of segments a merge removed
    (so a merged index returns each note twice); this does the reuse by hand instead.
    """
    toc = ix._read_toc()
    reusable: dict[tuple[str, int], Any] = {}
    for reader, _ in searcher.ixreader.leaf_readers():
        seg = reader.segment()
        if seg is not None:
            reusable[(seg.segment_id(), seg.deleted_count())] = reader
    readers = []
    for seg in toc.segments:
        reader = reusable.pop((seg.segment_id(), seg.deleted_count()), None)
        if reader is None:
            reader = SegmentReader(ix.storage, schema, seg, generation=toc.generation)
        readers.append(reader)
    for leftover in reusable.values():
        with contextlib.suppress(Exception):
            leftover.close()
    if not readers:
        reader = EmptyReader(schema)
    elif len(readers) == 1:
        reader = readers[0]
    else:
        reader = MultiReader(readers, generation=toc.generation)
    return Searcher(reader, weighting=weighting(), fromindex=ix)


def tier(doc_count: int) -> int:
    """Size class of a segment: 1-3 documents, 4-15, 16-63, ... (powers of four)."""
    return max(doc_count, 1).bit_length() - 1 >> 1


def merge_policy(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge segments of similar size once a size class holds several (a tiered policy).

    Every flush adds a segment and a query pays a little per segment and term. Whoosh's own
    policy lets about a dozen 100-note segments pile up before it merges. Here, as soon as
    ``_SEGMENTS_PER_TIER`` segments share a size class (powers of four), they are merged into
    the segment being written, so the count stays logarithmic in the index size and each
    note is rewritten a few times over its life, not on every flush.
    """
    tiers: dict[int, list[Any]] = {}
    for seg in segments:
        tiers.setdefault(tier(seg.doc_count_all()), []).append(seg)
    merging = [seg for group in tiers.values() if len(group) >= _SEGMENTS_PER_TIER for seg in group]
    for seg in merging:
        reader = SegmentReader(writer.storage, writer.schema, seg)
        try:
            writer.add_reader(reader)
        finally:
            reader.close()
    merged = {id(seg) for seg in merging}
    return [seg for seg in segments if id(seg) not in merged]


def delete_paths(writer: Any, rels: list[str], open_readers: dict[str, Any]) -> None:
    """Mark every document of ``rels`` deleted in ``writer``'s segments.

    Whoosh's ``delete_by_term`` runs a query and opens a reader over every segment per
    call. Here each path is a hash probe in each segment's term table, through the readers
    the searcher already has open (``open_readers``, by segment id); only segments it does
    not know yet are opened. A document found twice is simply deleted twice (harmless).
    """
    base = 0
    opened = []
    try:
        for segment in writer.segments:
            leaf = open_readers.get(segment.segment_id())
            if leaf is None:
                leaf = SegmentReader(
                    writer.storage, writer.schema, segment, generation=writer.generation
                )
                opened.append(leaf)
            for rel in rels:
                if ("rel", rel) in leaf:
                    for docnum in leaf.postings("rel", rel).all_ids():
                        writer.delete_document(base + docnum)
            base += segment.doc_count_all()
    finally:
        for leaf in opened:
            leaf.close()


def stored_stat(value: Any) -> tuple[int, int] | None:
    """The (mtime_ns, size) a document was indexed with, from its stored field."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    return None


def indexed_stats(reader: Any) -> tuple[dict[str, list[Any]], set[str]]:
    """path -> [stat, version] for every indexed file, and the files indexed twice.

    A conversation log has one document per message; it is indexed twice when one of
    its lines (or a plain file) appears in two documents.
    """
    out: dict[str, list[Any]] = {}
    seen: set[tuple[str, Any]] = set()
    twice: set[str] = set()
    for _docnum, fields in reader.iter_docs():
        rel = fields.get("rel")
        key = (rel, fields.get("line"))
        if key in seen:
            twice.add(rel)
        seen.add(key)
        out.setdefault(rel, [fields.get("stat"), fields.get("version")])
    return out, twice
