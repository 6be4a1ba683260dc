"""``contextfs ui``: the page, from the command line (the ``ui`` extra)."""

from __future__ import annotations

import webbrowser

import click

from contextfs.cliutil import open_manager, translate_errors
from contextfs.extras import require

__all__ = ["UI_PACKAGES", "ui"]

#: What the 'ui' extra installs: Starlette and uvicorn serve the page, Jinja2 and
#: markdown-it-py render it.
UI_PACKAGES = ("starlette", "uvicorn", "jinja2", "markdown_it")


@click.command("ui")
@click.option(
    "--write",
    is_flag=True,
    help="Allow approve, discard, recover, undo and restore (without it the page only reads).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on the loopback address (0 picks a free one).",
)
@click.option(
    "--host",
    type=click.Choice(["127.0.0.1", "::1"]),
    default="127.0.0.1",
    show_default=True,
    help="Loopback address to listen on (nothing else is accepted).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@click.pass_context
@translate_errors
def ui(click_ctx: click.Context, write: bool, port: int, host: str, open_browser: bool) -> None:
    """Browse and review the root in a local web page (needs the 'ui' extra).

    Prints an address with a one-time access token, as notebook servers do; open it in a
    browser on this machine. The page shows the tree, the sessions with their diffs, what
    an agent saw at any commit, topics and search. With --write it also approves,
    discards and undoes sessions and restores deleted files. Stop it with Ctrl-C.

    \b
    Example:
      pip install 'contextfs-git[ui]'
      contextfs --root ./context ui --write
    """
    for package in UI_PACKAGES:  # a missing one is MissingExtraError with the pip line
        require(package, "ui")
    from .server import UIServer  # the optional 'ui' extra, checked above
    ctx = open_manager(click_ctx, index=True, read_only=not write)
    server = UIServer(ctx.root, write=write, host=host, port=port, ctx=ctx)
    mode = (
        "approve, discard, undo and restore allowed"
        if write
        else "read-only; add --write to approve"
    )
    click.echo(f"contextfs ui for {ctx.root} ({mode})")
    click.echo(f"open {server.url}")
    click.echo("stop with Ctrl-C")
    if open_browser:
        webbrowser.open(server.url)
    server.serve()
