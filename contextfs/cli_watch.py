"""``contextfs watch``: commit edits people make in their editor, as they make them.

The command opens the root *without* the automatic sync a ContextManager does on
opening, then runs the first sync itself, so it can say what it committed and what it
held back (and why). It opens no search index either: a long-running watcher should not
hold one, and the index catches up with the commits by itself (derived state heals from
the files).

``watch --once`` exits with status 0 when every edit is committed (or there was none),
:data:`HELD_BACK` when it held something back (listed, with the reason, one per line),
and 1 on an error.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import click

from .cliutil import CLIError, translate_errors
from .manager import ContextManager
from .state import locate_root

__all__ = ["HELD_BACK", "demo", "watch"]

#: The exit status of ``watch --once`` when some edits were held back, not committed.
HELD_BACK = 3


def _open(click_ctx: click.Context) -> ContextManager:
    """The root's manager, opened like ``cliutil.open_manager`` but with ``sync=False``; a
    missing root is an error naming ``contextfs init``."""
    obj = click_ctx.ensure_object(dict)
    manager = obj.get("manager")
    if manager is None:
        root = obj.get("root") or os.environ.get("CONTEXTFS_ROOT") or "./context"
        locate_root(Path(root))  # watching needs a root: it never creates one (that is `init`)
        manager = ContextManager(
            root, actor=obj.get("actor") or "human", session=obj.get("session"), index=False, sync=False
        )
        obj["manager"] = manager
        click_ctx.call_on_close(manager.close)
    return manager


def _report(paths: list[str]) -> None:
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    click.echo(f"committed {len(paths)} file(s) edited outside contextfs: {shown}")


def _held(held: dict[str, str]) -> None:
    """One line per path held back, with why; '*' is the whole root (a merge in progress)."""
    for rel, why in sorted(held.items()):
        click.echo(f"not committed: {why}" if rel == "*" else f"not committed: {rel}: {why}")


class _HeldReporter:
    """Prints what a running watch holds back, once for each (path, reason) until it changes."""

    def __init__(self) -> None:
        self.shown: dict[str, str] = {}

    def __call__(self, held: dict[str, str]) -> None:
        new = {rel: why for rel, why in held.items() if self.shown.get(rel) != why}
        self.shown = dict(held)
        if new:
            _held(new)


@click.command(
    "watch",
    epilog="""\b
Examples:
  contextfs watch                  # commit outside edits until Ctrl-C
  contextfs watch --once           # commit what changed since the last run, then exit
  contextfs --root ./context watch --debounce 2
""",
)
@click.option("--once", is_flag=True, help="Run a single sync and exit instead of watching.")
@click.option(
    "--debounce",
    type=click.FloatRange(min=0.0),
    default=0.5,
    show_default=True,
    help="Seconds the files must be quiet before a commit.",
)
@click.pass_context
@translate_errors
def watch(click_ctx: click.Context, once: bool, debounce: float) -> None:
    """Commit edits made outside contextfs (an editor, a script).

    The commits are authored by 'human'. Without --once it keeps watching the context
    root and commits each burst of edits once they settle; .git/, .contextfs/, editor
    and OS scratch files (swap, backup, .DS_Store, ...) and contextfs's own writes are
    ignored. The root must exist already ('contextfs init' creates one). What cannot be
    committed (a merge in progress, conflict markers, a secret, files git ignores) is listed
    with the reason.

    \b
    Exit status of --once: 0 every edit committed (or none to commit), 3 some edits
    held back (listed), 1 an error.
    """
    from . import watcher as watching  # the one module that imports watchdog

    ctx = _open(click_ctx)
    synced = ctx.sync()
    if synced:
        _report(synced)
    held = dict(ctx.last_sync.held)
    if once:
        if held:
            _held(held)
            raise CLIError(f"{len(held)} edit(s) held back, not committed (listed above); do what each line says, "
                           "then run 'contextfs watch --once' again", exit_code=HELD_BACK)
        if not synced:
            click.echo("nothing to commit: every file matches the last commit")
        return
    reporter = _HeldReporter()
    reporter(held)
    watcher = watching.watch(ctx, debounce=debounce, on_sync=_report, on_held=reporter)
    click.echo(f"watching {ctx.root} (debounce {debounce:g}s); press Ctrl-C to stop")
    if threading.current_thread() is threading.main_thread():
        # A service manager stops us with SIGTERM: treat it like Ctrl-C so pending edits are flushed.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while watcher.running:
            time.sleep(1.0)
    except KeyboardInterrupt:
        click.echo("stopping")
    finally:
        watcher.stop()


def demo(ctx: ContextManager, say: Any) -> None:
    """Show an edit made with a plain text editor being committed by ``sync()``."""
    rel = "memory/preferences.md"
    full = Path(ctx.root, *rel.split("/"))
    before = full.read_text("utf-8") if full.is_file() else ""
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(before.rstrip("\n") + "\n- Keep commit messages in the imperative mood\n", "utf-8")
    (full.parent / ".preferences.md.swp").write_bytes(b"b0VIM 9.0\0")  # the editor's swap file
    committed = ctx.sync()
    say(f"a person adds a line to {rel} in vim; ctx.sync() committed: {', '.join(committed) or 'nothing'}")
    last = ctx.history(rel, limit=1)
    if last:
        say(f"git log {rel}: {last[0].commit[:10]} by {last[0].author}: {last[0].message}")
    (full.parent / ".preferences.md.swp").unlink()
    say("vim's .preferences.md.swp was left out (editor scratch files never enter history);")
    say("`contextfs watch` does the same by itself, a moment after each burst of edits settles.")
