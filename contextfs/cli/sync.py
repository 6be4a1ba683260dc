"""Sharing a root through a git remote: ``contextfs sync`` and ``contextfs conflicts``.

Thin calls into :class:`contextfs.remote.Remote` (``ctx.remote``). The remote and branch
come from the repository's configuration or from ``--remote``/``--branch``; nothing else
chooses them.
"""

from __future__ import annotations

from typing import Any

import click

from .common import echo_data, pass_manager, translate_errors

__all__ = ["conflicts", "sync"]


def _sync_text(result: Any) -> str:
    lines = [f"{result.state}: {result.remote}/{result.branch} ({result.url})"]
    if result.committed_outside:
        lines.append(
            f"committed {len(result.committed_outside)} file(s) edited outside contextfs first"
        )
    if result.changed:
        lines.append(
            f"{len(result.changed)} file(s) updated: "
            + ", ".join(result.changed[:8])
            + (" ..." if len(result.changed) > 8 else "")
        )
    lines += [f"  {note.kind}: {note}" for note in result.notes]
    if result.pushed:
        lines.append(
            f"pushed {str(result.head)[:12]}"
            + (
                f" after {result.rejected_pushes} rejected push(es)"
                if result.rejected_pushes
                else ""
            )
        )
    elif result.push_skipped:
        lines.append(result.push_skipped)
    if result.conflict_copies:
        lines.append(
            "conflict copies to look at: "
            + ", ".join(result.conflict_copies)
            + " (resolve each with `contextfs conflicts --resolve PATH`)"
        )
    return "\n".join(lines)


@click.command()
@click.option(
    "--remote",
    default=None,
    metavar="NAME",
    help="Remote to sync with (default: the branch's upstream, else the only remote).",
)
@click.option(
    "--branch",
    default=None,
    metavar="NAME",
    help="Branch on the remote (default: the upstream's, else the one the remote's HEAD names).",
)
@click.option("--no-push", is_flag=True, help="Fetch and merge only.")
@click.option(
    "--push-application-commits",
    is_flag=True,
    help="In an application repository, also push commits that touch files outside the root.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@translate_errors
@pass_manager
def sync(
    ctx: Any,
    remote: str | None,
    branch: str | None,
    no_push: bool,
    push_application_commits: bool,
    as_json: bool,
) -> None:
    """Fetch, merge with contextfs's rules, update the index, push.

    Run during a git merge (after a `git pull` stopped on conflicts), it resolves the
    context files of that merge instead and leaves the commit to you.

    \b
    Example:
      contextfs sync
      contextfs sync --remote origin --branch main
    """
    result = ctx.remote.sync(
        remote=remote,
        branch=branch,
        push=not no_push,
        push_application_commits=push_application_commits,
    )
    echo_data(result, as_json, _sync_text)


@click.command()
@click.option(
    "--resolve",
    "path",
    default=None,
    metavar="PATH",
    help="End the conflict of this copy (or of the file, when it has one copy).",
)
@click.option(
    "--keep",
    type=click.Choice(["current", "copy"]),
    default="current",
    show_default=True,
    help="With --resolve: keep the file as it is now, or take the copy's text.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@translate_errors
@pass_manager
def conflicts(ctx: Any, path: str | None, keep: str, as_json: bool) -> None:
    """List conflict copies that merges left, or resolve one.

    \b
    Example:
      contextfs conflicts
      contextfs conflicts --resolve memory/notes.conflict-1a2b3c4d.md --keep copy
    """
    if path is not None:
        original = ctx.remote.resolve(path, keep=keep)
        click.echo(f"resolved {original}" + (" with the copy's text" if keep == "copy" else ""))
        return
    found = ctx.remote.conflicts()
    if as_json or found:
        echo_data(
            found,
            as_json,
            lambda items: "\n".join(
                f"{c.path}  (conflict copy of {c.original}"
                + ("" if c.original_exists else ", which is gone")
                + ")"
                for c in items
            ),
        )
