"""The index stamp: which commit the index reflects, and proof that this machine wrote it.

``stamp.json`` beside the segment files names the HEAD the index was brought up to, the
index format, schema, codec and Whoosh version it was built with, and the size and SHA-1
of every index file. It is signed with the user's machine key (see :mod:`contextfs.files.state`):
Whoosh reads parts of an index with pickle, so an index whose stamp does not verify — made
elsewhere, copied in, or tampered with — is rebuilt and never opened.

Each file's record also holds its inode, modification time and status-change time
(``ctime``) once the file is old enough for them to be exact (see ``_SETTLED``).
:func:`check_sums` may then skip hashing a file whose size and those three stamps are
unchanged: any write to a file, or a file put in its place, changes its ``ctime`` — which,
unlike ``mtime``, no program can set back — or its inode. What that leaves out is damage
below the filesystem (a flipped bit on disk), which ``verify()`` (``contextfs reindex
--verify``) and the reopen after any Whoosh error still catch by hashing every file.
The stamp can also carry ``disk``: a digest of every indexable file's path, mtime and
size, recorded (:func:`record_disk`) right after a reconciliation that left the index
matching the files exactly. Any change to the index rewrites the stamp without it. A
process that finds a stamp naming the current HEAD with the digest of the files as they
are now (:func:`current`) knows the index matches every file, and opens it without the
lock and without reconciling: no reading of every indexed document's stored (mtime,
size), about 125 ms at 10,000 notes, and nothing written. That is the usual case for a
short-lived process (one ``contextfs search``); any difference means the locked open.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import whoosh

from .. import clock
from .compat import codec_id
from .schema import SCHEMA_FINGERPRINT

if TYPE_CHECKING:
    from ..files.state import StateDir

__all__ = [
    "INDEX_FORMAT",
    "STAMP_FILE",
    "STAMP_MAGIC",
    "WHOOSH_VERSION",
    "check_sums",
    "current",
    "disk_digest",
    "read_stamp",
    "record_disk",
    "settled",
    "valid",
    "write_stamp",
]

STAMP_FILE = "stamp.json"
STAMP_MAGIC = "contextfs-search-index"
WHOOSH_VERSION = whoosh.versionstring()
#: Bump when what is indexed changes in a way the schema fingerprint cannot see.
INDEX_FORMAT = 4  # 2: body indexed without positions; 3: packed postings blocks; 4: contextfs.text.analysis terms, conversation turns
#: Files Whoosh rewrites in place or that the stamp itself is: not checksummed.
UNSUMMED = frozenset({STAMP_FILE, "WRITELOCK", "MAIN_WRITELOCK"})
#: A file's times are recorded only once they are this many seconds old: a filesystem
#: keeps times in ticks (a few milliseconds, up to 2 s on FAT), and a file changed again
#: within the tick it was recorded in could otherwise keep the recorded values.
_SETTLED = 2.0


def read_stamp(folder: Path, state: StateDir) -> dict[str, Any] | None:
    """The stamp, if this machine wrote it (its HMAC checks out); else None."""
    try:
        data = json.loads(folder.joinpath(STAMP_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("magic") != STAMP_MAGIC:
        return None
    mac = data.pop("mac", None)
    if not state.verify(_canonical(data), mac):
        return None
    return data


def write_stamp(
    folder: Path,
    state: StateDir,
    build: str,
    head: str | None,
    previous: dict[str, Any] | None = None,
    *,
    disk: str | None = None,
) -> None:
    data: dict[str, Any] = {
        "magic": STAMP_MAGIC,
        "format": INDEX_FORMAT,
        "schema": SCHEMA_FINGERPRINT,
        "codec": codec_id(),
        "whoosh": WHOOSH_VERSION,
        "build": build,
        "head": head,
        "files": file_sums(folder, (previous or {}).get("files") or {}),
    }
    if disk is not None:
        data["disk"] = disk
    data["mac"] = state.sign(_canonical(data))
    tmp = folder / f".{STAMP_FILE}.{secrets.token_hex(4)}.tmp"
    tmp.write_text(json.dumps(data), "utf-8")
    os.replace(tmp, folder / STAMP_FILE)


def disk_digest(on_disk: dict[str, tuple[int, int]]) -> str:
    """A digest of every indexable file's path, mtime and size (equal digests: the same files)."""
    text = "\n".join(f"{rel}\0{mtime}\0{size}" for rel, (mtime, size) in sorted(on_disk.items()))
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def current(
    stamp: dict[str, Any], head: str | None, on_disk: Callable[[], dict[str, tuple[int, int]]]
) -> bool:
    """True when a verified stamp says the index matches every file: the same HEAD, the
    same files (``on_disk()`` walks them), and every index file's record settled."""
    return (
        stamp.get("disk") is not None
        and stamp.get("head") == head
        and settled(stamp.get("files"))
        and stamp["disk"] == disk_digest(on_disk())
    )


