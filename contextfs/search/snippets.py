"""Snippets: about 200 characters of a file around the densest cluster of query words.

Cut from the file itself at query time, so the index never stores the body and a snippet
can never show text the file no longer has.
"""

from __future__ import annotations

import itertools
import re

from ..frontmatter_formats import find_block

__all__ = ["make_snippet", "strip_frontmatter"]

_SPACE = re.compile(r"\s+")


def strip_frontmatter(text: str) -> str:
    """The body of a markdown file, found without parsing YAML (snippets only need text);
    a TOML (``+++``) or JSON block is found by the codec's own rule."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if text[:1] in "+{":
        block = find_block(text)
        return block.body if block is not None else text
    if not text.startswith("---"):
        return text
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].rstrip() != "---":
        return text
    match = re.search(r"^(?:---|\.\.\.)[ \t]*\r?$", text[first_nl + 1:], re.MULTILINE)
    if match is None:
        return text
    return text[first_nl + 1 + match.end():].lstrip("\r\n")


def _prefixes(words: list[str]) -> list[str]:
    """What to look for in the text for each query word, longest first.

    Index terms are stems ('polici'); one letter is cut so 'policy' and 'policies' both match.
    """
    out = {(w[:-1] if len(w) > 4 else w) for w in (word.lower() for word in words)}
    return sorted((p for p in out if p), key=len, reverse=True)


_MAX_MATCHES = 400


def _word_starts(body: str, prefixes: list[str]) -> list[tuple[int, str]]:
    """``(position, prefix)`` of every word of ``body`` that starts with a prefix, in order.

    The same matches as the regex ``\b(prefix|...)`` with IGNORECASE, found with
    ``str.find`` on the lower-cased text (C speed; the regex tried every position). Where
    lower-casing changes the text's length (a few Unicode letters) the regex is used.
    """
    low = body.lower()
    if len(low) != len(body):
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, prefixes)) + ")", re.IGNORECASE)
        return [(m.start(), m.group(1).lower()) for m in itertools.islice(pattern.finditer(body), _MAX_MATCHES)]
    taken: dict[int, str] = {}
    for prefix in prefixes:  # longest first: a position keeps the longest prefix, as the regex does
        i = low.find(prefix)
        found = 0
        while i >= 0 and found < _MAX_MATCHES:
            if i not in taken and (i == 0 or not (low[i - 1].isalnum() or low[i - 1] == "_")):
                taken[i] = prefix
                found += 1
            i = low.find(prefix, i + 1)
    return sorted(taken.items())[:_MAX_MATCHES]


def make_snippet(body: str, words: list[str], width: int = 200) -> str:
    """About ``width`` characters of ``body`` around the densest cluster of query words."""
    prefixes = _prefixes(words)
    start = 0
    if prefixes:
        matches = _word_starts(body, prefixes)
        if matches:
            best, best_score = matches[0][0], 0
            wanted = len({w for _, w in matches})  # the most distinct words any window can hold
            for i, (pos, _) in enumerate(matches):
                distinct = {w for p, w in matches[i:i + 12] if p < pos + width}
                if len(distinct) > best_score:
                    best, best_score = pos, len(distinct)
                    if best_score >= wanted:  # every query word is in this window: no better one
                        break
            start = max(0, best - width // 4)
            while start > 0 and not body[start - 1].isspace() and best - start < width // 2:
                start -= 1
    else:
        # No words to show (a '*' or filter-only query): skip a leading heading line.
        lines = body.lstrip().splitlines()
        while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
            lines.pop(0)
        body = "\n".join(lines)
    chunk = body[start:start + width + 40]
    text = _SPACE.sub(" ", chunk).strip()
    if len(text) > width:
        cut = text.rfind(" ", 0, width)
        text = text[: cut if cut > width // 2 else width]
    return text
