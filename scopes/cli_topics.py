"""``contextfs topic ...``: topic contexts from the command line, a thin layer over :class:`Topics`."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import click

from contextfs.cliutil import echo_data, pass_manager, pass_reader, translate_errors
from contextfs.manager import ContextManager

from .derived import VOCABULARY_FILE
from .topics import SECTIONS, Topics, item_text

__all__ = ["demo", "topic"]


def _view_text(view: Any) -> str:
    lines = [view.text.rstrip("\n"), "", f"-- {view.tokens} of {view.budget} tokens:"]
    for item in view.items:
        lines.append(f"   {item.path} [{item.tier}] {item.tokens} tokens: {item.reason}")
    for item in view.dropped:
        lines.append(f"   dropped {item.path}: {item.reason}")
    return "\n".join(lines)


@click.group(
    "topic",
    epilog="""\b
Examples:
  contextfs topic new "Family logistics" --description "School runs and holidays; relevant when the family calendar comes up"
  contextfs topic switch family-logistics
  contextfs topic list
""",
)
def topic() -> None:
    """Isolated topic contexts: switch, spawn, close, state, decisions, routing."""


@topic.command(
    "new",
    epilog="""\b
Example:
  contextfs topic new "Billing migration" --description "Moving invoices to Stripe; relevant when invoices or plans come up"
""",
)
@click.argument("title")
@click.option("--description", default="", help="A cue: who or what it is and when it becomes relevant.")
@click.option("--name", default=None, help="Folder name (default: made from the title).")
@click.option("--summary", default="", help="The topic's summary (body of topic.md).")
@click.option("--closed", is_flag=True, help="Create it closed (listed as a cue, summary not shown).")
@click.option("--vocab", "vocabulary", multiple=True, help="A transcription term (repeatable).")
@click.option("--alias", "aliases", multiple=True, help="Another name detection should recognise (repeatable).")
@click.option("--json", "as_json", is_flag=True)
@translate_errors
@pass_manager
def new(ctx: ContextManager, title: str, description: str, name: str | None, summary: str, closed: bool,
        vocabulary: tuple[str, ...], aliases: tuple[str, ...], as_json: bool) -> None:
    """Create a topic folder with topic.md, where-are-we.md, decisions.md and exchanges.jsonl."""
    t = Topics(ctx).create(title, description, name=name, summary=summary, open=not closed,
                           vocabulary=vocabulary, aliases=aliases)
    echo_data(t, as_json, lambda t: f"created topic {t.name} ({t.folder}/)")


@topic.command(
    "list",
    epilog="""\b
Example:
  contextfs topic list --json
""",
)
@click.option("--json", "as_json", is_flag=True, help="Print the index entries as JSON.")
@translate_errors
@pass_reader
def list_(ctx: ContextManager, as_json: bool) -> None:
    """The topic index: id, status, last active, size and one-line summary of every topic."""
    topics = Topics(ctx)
    if as_json:
        echo_data(topics.index(), True)
    else:
        click.echo(topics.render_index().rstrip("\n"))


@topic.command(
    "switch",
    epilog="""\b
Example:
  contextfs topic switch billing-migration --budget 4000
""",
)
@click.argument("name")
@click.option("--budget", type=click.IntRange(1, None), default=None, help="Token budget of the boot context.")
@click.option("--json", "as_json", is_flag=True, help="Print the view with its manifest and accounting.")
@translate_errors
@pass_manager
def switch(ctx: ContextManager, name: str, budget: int | None, as_json: bool) -> None:
    """Page out the active topic, activate NAME and print its boot context."""
    echo_data(Topics(ctx).switch(name, budget=budget), as_json, _view_text)


@topic.command(
    "spawn",
    epilog="""\b
Example:
  contextfs topic spawn "GPU troubleshooting" --from-line 47
""",
)
@click.argument("title")
@click.option("--from-line", "from_line", type=int, required=True,
              help="First exchange (1-based line of exchanges.jsonl) that belongs to the new topic.")
@click.option("--description", default="", help="A cue for the new topic.")
@click.option("--name", default=None, help="Folder name (default: made from the title).")
@translate_errors
@pass_manager
def spawn(ctx: ContextManager, title: str, from_line: int, description: str, name: str | None) -> None:
    """Move the active topic's exchanges from a line on into a new topic and switch to it."""
    done = Topics(ctx).spawn(title, from_line, description=description, name=name)
    click.echo(f"spawned {done.topic.name}: moved {done.moved} exchange(s); now active")


