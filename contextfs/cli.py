"""The ``contextfs`` command line: a thin layer over the Python API.

The root comes from ``--root`` or ``CONTEXTFS_ROOT`` (default ``./context``). Data
commands take ``--json``. A ContextFSError prints one line ending with the fix and
exits 1. This is the only module that composes every layer.
"""

from __future__ import annotations

import logging
import sys

import click

from .cliutil import echo_data, open_manager, pass_manager, translate_errors

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--root", envvar="CONTEXTFS_ROOT", default=None, metavar="DIR",
              help="Context root (default: $CONTEXTFS_ROOT or ./context).")
@click.option("--actor", default="human", show_default=True,
              help="Who is writing: human, agent, agent:<name> or remote.")
@click.option("--session", default=None, help="Session id recorded in commit trailers.")
@click.option("-v", "--verbose", is_flag=True, help="Show what the library logs (index rebuilds, topic switches).")
@click.version_option(package_name="contextfs-git")
@click.pass_context
def cli(click_ctx: click.Context, root: str | None, actor: str, session: str | None, verbose: bool) -> None:
    """contextfs: an agent's context as plain markdown files, versioned by git.

    \b
    Example:
      contextfs --root ./context init
      echo "- Database: PostgreSQL 16" | contextfs write memory/facts.md
      contextfs log
    """
    # The library logs without handlers; the CLI is the edge that decides how they look.
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="  [contextfs] %(message)s")
    click_ctx.ensure_object(dict).update(root=root, actor=actor, session=session)


@cli.command()
@click.pass_context
@translate_errors
def init(click_ctx: click.Context) -> None:
    """Create a root (or adopt a folder or repository) and commit what is in it.

    \b
    Example:
      contextfs --root ./context init
    """
    ctx = open_manager(click_ctx)
    click.echo(f"context root ready at {ctx.root} ({len(ctx.list())} files, HEAD {str(ctx.git.head())[:12]})")


@cli.command()
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print path, metadata, body and version as JSON.")
@translate_errors
@pass_manager
def read(ctx, path: str, as_json: bool) -> None:
    """Print a file's body (add --json for its metadata too).

    \b
    Example:
      contextfs read memory/facts.md
    """
    doc = ctx.get(path)
    if as_json:
        echo_data(doc, True)
    else:
        click.echo(doc.body, nl=not doc.body.endswith("\n"))


@cli.command()
@click.argument("path")
@click.option("--file", "source", type=click.File("r", encoding="utf-8"), default=None,
              help="Read the content from this file instead of stdin.")
@click.option("--meta", multiple=True, metavar="KEY=VALUE", help="Set a frontmatter key (repeatable).")
@click.option("--expected-version", default=None, help="Refuse if the file changed since this version.")
@translate_errors
@pass_manager
def write(ctx, path: str, source, meta: tuple[str, ...], expected_version: str | None) -> None:
    """Write a file from stdin (or --file); one commit.

    \b
    Example:
      echo "# Title" | contextfs write project/README.md --meta title="Overview"
    """
    content = (source or sys.stdin).read()
    metadata = None
    if meta:
        metadata = {}
        for item in meta:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--meta")
            metadata[key] = value
    doc = ctx.write(path, content, metadata, expected_version=expected_version)
    click.echo(f"wrote {doc.path} (version {doc.version[:12]})")


@cli.command()
@click.argument("path")
@click.argument("old")
@click.argument("new")
@translate_errors
@pass_manager
def edit(ctx, path: str, old: str, new: str) -> None:
    """Replace OLD with NEW in a file's body (OLD must occur exactly once).

    \b
    Example:
      contextfs edit memory/facts.md "PostgreSQL 16" "PostgreSQL 17"
    """
    doc = ctx.edit(path, old, new)
    click.echo(f"edited {doc.path} (version {doc.version[:12]})")


@cli.command(name="ls")
@click.argument("folder", default="")
@click.option("--json", "as_json", is_flag=True)
@translate_errors
@pass_manager
def ls(ctx, folder: str, as_json: bool) -> None:
    """List files under FOLDER (default: the whole root).

    \b
    Example:
      contextfs ls memory
    """
    echo_data(ctx.list(folder), as_json, lambda items: "\n".join(items))


@cli.command()
@click.argument("path")
@translate_errors
@pass_manager
def rm(ctx, path: str) -> None:
    """Move a file or folder to the trash (never a hard delete).

    \b
    Example:
      contextfs rm task/subtasks/old.md && contextfs restore task/subtasks/old.md
    """
    entry = ctx.delete(path)
    click.echo(f"moved {entry.original_path} to the trash as {entry.id}")


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--purge", "purge_days", type=float, default=None, metavar="DAYS",
              help="Remove entries older than DAYS for good (git history keeps them).")
@translate_errors
@pass_manager
def trash(ctx, as_json: bool, purge_days: float | None) -> None:
    """List trash entries (or purge old ones).

    \b
    Example:
      contextfs trash
      contextfs trash --purge 30
    """
    if purge_days is not None:
        click.echo(f"purged {ctx.purge_trash(older_than=purge_days)} entries")
        return
    echo_data(
        ctx.trash(),
        as_json,
        lambda es: "\n".join(f"{e.id}  {e.deleted_at}  {e.actor:<14} {e.original_path}" for e in es) or "(trash is empty)",
    )


