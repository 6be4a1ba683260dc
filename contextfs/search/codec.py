"""Whoosh's W3 codec with postings blocks stored as packed machine arrays.

Whoosh's own codec pickles every postings block as tuples of Python ints and floats and
compresses the pickle with zlib. Reading a common word back then costs a decompress, an
unpickle that builds one Python object per posting, and a delta decode, block after
block: at 10,000 notes that was most of a first-time query (about 6 ms of 12).

This codec writes the same blocks with the document numbers (uint16 where they fit) and
the weights (whole-number frequencies as uint16, else the float32 Whoosh's writer keeps) as
packed arrays, and variable-size values (positions) as one length array plus one blob, in
larger blocks, compressed with zlib level 1 (uncompressed, the index was twice the size for
about 0.6 ms less per first-time query at 10,000 notes). Whoosh's matchers read them
through the overrides below, so every Whoosh query works unchanged; the plain-word ranker in
``search_rank`` goes further and views the bytes as numpy arrays without creating a single
Python number. Only the block payload changes: term files, block headers, stored fields,
columns and inlined single postings are Whoosh's own. Two writing hot spots are trimmed as
well (a commit calls them once per posting): ``add_posting`` without its type assertions,
and document lengths decoded once per field instead of one seek and read per call.

Segments remember the codec that wrote them (Whoosh pickles it into the table of contents),
so a merge or a reader always decodes a segment with the right class. ``CODEC_ID`` goes
into the index stamp: an index written by another layout (or on a machine whose ``array``
item sizes or byte order differ) is rebuilt, never misread.
"""

from __future__ import annotations

import sys
from array import array
from typing import Any

from whoosh.codec.whoosh3 import (
    LENGTHS_COLUMN,
    W3Codec,
    W3LeafMatcher,
    W3PerDocReader,
    W3PostingsWriter,
    _lenfield,
)
from whoosh.util.numeric import byte_to_length

__all__ = ["CODEC_ID", "PackedCodec", "block_arrays", "length_bytes"]

#: Postings per block. Whoosh uses 128; with packed arrays the per-block overhead (a
#: header pickle and a seek) dominates, and Whoosh's block skipping gains little here.
BLOCK_LIMIT = 1024
#: What a packed block means on this machine; part of the index stamp.
CODEC_ID = (
    f"packed3/{BLOCK_LIMIT}/{sys.byteorder}/"
    f"H{array('H').itemsize}I{array('I').itemsize}f{array('f').itemsize}d{array('d').itemsize}"
)

_UINT16 = 65536
#: Blocks shorter than this keep float32 weights (numpy's call overhead outweighs the bytes).
_SMALL_BLOCK = 16
#: Marks a block's variable-size values packed as (marker, lengths, blob); Whoosh's own
#: layout is a tuple of bytes, so a str marker cannot be mistaken for it.
_VALUES = "V"


def _pack_ids(ids: Any) -> tuple[str, bytes]:
    """Block ids (ascending) as uint16 when they fit, else as Whoosh's own uint32 array."""
    if ids[-1] < _UINT16:
        return "H", array("H", ids).tobytes()
    if isinstance(ids, array) and ids.typecode == "I":
        return "I", ids.tobytes()
    return "I", array("I", ids).tobytes()


def _pack_weights(weights: Any) -> Any:
    """None (all 1.0) or one float (all equal), as Whoosh does; else the float32 array.

    Whoosh's writer already holds weights as ``array('f')``, so its bytes are exactly the
    values Whoosh would have pickled, with no per-posting conversion.
    """
    first = weights[0]
    if all(w == first for w in weights):
        return None if first == 1.0 else first
    if isinstance(weights, array) and weights.typecode == "f":
        if len(weights) >= _SMALL_BLOCK:
            # Term frequencies are whole numbers: half the bytes as uint16, checked exactly.
            # numpy is imported here, its only use in the codec: a process that only reads
            # never pays its import (40-100 ms).
            import numpy as np

            values = np.frombuffer(weights, dtype=np.float32)
            if (
                values.min() >= 0
                and values.max() < _UINT16
                and bool((values == np.trunc(values)).all())
            ):
                return "H", values.astype(np.uint16).tobytes()
        return "f", weights.tobytes()
    return "d", array("d", weights).tobytes()


