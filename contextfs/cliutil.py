"""Pieces every CLI module shares: opening the root, printing data, failing cleanly.

Layer CLI modules (``contextfs.scopes.cli_*``, ``contextfs.evolve.cli``) import from
here rather than from ``contextfs.cli``, which composes them all.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from typing import Any, TypeVar

import click

from .errors import ContextFSError
from .manager import ContextManager

__all__ = ["echo_data", "open_manager", "pass_manager", "to_jsonable"]

F = TypeVar("F", bound=Callable[..., Any])


def open_manager(click_ctx: click.Context, *, index: bool = False) -> ContextManager:
    """The ContextManager for ``--root`` / ``CONTEXTFS_ROOT`` (default ./context), opened once.

    The search index opens lazily on the first search: it notices commits made by
    other processes (its stamp is the HEAD it reflects), so commands that only write
    do not pay for reconciling it.
    """
    obj = click_ctx.ensure_object(dict)
    manager = obj.get("manager")
    if manager is None:
        root = obj.get("root") or os.environ.get("CONTEXTFS_ROOT") or "./context"
        actor = obj.get("actor") or "human"
        manager = ContextManager(root, actor=actor, session=obj.get("session"), index=index)
        obj["manager"] = manager
        click_ctx.call_on_close(manager.close)
    return manager


def pass_manager(func: F) -> F:
    """Decorator: call ``func(manager, ...)`` with the root's ContextManager."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        click_ctx = click.get_current_context()
        return func(open_manager(click_ctx), *args, **kwargs)

    return wrapper  # type: ignore[return-value]


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
    """A ContextFSError shown as one line; exit status 1."""

    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def translate_errors(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ContextFSError as exc:
            raise CLIError(str(exc)) from None

    return wrapper  # type: ignore[return-value]
