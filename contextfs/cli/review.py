"""``contextfs sessions``: what each session changed, and a person's decisions on it.

A thin layer over :class:`contextfs.review.sessions.Sessions`. Listings and diffs are coloured
when standard output is a terminal and plain when it is piped or ``NO_COLOR`` is set
(click drops the styling when the stream is not a terminal).
"""

from __future__ import annotations

import os
from typing import Any

import click

from ..review.sessions import STATUSES, FileChange, Session, Sessions
from .common import echo_data, open_manager, translate_errors

__all__ = ["render_diff", "render_sessions", "sessions"]

_STATUS_COLOURS = {"pending": "yellow", "approved": "green", "direct": "blue", "discarded": "red"}


def _style(text: str, **styles: Any) -> str:
    return text if os.environ.get("NO_COLOR") else click.style(text, **styles)


def _when(session: Session) -> str:
    start = session.started.replace("T", " ").rstrip("Z")[:16]
    end = session.ended.replace("T", " ").rstrip("Z")[:16]
    return start if start == end else f"{start} → {end[11:] if end[:10] == start[:10] else end}"


def render_sessions(found: list[Session]) -> str:
    """The session table people read in a terminal."""
    if not found:
        return "(no sessions)"
    rows = []
    for s in found:
        marks = " ".join(
            filter(
                None,
                [
                    "reverted" if s.reverted else "",
                    f"{s.pending} waiting" if s.pending else "",
                    f"approved by {s.approved_by}" if s.approved_by and not s.pending else "",
                    f"recoverable until {s.expires[:10]}" if s.expires else "",
                ],
            )
        )
        rows.append(
            (
                s.status,
                s.id,
                ", ".join(s.agents),
                ", ".join(s.machines) or "-",
                _when(s),
                str(len(s.files)),
                f"+{s.added}",
                f"-{s.removed}",
                marks,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = []
    for r in rows:
        cells = [
            _style(r[0].ljust(widths[0]), fg=_STATUS_COLOURS.get(r[0]), bold=r[0] == "pending"),
            _style(r[1].ljust(widths[1]), bold=True),
            r[2].ljust(widths[2]),
            r[3].ljust(widths[3]),
            r[4].ljust(widths[4]),
            f"{r[5]:>3} file(s)",
            _style(f"{r[6]:>5}", fg="green"),
            _style(f"{r[7]:>5}", fg="red"),
            _style(r[8], dim=True) if r[8] else "",
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def render_diff(changes: list[FileChange]) -> str:
    """A session's changes as a coloured unified diff, a header line per file."""
    out = []
    for change in changes:
        head = f"{change.kind}: {change.path}  (+{change.added} -{change.removed})"
        if change.trash_entry:
            entry = change.trash_entry
            head += f"  [in the trash as {entry}: `contextfs restore {entry}`]"
        out.append(_style(head, bold=True))
        for line in change.diff.splitlines():
            if line.startswith(("+++", "---")):
                out.append(_style(line, bold=True))
            elif line.startswith("@@"):
                out.append(_style(line, fg="cyan"))
            elif line.startswith("+"):
                out.append(_style(line, fg="green"))
            elif line.startswith("-"):
                out.append(_style(line, fg="red"))
            else:
                out.append(line)
        out.append("")
    return "\n".join(out) if out else "(no changes)"


def _sessions(click_ctx: click.Context, *, write: bool = False) -> Sessions:
    return Sessions(open_manager(click_ctx, read_only=not write))


@click.group(invoke_without_command=True)
@click.option(
    "--status", type=click.Choice(STATUSES), default=None, help="Only sessions with this status."
)
@click.option(
    "--pending", is_flag=True, help="Only sessions waiting for review (same as --status pending)."
)
@click.option(
    "-n", "--limit", type=click.IntRange(min=1), default=None, help="Show at most this many."
)
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@click.pass_context
@translate_errors
def sessions(
    click_ctx: click.Context, status: str | None, pending: bool, limit: int | None, as_json: bool
) -> None:
    """Review sessions: list, show a diff, approve, discard, recover, undo.

    Without a subcommand, lists sessions, the most recent first: status (pending,
    approved, direct, discarded), agents, machines, time span, files, lines added and
    removed.

    \b
    Example:
      contextfs sessions --pending
      contextfs sessions show s-20261130T101500-a1b2c3
      contextfs sessions approve s-20261130T101500-a1b2c3
    """
    if click_ctx.invoked_subcommand is not None:
        return
    found = _sessions(click_ctx).list(status="pending" if pending else status, limit=limit)
    echo_data(found, as_json, render_sessions)


@sessions.command()
@click.argument("session")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the session and its file changes as JSON."
)
@click.pass_context
@translate_errors
def show(click_ctx: click.Context, session: str, as_json: bool) -> None:
    """Show what one session changed, as a diff per file.

    \b
    Example:
      contextfs sessions show s-20261130T101500-a1b2c3 | less -R
    """
    found = _sessions(click_ctx)
    summary = found.get(session)
    changes = found.changes(session)
    if as_json:
        echo_data({"session": summary, "changes": changes}, True)
        return
    click.echo(render_sessions([summary]))
    click.echo("")
    click.echo(render_diff(changes))


@sessions.command()
@click.argument("session")
@click.pass_context
@translate_errors
def approve(click_ctx: click.Context, session: str) -> None:
    """Merge a pending session into the main branch (a person only).

    \b
    Example:
      contextfs sessions approve s-20261130T101500-a1b2c3
    """
    report = _sessions(click_ctx, write=True).approve(session)
    click.echo(
        f"approved {report.session}: merged {len(report.merged)} file(s) "
        f"as {str(report.commit)[:12]}"
    )
    for copy, original in report.conflict_copies.items():
        click.echo(
            _style(
                f"conflict: {original} changed on both sides; the session's version is in {copy}",
                fg="yellow",
            )
        )
    for note in report.notes:
        if "conflict-" not in note:
            click.echo(f"note: {note}")


@sessions.command()
@click.argument("session")
@click.pass_context
@translate_errors
def discard(click_ctx: click.Context, session: str) -> None:
    """Drop a pending session; its commits stay recoverable for [review] keep_days.

    \b
    Example:
      contextfs sessions discard s-20261130T101500-a1b2c3
    """
    gone = _sessions(click_ctx, write=True).discard(session)
    click.echo(
        f"discarded {gone.session}; recover it until {gone.expires} with "
        f"`contextfs sessions recover {gone.session}`"
    )


@sessions.command()
@click.argument("session")
@click.pass_context
@translate_errors
def recover(click_ctx: click.Context, session: str) -> None:
    """Make a discarded session pending again.

    \b
    Example:
      contextfs sessions recover s-20261130T101500-a1b2c3
    """
    branch = _sessions(click_ctx, write=True).recover(session)
    click.echo(f"recovered {branch.session}: {branch.pending} commit(s) wait for review again")


@sessions.command()
@click.argument("session")
@click.pass_context
@translate_errors
def undo(click_ctx: click.Context, session: str) -> None:
    """Undo a session already on the main branch, as new commits (revert --session).

    \b
    Example:
      contextfs sessions undo s-20261130T101500-a1b2c3
    """
    report = _sessions(click_ctx, write=True).undo(session)
    click.echo(f"undid {len(report.reverted)} commit(s) of {report.session}")
    for conflict in report.conflicts:
        click.echo(_style(f"conflict (left alone): {conflict}", fg="yellow"))
