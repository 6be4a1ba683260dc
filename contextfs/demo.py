"""``contextfs demo``: the main job on an embedded default, step by step.

It copies ``sample-context/`` to a fresh folder, opens it as a root (its files become
the first commit), exercises what each layer builds and ends with the folder and the
git log, so a newcomer sees real files and real history rather than a description.
"""

from __future__ import annotations

import importlib
import shutil
import tempfile
import textwrap
from pathlib import Path

import click

from .manager import ContextManager

__all__ = ["LAYER_DEMOS", "find_sample_context", "run_demo"]

#: Layer demos, in the order they build on each other: (title, module).
LAYER_DEMOS = (
    ("Search", "contextfs.cli_search"),
    ("Scoped context under token budgets", "contextfs.scopes.cli_context"),
    ("Topics", "contextfs.scopes.cli_topics"),
    ("Memory tiers", "contextfs.scopes.cli_memory"),
    ("Evolving agent", "contextfs.evolve.cli"),
    ("Edits made in an editor", "contextfs.cli_watch"),
)


def find_sample_context() -> Path:
    """The bundled sample tree (next to the package in a checkout or editable install)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "sample-context", here / "sample_context"):
        if (candidate / "project" / "README.md").is_file():
            return candidate
    raise click.ClickException(
        "sample-context/ was not found next to the package; run the demo from a source checkout "
        "or pass --source DIR"
    )


def _heading(title: str) -> None:
    click.echo("")
    click.secho(f"== {title} ==", bold=True)


def _say(text: str) -> None:
    click.echo(textwrap.indent(str(text), "  "))


def _collapsed(entries: list) -> list[str]:
    """One line per commit, with runs like 'chat turn 2' ... 'chat turn 61' folded into one."""
    lines: list[str] = []
    run: list = []

    def stem(message: str) -> str:
        return message.rstrip("0123456789").rstrip()

    def flush() -> None:
        if not run:
            return
        first, last = run[0], run[-1]
        if len(run) < 3:
            lines.extend(f"{h.commit[:10]}  {h.author:<16} {h.message}" for h in run)
        else:
            lines.append(
                f"{first.commit[:10]}..{last.commit[:10]}  {first.author:<16} "
                f"{first.message} ... {last.message} ({len(run)} commits)"
            )
        run.clear()

    for h in entries:
        if run and (stem(h.message) != stem(run[-1].message) or stem(h.message) == h.message
                    or h.author != run[-1].author):
            flush()
        run.append(h)
    flush()
    return lines


def run_demo(target: str | None = None, source: str | None = None) -> Path:
    src = Path(source) if source else find_sample_context()
    dest = Path(target) if target else Path(tempfile.mkdtemp(prefix="contextfs-demo-")) / "context"
    if dest.exists() and any(dest.iterdir()):
        raise click.ClickException(f"{dest} is not empty; pass an empty or new --dir")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, dirs_exist_ok=True)

    _heading("Open a root")
    # Its own repository, even when --dir is inside a checkout (make demo uses .demo/ in
    # the source tree): the demo's commits must never land in the enclosing history.
    ctx = ContextManager(dest, actor="agent:demo", own_repository=True)
    files = ctx.list()
    _say(f"copied {src} -> {ctx.root}")
    _say(f"{len(files)} markdown files adopted as the first commit ({ctx.git.head()[:12]})")

    _heading("Write, edit, append")
    ctx.write("memory/facts-demo.md", "- Staging database: PostgreSQL 16 on port 5433\n",
              {"title": "Demo facts", "tags": ["demo"]})
    _say("write  memory/facts-demo.md")
    ctx.edit("memory/facts-demo.md", "port 5433", "port 5434")
    _say("edit   memory/facts-demo.md: 'port 5433' -> 'port 5434' (the old text must match exactly once)")
    ctx.append("memory/facts-demo.md", "- Feature flags live in LaunchDarkly project 'tidewater'\n")
    _say("append memory/facts-demo.md")
    doc = ctx.get("memory/facts-demo.md")
    _say(f"metadata kept by the library: author={doc.metadata['author']} updated={doc.metadata['updated']}")

    _heading("Soft delete and restore")
    entry = ctx.delete("task/subtasks/webhook-signing.md")
    _say(f"delete  task/subtasks/webhook-signing.md -> {entry.folder}/ (by {entry.actor})")
    _say(f"trash   {[e.original_path for e in ctx.trash()]}")
    ctx.restore("task/subtasks/webhook-signing.md")
    _say("restore task/subtasks/webhook-signing.md (content and metadata back, a new commit)")

    _heading("History, diff, revert")
    for h in ctx.history("memory/facts-demo.md"):
        _say(f"{h.commit[:10]} {h.author:<12} {h.op:<7} {h.message}")
    first = ctx.history("memory/facts-demo.md")[-1].commit
    _say("diff against the first version:")
    _say(ctx.diff("memory/facts-demo.md", first).rstrip())
    ctx.revert("memory/facts-demo.md", first)
    _say(f"revert to {first[:10]}: body is now {ctx.read('memory/facts-demo.md')!r}")

    for title, module in LAYER_DEMOS:
        _heading(title)
        importlib.import_module(module).demo(ctx, _say)

    _heading("What happened")
    _say(f"the context root is {ctx.root}")
    _say("browse it in any editor; audit it with: git -C " + str(ctx.root) + " log --stat")
    for line in _collapsed(list(reversed(ctx.history(limit=500)))):
        _say(line)
    ctx.close()
    return ctx.root
