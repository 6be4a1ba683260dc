"""The ``contextfs`` command line: a thin layer over the Python API.

The root comes from ``--root`` or ``CONTEXTFS_ROOT`` (default ``./context``). Data
commands take ``--json``. Every failure prints one line, ``error: ...`` ending with the
fix, on stderr, and exits non-zero (1, or 2 for a usage mistake).

:data:`COMMANDS` is the whole command table: each command's name, the module and
attribute that define it, and the one-line help ``contextfs --help`` shows; :data:`READING`
says which commands (or forms of them) only read, and those always get the root opened
read-only, whatever the command asks for. A command's
module is imported only when that command runs (or its own ``--help`` is asked for), so
a ``read`` never pays for the LangChain, Whoosh or tiktoken imports that other layers
need; a test checks that each line here matches the command's own short help. This is
the only module that composes every layer, and it does so by name.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import click

from ..errors import ContextFSError
from ..fixes import speaking
from .common import UnknownCommand, as_cli_error, json_errors

__all__ = [
    "COMMANDS",
    "READING",
    "CommandEntry",
    "LazyGroup",
    "Reading",
    "cli",
    "main",
    "reads_only",
    "walk",
]


class CommandEntry(NamedTuple):
    """One row of the command table."""

    name: str
    #: ``"package.module:attribute"`` of the click command, imported on first use.
    target: str
    #: The one-line help listed by ``contextfs --help`` (the command's own short help).
    help: str
    #: The heading it is listed under.
    section: str


_FILES, _HISTORY, _SHARING, _FIND, _LAYERS, _TOOLS = (
    "Files",
    "History",
    "Sharing",
    "Search and context",
    "Topics, memory, evolving agent",
    "Tools",
)

#: Every command of ``contextfs``, in the order ``--help`` lists them.
COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry(
        "init",
        "contextfs.cli.store:init",
        "Create or adopt a root and commit the files in it.",
        _FILES,
    ),
    CommandEntry(
        "read",
        "contextfs.cli.store:read",
        "Print a file's body (add --json for its metadata too).",
        _FILES,
    ),
    CommandEntry(
        "write",
        "contextfs.cli.store:write",
        "Write a file from stdin (or --file); one commit.",
        _FILES,
    ),
    CommandEntry(
        "append",
        "contextfs.cli.store:append",
        "Add text from stdin (or --file) at the end of a file; one commit.",
        _FILES,
    ),
    CommandEntry(
        "edit",
        "contextfs.cli.store:edit",
        "Replace text that occurs exactly once in a file's body.",
        _FILES,
    ),
    CommandEntry(
        "ls", "contextfs.cli.store:ls", "List files under FOLDER (default: the whole root).", _FILES
    ),
    CommandEntry(
        "rm",
        "contextfs.cli.store:rm",
        "Move a file or folder to the trash (never a hard delete).",
        _FILES,
    ),
    CommandEntry(
        "trash", "contextfs.cli.store:trash", "List trash entries (or purge old ones).", _FILES
    ),
    CommandEntry(
        "restore",
        "contextfs.cli.store:restore",
        "Bring back a deleted file (by path or trash entry id).",
        _FILES,
    ),
    CommandEntry("mv", "contextfs.cli.store:mv", "Move or rename a file or folder.", _FILES),
    CommandEntry(
        "log", "contextfs.cli.store:log", "Show the history of the root or of one file.", _HISTORY
    ),
    CommandEntry(
        "diff",
        "contextfs.cli.store:diff",
        "Unified diff of a file between two revisions (or REV_A and now).",
        _HISTORY,
    ),
    CommandEntry(
        "show",
        "contextfs.cli.store:show",
        "Print a whole file, frontmatter included, at a revision.",
        _HISTORY,
    ),
    CommandEntry(
        "revert",
        "contextfs.cli.store:revert",
        "Undo as new commits: a file to a revision, or a whole session.",
        _HISTORY,
    ),
    CommandEntry(
        "sessions",
        "contextfs.cli.review:sessions",
        "Review sessions: list, show a diff, approve, discard, recover, undo.",
        _HISTORY,
    ),
    CommandEntry(
        "search",
        "contextfs.cli.search:search",
        'Search: words, "phrases", AND/OR/NOT, tag:, path:, updated:.',
        _FIND,
    ),
    CommandEntry(
        "reindex",
        "contextfs.cli.search:reindex",
        "Rebuild the search index from the files (or check it: --verify).",
        _FIND,
    ),
    CommandEntry(
        "sync",
        "contextfs.cli.sync:sync",
        "Fetch, merge with contextfs's rules, update the index, push.",
        _SHARING,
    ),
    CommandEntry(
        "conflicts",
        "contextfs.cli.sync:conflicts",
        "List conflict copies that merges left, or resolve one.",
        _SHARING,
    ),
    CommandEntry(
        "context",
        "contextfs.scopes.cli.context:context",
        "Print the context for a scope, within a token budget.",
        _FIND,
    ),
    CommandEntry(
        "topic",
        "contextfs.scopes.cli.topics:topic",
        "Isolated topic contexts: switch, spawn, close, state, decisions, routing.",
        _LAYERS,
    ),
    CommandEntry(
        "memory",
        "contextfs.scopes.cli.memory:memory",
        "Memory tiers: pinned core blocks, archival notes, conversation recall.",
        _LAYERS,
    ),
    CommandEntry(
        "evolve",
        "contextfs.evolve.cli:evolve",
        "Improve the context after work: lessons, facts, summaries, compaction, cleanup.",
        _LAYERS,
    ),
    CommandEntry(
        "watch",
        "contextfs.cli.watch:watch",
        "Commit edits made outside contextfs (an editor, a script).",
        _TOOLS,
    ),
    CommandEntry(
        "demo",
        "contextfs.demo:demo",
        "Walk through every layer on a copy of the sample context.",
        _TOOLS,
    ),
    CommandEntry(
        "mcp",
        "contextfs.integrations.mcp_server:mcp",
        "Serve the context root to MCP clients over stdio (needs the 'mcp' extra).",
        _TOOLS,
    ),
    CommandEntry(
        "ui",
        "contextfs.integrations.ui.cli:ui",
        "Browse and review the root in a local web page (needs the 'ui' extra).",
        _TOOLS,
    ),
)


class Reading(NamedTuple):
    """A command, or one form of it, that only reads: the root is opened read-only for it, so
    it never creates a root, syncs, commits or takes the write lock (derived state such as
    the search index may still be refreshed)."""

    #: The command's path under ``contextfs``, e.g. ``"topic detect"``.
    path: str
    #: Only when this flag is set (``"dry_run"``: ``evolve cleanup --dry-run``).
    when: str | None = None
    #: Not when any of these options is given (``memory core`` reads unless it is told to change a block).
    unless: tuple[str, ...] = ()


#: Every command (or form of one) that only reads; :func:`reads_only` consults it for every command.
READING: tuple[Reading, ...] = (
    Reading("read"),
    Reading("ls"),
    Reading("trash", unless=("purge_days",)),
    Reading("log"),
    Reading("diff"),
    Reading("show"),
    Reading("search"),
    Reading("reindex"),
    Reading("conflicts", unless=("path",)),
    Reading("context"),
    Reading("topic list"),
    Reading("topic show"),
    Reading("topic chain"),
    Reading("topic block"),
    Reading("topic detect"),
    Reading("topic vocab"),
    Reading("memory core", unless=("append_", "replace", "rethink")),
    Reading("memory search"),
    Reading("memory recall"),
    Reading("evolve cleanup", when="dry_run"),
    Reading("evolve summarize", when="dry_run"),
    Reading("sessions"),
    Reading("sessions show"),
    Reading("ui", unless=("write",)),
    Reading("mcp", when="read_only"),
)


def reads_only(command_path: str, params: Mapping[str, Any]) -> bool:
    """True when the command at ``command_path`` (``"contextfs topic detect"``), called with
    ``params``, is one of :data:`READING`."""
    path = command_path.split(" ", 1)[1] if " " in command_path else ""
    for entry in READING:
        if entry.path != path:
            continue
        if entry.when is not None and not params.get(entry.when):
            return False
        return not any(params.get(name) not in (None, False, (), "") for name in entry.unless)
    return False


class LazyGroup(click.Group):
    """A click group whose commands come from a table and are imported when used.

    Commands added with ``add_command`` work as in any group. Every exception a command
    raises on purpose (a ``ContextFSError`` or a click error) leaves through
    :func:`contextfs.cli.common.as_cli_error`, the CLI's one error path.
    """

    def __init__(self, *args: Any, table: Sequence[CommandEntry] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.table = {entry.name: entry for entry in table}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.table, *sorted(name for name in self.commands if name not in self.table)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in self.table:
            module, _, attribute = self.table[cmd_name].target.partition(":")
            command = getattr(importlib.import_module(module), attribute)
            self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands from the table's help lines, without importing them."""
        names = self.list_commands(ctx)
        width = max(len(name) for name in names)  # one column width for every section
        limit = formatter.width - 6 - width
        sections: dict[str, list[tuple[str, str]]] = {}
        for name in names:
            entry = self.table.get(name)
            if entry is not None:
                # click's own shortening, applied to the table's line instead of an imported command
                short = click.Command(name, help=entry.help).get_short_help_str(limit)
                sections.setdefault(entry.section, []).append((name.ljust(width), short))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                sections.setdefault("Other commands", []).append(
                    (name.ljust(width), command.get_short_help_str(limit))
                )
        for title, rows in sections.items():
            with formatter.section(title):
                formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with every command of the table as a "did you mean" candidate (most are not loaded)."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError:
            name = args[0] if args else ""
            if self.get_command(ctx, name) is not None or name.startswith("-"):
                raise
            import difflib  # startup cost: only a mistyped command needs it

            raise UnknownCommand(
                name, difflib.get_close_matches(name, self.list_commands(ctx)), ctx
            ) from None

    def main(self, args: Sequence[str] | None = None, *pos: Any, **kwargs: Any) -> Any:
        """click's ``main``; errors come out as JSON when the command line has ``--json``."""
        words = sys.argv[1:] if args is None else list(args)
        with json_errors(words):
            return super().main(words, *pos, **kwargs)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.ClickException as exc:
            raise as_cli_error(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ContextFSError, click.ClickException) as exc:
            raise as_cli_error(exc) from None


