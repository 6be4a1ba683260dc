"""``contextfs context``: print the view an agent gets for a scope, with its token accounting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from contextfs.cliutil import echo_data, pass_reader, translate_errors
from contextfs.tokens import persistent_counts

from .rules import SCOPES
from .scoped import ScopedContext
from .views import left_out_note

__all__ = ["WORKED_BUDGETS", "WORKED_QUERY", "budget_views", "context", "demo"]


def _summary(view: Any) -> str:
    lines = [view.text, "", f"<!-- {view.tokens} tokens"
             + (f" of {view.budget}" if view.budget is not None else "") + " -->"]
    lines += [left_out_note(d) for d in view.dropped]  # what the view does not hold, and why
    return "\n".join(lines)


@click.command("context")
@click.option("--scope", type=click.Choice(list(SCOPES)), default=None,
              help="Scope level.  [default: subtask with --subtask, else task]")
@click.option("--subtask", "subtask", default=None,
              help="Subtask id (task/subtasks/<id>.md); implies --scope subtask when --scope is not given.")
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Hard token budget for the view.")
@click.option("--query", default=None, help="Page in the best matches for this query; excerpts follow it.")
@click.option("--topic", default=None, help="Add a topic's where-are-we, topic and decisions files.")
@click.option("--as-of", "as_of", default=None, help="Assemble the view as it was at this revision (HEAD~N, an id, a branch or a tag).")
@click.option("--encoding", default=None, help="tiktoken encoding (default cl100k_base).")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest, items, drops and token accounting as JSON.")
@translate_errors
@pass_reader
def context(
    ctx: Any, scope: str | None, subtask: str | None, budget: int | None, query: str | None, topic: str | None,
    as_of: str | None, encoding: str | None, as_json: bool,
) -> None:
    """Print the context for a scope, within a token budget.

    Items that do not fit step down tiers (full, excerpt, overview, abstract, cue)
    before anything is dropped; pinned core memory is always shown in full.

    \b
    Example:
      contextfs context --scope task --budget 2000 --query "webhook retry schedule"
      contextfs context --scope subtask --subtask retry-policy --budget 800 --json
      contextfs context --scope task --budget 2000 --as-of HEAD~3
    """
    scoped = ScopedContext(ctx, encoding=encoding)
    # Counts kept in the root's state folder: a view of unchanged files loads no encoder.
    with persistent_counts(ctx.state, scoped.encoding):
        if budget is None and query is None and as_of is None and topic is None and not as_json:
            click.echo(scoped.get_context(scope, subtask))
            return
        view = scoped.assemble(scope, subtask, budget=budget, query=query, topic=topic, as_of=as_of)
    if as_json:
        data = view.to_dict()
        echo_data(data, True)
    else:
        click.echo(_summary(view))


#: The worked example's scope, query and budgets: the demo prints them and docs/scopes.md
#: shows them as a table generated from the same run (cog), so its numbers cannot drift.
WORKED_QUERY = "webhook retry backoff dead-letter queue"
WORKED_BUDGETS = (8000, 2000, 500)


def budget_views(ctx: Any) -> list[tuple[int, Any]]:
    """The task scope for :data:`WORKED_QUERY` at each of :data:`WORKED_BUDGETS`."""
    scoped = ScopedContext(ctx)
    return [(budget, scoped.assemble("task", budget=budget, query=WORKED_QUERY)) for budget in WORKED_BUDGETS]


def demo(ctx: Any, say: Callable[[str], None]) -> None:
    """The same task scope at 8000, 2000 and 500 tokens, and what stepped down a tier."""
    previous: dict[str, str] = {}
    for budget, view in budget_views(ctx):
        tiers: dict[str, int] = {}
        for item in view.items:
            tiers[item.tier] = tiers.get(item.tier, 0) + 1
        counts = ", ".join(f"{n} {tier}" for tier, n in tiers.items())
        steps = [f"{i.path} {i.tier} (was {previous[i.path]})" for i in view.items
                 if previous.get(i.path, i.tier) != i.tier]
        say(f"budget {budget}: {view.tokens} tokens, {len(view.items)} items ({counts}), {len(view.dropped)} dropped"
            + (f"; e.g. {', '.join(steps[:2])}" if steps else ""))
        previous = {i.path: i.tier for i in view.items}
    say(f"(the task scope, query {WORKED_QUERY!r}) pinned core memory stays full; the rest steps down")
    say("full > excerpt > overview > abstract > cue; assemble(..., as_of=<commit>) gives the same bytes later.")
