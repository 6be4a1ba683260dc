"""What each screen of the page shows, gathered from the public APIs of every layer.

Each function takes the root's :class:`~contextfs.ContextManager` and returns the values
a template renders; none of them writes (the decisions are in :mod:`.app`). Text from
files and history stays text here: templates escape it, and markdown goes through
:func:`.render.markdown_html` only.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from contextfs.document import parse
from contextfs.errors import ContextFSError, NotFoundError
from contextfs.gate.poisoning import assess
from contextfs.review.sessions import Sessions
from contextfs.scopes import ScopedContext, Topics
from contextfs.scopes.rules import SCOPES
from contextfs.scopes.topics.files import WHERE_FILE
from contextfs.versioning import check_rev

from .render import budget_bar, diff_lines, markdown_html, tree_of

if TYPE_CHECKING:
    from contextfs import ContextManager

__all__ = [
    "file_page",
    "home_page",
    "search_page",
    "session_page",
    "sessions_page",
    "topic_page",
    "topics_page",
    "trash_page",
    "tree_page",
    "view_page",
]

#: The tier colours of the budget bar, most text first (CSS classes ``tier-<name>``).
TIERS = ("full", "excerpt", "overview", "abstract", "cue")
MAX_VIEW_BUDGET = 200_000


def _trust(meta: dict[str, Any], body: str) -> dict[str, Any]:
    """The trust marking of a note: what its frontmatter says and what the guard finds now."""
    verdict = assess(body)
    flagged = meta.get("flagged")
    reasons = list(
        dict.fromkeys([*(flagged if isinstance(flagged, list) else []), *verdict.reasons])
    )
    level = str(meta.get("trust", "trusted"))
    return {
        "level": level,
        "reasons": [str(r) for r in reasons],
        "ok": level == "trusted" and not reasons,
    }


def home_page(ctx: ContextManager) -> dict[str, Any]:
    sessions = Sessions(ctx)
    listed = sessions.list()
    waiting = [s for s in listed if s.status == "pending"]
    return {
        "waiting": [{"session": s, "changes": sessions.changes(s.id)} for s in waiting[:5]],
        "more_waiting": max(0, len(waiting) - 5),
        "recent": [s for s in listed if s.status != "pending"][:8],
        "files": len(ctx.list()),
    }


def tree_page(ctx: ContextManager) -> dict[str, Any]:
    return {"tree": tree_of(ctx.list())}


def file_page(ctx: ContextManager, path: str, at: str | None) -> dict[str, Any]:
    """A note rendered, with its frontmatter, trust marking and history; at a commit, the
    version it had then and what that commit changed in it."""
    rel = ctx.parts.gate(path)
    if at:
        commit = ctx.parts.git.resolve(check_rev(at)).hexsha
        text = ctx.show_at(rel, commit)
        if text is None:
            raise NotFoundError(f"{rel} did not exist at {commit[:12]}", path=rel)
        parent = ctx.parts.git.parent_of(commit)
        doc = parse(text, rel)
        meta, body = dict(doc.metadata), doc.body
        changes = diff_lines(ctx.diff(rel, parent, commit) if parent else "")
    else:
        doc = ctx.get(rel)
        meta, body, changes = dict(doc.metadata), doc.body, []
    return {
        "path": rel,
        "at": at,
        "meta": meta,
        "body_html": markdown_html(body, rel),
        "trust": _trust(meta, body),
        "history": ctx.history(rel, limit=50),
        "changes": changes,
        "is_log": rel.endswith(".jsonl"),
        "raw_body": body,
    }


def sessions_page(ctx: ContextManager, status: str | None) -> dict[str, Any]:
    listed = Sessions(ctx).list(status=status or None)
    days: dict[str, list[Any]] = defaultdict(list)
    for s in listed:
        days[s.ended[:10]].append(s)
    return {
        "days": sorted(days.items(), reverse=True),
        "status": status or "",
        "count": len(listed),
    }


def session_page(ctx: ContextManager, session: str) -> dict[str, Any]:
    sessions = Sessions(ctx)
    found = sessions.get(session)
    changes = sessions.changes(found.id)
    timeline = sessions.commits(found.id)
    first = timeline[0] if timeline else None
    return {
        "session": found,
        "changes": [{"change": c, "lines": diff_lines(c.diff)} for c in changes],
        "timeline": timeline,
        "seen_at": first.parents[0] if first is not None and first.parents else None,
    }


def view_page(
    ctx: ContextManager, *, scope: str, budget: int, query: str, at: str, subtask: str, topic: str
) -> dict[str, Any]:
    """What the agent saw: the view of a scope at a commit, each item against the budget."""
    scoped = ScopedContext(ctx, budget=max(1, min(budget, MAX_VIEW_BUDGET)))
    form = {
        "scope": scope,
        "budget": budget,
        "query": query,
        "at": at,
        "subtask": subtask,
        "topic": topic,
    }
    out: dict[str, Any] = {
        "form": form,
        "scopes": SCOPES,
        "commits": ctx.history(limit=40),
        "error": None,
        "view": None,
        "tiers": TIERS,
    }
    try:
        out["subtasks"] = scoped.subtasks(as_of=at or None)
        view = scoped.assemble(
            scope or None,
            subtask or None,
            query=query or None,
            topic=topic or None,
            as_of=at or None,
        )
    except ContextFSError as exc:
        out["error"] = str(exc)
        out.setdefault("subtasks", [])
        return out
    segments, budget_x = budget_bar(view.items, view.budget, view.tokens)
    used: dict[str, int] = defaultdict(int)
    for item in view.items:
        used[item.tier] += item.tokens
    out.update(
        view=view,
        segments=segments,
        budget_x=budget_x,
        used=dict(used),
        share=round(100.0 * view.tokens / view.budget, 1) if view.budget else 100.0,
    )
    return out


def topics_page(ctx: ContextManager) -> dict[str, Any]:
    topics = Topics(ctx)
    return {"topics": topics.list(), "active": topics.active()}


def topic_page(ctx: ContextManager, name: str) -> dict[str, Any]:
    topics = Topics(ctx)
    topic = topics.get(name)
    decisions = topics.decisions.of(topic.name)
    by_id = {d.id: d for d in decisions}
    children: dict[str, list[Any]] = defaultdict(list)
    roots: list[Any] = []
    for d in decisions:
        parents = [p for p in d.depends_on if p in by_id]
        (children[parents[0]] if parents else roots).append(d)
    where = ctx.read(topic.path(WHERE_FILE)) or ""
    return {
        "topic": topic,
        "roots": roots,
        "children": children,
        "by_id": by_id,
        "where_html": markdown_html(where, topic.path(WHERE_FILE)),
        "summary_html": markdown_html(topic.body, topic.path()),
    }


def search_page(ctx: ContextManager, query: str) -> dict[str, Any]:
    if not query.strip():
        return {"query": "", "hits": [], "error": None}
    try:
        return {"query": query, "hits": ctx.search(query, limit=30), "error": None}
    except ContextFSError as exc:
        return {"query": query, "hits": [], "error": str(exc)}


def trash_page(ctx: ContextManager) -> dict[str, Any]:
    return {"entries": list(reversed(ctx.trash()))}