@click.group(
    "contextfs",
    cls=LazyGroup,
    table=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--root",
    envvar="CONTEXTFS_ROOT",
    default=None,
    metavar="DIR",
    help="Context root (default: $CONTEXTFS_ROOT or ./context).",
)
@click.option(
    "--actor",
    default="human",
    show_default=True,
    help="Who is writing: human, agent, agent:<name> or remote.",
)
@click.option("--session", default=None, help="Session id recorded in commit trailers.")
@click.option(
    "--review",
    is_flag=True,
    help="Review mode: this session's writes wait on a branch of their own for a person's approval.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show what the library logs (index rebuilds, topic switches).",
)
@click.version_option(package_name="contextfs-git")
@click.pass_context
def cli(
    click_ctx: click.Context,
    root: str | None,
    actor: str,
    session: str | None,
    review: bool,
    verbose: bool,
) -> None:
    """contextfs: an agent's context as plain markdown files, versioned by git.

    \b
    Example:
      contextfs --root ./context init
      echo "- Database: PostgreSQL 16" | contextfs write memory/facts.md
      contextfs log
    """
    # The library logs without handlers; the CLI is the edge that decides how they look.
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="  [contextfs] %(message)s"
    )
    click_ctx.ensure_object(dict).update(root=root, actor=actor, session=session, review=review)
    click_ctx.with_resource(speaking("cli"))  # an error's fix names commands, not Python calls


def walk(
    group: click.Group | None = None,
    path: tuple[str, ...] = ("contextfs",),
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command under ``group`` (default: the whole CLI) with its path, depth first.

    It imports every command's module: for the CLI reference and its tests, not for a call.
    """
    group = cli if group is None else group
    ctx = click.Context(group, info_name=path[-1])
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None:
            continue
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from walk(command, (*path, name))


def main(argv: list[str] | None = None) -> None:
    """The ``contextfs`` console script."""
    cli.main(args=argv, prog_name="contextfs", standalone_mode=True)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
