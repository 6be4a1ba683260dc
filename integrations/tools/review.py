"""The review tool: which sessions wait for a person's approval. It only lists.

An agent in review mode writes to a branch of its own (:mod:`contextfs.review.decisions`); a person
approves or discards. There is deliberately no tool that approves, discards or recovers:
an agent never decides on its own changes, whatever a prompt asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from contextfs.review.sessions import Sessions

from .spec import ToolSpec

if TYPE_CHECKING:
    from .spec import Toolkit

__all__ = ["REVIEW_TOOLS"]

MAX_SESSIONS = 20


class PendingArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: int = Field(
        default=10,
        ge=1,
        le=MAX_SESSIONS,
        description=f"How many waiting sessions to list, most recent first (1-{MAX_SESSIONS}).",
    )


def pending(kit: Toolkit, a: PendingArgs) -> str:
    waiting = Sessions(kit.ctx).list(status="pending", limit=a.limit)
    own = kit.ctx.parts.review.session if kit.ctx.parts.review is not None else None
    if not waiting:
        note = " Your writes in this session go to review." if own else ""
        return "No session is waiting for review." + note
    lines = []
    for s in waiting:
        mine = " (this session)" if s.id == own else ""
        files = ", ".join(s.files[:8]) + (
            f" and {len(s.files) - 8} more" if len(s.files) > 8 else ""
        )
        lines.append(
            f"- {s.id}{mine}: {', '.join(s.agents)}, {s.pending} change(s) since {s.started}, "
            f"+{s.added} -{s.removed} lines in {files}"
        )
    return (
        "Sessions waiting for a person's review (only a person can approve or discard them):\n"
        + "\n".join(lines)
    )


REVIEW_TOOLS: list[ToolSpec[Any]] = [
    ToolSpec(
        "list_pending_reviews",
        "store",
        "List the sessions whose writes wait for a person's review, with their agents, files "
        "and line counts. Use it to tell the person what is waiting, or to check whether your "
        "own writes were approved yet; you cannot approve or discard anything yourself.",
        PendingArgs,
        pending,
        idempotent=True,
        example={"limit": 5},
    ),
]
