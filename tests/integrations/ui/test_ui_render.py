"""Hostile text rendered for the page: markdown without live HTML, diffs, the bar, the tree."""

from __future__ import annotations

from html.parser import HTMLParser
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip(
    "markdown_it", reason="the 'ui' extra is not installed: pip install 'contextfs-git[ui]'"
)

from contextfs.integrations.ui.render import (  # noqa: E402 - after the extra's check
    ALLOWED_TAGS,
    budget_bar,
    diff_lines,
    markdown_html,
    tree_of,
)

ATTRIBUTES = {
    "a": {"href", "rel"},
    "ol": {"start"},
    "th": {"style"},
    "td": {"style"},
    "code": {"class"},
}
PAYLOADS = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "<svg onload=alert(1)>",
    "[x](javascript:alert(1))",
    "[x](JAVASCRIPT:alert(1))",
    "[x](vbscript:msgbox)",
    "[x](data:text/html,<script>)",
    "![i](javascript:alert(1))",
    "![i](http://tracker.invalid/p.png)",
    '<a href="javascript:x">y</a>',
    "<iframe src=//x>",
    "<style>body{display:none}</style>",
    '<div style="background:url(x)">',
    "```html\n<script>x</script>\n```",
    "<!-- <script> -->",
    "&lt;script&gt;",
    "[a](<javascript:alert(1)>)",
    '<details open ontoggle="x">',
    "| a |\n|---|\n| <b onmouseover=x>b</b> |",
]


class Collector(HTMLParser):
    """Every tag and attribute in a piece of HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))

    handle_startendtag = handle_starttag


def check_inert(html: str) -> None:
    parser = Collector()
    parser.feed(html)
    for tag, attrs in parser.found:
        assert tag in ALLOWED_TAGS, (tag, html)
        for name, value in attrs:
            assert name in ATTRIBUTES.get(tag, set()), (tag, name, html)
            if name == "href":
                assert (
                    not (value or "")
                    .strip()
                    .lower()
                    .startswith(("javascript:", "vbscript:", "data:"))
                ), html
            if name == "style":
                assert value in ("text-align:left", "text-align:right", "text-align:center"), html


@pytest.mark.parametrize("payload", PAYLOADS)
def test_known_payloads_come_out_as_text(payload: str) -> None:
    html = markdown_html(f"# Note\n\n{payload}\n\nafter")
    check_inert(html)
    assert "<script" not in html and "onerror=" not in html.replace("onerror=&quot;", "")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *PAYLOADS,
                "*a*",
                "**b**",
                "`c`",
                "> q",
                "- i",
                "1. n",
                "[l](memory/f.md)",
                "<",
                ">",
                '"',
                "'",
                "&",
                "\n",
                "\n\n",
                "](",
                "![",
                "<a",
                " on",
                "=",
                "javascript:",
            ]
        ),
        max_size=30,
    ).map("".join)
)
def test_any_mix_of_markdown_and_html_is_inert(text: str) -> None:
    check_inert(markdown_html(text, "notes/x.md"))


def test_links_between_notes_go_to_their_page_and_images_are_not_fetched() -> None:
    html = markdown_html(
        "[facts](../memory/facts.md) ![chart](http://tracker.invalid/p.png)", "notes/a.md"
    )
    assert 'href="/file/memory/facts.md"' in html
    assert (
        "<img" not in html
        and "[image: chart]" in html
        and 'rel="nofollow noreferrer noopener"' in html
    )


def test_diff_lines_number_both_sides() -> None:
    diff = (
        "--- a/x\n+++ b/x\n@@ -3,3 +3,4 @@\n same\n-old\n+new\n+more\n same\n"
        "\\ No newline at end of file\n"
    )
    rows = diff_lines(diff)
    assert [(r.kind, r.old, r.new, r.text) for r in rows] == [
        ("hunk", None, None, "@@ -3,3 +3,4 @@"),
        ("context", 3, 3, "same"),
        ("del", 4, None, "old"),
        ("add", None, 4, "new"),
        ("add", None, 5, "more"),
        ("context", 5, 6, "same"),
        ("meta", None, None, "\\ No newline at end of file"),
    ]


def test_the_budget_bar_scales_to_the_budget() -> None:
    items = [
        SimpleNamespace(path="a", tier="full", tokens=500, pinned=True),
        SimpleNamespace(path="b", tier="cue", tokens=250, pinned=False),
    ]
    segments, line = budget_bar(items, 1000, 750)
    assert [(s.x, s.width, s.tier) for s in segments] == [
        (0.0, 500.0, "full"),
        (500.0, 250.0, "cue"),
    ] and line == 1000
    over, line = budget_bar(items, None, 750)  # no budget: the view's own size is the whole bar
    assert over[-1].x + over[-1].width == pytest.approx(1000) and line == 1000


def test_the_tree_nests_folders() -> None:
    tree = tree_of(["b.md", "memory/facts.md", "memory/core/human.md", "a/x.md"])
    assert [f.name for f in tree.folders] == ["a", "memory"] and tree.files == ["b.md"]
    assert tree.count == 4 and tree.folders[1].folders[0].files == ["memory/core/human.md"]
