"""Turning agent-written text into HTML that can never run: markdown, diffs, bars, trees.

Everything a note, a commit message or a diff holds was written by a model or arrived by
a clone, so it is hostile. Markdown is rendered by markdown-it-py with raw HTML turned
off (a ``<script>`` or an ``onerror=`` in a note comes out as text), links limited to
the schemes markdown-it allows (no ``javascript:``) and marked ``nofollow noreferrer``,
links between notes mapped to the page of the note, and images shown as links (the page
never fetches anything a note names). All other text reaches the page through Jinja2's
autoescaping; the only markup built here is from :func:`markdown_html`, whose output
the tests parse and check against an allowlist. The page's Content-Security-Policy
forbids scripts altogether, as a second wall.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

__all__ = [
    "ALLOWED_TAGS",
    "BarSegment",
    "DiffLine",
    "Folder",
    "budget_bar",
    "diff_lines",
    "file_url",
    "markdown_html",
    "tree_of",
]

#: Every tag :func:`markdown_html` can emit (the tests hold it to this list).
ALLOWED_TAGS = frozenset(
    {
        "a",
        "blockquote",
        "br",
        "code",
        "del",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "strong",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)


def file_url(path: str) -> str:
    """The page of one note."""
    return "/file/" + quote(path, safe="/")


class _Renderer(RendererHTML):
    """markdown-it's HTML renderer with links made safe and images turned into links."""

    def link_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        token = tokens[idx]
        href = str(token.attrGet("href") or "")
        parts = urlsplit(href)
        if not parts.scheme and not parts.netloc and parts.path and not href.startswith("#"):
            base = posixpath.dirname(str(env.get("path", "")))
            target = posixpath.normpath(posixpath.join(base, parts.path))
            token.attrSet("href", file_url(target) if not target.startswith("..") else "#")
        token.attrSet("rel", "nofollow noreferrer noopener")
        return self.renderToken(tokens, idx, options, env)

    def image(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        alt = self.renderInlineAsText(token.children or [], options, env)
        src = str(token.attrGet("src") or "")
        label = escape(alt or src)
        return f'<a href="{escape(src)}" rel="nofollow noreferrer noopener">[image: {label}]</a>'


_MD = MarkdownIt(
    "commonmark", {"html": False, "linkify": False, "typographer": False}, renderer_cls=_Renderer
).enable(["table", "strikethrough"])


def markdown_html(text: str, path: str = "") -> Markup:
    """``text`` (markdown) as HTML with no raw HTML, script or event handler in it."""
    # markdown-it escaped every raw tag (html is off), so its output is safe to mark as markup.
    return Markup(_MD.render(text, {"path": path}))


# ------------------------------------------------------------------ diffs
@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff, ready for a table row."""

    #: ``add``, ``del``, ``hunk``, ``context``, ``meta``.
    kind: str
    old: int | None
    new: int | None
    text: str


def diff_lines(diff: str) -> list[DiffLine]:
    """A unified diff as rows with line numbers on each side (file headers left out)."""
    out: list[DiffLine] = []
    old = new = 0
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            continue
        if line.startswith("@@"):
            try:
                spans = line.split("@@")[1].split()
                old = int(spans[0][1:].split(",")[0])
                new = int(spans[1][1:].split(",")[0])
            except (IndexError, ValueError):
                old = new = 0
            out.append(DiffLine("hunk", None, None, line))
        elif line.startswith("+"):
            out.append(DiffLine("add", None, new, line[1:]))
            new += 1
        elif line.startswith("-"):
            out.append(DiffLine("del", old, None, line[1:]))
            old += 1
        elif line.startswith("\\"):
            out.append(DiffLine("meta", None, None, line))
        else:
            out.append(DiffLine("context", old, new, line[1:] if line.startswith(" ") else line))
            old += 1
            new += 1
    return out


# ------------------------------------------------------------------ the budget bar
@dataclass(frozen=True)
class BarSegment:
    """One item of a view drawn in the budget bar (SVG units; the bar is 1000 wide)."""

    x: float
    width: float
    tier: str
    label: str
    tokens: int
    pinned: bool


def budget_bar(
    items: Iterable[Any], budget: int | None, total: int
) -> tuple[list[BarSegment], float]:
    """Segments for each item (``path``, ``tier``, ``tokens``, ``pinned``) and where the
    budget line falls, both on a 0-1000 scale: the budget is the whole bar, or the view's
    size when it has none."""
    scale = float(max(budget or 0, total, 1))
    x = 0.0
    segments = []
    for item in items:
        width = 1000.0 * item.tokens / scale
        segments.append(
            BarSegment(
                round(x, 2),
                round(max(width, 0.5), 2),
                item.tier,
                f"{item.path} · {item.tier} · {item.tokens} tokens",
                item.tokens,
                item.pinned,
            )
        )
        x += width
    return segments, round(1000.0 * (budget or total) / scale, 2)


# ------------------------------------------------------------------ the tree
@dataclass
class Folder:
    """One folder of the tree: its sub-folders and files (paths), both sorted."""

    name: str
    path: str
    folders: list[Folder] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.files) + sum(f.count for f in self.folders)


def tree_of(paths: Iterable[str]) -> Folder:
    """The folders and files of a list of root-relative paths."""
    root = Folder("", "")
    index = {"": root}
    for rel in sorted(paths):
        parent = root
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            key = "/".join(parts[:depth])
            folder = index.get(key)
            if folder is None:
                folder = index[key] = Folder(parts[depth - 1], key)
                parent.folders.append(folder)
            parent = folder
        parent.files.append(rel)
    return root
