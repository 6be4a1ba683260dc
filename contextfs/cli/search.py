"""``contextfs search`` and ``contextfs reindex``: the index from the command line.

Both are thin: ``search`` is ``ContextManager.search`` with its filters as options, and
``reindex`` is ``SearchIndex.rebuild`` (or ``verify`` with ``--verify``). The index heals
itself on open, so ``reindex`` is for people who want to see it happen or to check drift.
"""

from __future__ import annotations

from typing import Any

import click

from ..manager import ContextManager
from .common import echo_data, pass_manager, pass_reader, translate_errors

__all__ = ["demo", "reindex", "search"]


def _text_hits(hits: list[Any]) -> str:
    if not hits:
        return "no matches"
    lines = []
    for hit in hits:
        tags = f"  [{', '.join(hit.tags)}]" if hit.tags else ""
        lines.append(f"{hit.path}  ({hit.score:.2f}){tags}")
        lines.append(f"    {hit.title}")
        if hit.snippet:
            lines.append(f"    ...{hit.snippet}...")
    return "\n".join(lines)


@click.command(
    "search",
    epilog="""\b
Examples:
  contextfs search "how do webhook retries work"
  contextfs search '"dead letter" AND postgres' --path task
  contextfs search 'tag:adr updated:>=2025-06' --limit 5 --json
  contextfs search '*' --limit 5            # the most recently updated notes
""",
)
@click.argument("query")
@click.option(
    "--path",
    "path",
    default="",
    metavar="FOLDER",
    help="Only files under this folder (whole path components).",
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    help="Only files with this tag (repeat for several; all must match).",
)
@click.option(
    "--kind", default=None, help="Only files in this top-level folder (project, task, memory, ...)."
)
@click.option(
    "--author",
    default=None,
    help="Only versions written by this actor ('agent' matches every agent).",
)
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Only files updated on or after DATE (2026-09-14).",
)
@click.option("--until", default=None, metavar="DATE", help="Only files updated on or before DATE.")
@click.option(
    "--trash", "include_trash", is_flag=True, help="Include soft-deleted files (.trash/)."
)
@click.option(
    "--limit", default=10, show_default=True, type=click.IntRange(1, 1000), help="How many hits."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print hits (path, snippet, score, title, tags, ...) as JSON.",
)
@translate_errors
@pass_reader
def search(
    ctx: ContextManager,
    query: str,
    path: str,
    tags: tuple[str, ...],
    kind: str | None,
    author: str | None,
    since: str | None,
    until: str | None,
    include_trash: bool,
    limit: int,
    as_json: bool,
) -> None:
    """Search: words, "phrases", AND/OR/NOT, tag:, path:, updated:.

    Plain words are ranked (BM25F: more of the words, and words in the title, rank
    higher); a '*' query lists the most recently updated notes. The whole query syntax
    is in docs/search.md.
    """
    filters: dict[str, Any] = {}
    if tags:
        filters["tags"] = list(tags)
    for name, value in (("kind", kind), ("author", author), ("since", since), ("until", until)):
        if value is not None:
            filters[name] = value
    if include_trash:
        filters["include_trash"] = True
    hits = ctx.search(query, path=path, limit=limit, **filters)
    echo_data(hits, as_json, _text_hits)


@click.command(
    "reindex",
    epilog="""\b
Examples:
  contextfs reindex            # rebuild the search index from the files
  contextfs reindex --verify   # compare index and files, fix any drift, report it
""",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Check the index against every file and fix drift instead of rebuilding.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@translate_errors
@pass_manager
def reindex(ctx: ContextManager, verify: bool, as_json: bool) -> None:
    """Rebuild the search index from the files (or check it: --verify)."""
    if not verify:
        count = ctx.index.rebuild()
        echo_data(
            {"rebuilt": True, "documents": count},
            as_json,
            lambda d: f"search index rebuilt: {d['documents']} documents",
        )
        return
    report = ctx.index.verify(fix=True)

    def text(r: Any) -> str:
        if r.rebuilt:
            return "search index was unreadable or foreign: rebuilt from the files"
        if r.ok:
            return f"search index OK: {r.checked} files checked, no drift"
        parts = [
            f"{name} {len(items)}: {', '.join(items[:5])}{' ...' if len(items) > 5 else ''}"
            for name, items in (
                ("missing", r.missing),
                ("stale", r.stale),
                ("extra", r.extra),
                ("duplicated", r.duplicates),
            )
            if items
        ]
        return f"search index drift in {r.checked} files checked; " + "; ".join(parts) + " (fixed)"

    echo_data(report, as_json, text)
    if not report.ok and not report.fixed:
        raise SystemExit(1)


def demo(ctx: ContextManager, say: Any) -> None:
    """Search the sample context: a natural question, a phrase, a tag, read-your-writes."""

    def paths(hits: list[Any]) -> str:
        return ", ".join(hit.path for hit in hits)

    question = "how do we retry failed webhook deliveries"
    say(f"{question!r} (ranked): {paths(ctx.search(question, limit=3))}")
    phrase = '"dead letter"'
    say(f"the phrase {phrase} under task/: {paths(ctx.search(phrase, path='task', limit=2))}")
    say(f"'tag:adr AND postgres': {paths(ctx.search('tag:adr AND postgres', limit=2))}")
    ctx.write(
        "memory/archive/demo-search.md",
        "The staging Kafka cluster runs on three brokers.",
        {"title": "Staging Kafka", "tags": ["demo"]},
    )
    found = [hit.path for hit in ctx.search("kafka brokers", limit=2)]
    ctx.delete("memory/archive/demo-search.md")
    gone = [hit.path for hit in ctx.search("kafka brokers", limit=2)]
    say(f"a note written a moment ago is found at once, no reindex: {found}; after delete: {gone}")
