"""One text as the secret detectors read it: split once, lower-cased once, searched by line.

The detectors of :mod:`contextfs.gate.secrets_detectors` look for the same needles and
keyword gates in the same text many times; :class:`ScannedText` computes each search once
and answers by line index and offset within the line.
"""

from __future__ import annotations

import re
from bisect import bisect_right

__all__ = ["ScannedText", "fold", "in_data_uri"]


def fold(text: str) -> str:
    """``text`` in lower case with every character at its offset: the few characters that
    lower-case to two (``İ``) make the whole text fold through ASCII instead (each non-ASCII
    character one ``?``), so offsets found in the folded text read the same spot in ``text``."""
    folded = text.lower()
    if len(folded) != len(text):
        folded = text.encode("ascii", "replace").decode("ascii").lower()
    return folded


class ScannedText:
    """One text, split once, with the lower-cased copy and line lookups the detectors share."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw_lines = text.split("\n")
        self._folded: str | None = None
        self._starts: list[int] | None = None
        self._all: list[str] | None = None
        self._hits: dict[tuple[object, bool], dict[int, list[int]]] = {}

    @property
    def folded(self) -> str:
        if self._folded is None:
            self._folded = fold(self.text)
        return self._folded

    def line(self, index: int) -> str:
        # Stripped as detect-secrets does, so a CRLF file fingerprints like its LF twin.
        return self.raw_lines[index].rstrip()

    def all_lines(self) -> list[str]:
        if self._all is None:
            self._all = [self.line(i) for i in range(len(self.raw_lines))]
        return self._all

    @property
    def starts(self) -> list[int]:
        """The offset where each line starts."""
        if self._starts is None:
            self._starts = [0]
            self._starts += [m.end() for m in re.finditer("\n", self.text)]
        return self._starts

    def hits(self, needles: tuple[str, ...], folded: bool) -> dict[int, list[int]]:
        """Line index -> offsets within the line where any of ``needles`` occurs."""
        key = (needles, folded)
        if key not in self._hits:
            haystack = self.folded if folded else self.text
            positions = []
            for needle in needles:
                at = haystack.find(needle)
                while at != -1:
                    positions.append(at)
                    at = haystack.find(needle, at + 1)
            self._hits[key] = self._by_line(positions)
        return self._hits[key]

    def gated(self, gate: re.Pattern[str], folded: bool) -> dict[int, list[int]]:
        """Line index -> offsets within the line where ``gate`` matches."""
        key = (gate, folded)
        if key not in self._hits:
            haystack = self.folded if folded else self.text
            self._hits[key] = self._by_line([m.start() for m in gate.finditer(haystack)])
        return self._hits[key]

    def _by_line(self, positions: list[int]) -> dict[int, list[int]]:
        if not positions:
            return {}
        starts = self.starts
        out: dict[int, list[int]] = {}
        for at in sorted(positions):
            index = bisect_right(starts, at) - 1
            out.setdefault(index, []).append(at - starts[index])
        return out


# A data URI's base64 payload (an image inlined in HTML, CSS or markdown): `data:`, a media
# type and parameters (bounded, so the search stays linear), `;base64,`, the payload.
_DATA_URI = re.compile(r"data:[^,\s]{0,200}?;base64,([A-Za-z0-9+/=]*)")


def in_data_uri(value: str, line: str) -> bool:
    """Every occurrence of ``value`` on ``line`` lies inside a data URI's base64 payload:
    encoded bytes that happen to spell a token (`.../EAACRvAWiwz...` in an inlined JPEG),
    not one written there. A value not on the line lies in none."""
    if "base64," not in line or value not in line:
        return False
    payloads = [m.span(1) for m in _DATA_URI.finditer(line)]
    start = line.find(value)
    while start != -1:
        if not any(a <= start and start + len(value) <= b for a, b in payloads):
            return False
        start = line.find(value, start + 1)
    return True
