"""A text as it reads once its escapes are decoded: the scanner's further readings.

A credential inside an escaped string is glued to the escape before it: ``token%3Dghp_...``
in a query string, ``"...\\nAKIA..."`` or ``token\\u003dghp_...`` in a JSON string. A vendor
format needs the token to start where a word starts, so none finds it as written. The
scanner therefore also reads such a text decoded, as the program that wrote it will, and
runs the same detectors and judgments on each reading (:func:`decoded_readings`).

Terminal output glues a token to its colour: ``ESC[93msk-...ESC[0m`` is what a coloured
log holds, captured from a command an agent ran. A terminal shows the token standing apart,
so the scanner also reads such a text with each escape sequence read as a space
(:func:`terminal_cleared`), in the text as written and in its string-unescaped reading
(``\u001b[93m`` in a JSON log).

Every reading keeps the text's lines: a decoded line break is a space, so a finding has the
line it has in the text as written. Escapes that end in ``;`` (HTML entities) need no
reading of their own: the ``;`` already ends the word before a token.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from urllib.parse import unquote

__all__ = ["decoded_readings", "percent_decoded", "string_unescaped", "terminal_cleared"]

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
#: Escapes inside escapes (``%253D``, a redirect URL inside a redirect URL) are decoded up to
#: this depth; each depth is one ``unquote`` and a reading of its own.
_DEPTH = 3
#: The escapes of a JSON string (JavaScript's, Java's and C's share them): ``\n``, ``\t``,
#: ``\r``, ``\"``, ``\\``, ``\/`` and ``\uXXXX``, a surrogate pair as one character. The
#: letters are lower case only: ``\N`` or ``\U0041`` escape nothing in JSON.
_BACKSLASH = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|u([0-9a-fA-F]{4})|([nrt\"\\/]))"
)
_SIMPLE = {"n": " ", "r": " ", "t": "\t", '"': '"', "\\": "\\", "/": "/"}
#: ECMA-48's escape sequences as terminals read them: a control sequence (``ESC[`` with its
#: parameters, ``ESC[1;93m``), an operating-system command up to its terminator (a window
#: title, a hyperlink; ended by BEL or ``ESC\``, never past the line), and any other escape
#: (``ESC7``, ``ESC(B``: intermediates, then one final character).
_TERMINAL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[ -/]*[0-~])")


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def _percent_once(text: str) -> str:
    if "%" not in text:
        return text
    # unquote reads an escape that is not UTF-8 as U+FFFD (its default, errors="replace")
    return "\n".join(_one_line(unquote(line)) for line in text.split("\n"))


def percent_decoded(text: str) -> list[str]:
    """The readings of ``text`` with its URL escapes decoded, as a server reads a form body
    or a query string: one per depth of escaping, up to ``_DEPTH``; none when it holds no
    escape. Each depth is its own reading, so a password holding a literal ``%41`` (written
    ``%2541``) is read as written at depth 1 and not only changed at depth 2. An escape
    that is not UTF-8 reads as U+FFFD; a ``%`` not followed by two hex digits stays."""
    readings: list[str] = []
    current = text
    for _ in range(_DEPTH):
        if not _PERCENT.search(current):
            break
        current = _percent_once(current)
        readings.append(current)
    return readings


def _unescape(match: re.Match[str]) -> str:
    high, low, unit, simple = match.groups()
    if simple is not None:
        return _SIMPLE[simple]
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
    code = int(unit, 16)
    return "\ufffd" if 0xD800 <= code <= 0xDFFF else _one_line(chr(code))


def string_unescaped(text: str) -> str | None:
    """``text`` with the escapes of a JSON string decoded in one pass (``\\\\n`` is a
    backslash and an ``n``), or None when it holds none. A lone surrogate reads as U+FFFD;
    a backslash before any other character stays as written (``\\d`` in a pattern)."""
    if "\\" not in text:
        return None
    decoded = _BACKSLASH.sub(_unescape, text)
    return decoded if decoded != text else None


def _string_once(text: str) -> str:
    return string_unescaped(text) or text


def terminal_cleared(text: str) -> str | None:
    """``text`` with each terminal escape sequence read as a space, or None when it holds
    none. A sequence never spans a line, so the lines stay."""
    if "\x1b" not in text:
        return None
    cleared = _TERMINAL.sub(" ", text)
    return cleared if cleared != text else None


def _terminal_once(text: str) -> str:
    return terminal_cleared(text) or text


def decoded_readings(text: str) -> list[tuple[str, Callable[[str], str]]]:
    """Every further reading of ``text`` the scanner runs, each with the function that reads
    a piece of the text as written the same way (to tell a value found again in a reading
    from a new one): its URL escapes decoded, one reading per depth, and its string escapes
    decoded, and its terminal escapes cleared, as written and once its string escapes are
    decoded; none for a text with none of these."""
    readings: list[tuple[str, Callable[[str], str]]] = []
    for depth, reading in enumerate(percent_decoded(text), 1):
        readings.append((reading, functools.partial(_repeat, _percent_once, depth)))
    unescaped = string_unescaped(text)
    if unescaped is not None:
        readings.append((unescaped, _string_once))
    for source, decode in ((text, _terminal_once), (unescaped, _unescaped_cleared)):
        cleared = terminal_cleared(source) if source is not None else None
        if cleared is not None:
            readings.append((cleared, decode))
    return readings


def _unescaped_cleared(text: str) -> str:
    return _terminal_once(_string_once(text))


def _repeat(decode: Callable[[str], str], times: int, text: str) -> str:
    for _ in range(times):
        text = decode(text)
    return text
