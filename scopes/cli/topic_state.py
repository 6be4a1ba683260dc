"""``contextfs topic show|state|decide|chain``: a topic's where-are-we state and its
decisions from the command line (registered on the ``topic`` group of :mod:`.topics`)."""

from __future__ import annotations

import click

from contextfs.cli.common import echo_data, pass_manager, pass_reader, translate_errors
from contextfs.manager import ContextManager

from ..topics import SECTIONS, Topics, item_text

__all__ = ["chain", "decide", "show", "state"]


@click.command(
    "show",
    epilog="""\b
Example:
  contextfs topic show billing-migration --section "In Progress"
""",
)
@click.argument("name")
@click.option("--section", default=None, help="Only this where-are-we section.")
@click.option("--json", "as_json", is_flag=True)
@translate_errors
@pass_reader
def show(ctx: ContextManager, name: str, section: str | None, as_json: bool) -> None:
    """A topic's card and where-are-we state."""
    topics = Topics(ctx)
    t = topics.get(name)
    state = topics.where.state(t.name)
    if as_json:
        echo_data(
            {"topic": t, "state": state.sections, "vocabulary": topics.vocabulary.of(t.name)}, True
        )
        return
    if section:
        for raw in state.section(section):
            click.echo(raw)
        return
    click.echo(
        f"{t.title} ({t.name}) [{t.status}{', open' if t.open else ''}] last active {t.last_active}"
    )
    if t.description:
        click.echo(f"relevant: {t.description}")
    if t.summary:
        click.echo(f"summary: {t.summary}")
    click.echo("")
    click.echo(state.render().rstrip("\n"))


@click.command(
    "state",
    epilog="""\b
Examples:
  contextfs topic state billing-migration append "In Progress" "Fix proration rounding"
  contextfs topic state billing-migration complete "proration rounding"
  contextfs topic state billing-migration finalize
  contextfs topic state billing-migration clear-notifications
""",
)
@click.argument("name")
@click.argument(
    "action", type=click.Choice(["append", "complete", "finalize", "clear-notifications"])
)
@click.argument("args", nargs=-1)
@click.option(
    "--new-section",
    is_flag=True,
    help="With append: start SECTION when the file has no such section.",
)
@translate_errors
@pass_manager
def state(
    ctx: ContextManager, name: str, action: str, args: tuple[str, ...], new_section: bool
) -> None:
    """Change where-are-we: append SECTION TEXT, complete ITEM, finalize, clear-notifications."""
    topics = Topics(ctx)
    if action == "append":
        if len(args) != 2:
            raise click.UsageError(
                f"append needs SECTION and TEXT; sections: {', '.join(SECTIONS)}"
            )
        click.echo(topics.where.append(name, args[0], args[1], new_section=new_section))
    elif action == "complete":
        if len(args) != 1:
            raise click.UsageError("complete needs the item's text (or a unique part of it)")
        click.echo(topics.where.complete(name, args[0]))
    elif action == "finalize":
        dropped = topics.where.finalize(name)
        click.echo(
            f"finalized; {len(dropped)} old completed item(s) left the file (git keeps them)"
        )
    else:
        cleared = topics.where.clear_notifications(name)
        click.echo(f"cleared {len(cleared)} notification(s)")
        for raw in cleared:
            click.echo(f"  {item_text(raw)}")


@click.command(
    "decide",
    epilog="""\b
Example:
  contextfs topic decide billing-migration "Cut over in January" --reason "December change freeze" --depends-on D2
""",
)
@click.argument("name")
@click.argument("text")
@click.option("--reason", default=None, help="Why it was decided.")
@click.option(
    "--depends-on",
    "depends_on",
    multiple=True,
    metavar="ID",
    help="A decision this rests on (repeatable).",
)
@click.option(
    "--supersedes",
    default=None,
    metavar="ID",
    help="A decision this replaces (kept, marked superseded).",
)
@translate_errors
@pass_manager
def decide(
    ctx: ContextManager,
    name: str,
    text: str,
    reason: str | None,
    depends_on: tuple[str, ...],
    supersedes: str | None,
) -> None:
    """Record a decision with its reason and dependencies; prints its id."""
    click.echo(
        Topics(ctx).decisions.decide(
            name, text, depends_on=list(depends_on), supersedes=supersedes, reason=reason
        )
    )


@click.command(
    "chain",
    epilog="""\b
Example:
  contextfs topic chain k8s-cost-cuts D5
""",
)
@click.argument("name")
@click.argument("decision_id")
@translate_errors
@pass_manager
def chain(ctx: ContextManager, name: str, decision_id: str) -> None:
    """The dependency chain of a decision from its root, with each reason."""
    click.echo(Topics(ctx).decisions.chain(name, decision_id).rstrip("\n"))
