"""LangChain tools over a ContextManager, shaped for a model that makes mistakes.

A tool call is the point where LLM text becomes a file operation, so three things hold
for every tool made here:

* it always returns a string: a :class:`~contextfs.ContextFSError` (a refused path, a
  stale edit, a missing file) comes back as ``"Error: <message>"``, and that message
  ends with the fix, so the model can retry instead of the agent loop crashing;
* paths go through the manager and nothing else, so ``../../etc/passwd``, ``.git/config``,
  absolute paths and ``.trash/...`` are refused by the one path gate;
* writes run under ``ctx.provenance(actor=...)``: the commit author and the ``author``
  frontmatter key say which agent wrote, and no argument the model sends can change that.

>>> tools = make_tools(ctx, allow_delete=True)          # doctest: +SKIP
>>> by_name = {t.name: t for t in tools}                 # doctest: +SKIP
>>> by_name["read_context"].invoke({"path": "memory/facts.md"})  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, ValidationError

from contextfs.errors import ConfigError, ContextFSError

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = ["DEFAULT_ACTOR", "format_error", "make_tools"]

log = logging.getLogger(__name__)

#: Who tool writes are attributed to unless ``make_tools(actor=...)`` says otherwise.
DEFAULT_ACTOR = "agent:langchain"
_MAX_LIST = 200
_MAX_SEARCH = 20


def format_error(exc: ContextFSError) -> str:
    """The string a model sees for a refused call: ``Error:`` then the message and its fix."""
    return f"Error: {exc}"


def _validation_message(exc: ValidationError | Any) -> str:
    try:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err.get('loc', ())) or 'input'}: {err.get('msg', 'invalid')}"
            for err in exc.errors()
        )
    except Exception:  # pydantic v1 errors or anything odd: keep the tool answering
        problems = str(exc)
    return f"Error: invalid tool arguments ({problems}); call the tool again with every required argument as a string"


# ------------------------------------------------------------------ argument schemas
class _PathArgs(BaseModel):
    path: str = Field(description="Relative path inside the context tree, e.g. 'memory/facts.md'.")


class _WriteArgs(BaseModel):
    path: str = Field(description="Relative path of the markdown file to create or replace, e.g. 'memory/lessons.md'.")
    content: str = Field(description="The complete new body of the file (markdown). Replaces the old body.")


class _AppendArgs(BaseModel):
    path: str = Field(description="Relative path of the file to add to; it is created when missing.")
    text: str = Field(description="Markdown to add at the end of the body, e.g. '- New fact'.")


class _EditArgs(BaseModel):
    path: str = Field(description="Relative path of the file to change.")
    old: str = Field(description="Exact text currently in the body; it must occur exactly once.")
    new: str = Field(description="Text to put in its place (may be empty to remove it).")


class _ListArgs(BaseModel):
    folder: str = Field(default="", description="Folder to list, e.g. 'memory'; empty for the whole tree.")


class _SearchArgs(BaseModel):
    query: str = Field(description="Words to look for, e.g. 'database migration decision'.")
    folder: str = Field(default="", description="Only search under this folder, e.g. 'project'; empty for everywhere.")
    limit: int = Field(default=5, ge=1, le=_MAX_SEARCH, description="How many results to return (1-20).")


class _HistoryArgs(BaseModel):
    path: str = Field(description="Relative path of the file whose change history you want.")
    limit: int = Field(default=10, ge=1, le=50, description="How many recent changes to show (1-50).")


# ------------------------------------------------------------------ the tools
class _Toolbox:
    """The functions behind the tools, bound to one manager and one actor."""

    def __init__(self, ctx: ContextManager, actor: str, session: str | None) -> None:
        self.ctx = ctx
        self.actor = actor
        self.session = session

    def _writing(self) -> Any:
        return self.ctx.provenance(actor=self.actor, session=self.session)

    def read(self, path: str) -> str:
        body = self.ctx.read(path)
        if body is None:
            return f"No context at {path}. Use list_context to see which files exist."
        return body if body.strip() else f"{path} exists but is empty."

    def write(self, path: str, content: str) -> str:
        with self._writing():
            doc = self.ctx.write(path, content)
        return f"Written to {doc.path} (version {str(doc.version)[:12]})."

    def append(self, path: str, text: str) -> str:
        with self._writing():
            doc = self.ctx.append(path, text)
        return f"Appended to {doc.path} (version {str(doc.version)[:12]})."

    def edit(self, path: str, old: str, new: str) -> str:
        with self._writing():
            doc = self.ctx.edit(path, old, new)
        return f"Edited {doc.path} (version {str(doc.version)[:12]})."

    def list(self, folder: str = "") -> str:
        found = self.ctx.list(folder)
        where = folder or "the context tree"
        if not found:
            return f"No files under {where}. Use list_context with an empty folder to see the whole tree."
        shown = found[:_MAX_LIST]
        more = f"\n... and {len(found) - len(shown)} more; list a sub-folder to see them." if len(found) > len(shown) else ""
        return "\n".join(shown) + more

    def search(self, query: str, folder: str = "", limit: int = 5) -> str:
        hits = self.ctx.search(query, path=folder, limit=max(1, min(int(limit), _MAX_SEARCH)))
        if not hits:
            return f"No matches for {query!r}. Try other words or list_context to browse."
        lines = []
        for hit in hits:
            title = getattr(hit, "title", None)
            score = getattr(hit, "score", None)
            head = f"[{hit.path}]"
            if title:
                head += f" {title}"
            if isinstance(score, (int, float)):
                head += f" (score {score:.2f})"
            snippet = " ".join(str(getattr(hit, "snippet", "") or "").split())
            lines.append(f"{head}\n  ...{snippet}..." if snippet else head)
        return "\n".join(lines)

    def delete(self, path: str) -> str:
        with self._writing():
            entry = self.ctx.delete(path)
        return (
            f"Moved {entry.original_path} to the trash (entry {entry.id}); "
            f"restore_context with path {entry.original_path!r} brings it back."
        )

    def restore(self, path: str) -> str:
        with self._writing():
            rel = self.ctx.restore(path)
        return f"Restored {rel} from the trash."

    def history(self, path: str, limit: int = 10) -> str:
        entries = self.ctx.history(path, limit=max(1, min(int(limit), 50)))
        if not entries:
            return f"No recorded changes to {path}."
        return "\n".join(f"{e.date} {e.commit[:10]} {e.author}: {e.message}" for e in entries)


def _guarded(name: str, func: Callable[..., str]) -> Callable[..., str]:
    """Turn a ContextFSError into the ``Error:`` string the model reads; never raise it."""

    def run(**kwargs: Any) -> str:
        try:
            return func(**kwargs)
        except ContextFSError as exc:
            log.info("tool %s refused: %s", name, exc)
            return format_error(exc)

    run.__name__ = name
    run.__doc__ = func.__doc__
    return run


_DESCRIPTIONS = {
    "read_context": (
        "Read one context file (markdown) to recall project info, decisions, facts, lessons or the "
        "current task. Use it when you know the path; use search_context or list_context when you don't."
    ),
    "write_context": (
        "Create a context file or replace its whole body. Use it to save new notes, decisions or facts "
        "in a file of their own. To add to an existing file prefer append_context; to change one passage "
        "prefer edit_context, so nothing else is lost."
    ),
    "append_context": (
        "Add text at the end of a context file (created if missing). Use it to record a new fact, lesson "
        "or log line without rewriting what is already there."
    ),
    "edit_context": (
        "Replace one exact passage in a context file with new text. Use it to correct or update a fact; "
        "quote the old text exactly as read_context showed it (it must occur once)."
    ),
    "list_context": (
        "List the files in the context tree or in one folder. Use it to discover what context exists "
        "before reading, or to check a path."
    ),
    "search_context": (
        "Search all context files for words and get the best-matching files with snippets. Use it when "
        "you need information but don't know which file holds it."
    ),
    "delete_context": (
        "Move a context file or folder to the trash (reversible with restore_context). Use it only for "
        "context that is wrong or obsolete."
    ),
    "restore_context": (
        "Bring back the most recently deleted version of a path from the trash. Use it to undo a "
        "delete_context."
    ),
    "context_history": (
        "Show who changed a context file and when, newest first. Use it to check where a fact came "
        "from or whether a file changed recently."
    ),
}


def make_tools(
    ctx: ContextManager,
    *,
    allow_write: bool = True,
    allow_delete: bool = False,
    actor: str = DEFAULT_ACTOR,
    session: str | None = None,
) -> list[BaseTool]:
    """LangChain tools for ``ctx``: reading always; writing and deleting when allowed.

    ``actor`` (``agent:<name>``) and ``session`` are recorded on every write the tools make;
    they are checked now, so a bad name fails here rather than on the model's first write.
    ``allow_delete`` needs ``allow_write`` (deleting is a write); asking for it alone is a
    :class:`~contextfs.ConfigError`.
    """
    if allow_delete and not allow_write:
        raise ConfigError("allow_delete=True needs allow_write=True (deleting is a write); enable both or neither")
    with ctx.provenance(actor=actor, session=session):
        pass  # validates actor and session with the manager's own rules
    box = _Toolbox(ctx, actor, session)
    spec: list[tuple[str, Callable[..., str], type[BaseModel]]] = [
        ("read_context", box.read, _PathArgs),
        ("list_context", box.list, _ListArgs),
        ("search_context", box.search, _SearchArgs),
        ("context_history", box.history, _HistoryArgs),
    ]
    if allow_write:
        spec[1:1] = [
            ("write_context", box.write, _WriteArgs),
            ("append_context", box.append, _AppendArgs),
            ("edit_context", box.edit, _EditArgs),
        ]
        spec.append(("restore_context", box.restore, _PathArgs))
        if allow_delete:
            spec.append(("delete_context", box.delete, _PathArgs))
    return [
        StructuredTool.from_function(
            func=_guarded(name, func),
            name=name,
            description=_DESCRIPTIONS[name],
            args_schema=schema,
            handle_validation_error=_validation_message,
        )
        for name, func, schema in spec
    ]
