"""The store's own commands: files, trash and history (``contextfs read``, ``log``, ...).

Each is a thin call into :class:`contextfs.ContextManager`. They are registered in
``contextfs.cli.COMMANDS`` and imported only when one of them runs. Commands that only
read open the root read-only (``pass_reader``): they never create a root, sync, commit
or wait for the write lock.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..document import decode, parse
from ..errors import ContextFSError, NotFoundError
from ..files.paths import shown
from ..fixes import Fix
from .common import echo_data, open_manager, pass_manager, pass_reader, translate_errors

__all__ = [
    "append",
    "diff",
    "edit",
    "init",
    "log",
    "ls",
    "meta_value",
    "mv",
    "read",
    "restore",
    "revert",
    "rm",
    "show",
    "trash",
    "write",
]


@click.command()
@click.option(
    "--own-repository",
    is_flag=True,
    help="Give the root a git repository of its own, even inside another repository "
    "(needed when that repository ignores the root's folder).",
)
@click.pass_context
@translate_errors
def init(click_ctx: click.Context, own_repository: bool) -> None:
    """Create or adopt a root and commit the files in it.

    Inside an application's repository the root's commits go into that repository's
    history; a folder that repository ignores is refused, since files made there by hand
    would never be committed: give it a repository of its own instead.

    \b
    Example:
      contextfs --root ./context init
      contextfs --root ./notes init --own-repository
    """
    ctx = open_manager(click_ctx, own_repository=own_repository)
    click.echo(
        f"context root ready at {ctx.root} ({len(ctx.list())} files, HEAD {str(ctx.parts.git.head())[:12]})"
    )


@click.command()
@click.argument("path")
@click.option(
    "--json", "as_json", is_flag=True, help="Print path, metadata, body and version as JSON."
)
@translate_errors
@pass_reader
def read(ctx: Any, path: str, as_json: bool) -> None:
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


_STDIN_HINT = (
    "contextfs {verb}: reading the content from the terminal; type it, then press Ctrl-D at the start "
    "of a line (or pipe it in, or pass --file FILE)"
)


def _file_bytes(name: str) -> bytes:
    """The bytes of the file given with ``--file`` (``-`` is stdin). Its name comes from the
    command line as it is: one that no file system can hold (a lone surrogate, a NUL) or a
    file that cannot be opened is a usage error naming it, never a traceback."""
    if name == "-":
        return _stdin_bytes()
    try:
        with open(name, "rb") as handle:
            return handle.read()
    except OSError as exc:
        reason = exc.strerror or str(exc)
    except (UnicodeError, ValueError):
        reason = "not a name a file can have"
    raise click.BadParameter(f"cannot read {shown(name)}: {reason}", param_hint="'--file'")


def _stdin_bytes() -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return bytes(buffer.read())
    return str(sys.stdin.read()).encode("utf-8", "surrogatepass")


def _content(source: str | None, verb: str, allow_empty: bool) -> str:
    """The text to write: from --file, else stdin (saying so when stdin is a terminal). Both
    are read as bytes and decoded as a stored file is, so text that is not UTF-8 is refused
    with the same message."""
    if source is None and sys.stdin.isatty():
        click.echo(_STDIN_HINT.format(verb=verb), err=True)
    data = _stdin_bytes() if source is None else _file_bytes(source)
    content = decode(
        data, "stdin" if source is None else f"the file given with --file ({shown(source)})"
    )
    if not content and not allow_empty:
        where = "the file given with --file" if source is not None else "stdin"
        raise click.UsageError(
            f"nothing to {verb}: {where} was empty; pipe the text in or pass --file FILE"
            + (" (or add --allow-empty to store an empty file)" if verb == "write" else "")
        )
    return content


def meta_value(text: str) -> Any:
    """A ``--meta`` value read as it would be after ``key:`` in frontmatter (YAML): ``[a, b]``
    is a list, ``true`` a boolean, ``3`` a number. Text that YAML cannot read as one value
    on one line stays the text itself."""
    if "\n" in text or "\r" in text:
        return text
    try:
        meta = parse(f"---\nvalue: {text}\n---\n", "--meta").metadata
    except ContextFSError:
        return text
    return meta["value"] if set(meta) == {"value"} else text


def _metadata(meta: tuple[str, ...]) -> dict[str, Any] | None:
    if not meta:
        return None
    metadata = {}
    for item in meta:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--meta")
        metadata[key.strip()] = meta_value(value)
    return metadata


_META_HELP = (
    "Set a frontmatter key (repeatable). VALUE reads as YAML, as after 'key:' in frontmatter: "
    "tags=[adr, database] is a list, draft=true a boolean, 3 a number; other text stays text."
)


@click.command()
@click.argument("path")
@click.option(
    "--file",
    "source",
    metavar="FILE",
    default=None,
    help="Read the content from this file instead of stdin ('-' is stdin).",
)
@click.option("--meta", multiple=True, metavar="KEY=VALUE", help=_META_HELP)
@click.option(
    "--expected-version", default=None, help="Refuse if the file changed since this version."
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Store empty content (refused otherwise, as a likely mistake).",
)
@translate_errors
@pass_manager
def write(
    ctx: Any,
    path: str,
    source: str | None,
    meta: tuple[str, ...],
    expected_version: str | None,
    allow_empty: bool,
) -> None:
    """Write a file from stdin (or --file); one commit.

    Content that starts with a frontmatter block ('---' lines) brings its keys; --meta
    wins over them. The file is replaced: to add a line, use 'contextfs append'.

    \b
    Example:
      echo "# Title" | contextfs write project/README.md --meta title="Overview" --meta tags="[docs, intro]"
    """
    content = _content(source, "write", allow_empty)
    doc = ctx.write(path, content, _metadata(meta), expected_version=expected_version)
    click.echo(f"wrote {doc.path} (version {doc.version[:12]})")


@click.command()
@click.argument("path")
@click.option(
    "--file",
    "source",
    metavar="FILE",
    default=None,
    help="Read the text from this file instead of stdin ('-' is stdin).",
)
@translate_errors
@pass_manager
def append(ctx: Any, path: str, source: str | None) -> None:
    """Add text from stdin (or --file) at the end of a file; one commit.

    The file is created when missing; its frontmatter and what it holds stay as they are.

    \b
    Example:
      echo "- Cache: Redis 7" | contextfs append memory/facts.md
    """
    doc = ctx.append(path, _content(source, "append", allow_empty=False))
    click.echo(f"appended to {doc.path} (version {doc.version[:12]})")


@click.command()
@click.argument("path")
@click.argument("old")
@click.argument("new")
@translate_errors
@pass_manager
def edit(ctx: Any, path: str, old: str, new: str) -> None:
    """Replace text that occurs exactly once in a file's body.

    \b
    Example:
      contextfs edit memory/facts.md "PostgreSQL 16" "PostgreSQL 17"
    """
    doc = ctx.edit(path, old, new)
    click.echo(f"edited {doc.path} (version {doc.version[:12]})")


@click.command(name="ls")
@click.argument("folder", default="")
@click.option("--json", "as_json", is_flag=True, help="Print the paths as a JSON list.")
@translate_errors
@pass_reader
def ls(ctx: Any, folder: str, as_json: bool) -> None:
    """List files under FOLDER (default: the whole root).

    A file path lists that file; a path that does not exist is an error.

    \b
    Example:
      contextfs ls memory
    """
    files = ctx.list(folder)
    if folder and not files:
        if ctx.exists(folder):
            files = [ctx.parts.gate(folder)]
        elif not ctx.parts.is_folder(folder):
            raise NotFoundError(
                f"{folder} does not exist in {ctx.root}",
                path=folder,
                fix=Fix("list", folder.rstrip("/").rpartition("/")[0]),
            )
    _echo_lines(files, as_json, lambda items: "\n".join(items))


@click.command()
@click.argument("path")
@translate_errors
@pass_manager
def rm(ctx: Any, path: str) -> None:
    """Move a file or folder to the trash (never a hard delete).

    \b
    Example:
      contextfs rm task/subtasks/old.md && contextfs restore task/subtasks/old.md
    """
    entry = ctx.delete(path)
    click.echo(f"moved {entry.original_path} to the trash as {entry.id}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@click.option(
    "--purge",
    "purge_days",
    type=click.FloatRange(min=0),
    default=None,
    metavar="DAYS",
    help="Remove entries older than DAYS for good (git history keeps them).",
)
@click.pass_context
@translate_errors
def trash(click_ctx: click.Context, as_json: bool, purge_days: float | None) -> None:
    """List trash entries (or purge old ones).

    \b
    Example:
      contextfs trash
      contextfs trash --purge 30
    """
    ctx = open_manager(click_ctx, read_only=purge_days is None)
    if purge_days is not None:
        click.echo(f"purged {ctx.purge_trash(older_than=purge_days)} entries")
        return
    echo_data(
        ctx.trash(),
        as_json,
        lambda es: (
            "\n".join(f"{e.id}  {e.deleted_at}  {e.actor:<14} {e.original_path}" for e in es)
            or "(trash is empty)"
        ),
    )


@click.command()
@click.argument("path_or_entry")
@click.option("--to", default=None, help="Restore to another path.")
@translate_errors
@pass_manager
def restore(ctx: Any, path_or_entry: str, to: str | None) -> None:
    """Bring back a deleted file (by path or trash entry id).

    \b
    Example:
      contextfs restore memory/facts.md
    """
    click.echo(f"restored {ctx.restore(path_or_entry, to=to)}")


@click.command()
@click.argument("src")
@click.argument("dst")
@translate_errors
@pass_manager
def mv(ctx: Any, src: str, dst: str) -> None:
    """Move or rename a file or folder.

    \b
    Example:
      contextfs mv task/current.md task/history/2026-11-30.md
    """
    click.echo(f"moved {src} -> {ctx.move(src, dst)}")


@click.command()
@click.argument("path", required=False)
@click.option(
    "-n",
    "--limit",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many commits to show, newest first (1 or more).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the commits with their trailers as JSON."
)
@translate_errors
@pass_reader
def log(ctx: Any, path: str | None, limit: int, as_json: bool) -> None:
    """Show the history of the root or of one file.

    \b
    Example:
      contextfs log memory/facts.md -n 5
    """
    entries = ctx.history(path, limit=limit)
    if path and not entries:
        raise NotFoundError(
            f"no commit touches {path}",
            path=path,
            fix=Fix("list", path.rstrip("/").rpartition("/")[0]),
        )
    _echo_lines(
        entries,
        as_json,
        lambda hs: "\n".join(f"{h.commit[:10]}  {h.date}  {h.author:<16} {h.message}" for h in hs),
    )


@click.command()
@click.argument("path")
@click.argument("rev_a")
@click.argument("rev_b", required=False)
@translate_errors
@pass_reader
def diff(ctx: Any, path: str, rev_a: str, rev_b: str | None) -> None:
    """Unified diff of a file between two revisions (or REV_A and now).

    \b
    Example:
      contextfs diff memory/facts.md HEAD~2
    """
    click.echo(ctx.diff(path, rev_a, rev_b) or "(no differences)", nl=False)


@click.command()
@click.argument("path")
@click.option(
    "--at",
    "rev",
    default="HEAD",
    show_default=True,
    help="The revision: a commit id, HEAD~N, a branch or a tag (main, origin/main, v1.2).",
)
@translate_errors
@pass_reader
def show(ctx: Any, path: str, rev: str) -> None:
    """Print a whole file, frontmatter included, at a revision.

    \b
    Example:
      contextfs show memory/facts.md --at HEAD~3
      contextfs show memory/facts.md --at origin/main
    """
    text = ctx.show_at(path, rev)
    if text is None:
        raise NotFoundError(
            f"{path} did not exist at {rev}; pick a revision from 'contextfs log {path}'", path=path
        )
    click.echo(text, nl=False)


@click.command()
@click.argument("path", required=False)
@click.option("--to", "rev", default=None, help="Make PATH what it was at this revision.")
@click.option("--session", "session_id", default=None, help="Undo everything one session wrote.")
@translate_errors
@pass_manager
def revert(ctx: Any, path: str | None, rev: str | None, session_id: str | None) -> None:
    """Undo as new commits: a file to a revision, or a whole session.

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
    click.echo(
        f"reverted {path} to {rev}" + ("" if doc else " (it did not exist then: moved to trash)")
    )


def _echo_lines(items: list[Any], as_json: bool, text: Any) -> None:
    """Like ``echo_data``, but an empty listing prints nothing rather than a blank line."""
    if as_json or items:
        echo_data(items, as_json, text)