def _packed(value: Any) -> bool:
    """True for a ``(typecode, bytes)`` pair, as this codec writes ids and weights."""
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bytes)


def _unpack(code: str, raw: bytes) -> array[Any]:
    out = array(code)
    out.frombytes(raw)
    return out


class PackedPostingsWriter(W3PostingsWriter):
    """Writes Whoosh's blocks with ids and weights as ``(typecode, bytes)`` pairs."""

    # Set by Whoosh's writer for each block; declared so that mypy knows their types.
    _maxweight: float
    _minlength: int | None
    _maxlength: int

    def add_posting(
        self, id_: Any, weight: float, vbytes: bytes, length: int | None = None
    ) -> None:
        """Whoosh's ``add_posting`` without its per-posting type assertions (a third of its time)."""
        if len(self._ids) >= self._blocklimit:
            self._write_block()
        self._ids.append(id_)
        self._weights.append(weight)
        if weight > self._maxweight:
            self._maxweight = weight
        if vbytes:
            self._values.append(vbytes)
        if length:
            if self._minlength is None or length < self._minlength:
                self._minlength = length
            if length > self._maxlength:
                self._maxlength = length

    def _mini_ids(self) -> Any:
        if self._byteids:  # term vectors key postings by bytes; keep Whoosh's layout
            return super()._mini_ids()
        return _pack_ids(self._ids)

    def _mini_weights(self) -> Any:
        if self._byteids:  # vector postings are read by Whoosh's own matcher
            return super()._mini_weights()
        return _pack_weights(self._weights)

    def _mini_values(self) -> Any:
        """Variable-size values (positions) as one length array and one blob.

        Whoosh pickles them as a tuple of bytes objects, which every read of the block
        unpickles, even when only ids and weights are wanted (as in plain-word ranking).
        """
        fixedsize = self._format.fixed_value_size()
        values = self._values
        if (
            (fixedsize is None or fixedsize < 0)
            and not self._byteids
            and len(values) == len(self._ids)
        ):
            return _VALUES, array("I", [len(v) for v in values]).tobytes(), b"".join(values)
        return super()._mini_values()


class PackedLeafMatcher(W3LeafMatcher):
    """Whoosh's block matcher, decoding packed blocks (ids and weights as arrays)."""

    def _read_ids(self) -> None:
        if self._data is None:
            self._read_data()
        ids = self._data[0]
        if self._byteids or not _packed(ids):
            super()._read_ids()
            return
        self._ids = _unpack(*ids)

    def _read_weights(self) -> None:
        if self._data is None:
            self._read_data()
        weights = self._data[1]
        if _packed(weights):
            packed = _unpack(*weights)
            self._weights = packed if packed.typecode in "fd" else array("f", packed)
            return
        super()._read_weights()

    def _read_values(self) -> None:
        if self._data is None:
            self._read_data()
        values = self._data[2]
        if isinstance(values, tuple) and len(values) == 3 and values[0] == _VALUES:
            blob = values[2]
            out = []
            pos = 0
            for n in _unpack("I", values[1]):
                out.append(blob[pos : pos + n])
                pos += n
            self._values = tuple(out)
            return
        super()._read_values()


#: Whoosh's document length for each stored byte (0 means "no length": None, as Whoosh says).
_LENGTH_OF_BYTE = [None] + [byte_to_length(b) for b in range(1, 256)]


