"""git's index file format (versions 2, 3 and 4): entries, extensions and the checksum.

Layout: ``DIRC``, the version, the number of entries; the entries sorted by name then
stage; extensions (a 4-byte signature, a 32-bit size, the payload); a SHA-1 of everything
before it (all zeros when git was told to skip it). An entry is ten 32-bit stat fields
(ctime and mtime in seconds and nanoseconds, dev, ino, mode, uid, gid, size), the blob id,
16-bit flags (assume-valid, extended, stage, name length) and, with the extended flag,
16 more bits (skip-worktree, intent-to-add); then the name. Versions 2 and 3 end the name
with 1 to 8 NULs so the entry is a multiple of 8 bytes long; version 4 writes the number
of bytes to drop from the previous name (a varint) and the rest of the name, NUL-ended.

Only what the writer needs is decoded; an extension's payload stays bytes.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "Entry",
    "IndexData",
    "IndexFormatError",
    "invalidate_tree",
    "names",
    "parse",
    "serialize",
]

_HEADER = struct.Struct(">4sII")
_STAT = struct.Struct(">10I20sH")
_FLAG_VALID = 0x8000
_FLAG_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF
_NULL_SHA = bytes(20)


class IndexFormatError(ValueError):
    """The bytes are not an index file this module can read."""


@dataclass(slots=True)
class Entry:
    """One index entry; ``flags`` are the on-disk 16 bits without the name length."""

    ctime: tuple[int, int]
    mtime: tuple[int, int]
    dev: int
    ino: int
    mode: int
    uid: int
    gid: int
    size: int
    sha: bytes
    flags: int
    ext_flags: int
    name: bytes

    @property
    def stage(self) -> int:
        return (self.flags >> 12) & 3

    def key(self) -> tuple[bytes, int]:
        return self.name, self.stage


@dataclass
class IndexData:
    version: int
    entries: list[Entry]
    extensions: list[tuple[bytes, bytes]] = field(default_factory=list)
    checksum: bytes = _NULL_SHA

    def extension(self, signature: bytes) -> bytes | None:
        return next((payload for sig, payload in self.extensions if sig == signature), None)


def _varint(data: bytes | memoryview, offset: int) -> tuple[int, int]:
    """git's offset varint (each continuation adds one before shifting)."""
    byte = data[offset]
    offset += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[offset]
        offset += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, offset


def _encode_varint(value: int) -> bytes:
    out = [value & 0x7F]
    value >>= 7
    while value:
        value -= 1
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(out))


def _header(data: bytes) -> tuple[int, int]:
    """An index file's version and entry count (IndexFormatError when it is not one)."""
    if len(data) < _HEADER.size + 20:
        raise IndexFormatError("the index file is shorter than its header")
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise IndexFormatError(
            f"not a git index of version 2, 3 or 4 ({signature!r}, version {version})"
        )
    return version, count


def parse(data: bytes) -> IndexData:
    """Decode a whole index file (raises IndexFormatError when it is not one, or is torn)."""
    version, count = _header(data)
    checksum = data[-20:]
    if checksum != _NULL_SHA and hashlib.sha1(memoryview(data)[:-20]).digest() != checksum:
        raise IndexFormatError(
            "the index file's checksum does not match its content (a torn write)"
        )
    try:
        entries, offset = _entries(data, _HEADER.size, count, version)
        extensions = []
        end = len(data) - 20
        while offset < end:
            sig = data[offset : offset + 4]
            (size,) = struct.unpack_from(">I", data, offset + 4)
            if offset + 8 + size > end:
                raise IndexFormatError(f"the index extension {sig!r} runs past the end of the file")
            extensions.append((sig, data[offset + 8 : offset + 8 + size]))
            offset += 8 + size
    except (struct.error, IndexError) as exc:
        raise IndexFormatError(f"the index file is truncated ({exc})") from None
    return IndexData(version, entries, extensions, checksum)


def names(data: bytes) -> tuple[list[bytes], int]:
    """The entry names of an index file and the latest entry mtime (seconds), without
    decoding the entries: what a split index needs of its shared index, several times
    faster than :func:`parse` (the file is not hashed: its name is its checksum)."""
    version, count = _header(data)
    if version == 4:
        entries = parse(data).entries
        return [e.name for e in entries], max((e.mtime[0] for e in entries), default=0)
    out: list[bytes] = []
    append = out.append
    newest = 0
    offset = _HEADER.size
    find = data.index
    try:
        for _ in range(count):
            mtime = int.from_bytes(data[offset + 8 : offset + 12], "big")
            if mtime > newest:
                newest = mtime
            high = data[offset + 60]
            pos = offset + (64 if high & 0x40 else 62)
            length = ((high & 0x0F) << 8) | data[offset + 61]
            end = pos + length if length < _NAME_MASK else find(b"\0", pos)
            append(data[pos:end])
            offset += ((end - offset) + 8) & ~7
    except (IndexError, ValueError):
        raise IndexFormatError("the index file is truncated") from None
    if offset > len(data) - 20:
        raise IndexFormatError("the index file is truncated")
    return out, newest