@topic.command(
    "record",
    epilog="""\b
Example:
  contextfs topic record "Why did the GPU job fail?" "The driver is older than CUDA 12 needs"
""",
)
@click.argument("user")
@click.argument("agent")
@click.option("--topic", "name", default=None, help="The topic to record into (default: the active one).")
@translate_errors
@pass_manager
def record(ctx: ContextManager, user: str, agent: str, name: str | None) -> None:
    """Record one exchange (what the user said, what the agent answered) in a topic."""
    topics = Topics(ctx)
    topics.record(user, agent, topic=name)  # without --topic: the active one, or a TopicError saying so
    target = topics.get(name) if name is not None else topics.active()
    if target is not None:
        line = len(topics.exchanges.lines(target.name))
        click.echo(f"recorded exchange {line} in {target.name} (spawn --from-line {line} starts a topic here)")


@topic.command(
    "exchanges",
    epilog="""\b
Example:
  contextfs topic exchanges gpu-cluster -n 20
""",
)
@click.argument("name")
@click.option("-n", "--limit", default=20, show_default=True, type=click.IntRange(min=1),
              help="How many of the newest exchanges to show.")
@translate_errors
@pass_reader
def exchanges(ctx: ContextManager, name: str, limit: int) -> None:
    """A topic's newest exchanges, numbered as spawn --from-line counts them."""
    topics = Topics(ctx)
    click.echo(topics.exchanges.render(topics.get(name).name, limit).rstrip("\n") or "(no exchanges)")


@topic.command(
    "close",
    epilog="""\b
Example:
  contextfs topic close k8s-cost-cuts
""",
)
@click.argument("name")
@click.option("--archive", is_flag=True, help="Archive instead: kept on disk, left out of the index block.")
@translate_errors
@pass_manager
def close(ctx: ContextManager, name: str, archive: bool) -> None:
    """Close a topic (listed as a cue; reopen any time), or archive it."""
    topics = Topics(ctx)
    t = topics.archive(name) if archive else topics.close(name)
    click.echo(f"{t.name} is {t.status}")