def length_bytes(perdoc: Any, fieldname: str, ndocs: int) -> bytes | None:
    """A segment's whole one-byte-per-document length column for ``fieldname``, or None.

    Whoosh decodes one document per call (a seek and a read); the column is a plain byte
    array, so reading it at once gives the same values. Anything unexpected in Whoosh's
    private column layout returns None, and callers use Whoosh's per-document path.
    """
    try:
        column = perdoc._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
        if (
            column is None
            or column._fixedlen != 1
            or column._typecode != "B"
            or column._reverse
            or column._count != ndocs
        ):
            return None
        raw = column._dbfile.get(column._basepos, ndocs)
    except Exception:  # private Whoosh internals: fall back rather than guess
        return None
    return bytes(raw) if len(raw) == ndocs else None


class _PerDocReader(W3PerDocReader):
    """Whoosh's per-document reader, remembering which length columns are absent.

    Whoosh checks the file system (``os.stat``) for a missing column on every call, and a
    commit asks once per posting of every unscored field: about 1,600 stats for 100 notes.
    """

    def __init__(self, storage: Any, segment: Any) -> None:
        super().__init__(storage, segment)
        self._length_tables: dict[str, Any] = {}

    def _cached_reader(self, fieldname: str, column: Any) -> Any:
        readers = self._readers
        if fieldname in readers:
            return readers[fieldname]
        reader = super()._cached_reader(fieldname, column)
        if reader is None:
            readers[fieldname] = None
        return reader

    def doc_field_length(self, docnum: int, fieldname: str, default: Any = 0) -> Any:
        """Whoosh's answer, from a table decoded once per field.

        A commit asks for the length of every posting's document (millions of calls in a
        rebuild); Whoosh seeks and reads one byte from the column file each time.
        """
        table = self._length_tables.get(fieldname)
        if table is None:
            table = self._length_tables[fieldname] = self._length_table(fieldname)
        if table is False or not 0 <= docnum < len(table):
            return super().doc_field_length(docnum, fieldname, default)
        return table[docnum]

    def _length_table(self, fieldname: str) -> Any:
        if self._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN) is None:
            return False
        raw = length_bytes(self, fieldname, self._doccount)
        if raw is None:
            return False
        return [_LENGTH_OF_BYTE[b] for b in raw]


class PackedCodec(W3Codec):
    """The codec every contextfs segment is written with (see the module docstring)."""

    def __init__(
        self, blocklimit: int = BLOCK_LIMIT, compression: int = 1, inlinelimit: int = 1
    ) -> None:
        super().__init__(blocklimit=blocklimit, compression=compression, inlinelimit=inlinelimit)

    def postings_writer(self, dbfile: Any, byteids: bool = False) -> Any:
        return PackedPostingsWriter(
            dbfile,
            blocklimit=self._blocklimit,
            byteids=byteids,
            compression=self._compression,
            inlinelimit=self._inlinelimit,
        )

    def postings_reader(
        self, dbfile: Any, terminfo: Any, format_: Any, term: Any = None, scorer: Any = None
    ) -> Any:
        if terminfo.is_inlined():
            return super().postings_reader(dbfile, terminfo, format_, term=term, scorer=scorer)
        offset, length = terminfo.extent()
        return PackedLeafMatcher(dbfile, offset, length, format_, term=term, scorer=scorer)

    def per_document_reader(self, storage: Any, segment: Any) -> Any:
        return _PerDocReader(storage, segment)


def block_arrays(matcher: Any) -> tuple[Any, Any, int] | None:
    """``(ids, weights, count)`` of the matcher's current block without Python numbers.

    ``ids`` and ``weights`` are ``(typecode, bytes)`` pairs, or ``weights`` is None / one
    float as in Whoosh; returns None for a block that is not packed (callers fall back).
    """
    if not isinstance(matcher, PackedLeafMatcher) or matcher._byteids:
        return None
    if matcher._data is None:
        matcher._read_data()
    ids, weights = matcher._data[0], matcher._data[1]
    if not _packed(ids):
        return None
    return ids, weights, matcher._blocklength
