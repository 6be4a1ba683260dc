"""Pieces every CLI module shares: opening the root, printing data, failing cleanly.

Layer CLI modules (``contextfs.scopes.cli_*``, ``contextfs.evolve.cli``) import from
here rather than from ``contextfs.cli``, which composes them all.

Failing cleanly has one path: :func:`as_cli_error` turns a ``ContextFSError`` or a click
error into a :class:`CLIError`, shown as one line ``error: ...`` on stderr, or as one JSON
document ``{"error": {...}}`` when the command line asked for ``--json`` (see
:func:`json_errors`). The root group applies it to every command; :func:`translate_errors`
applies it to one command invoked on its own (as tests do).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import click

from .errors import ContextFSError

if TYPE_CHECKING:
    from .manager import ContextManager

__all__ = [
    "CLIError",
    "UnknownCommand",
    "as_cli_error",
    "echo_data",
    "json_errors",
    "open_manager",
    "pass_manager",
    "pass_reader",
    "to_jsonable",
    "translate_errors",
]

P = ParamSpec("P")  # a command's own parameters
R = TypeVar("R")  # what the command returns


def __getattr__(name: str) -> Any:
    # ``contextfs.manager`` (GitPython, PyYAML, filelock: about 70 ms of imports) is
    # loaded when a command first opens the root, so ``--help`` and ``demo`` skip it.
    # Tests may still replace ``cliutil.ContextManager``; open_manager uses theirs.
    if name == "ContextManager":
        from .manager import ContextManager  # lazy: see above (about 70 ms)

        return ContextManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_manager(click_ctx: click.Context, *, index: bool = False, read_only: bool = False,
                 own_repository: bool = False) -> ContextManager:
    """The ContextManager for ``--root`` / ``CONTEXTFS_ROOT`` (default ./context), opened once.

    The search index opens lazily on the first search: it notices commits made by
    other processes (its stamp is the HEAD it reflects), so commands that only write
    do not pay for reconciling it. ``read_only`` opens an existing root without creating,
    syncing or committing anything and without the write lock (a missing root is an
    error naming ``contextfs init``): what every command that only reads gets, whether it
    asks or not (:data:`contextfs.cli.READING` says which do). ``own_repository`` gives a
    new root a repository of its own (``init --own-repository``).
    """
    obj = click_ctx.ensure_object(dict)
    manager = obj.get("manager")
    from .cli import reads_only  # the command table; that module imports this one

    read_only = read_only or reads_only(click_ctx.command_path, click_ctx.params)
    if manager is None:
        root = obj.get("root") or os.environ.get("CONTEXTFS_ROOT") or "./context"
        actor = obj.get("actor") or "human"
        factory = globals().get("ContextManager") or __getattr__("ContextManager")
        extra: dict[str, bool] = {"review": True} if obj.get("review") else {}  # else [review] agents decides
        if own_repository:
            extra["own_repository"] = True
        manager = factory(root, actor=actor, session=obj.get("session"), index=index, read_only=read_only, **extra)
        obj["manager"] = manager
        click_ctx.call_on_close(manager.close)
    return manager


def pass_manager(func: Callable[Concatenate[ContextManager, P], R]) -> Callable[P, R]:
    """Decorator: call ``func(manager, ...)`` with the root's ContextManager."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        click_ctx = click.get_current_context()
        return func(open_manager(click_ctx), *args, **kwargs)

    return wrapper


