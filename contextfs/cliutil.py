"""Pieces every CLI module shares: opening the root, printing data, failing cleanly.

Layer CLI modules (``contextfs.scopes.cli_*``, ``contextfs.evolve.cli``) import from
here rather than from ``contextfs.cli``, which composes them all.

Failing cleanly has one path: :func:`as_cli_error` turns a ``ContextFSError`` or a click
error into a :class:`CLIError`, shown as one line ``error: ...`` on stderr. The root
group applies it to every command; :func:`translate_errors` applies it to one command
invoked on its own (as tests do).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import click

from .errors import ContextFSError

if TYPE_CHECKING:
    from .manager import ContextManager

__all__ = [
    "CLIError",
    "as_cli_error",
    "echo_data",
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


class CLIError(click.ClickException):
    """An error shown as one line, ``error: <message>``, on stderr; exit status 1 (2 for usage)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(" ".join(message.split()) or "failed")
        # ignore: click declares exit_code a class variable; this error carries its own per
        # instance (1, or 2 for usage), and click reads it from the instance.
        self.exit_code = exit_code  # type: ignore[misc]

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def as_cli_error(exc: ContextFSError | click.ClickException) -> CLIError:
    """The CLI's form of ``exc``: one line that ends with the fix, and its exit status."""
    if isinstance(exc, CLIError):
        return exc
    if isinstance(exc, click.UsageError):
        message = exc.format_message().rstrip(".")
        if exc.ctx is not None:
            message += f"; see '{exc.ctx.command_path} --help'"
        return CLIError(message, exit_code=exc.exit_code)
    if isinstance(exc, click.ClickException):
        return CLIError(exc.format_message(), exit_code=exc.exit_code)
    return CLIError(str(exc))


def translate_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator: a ``ContextFSError`` raised by ``func`` leaves as a :class:`CLIError`."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except ContextFSError as exc:
            raise as_cli_error(exc) from None

    return wrapper

