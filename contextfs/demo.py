"""``contextfs demo``: every layer on a copy of the sample context, in about a minute of reading.

It copies the bundled sample tree (``sample-context/`` in a checkout, shipped inside
the package as ``contextfs/sample_context/``) to a fresh folder, opens it as a root
(its files become the first commit), lets each layer show what it does in a few lines
and ends with a short ``git log`` and the folder, so a newcomer sees real files and
real history rather than a description.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import shutil
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import click

from .cliutil import translate_errors
from .errors import InvalidArgumentError, NotFoundError
from .manager import ContextManager

__all__ = ["LAYER_DEMOS", "demo", "find_sample_context", "run_demo"]

#: Layer demos, in the order they build on each other: (title, module with a ``demo(ctx, say)``).
LAYER_DEMOS = (
    ("Search", "contextfs.cli_search"),
    ("Scoped context under token budgets", "contextfs.scopes.cli_context"),
    ("Topics", "contextfs.scopes.cli_topics"),
    ("Memory tiers", "contextfs.scopes.cli_memory"),
    ("Evolving agent", "contextfs.evolve.cli"),
    ("Edits made in an editor", "contextfs.cli_watch"),
)
#: How many of the newest commits the closing ``git log`` shows.
LOG_LINES = 8


def find_sample_context() -> Path:
    """The sample tree: inside the installed package, else next to it in a source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sample_context", here.parent / "sample-context"):
        if (candidate / "project" / "README.md").is_file():
            return candidate
    raise NotFoundError(
        f"the sample context is neither in {here / 'sample_context'} nor in {here.parent / 'sample-context'}; "
        "reinstall contextfs-git or pass --source DIR"
    )


def _heading(title: str) -> None:
    click.echo("")
    click.secho(f"== {title} ==", bold=True)


def _say(text: str) -> None:
    click.echo(textwrap.indent(str(text), "  "))


@contextlib.contextmanager
def _narrated() -> Iterator[None]:
    """Keep the library's warnings out of the walkthrough unless -v asked for its log.

    Each step says in its own words what the library decided (a note kept as untrusted,
    a section refused); the same news as a warning on stderr would land in the middle of
    the walkthrough's lines.
    """
    library = logging.getLogger("contextfs")
    level = library.level
    if library.getEffectiveLevel() >= logging.WARNING:
        library.setLevel(logging.ERROR)
    try:
        yield
    finally:
        library.setLevel(level)


def run_demo(target: str | None = None, source: str | None = None) -> Path:
    """Run the walkthrough into ``target`` (default: a new temporary folder); return the root."""
    src = Path(source) if source else find_sample_context()
    if not (src / "project").is_dir():
        raise NotFoundError(f"{src} holds no project/ folder; pass --source a context tree such as sample-context/")
    dest = Path(target) if target else Path(tempfile.mkdtemp(prefix="contextfs-demo-")) / "context"
    if dest.exists() and any(dest.iterdir()):
        raise InvalidArgumentError(f"{dest} is not empty; pass an empty or new --dir")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, dirs_exist_ok=True)

    click.echo(f"contextfs demo: every layer on a copy of {src.name}/, in a git repository of its own")
    _heading("Files and git")
    # Its own repository, even when --dir is inside a checkout (make demo uses .demo/ in
    # the source tree): the demo's commits must never land in the enclosing history.
    ctx = ContextManager(dest, actor="agent:demo", own_repository=True)
    _say(f"{len(ctx.list())} markdown files adopted as the first commit ({(ctx.git.head() or '')[:10]})")
    path = "memory/facts-demo.md"
    ctx.write(path, "- Staging database: PostgreSQL 16 on port 5433\n", {"title": "Demo facts", "tags": ["demo"]})
    ctx.edit(path, "port 5433", "port 5434")
    ctx.append(path, "- Feature flags live in LaunchDarkly project 'tidewater'\n")
    history = ctx.history(path)
    _say(f"write, edit, append {path}: {len(history)} commits by {history[0].author} "
         f"({', '.join(h.op for h in reversed(history))})")
    first = history[-1].commit
    changed = [line for line in ctx.diff(path, first).splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    _say("diff against the first version:")
    for line in changed:
        _say(f"  {line}")
    ctx.revert(path, first)
    _say(f"revert to {first[:10]} (a new commit): the body is {ctx.read(path)!r} again")
    entry = ctx.delete("task/subtasks/webhook-signing.md")
    ctx.restore("task/subtasks/webhook-signing.md")
    _say(f"rm task/subtasks/webhook-signing.md went to {entry.folder}/; restore brought it back")

    with _narrated():
        for title, module in LAYER_DEMOS:
            _heading(title)
            importlib.import_module(module).demo(ctx, _say)

    _heading("The repository")
    entries = ctx.history(limit=1000)
    _say(f"git log: {len(entries)} commits, every one authored by who wrote it; the newest {LOG_LINES}:")
    for h in entries[:LOG_LINES]:
        _say(f"  {h.commit[:10]}  {h.author:<11} {textwrap.shorten(h.message, 72, placeholder=' ...')}")
    _say(f"the context root is {ctx.root}")
    _say(f"open it in any editor; see every change with: git -C {ctx.root} log --stat")
    ctx.close()
    return ctx.root


@click.command("demo")
@click.option("--dir", "target", default=None, help="Where to create the demo root (default: a new temp folder).")
@click.option("--source", default=None, help="Tree to copy (default: the bundled sample context).")
@translate_errors
def demo(target: str | None, source: str | None) -> None:
    """Walk through every layer on a copy of the sample context.

    Nothing needs a network or an API key: the evolving agent's model is scripted.

    \b
    Example:
      contextfs demo --dir /tmp/contextfs-demo
    """
    run_demo(target, source)