def pass_reader(func: Callable[Concatenate[ContextManager, P], R]) -> Callable[P, R]:
    """Decorator: like :func:`pass_manager`, with the root opened read-only."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return func(open_manager(click.get_current_context(), read_only=True), *args, **kwargs)

    return wrapper


def to_jsonable(value: Any) -> Any:
    """Dataclasses, tuples and mappings to plain JSON types."""
    if is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "to_dict"):
        return to_jsonable(value.to_dict())
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def echo_data(value: Any, as_json: bool, text: Callable[[Any], str] | None = None) -> None:
    """Print ``value`` as JSON (``--json``) or through ``text`` for people."""
    if as_json:
        click.echo(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))
    elif text is not None:
        click.echo(text(value))
    else:
        click.echo(value)


#: Whether the command line being run asked for ``--json``: its errors are JSON too.
_JSON_ERRORS: ContextVar[bool] = ContextVar("contextfs_json_errors", default=False)


@contextlib.contextmanager
def json_errors(args: Sequence[str]) -> Iterator[None]:
    """Show errors as JSON while running ``args`` when they ask for ``--json``.

    Decided from the words of the command line (up to a ``--``), so a usage mistake that
    stops parsing before ``--json`` is read still comes out in the shape asked for.
    """
    words = list(args)
    words = words[: words.index("--")] if "--" in words else words
    token = _JSON_ERRORS.set("--json" in words)
    try:
        yield
    finally:
        _JSON_ERRORS.reset(token)


class CLIError(click.ClickException):
    """An error shown as one line, ``error: <message>``, on stderr; exit status 1 (2 for usage).

    With ``--json`` on the command line it is shown as ``{"error": {"type", "message",
    "exit_code"[, "path"]}}`` on stderr instead, with the same exit status. ``usage`` lines
    (a short usage for a command given without its subcommand) come before the error line.
    """

    def __init__(self, message: str, exit_code: int = 1, *, kind: str = "ContextFSError",
                 path: str | None = None, usage: Sequence[str] = ()) -> None:
        super().__init__(" ".join(message.split()) or "failed")
        # ignore: click declares exit_code a class variable; this error carries its own per
        # instance (1, or 2 for usage), and click reads it from the instance.
        self.exit_code = exit_code  # type: ignore[misc]
        self.kind = kind
        self.path = path
        self.usage = tuple(usage)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of this error (what ``--json`` prints on stderr)."""
        error: dict[str, Any] = {"type": self.kind, "message": self.format_message(), "exit_code": self.exit_code}
        if self.path is not None:
            error["path"] = self.path
        return {"error": error}

    def show(self, file: Any = None) -> None:
        if _JSON_ERRORS.get():
            click.echo(json.dumps(self.to_json(), ensure_ascii=False), err=True, file=file)
            return
        for line in self.usage:
            click.echo(line, err=True, file=file)
        click.echo(f"error: {self.format_message()}", err=True, file=file)


class UnknownCommand(click.UsageError):
    """A command name no group knows, with the close matches to suggest (click >= 8.4 has its own)."""

    def __init__(self, command_name: str, possibilities: Sequence[str], ctx: click.Context | None = None) -> None:
        super().__init__(f"No such command {command_name!r}.", ctx=ctx)
        self.command_name = command_name
        self.possibilities = list(possibilities)


def _group_usage(ctx: click.Context) -> list[str]:
    """A short usage for a group called without a command: its usage line and its commands."""
    group = ctx.command
    names = group.list_commands(ctx) if isinstance(group, click.Group) else []
    usage = " ".join(group.collect_usage_pieces(ctx))
    lines = [f"Usage: {ctx.command_path} {usage}"]
    if names:
        lines += textwrap.wrap(", ".join(names), width=100, initial_indent="Commands: ",
                               subsequent_indent="          ")
    return lines


def _usage_error(exc: click.UsageError) -> CLIError:
    """A usage mistake as one line: what was wrong, a suggestion when there is one, the help to read."""
    ctx = exc.ctx
    help_command = f"{ctx.command_path if ctx is not None else 'contextfs'} --help"
    see = f"see '{help_command}'"
    if ctx is not None and type(exc).__name__ == "NoArgsIsHelpError":
        # click's way of saying "a group was called without a command": its whole help
        # text as the message. A short usage and the commands say it in a few lines.
        return CLIError(f"no command given; {see} for what each command does", exit_code=exc.exit_code,
                        kind="UsageError", usage=_group_usage(ctx))
    name = getattr(exc, "option_name", None) or getattr(exc, "command_name", None)
    possibilities = getattr(exc, "possibilities", None)
    if name is not None:
        what = "option" if hasattr(exc, "option_name") else "command"
        message = f"No such {what} {name!r}"
        if possibilities:
            best = [repr(p) for p in possibilities[:3]]  # closest first
            quoted = " or ".join([", ".join(best[:-1]), best[-1]] if len(best) > 1 else best)
            return CLIError(f"{message}; did you mean {quoted}? See '{help_command}'", exit_code=exc.exit_code,
                            kind="UsageError")
        return CLIError(f"{message}; {see}", exit_code=exc.exit_code, kind="UsageError")
    return CLIError(f"{exc.format_message().rstrip('.')}; {see}", exit_code=exc.exit_code, kind="UsageError")


def as_cli_error(exc: ContextFSError | click.ClickException) -> CLIError:
    """The CLI's form of ``exc``: one line that ends with the fix, and its exit status."""
    if isinstance(exc, CLIError):
        return exc
    if isinstance(exc, click.UsageError):
        return _usage_error(exc)
    if isinstance(exc, click.ClickException):
        return CLIError(exc.format_message(), exit_code=exc.exit_code, kind=type(exc).__name__)
    return CLIError(str(exc), kind=type(exc).__name__, path=getattr(exc, "path", None))


def translate_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator: a ``ContextFSError`` raised by ``func`` leaves as a :class:`CLIError`."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except ContextFSError as exc:
            raise as_cli_error(exc) from None

    return wrapper