@topic.command(
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
        echo_data({"topic": t, "state": state.sections, "vocabulary": topics.vocabulary.of(t.name)}, True)
        return
    if section:
        for raw in state.section(section):
            click.echo(raw)
        return
    click.echo(f"{t.title} ({t.name}) [{t.status}{', open' if t.open else ''}] last active {t.last_active}")
    if t.description:
        click.echo(f"relevant: {t.description}")
    if t.summary:
        click.echo(f"summary: {t.summary}")
    click.echo("")
    click.echo(state.render().rstrip("\n"))


@topic.command(
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
@click.argument("action", type=click.Choice(["append", "complete", "finalize", "clear-notifications"]))
@click.argument("args", nargs=-1)
@click.option("--new-section", is_flag=True, help="With append: start SECTION when the file has no such section.")
@translate_errors
@pass_manager
def state(ctx: ContextManager, name: str, action: str, args: tuple[str, ...], new_section: bool) -> None:
    """Change where-are-we: append SECTION TEXT, complete ITEM, finalize, clear-notifications."""
    topics = Topics(ctx)
    if action == "append":
        if len(args) != 2:
            raise click.UsageError(f"append needs SECTION and TEXT; sections: {', '.join(SECTIONS)}")
        click.echo(topics.where.append(name, args[0], args[1], new_section=new_section))
    elif action == "complete":
        if len(args) != 1:
            raise click.UsageError("complete needs the item's text (or a unique part of it)")
        click.echo(topics.where.complete(name, args[0]))
    elif action == "finalize":
        dropped = topics.where.finalize(name)
        click.echo(f"finalized; {len(dropped)} old completed item(s) left the file (git keeps them)")
    else:
        cleared = topics.where.clear_notifications(name)
        click.echo(f"cleared {len(cleared)} notification(s)")
        for raw in cleared:
            click.echo(f"  {item_text(raw)}")


@topic.command(
    "decide",
    epilog="""\b
Example:
  contextfs topic decide billing-migration "Cut over in January" --reason "December change freeze" --depends-on D2
""",
)
@click.argument("name")
@click.argument("text")
@click.option("--reason", default=None, help="Why it was decided.")
@click.option("--depends-on", "depends_on", multiple=True, metavar="ID", help="A decision this rests on (repeatable).")
@click.option("--supersedes", default=None, metavar="ID", help="A decision this replaces (kept, marked superseded).")
@translate_errors
@pass_manager
def decide(ctx: ContextManager, name: str, text: str, reason: str | None, depends_on: tuple[str, ...],
           supersedes: str | None) -> None:
    """Record a decision with its reason and dependencies; prints its id."""
    click.echo(Topics(ctx).decisions.decide(name, text, depends_on=list(depends_on), supersedes=supersedes, reason=reason))


@topic.command(
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


@topic.command(
    "route",
    epilog="""\b
Example:
  contextfs topic route "[task:TW-2291] DLQ API merged" --task TW-2291
""",
)
@click.argument("text")
@click.option("--task", "task_id", default=None, help="Task id that owns the result (else a [task:ID] tag or keywords).")
@click.option("--json", "as_json", is_flag=True)
@translate_errors
@pass_manager
def route(ctx: ContextManager, text: str, task_id: str | None, as_json: bool) -> None:
    """Route an asynchronous result to its topic: filed if paged, handed back if active."""
    echo_data(Topics(ctx).route(text, task_id), as_json, lambda r: f"{r.action}: {r.message}")


@topic.command(
    "open",
    epilog="""\b
Example:
  contextfs topic open k8s-cost-cuts
""",
)
@click.argument("name")
@translate_errors
@pass_manager
def open_(ctx: ContextManager, name: str) -> None:
    """The agent's open_topic: a summary, "already visible" or "doesn't exist"."""
    click.echo(Topics(ctx).open_topic(name))


@topic.command(
    "block",
    epilog="""\b
Example:
  contextfs topic block
""",
)
@translate_errors
@pass_manager
def block(ctx: ContextManager) -> None:
    """The open/closed topics block: general summary, open summaries, closed cues."""
    click.echo(Topics(ctx).block.render().rstrip("\n"))


@topic.command(
    "detect",
    epilog="""\b
Example:
  contextfs topic detect "what was the proration mismatch on that invoice?"
""",
)
@click.argument("message")
@click.option("--json", "as_json", is_flag=True)
@translate_errors
@pass_manager
def detect(ctx: ContextManager, message: str, as_json: bool) -> None:
    """Which topic a message is about (names first, then BM25; no model)."""
    found = Topics(ctx).routing.explain(message)

    def text(d: Any) -> str:
        if d.name is None:
            return f"no topic (best score {d.score:.2f})"
        return f"{d.name} (by {d.method}, score {d.score:.2f})"

    echo_data(found, as_json, text)


@topic.command(
    "vocab",
    help=f"A topic's transcription vocabulary (the active topic's terms are also in {VOCABULARY_FILE}).",
    epilog="""\b
Example:
  contextfs topic vocab billing-migration
""",
)
@click.argument("name")
@translate_errors
@pass_manager
def vocab(ctx: ContextManager, name: str) -> None:
    """A topic's transcription vocabulary (the help text names the file of the active topic's terms)."""
    click.echo(", ".join(Topics(ctx).vocabulary.of(name)))


def demo(ctx: ContextManager, say: Callable[[str], None]) -> None:
    """Two new topics, a switch each way, and proof that neither boot context sees the other."""
    topics = Topics(ctx)
    topics.create("School run rota", "The family's weekly school-run rota; relevant when kids, school or Tuesdays come up",
                  name="school-run", vocabulary=["rota", "pickup"])
    topics.where.append("school-run", "Key Facts", "Tuesday pickup is at 15:10 from Lindenhof Grundschule, gate B.")
    topics.create("Home network", "The home Wi-Fi and router upgrade; relevant when the router, mesh or ISP comes up",
                  name="home-network", vocabulary=["mesh", "VLAN"])
    topics.where.append("home-network", "Key Facts", "The mesh backhaul runs on channel 149 with SSID tw-home-5g.")
    def isolation(text: str, own: str, other: str) -> str:
        if own in text and other not in text:
            return f"holds its own fact ({own!r}) and not the other topic's ({other!r})"
        return f"{'holds' if own in text else 'MISSES'} {own!r} and {'HOLDS' if other in text else 'not'} {other!r}"

    a = topics.switch("school-run", budget=3000)
    say(f"switch -> school-run: its {a.tokens}-token boot context {isolation(a.text, 'gate B', 'channel 149')}")
    topics.record("Who picks up on Tuesday?", "You do, 15:10 at gate B.")
    b = topics.switch("home-network", budget=3000)
    say(f"switch -> home-network: its boot context {isolation(b.text, 'channel 149', 'gate B')}")
    later = topics.route("the school run rota for next term is out")
    say(f"a result for the paged topic is {later.action} under {later.topic}'s Pending Notifications")
    did = topics.decisions.decide("home-network", "Use a wired backhaul", reason="Channel 149 drops at night")
    detected = getattr(topics.detect("who picks up the kids on tuesday?"), "name", None)
    say(f"decision {did} recorded with its reason; detect('who picks up the kids on tuesday?') -> {detected}")
    index = topics.render_index().rstrip().splitlines()
    say(f"every session starts with the topic index ({len(index) - 1} topics, one line each), e.g.:")
    say("  " + textwrap.shorten(next((line for line in index if "home-network" in line), index[-1]), 100,
                                placeholder=" ..."))