def record_disk(folder: Path, state: StateDir, disk: str, previous: dict[str, Any]) -> None:
    """Rewrite the stamp with ``disk`` (and settled file records) unless it already has them."""
    stamp = read_stamp(folder, state) or previous
    if stamp.get("disk") != disk or not settled(stamp.get("files")):
        write_stamp(
            folder,
            state,
            str(stamp.get("build") or secrets.token_hex(8)),
            stamp.get("head"),
            stamp,
            disk=disk,
        )


def valid(stamp: dict[str, Any] | None) -> bool:
    """True when the stamp describes an index this version of contextfs can read."""
    return (
        stamp is not None
        and stamp.get("format") == INDEX_FORMAT
        and stamp.get("schema") == SCHEMA_FINGERPRINT
        and stamp.get("codec") == codec_id()
        and stamp.get("whoosh") == WHOOSH_VERSION
    )


def _index_files(folder: Path) -> list[os.DirEntry[str]]:
    return [
        e
        for e in os.scandir(folder)
        if e.is_file(follow_symlinks=False)
        and e.name not in UNSUMMED
        and not e.name.endswith(".tmp")
    ]


def _sha1(path: str) -> str:
    digest = hashlib.sha1()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _times(st: os.stat_result) -> list[int]:
    return [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]


def file_sums(folder: Path, known: dict[str, Any]) -> dict[str, list[Any]]:
    """[size, SHA-1] of every index file, plus [inode, mtime, ctime] once the file has settled.

    Whoosh never rewrites a file, so a known file of the same size (and, when recorded,
    the same inode and times) keeps its checksum; only new ones are hashed.
    """
    out: dict[str, list[Any]] = {}
    cutoff = clock.now().timestamp() - _SETTLED
    for entry in _index_files(folder):
        st = entry.stat(follow_symlinks=False)
        old = known.get(entry.name)
        if (
            isinstance(old, list)
            and len(old) in (2, 5)
            and old[0] == st.st_size
            and old[2:] in ([], _times(st))
        ):
            sha = old[1]
        else:
            sha = _sha1(entry.path)
        out[entry.name] = [st.st_size, sha, *(_times(st) if st.st_ctime < cutoff else ())]
    return out


def settled(sums: Any) -> bool:
    """True when every file's record carries its times (so :func:`check_sums` can skip hashing)."""
    return isinstance(sums, dict) and all(
        isinstance(info, list) and len(info) == 5 for info in sums.values()
    )


def check_sums(folder: Path, sums: Any, *, full: bool = False) -> str:
    """'' when every index file matches the stamp; else what differs (truncation, garbage, strays).

    A file whose size, inode, mtime and ctime are as recorded is not hashed again, unless
    ``full`` is set.
    """
    if not isinstance(sums, dict) or not sums:
        return "the stamp lists no files"
    present = {e.name: e for e in _index_files(folder)}
    for name in present:
        if name not in sums:
            return f"{name} is not in the stamp"
    for name, info in sums.items():
        entry = present.get(name)
        if entry is None:
            return f"{name} is missing"
        if not isinstance(info, list) or len(info) not in (2, 5):
            return "the stamp is malformed"
        st = entry.stat(follow_symlinks=False)
        if st.st_size != info[0]:
            return f"{name} does not match its checksum"
        if not full and len(info) == 5 and info[2:] == _times(st):
            continue  # unchanged since it was hashed: see the module docstring
        if _sha1(entry.path) != info[1]:
            return f"{name} does not match its checksum"
    return ""


def _canonical(stamp: dict[str, Any]) -> bytes:
    return json.dumps(stamp, sort_keys=True, separators=(",", ":")).encode()