def _entries(data: bytes, offset: int, count: int, version: int) -> tuple[list[Entry], int]:
    out: list[Entry] = []
    append = out.append
    unpack = _STAT.unpack_from
    previous = b""
    for _ in range(count):
        (cs, cn, ms, mn, dev, ino, mode, uid, gid, size, sha, flags) = unpack(data, offset)
        pos = offset + 62
        ext = 0
        if flags & _FLAG_EXTENDED:
            (ext,) = struct.unpack_from(">H", data, pos)
            pos += 2
        length = flags & _NAME_MASK
        if version == 4:
            drop, pos = _varint(data, pos)
            if drop > len(previous):
                raise IndexFormatError(
                    "an index entry drops more of the previous name than there is"
                )
            end = data.index(b"\0", pos)
            name = previous[: len(previous) - drop] + data[pos:end]
            offset = end + 1
            previous = name
        else:
            end = data.index(b"\0", pos) if length == _NAME_MASK else pos + length
            name = data[pos:end]
            offset += ((end - offset) + 8) & ~7
        append(
            Entry(
                (cs, cn),
                (ms, mn),
                dev,
                ino,
                mode,
                uid,
                gid,
                size,
                sha,
                flags & ~_NAME_MASK,
                ext,
                name,
            )
        )
    return out, offset


def _entry_bytes(entry: Entry, name: bytes, extended: bool) -> bytes:
    flags = (entry.flags & ~(_NAME_MASK | _FLAG_EXTENDED)) | min(len(name), _NAME_MASK)
    if extended:
        flags |= _FLAG_EXTENDED
    head = _STAT.pack(
        entry.ctime[0] & 0xFFFFFFFF,
        entry.ctime[1] & 0xFFFFFFFF,
        entry.mtime[0] & 0xFFFFFFFF,
        entry.mtime[1] & 0xFFFFFFFF,
        entry.dev & 0xFFFFFFFF,
        entry.ino & 0xFFFFFFFF,
        entry.mode,
        entry.uid & 0xFFFFFFFF,
        entry.gid & 0xFFFFFFFF,
        entry.size & 0xFFFFFFFF,
        entry.sha,
        flags,
    )
    if extended:
        head += struct.pack(">H", entry.ext_flags)
    return head


def serialize(index: IndexData, *, strip: frozenset[int] = frozenset()) -> bytes:
    """The index file's bytes, with a fresh checksum. Entries whose position is in ``strip``
    are written with an empty name (replacements in a split index, as git writes them).

    Version 3 becomes 2 when no entry needs the extended flags, as git does.
    """
    version = index.version
    extended = any(e.ext_flags for e in index.entries)
    if version in (2, 3):
        version = 3 if extended else 2
    parts = [_HEADER.pack(b"DIRC", version, len(index.entries))]
    previous = b""
    for i, entry in enumerate(index.entries):
        name = b"" if i in strip else entry.name
        head = _entry_bytes(entry, name, bool(entry.ext_flags))
        if version == 4:
            common = 0
            limit = min(len(name), len(previous))
            while common < limit and name[common] == previous[common]:
                common += 1
            parts.append(head + _encode_varint(len(previous) - common) + name[common:] + b"\0")
            previous = name
        else:
            size = len(head) + len(name)
            parts.append(head + name + b"\0" * (((size + 8) & ~7) - size))
    for sig, payload in index.extensions:
        parts.append(sig + struct.pack(">I", len(payload)) + payload)
    body = b"".join(parts)
    return body + hashlib.sha1(body).digest()


# ---------------------------------------------------------------- the cache tree
def invalidate_tree(payload: bytes, paths: list[bytes]) -> bytes:
    """The ``TREE`` extension with every folder on ``paths`` marked invalid (as git does
    when it changes an entry): its entry count becomes -1 and its tree id is dropped."""
    nodes, _end = _tree_node(payload, 0)
    for path in paths:
        node = nodes
        node[1] = -1
        for part in path.split(b"/")[:-1]:
            child = next((c for c in node[3] if c[0] == part), None)
            if child is None:
                break
            child[1] = -1
            node = child
    out: list[bytes] = []
    _tree_write(nodes, out)
    return b"".join(out)


#: [name, entry count (-1: invalid), tree id or None, children]
_TreeNode: TypeAlias = list[Any]


def _tree_node(data: bytes, offset: int) -> tuple[_TreeNode, int]:
    end = data.index(b"\0", offset)
    name = data[offset:end]
    line_end = data.index(b"\n", end)
    count_text, _, sub_text = data[end + 1 : line_end].partition(b" ")
    count, subtrees = int(count_text), int(sub_text)
    offset = line_end + 1
    sha = None
    if count >= 0:
        sha = data[offset : offset + 20]
        offset += 20
    children = []
    for _ in range(subtrees):
        child, offset = _tree_node(data, offset)
        children.append(child)
    return [name, count, sha, children], offset


def _tree_write(node: _TreeNode, out: list[bytes]) -> None:
    name, count, sha, children = node
    out.append(name + b"\0" + str(count).encode() + b" " + str(len(children)).encode() + b"\n")
    if count >= 0 and sha is not None:
        out.append(sha)
    for child in children:
        _tree_write(child, out)
