"""EWAH bitmaps as git stores them (the split index's delete and replace bitmaps).

A bitmap is serialised as its size in bits (32-bit), the number of 64-bit words that
follow (32-bit), the words (big-endian) and the position of the last marker word (32-bit).
The words are *marker* words followed by *literal* words: a marker says how many words
of all zeros (or all ones) come first (bits 1-32, the bit value in bit 0) and how many
literal words follow it (bits 33-63); a literal word holds 64 bits, lowest bit first.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

__all__ = ["decode", "encode"]

_RUN_MAX = (1 << 32) - 1
_LITERAL_MAX = (1 << 31) - 1


def decode(data: bytes | memoryview, offset: int = 0) -> tuple[list[int], int]:
    """The set bit positions (ascending) and the offset just past the bitmap.

    Raises ValueError on a truncated or inconsistent bitmap.
    """
    if len(data) - offset < 8:
        raise ValueError("truncated bitmap header")
    bit_size, count = struct.unpack_from(">II", data, offset)
    offset += 8
    if len(data) - offset < count * 8 + 4:
        raise ValueError("truncated bitmap words")
    words = struct.unpack_from(f">{count}Q", data, offset)
    offset += count * 8 + 4  # the last marker's position is not needed to read
    bits: list[int] = []
    word = 0  # index of the next uncompressed 64-bit word
    i = 0
    while i < count:
        marker = words[i]
        i += 1
        run = (marker >> 1) & _RUN_MAX
        literals = marker >> 33
        if marker & 1:
            bits.extend(range(word * 64, (word + run) * 64))
        word += run
        if i + literals > count:
            raise ValueError("a marker word names more literal words than the bitmap holds")
        for lit in words[i : i + literals]:
            base = word * 64
            while lit:
                low = lit & -lit
                bits.append(base + low.bit_length() - 1)
                lit ^= low
            word += 1
        i += literals
    if bits and bits[-1] >= bit_size:
        raise ValueError("a bit is set past the bitmap's size")
    return bits, offset


def encode(positions: Iterable[int]) -> bytes:
    """Serialise the bitmap with these bits set (runs of zero words compressed, as git does)."""
    ordered = sorted(set(positions))
    if not ordered:
        return struct.pack(">IIQI", 0, 1, 0, 0)
    nwords = ordered[-1] // 64 + 1
    dense = [0] * nwords
    for pos in ordered:
        dense[pos >> 6] |= 1 << (pos & 63)
    out: list[int] = []
    last_marker = 0
    i = 0
    while i < nwords:
        run = 0
        while i < nwords and dense[i] == 0 and run < _RUN_MAX:
            run += 1
            i += 1
        start = i
        while i < nwords and dense[i] != 0 and i - start < _LITERAL_MAX:
            i += 1
        last_marker = len(out)
        out.append((run << 1) | ((i - start) << 33))
        out.extend(dense[start:i])
    return struct.pack(f">II{len(out)}QI", ordered[-1] + 1, len(out), *out, last_marker)
