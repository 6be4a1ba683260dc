"""Fixes said in the caller's own terms: Python, the CLI, an agent's tools, the memory tool.

An error message ends with what to do next. When that is an operation ("list the
folder", "create the file", "pick a commit from the history"), the error carries it as a
:class:`Fix` and says it the way the interface in use spells it: ``ctx.list('memory')``
from Python, ``contextfs ls memory`` from the CLI, ``list_context`` from LangChain and MCP
tools, the ``view`` command from the memory tool. Each interface wraps its calls in
:func:`speaking`; Python is the default.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["DIALECTS", "Fix", "speaking"]

#: The interfaces a fix can be said in.
DIALECTS = ("python", "cli", "tools", "memory-tool")
_DIALECT: ContextVar[str] = ContextVar("contextfs_dialect", default="python")

# action -> dialect -> template ({path!r} for Python, {arg} shell-quoted for the CLI).
_FIXES: dict[str, dict[str, str]] = {
    "list": {"python": "list what is there with ctx.list({path!r})", "cli": "list what is there with `contextfs ls {arg}`",
             "tools": "see what is there with list_context", "memory-tool": "see what is there with the view command"},
    "write": {"python": "create it with ctx.write({path!r}, text)", "cli": "create it with `contextfs write {arg}`",
              "tools": "create it with write_context", "memory-tool": "create it with the create command"},
    "replace": {"python": "replace it with ctx.write({path!r}, text) or pick another name",
                "cli": "replace it with `contextfs write {arg}` or pick another name",
                "tools": "replace it with write_context or pick another name",
                "memory-tool": "pick another name, or delete it first"},
    "read": {"python": "copy it from ctx.read({path!r})", "cli": "copy it from `contextfs read {arg}`",
             "tools": "copy it from read_context", "memory-tool": "copy it from the view command"},
    "new-section": {"python": "to start a new section, pass new_section=True",
                    "cli": "to start a new section, add --new-section",
                    "tools": "use one of them", "memory-tool": "use one of them"},
    "model": {"python": "pass a LangChain chat model, e.g. EvolvingAgent(ctx, llm=model)",
              "cli": "pass --llm PROVIDER:MODEL (or set CONTEXTFS_LLM), e.g. --llm openai:gpt-4o-mini; "
                     "--llm huggingface:MODEL_ID runs a local model, --llm python:MODULE:NAME one your code builds",
              "tools": "ask a person to configure a model", "memory-tool": "ask a person to configure a model"},
    "model-or-archive": {
        "python": "pass a LangChain chat model, e.g. EvolvingAgent(ctx, llm=model), or record the outcome "
                  "without one: agent.archive_task(task, result, success)",
        "cli": "record the outcome without a model with --archive-only, or pass --llm PROVIDER:MODEL "
               "(e.g. --llm openai:gpt-4o-mini; huggingface:MODEL_ID runs a local model, python:MODULE:NAME "
               "one your code builds)",
        "tools": "ask a person to configure a model", "memory-tool": "ask a person to configure a model"},
    "trash": {"python": "list the deleted entries with ctx.trash()", "cli": "list the deleted entries with `contextfs trash`",
              "tools": "restore_context takes the path a file had when it was deleted",
              "memory-tool": "deleted memories are kept in the store's trash; ask a person to restore them"},
    "sessions": {"python": "each entry of ctx.history() names its session", "cli": "`contextfs log` names each commit's session",
                 "tools": "each entry of context_history names its session",
                 "memory-tool": "ask a person to look at the history"},
    "history": {"python": "pick a commit id from ctx.history()", "cli": "pick a commit id from `contextfs log`",
                "tools": "pick a commit id from context_history", "memory-tool": "ask a person to look at the history"},
    "init": {"python": "create one with ContextManager(root)", "cli": "create one with `contextfs init`",
             "tools": "ask a person to create one with `contextfs init`",
             "memory-tool": "ask a person to create one with `contextfs init`"},
    "own-repository": {"python": "give the root a repository of its own with own_repository=True, or drop that rule",
                       "cli": "give the root a repository of its own with `contextfs init --own-repository`, "
                              "or drop that rule",
                       "tools": "ask a person to run `contextfs init --own-repository`, or to drop that rule",
                       "memory-tool": "ask a person to run `contextfs init --own-repository`, or to drop that rule"},
    "subtask": {"python": "pass subtask_id= with one of them", "cli": "pass --subtask with one of them",
                "tools": "pass subtask with one of them", "memory-tool": "pass one of them"},
    "subtask-scope": {"python": "ask for scope='subtask', or leave subtask_id out",
                      "cli": "add --scope subtask, or leave --subtask out",
                      "tools": "set scope to 'subtask', or leave subtask out",
                      "memory-tool": "ask for the subtask scope, or leave the subtask out"},
    "merge": {"python": "resolve the context files with ctx.remote.sync(), then finish with git commit "
                        "(or give up with git merge --abort)",
              "cli": "resolve the context files with `contextfs sync`, then finish with `git commit` "
                     "(or give up with `git merge --abort`)",
              "tools": "ask a person to finish the merge (contextfs sync, then git commit)",
              "memory-tool": "ask a person to finish the merge (contextfs sync, then git commit)"},
    "topics": {"python": "create it with Topics(ctx).create(name), or list them with Topics(ctx).list()",
               "cli": "create it with `contextfs topic new NAME`, or list them with `contextfs topic list`",
               "tools": "see the topics with list_topics", "memory-tool": "ask a person to create the topic"},
}


@contextlib.contextmanager
def speaking(dialect: str) -> Iterator[None]:
    """Say fixes in ``dialect`` (one of :data:`DIALECTS`) for errors raised in this block."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; use one of {', '.join(DIALECTS)}")
    token = _DIALECT.set(dialect)
    try:
        yield
    finally:
        _DIALECT.reset(token)


@dataclass(frozen=True)
class Fix:
    """What to do next, as an operation on a path; rendered in the caller's terms."""

    action: str
    path: str = ""

    def render(self, dialect: str | None = None) -> str:
        forms = _FIXES[self.action]
        template = forms.get(dialect or _DIALECT.get(), forms["python"])
        if not self.path:  # the whole root: `contextfs ls`, ctx.list()
            template = template.replace(" {arg}", "").replace("{path!r}", "")
        return template.format(path=self.path, arg=shlex.quote(self.path) if self.path else "")
