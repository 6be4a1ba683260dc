"""Which syntax detect-secrets' keyword detector should expect on a line of a document.

detect-secrets picks the keyword patterns per file extension: quoted values for code and
unknown files (``password = "..."``), unquoted ``key: value`` / ``key=value`` for config
files. A markdown note holds both: prose and code fences want quotes (a bare
``password: rotate monthly`` in prose is not a credential), while YAML frontmatter, config
fences (``yaml``, ``ini``, ``dotenv``, ``bash``) and ``NAME=value`` lines are config. This
module reads that structure once per document and answers per line, visiting only the
fence lines, so a 4 MB note costs one regex pass.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right

from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
    REGEX_BY_FILETYPE,
)
from detect_secrets.util.filetype import determine_file_type

__all__ = ["Syntax", "SyntaxMap"]

Syntax = dict[re.Pattern[str], int]  # a KeywordDetector pattern -> the group that holds the value
CONFIG: Syntax = CONFIG_DENYLIST_REGEX_TO_GROUP
QUOTED: Syntax = QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*([\w+#.-]*).*")
_MARKER = re.compile(r"```|~~~")  # where a fence may open or close: its line is read
_FRONT_END = re.compile(r"^(?:---|\.\.\.)[ \t\r]*$", re.MULTILINE)
#: ``NAME=value`` (shell, ``.env``): config wherever no fence language says otherwise.
_ENV_LINE = re.compile(r"\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=[^=\s]")
#: Fence languages written as ``name=value`` / ``name: value`` without quotes.
_CONFIG_LANGUAGES = frozenset(
    "yaml yml toml ini cfg conf properties env dotenv sh bash shell zsh console docker dockerfile nginx".split()  # noqa: SIM905
)
_LANGUAGE_EXTENSIONS = {
    "python": ".py", "py": ".py", "javascript": ".js", "js": ".js", "typescript": ".js",
    "ts": ".js", "jsx": ".js", "tsx": ".js", "go": ".go", "golang": ".go", "java": ".java",
    "kotlin": ".java", "swift": ".swift", "terraform": ".tf", "tf": ".tf", "hcl": ".tf",
    "c": ".c", "h": ".c", "cpp": ".cpp", "c++": ".cpp", "cc": ".cpp", "csharp": ".cs",
    "cs": ".cs", "c#": ".cs", "objc": ".m", "objective-c": ".m", "php": ".php",
}  # fmt: skip
_MARKDOWN = frozenset({"", ".md", ".markdown", ".mdx", ".txt"})


def _for_extension(ext: str) -> Syntax:
    return REGEX_BY_FILETYPE.get(determine_file_type("x" + ext), QUOTED)


def _for_language(language: str) -> Syntax | None:
    """A fence's syntax; None for a fence without a language (judged line by line)."""
    language = language.lower()
    if not language:
        return None
    if language in _CONFIG_LANGUAGES:
        return CONFIG
    ext = _LANGUAGE_EXTENSIONS.get(language)
    return QUOTED if ext is None else _for_extension(ext)  # unknown: values must be quoted


class SyntaxMap:
    """The keyword syntax of each line of one text (0-based line indexes)."""

    def __init__(self, text: str, lines: list[str], starts: list[int], path: str | None) -> None:
        self._lines = lines
        name = os.path.basename(path or "")
        ext = os.path.splitext(name)[1].lower()
        self._fixed: Syntax | None = None
        if name == ".env" or name.startswith(".env.") or ext == ".env":
            self._fixed = CONFIG
        elif ext not in _MARKDOWN:
            self._fixed = _for_extension(ext)
        self._front_end = -1
        # fences as (opening line, last content line, syntax), in order, not overlapping
        self._fences: list[tuple[int, int, Syntax | None]] = []
        if self._fixed is None:
            self._read_structure(text, starts)
        self._fence_starts = [first for first, _, _ in self._fences]

    def _read_structure(self, text: str, starts: list[int]) -> None:
        offset = 0
        if self._lines and self._lines[0].rstrip() == "---":
            end = _FRONT_END.search(text, len(self._lines[0]) + 1)
            self._front_end = bisect_right(starts, end.start()) - 1 if end else len(self._lines) - 1
            offset = starts[self._front_end + 1] if self._front_end + 1 < len(starts) else len(text)
        opened: tuple[int, str, Syntax | None] | None = None
        for index in self._fence_candidates(text, starts, offset):
            match = _FENCE.match(self._lines[index])
            if match is None:
                continue
            marker = match.group(1)
            if opened is None:
                opened = (index, marker, _for_language(match.group(2)))
            elif (
                marker[0] == opened[1][0]
                and len(marker) >= len(opened[1])
                and not match.group(0).strip().strip(marker[0])
            ):
                self._fences.append((opened[0], index - 1, opened[2]))
                opened = None
        if opened is not None:  # an unclosed fence runs to the end, as in CommonMark
            self._fences.append((opened[0], len(self._lines) - 1, opened[2]))

    @staticmethod
    def _fence_candidates(text: str, starts: list[int], offset: int) -> list[int]:
        """Indexes of lines after ``offset`` that hold a run of three backticks or tildes."""
        return sorted({bisect_right(starts, m.start()) - 1 for m in _MARKER.finditer(text, offset)})

    def of(self, index: int) -> Syntax:
        if self._fixed is not None:
            return self._fixed
        if index <= self._front_end:
            return CONFIG
        at = bisect_right(self._fence_starts, index) - 1
        if at >= 0:
            first, last, syntax = self._fences[at]
            if first < index <= last and syntax is not None:
                return syntax
        return CONFIG if _ENV_LINE.match(self._lines[index]) else QUOTED