@cli.command()
@click.argument("path_or_entry")
@click.option("--to", default=None, help="Restore to another path.")
@translate_errors
@pass_manager
def restore(ctx, path_or_entry: str, to: str | None) -> None:
    """Bring back a deleted file (latest deletion of a path, or an entry id).

    \b
    Example:
      contextfs restore memory/facts.md
    """
    click.echo(f"restored {ctx.restore(path_or_entry, to=to)}")


@cli.command()
@click.argument("src")
@click.argument("dst")
@translate_errors
@pass_manager
def mv(ctx, src: str, dst: str) -> None:
    """Move or rename a file or folder.

    \b
    Example:
      contextfs mv task/current.md task/history/2026-11-30.md
    """
    click.echo(f"moved {src} -> {ctx.move(src, dst)}")


@cli.command()
@click.argument("path", required=False)
@click.option("-n", "--limit", default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@translate_errors
@pass_manager
def log(ctx, path: str | None, limit: int, as_json: bool) -> None:
    """Show the history of the root or of one file.

    \b
    Example:
      contextfs log memory/facts.md -n 5
    """
    echo_data(
        ctx.history(path, limit=limit),
        as_json,
        lambda hs: "\n".join(f"{h.commit[:10]}  {h.date}  {h.author:<16} {h.message}" for h in hs),
    )


@cli.command()
@click.argument("path")
@click.argument("rev_a")
@click.argument("rev_b", required=False)
@translate_errors
@pass_manager
def diff(ctx, path: str, rev_a: str, rev_b: str | None) -> None:
    """Unified diff of a file between two revisions (or REV_A and now).

    \b
    Example:
      contextfs diff memory/facts.md HEAD~2
    """
    click.echo(ctx.diff(path, rev_a, rev_b) or "(no differences)", nl=False)


@cli.command()
@click.argument("path")
@click.option("--at", "rev", required=True, help="A commit id or HEAD~N.")
@translate_errors
@pass_manager
def show(ctx, path: str, rev: str) -> None:
    """Print the whole file (frontmatter included) as it was at a revision.

    \b
    Example:
      contextfs show memory/facts.md --at HEAD~3
    """
    text = ctx.show_at(path, rev)
    if text is None:
        raise click.ClickException(f"{path} did not exist at {rev}; pick a revision from 'contextfs log {path}'")
    click.echo(text, nl=False)


@cli.command()
@click.argument("path", required=False)
@click.option("--to", "rev", default=None, help="Make PATH what it was at this revision.")
@click.option("--session", "session_id", default=None, help="Undo everything one session wrote.")
@translate_errors
@pass_manager
def revert(ctx, path: str | None, rev: str | None, session_id: str | None) -> None:
    """Undo changes as new commits: one file to a revision, or a whole session.

    \b
    Example:
      contextfs revert memory/facts.md --to HEAD~1
      contextfs revert --session s-20261130T101500-a1b2c3
    """
    if session_id:
        report = ctx.revert_session(session_id)
        click.echo(f"reverted {len(report.reverted)} commit(s) of {report.session}")
        for conflict in report.conflicts:
            click.echo(f"conflict (left alone): {conflict}")
        return
    if not path or not rev:
        raise click.UsageError("give PATH and --to REV, or --session ID")
    doc = ctx.revert(path, rev)
    click.echo(f"reverted {path} to {rev}" + ("" if doc else " (it did not exist then: moved to trash)"))


@cli.command()
@click.option("--dir", "target", default=None, help="Where to create the demo root (default: a new temp folder).")
@click.option("--source", default=None, help="Tree to copy (default: the bundled sample-context).")
def demo(target: str | None, source: str | None) -> None:
    """Walk through contextfs on a copy of sample-context/, printing each step.

    \b
    Example:
      contextfs demo --dir /tmp/contextfs-demo
    """
    from .demo import run_demo

    try:
        run_demo(target, source)
    except Exception as exc:  # the demo reports, then fails loudly
        click.echo(f"demo failed: {type(exc).__name__}: {exc}", err=True)
        raise SystemExit(1) from None


def _register_layers() -> None:
    """Attach the commands each layer defines in its own CLI module."""
    import importlib

    for module, names in (
        ("contextfs.cli_search", ("search", "reindex")),
        ("contextfs.scopes.cli_context", ("context",)),
        ("contextfs.scopes.cli_topics", ("topic",)),
        ("contextfs.scopes.cli_memory", ("memory",)),
        ("contextfs.evolve.cli", ("evolve",)),
        ("contextfs.cli_watch", ("watch",)),
        ("contextfs.integrations.mcp_server", ("mcp",)),
    ):
        mod = importlib.import_module(module)
        for name in names:
            cli.add_command(getattr(mod, name))


def main(argv: list[str] | None = None) -> None:
    _register_layers()
    cli.main(args=argv, prog_name="contextfs", standalone_mode=True)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
