"""Replaying a model call from git: the prompt the agent got when a commit was the head.

Everything the agent middleware puts in a prompt comes from the context files: the view
from the scope's and topics' files, the history from the conversation log (each line
holds the whole LangChain message) and the window's bookkeeping (the summary file says how
many messages had left the window and which topic it belonged to). So the files of one
commit, checked out into a scratch root and read by an engine with the same settings,
give back the prompt byte for byte. Which topic is active is each machine's own state,
never committed; the scratch root takes the window's topic as its active one (it was the
active topic when the prompt was built: the engine follows every switch before a model
call). Nothing is written to the live root.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.tools import BaseTool

from contextfs.errors import NotFoundError
from contextfs.manager import ContextManager

from .context import ContextEngine

__all__ = ["materialize", "replay"]


def materialize(ctx: ContextManager, rev: str, dest: Path) -> Path:
    """Write the root's files as they were at ``rev`` into ``dest`` (a new folder); ``dest``."""
    files = ctx.parts.git.files_at(rev)
    if not files:
        raise NotFoundError(
            f"the root has no files at {rev!r}; pass a commit of this root (see context_history)"
        )
    for rel, sha in sorted(files.items()):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(ctx.parts.git.read_blob(sha))
    return dest


def replay(
    engine: ContextEngine,
    as_of: str,
    *,
    system: SystemMessage | None,
    tools: Sequence[BaseTool | dict[str, Any]],
) -> list[BaseMessage]:
    """The system message and history an engine like ``engine`` builds from the files of ``as_of``."""
    rev = engine.ctx.parts.git.resolve(as_of).hexsha
    with tempfile.TemporaryDirectory(prefix="contextfs-replay-") as tmp:
        root = materialize(engine.ctx, rev, Path(tmp) / "root")
        copy = ContextManager(
            root, actor=engine.settings.actor, session=engine.session, index=False, durable=False
        )
        try:
            twin = ContextEngine(copy, engine.settings, compactor=engine.compactor)
            twin.adopt_window_topic(
                force=True
            )  # the active topic is per machine: the window's, here
            history = twin.window_messages()
            prompt, fitted = twin.prompt(system, history, tools)
            return [prompt, *fitted]
        finally:
            copy.close()
