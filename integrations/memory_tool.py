"""Anthropic's client-side memory tool (``memory_20250818``) backed by a context root.

Claude's memory tool sends commands (``view``, ``create``, ``str_replace``, ``insert``,
``delete``, ``rename``) against a ``/memories`` directory and expects the client to
store the files. Here the directory is a folder of the context root, so every command
is a gated path, an atomic write and a git commit by ``agent:claude-memory``; deletes go
to the trash. Nothing here needs the ``anthropic`` package: bind ``MEMORY_TOOL_SPEC`` to a
chat model (``ChatAnthropic(...).bind_tools([MEMORY_TOOL_SPEC])`` with the ``anthropic``
extra) and pass each tool call to :meth:`MemoryToolAdapter.handle_tool_call`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage

from contextfs.errors import ContextFSError

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = ["MEMORY_TOOL_SPEC", "MemoryToolAdapter"]

#: The tool definition to bind to an Anthropic chat model.
MEMORY_TOOL_SPEC: dict[str, str] = {"type": "memory_20250818", "name": "memory"}
_VIRTUAL_ROOT = "/memories"


class MemoryToolAdapter:
    """Execute memory-tool commands on ``<root>/<folder>`` with commits and soft deletes."""

    def __init__(self, ctx: ContextManager, *, folder: str = "memories", actor: str = "agent:claude-memory") -> None:
        self.ctx = ctx
        self.folder = folder.strip("/")
        self.actor = actor

    # ------------------------------------------------------------------ paths
    def _rel(self, virtual: object) -> str:
        """'/memories/a/b.md' -> '<folder>/a/b.md'; anything outside /memories is refused."""
        if not isinstance(virtual, str) or not (
            virtual == _VIRTUAL_ROOT or virtual.startswith(_VIRTUAL_ROOT + "/")
        ):
            raise _ToolInputError(f"path {virtual!r} is outside {_VIRTUAL_ROOT}; use a path like '/memories/notes.md'")
        rest = virtual[len(_VIRTUAL_ROOT):].strip("/")
        return f"{self.folder}/{rest}" if rest else self.folder

    def _virtual(self, rel: str) -> str:
        return _VIRTUAL_ROOT + rel[len(self.folder):]

    # ------------------------------------------------------------------ commands
    def execute(self, command: Mapping[str, Any]) -> str:
        """Run one command object as Claude sends it; always returns text for the model."""
        try:
            name = command.get("command")
            handler = getattr(self, f"_cmd_{name}", None) if isinstance(name, str) else None
            if handler is None:
                raise _ToolInputError(
                    f"unknown command {name!r}; use view, create, str_replace, insert, delete or rename"
                )
            with self.ctx.provenance(actor=self.actor):
                return handler(command)
        except (ContextFSError, _ToolInputError) as exc:
            return f"Error: {exc}"
        except (KeyError, TypeError) as exc:
            return f"Error: missing or invalid argument {exc}; send every argument the command needs"

    def handle_tool_call(self, tool_call: Mapping[str, Any]) -> ToolMessage:
        """Turn a LangChain tool call named ``memory`` into the ToolMessage to send back."""
        return ToolMessage(content=self.execute(tool_call.get("args", {})), tool_call_id=tool_call.get("id", ""))

    def _cmd_view(self, cmd: Mapping[str, Any]) -> str:
        rel = self._rel(cmd["path"])
        body = self.ctx.read(rel) if rel != self.folder else None
        if body is None:
            files = self.ctx.list(rel)
            if not files and rel != self.folder:
                return f"Error: {cmd['path']} does not exist; view {_VIRTUAL_ROOT} to see what is stored"
            lines = [f"Files in {cmd['path']}:"] + [f"- {self._virtual(f)}" for f in files]
            return "\n".join(lines) if files else f"{cmd['path']} is empty"
        numbered = body.splitlines()
        start, end = 1, len(numbered)
        view_range = cmd.get("view_range")
        if view_range:
            start, end = int(view_range[0]), int(view_range[1])
            if end == -1:
                end = len(numbered)
            if start < 1 or end < start or end > len(numbered):
                raise _ToolInputError(f"view_range {list(view_range)} is outside 1..{len(numbered)}; pick lines inside the file")
        return "\n".join(f"{i:6d}\t{numbered[i - 1]}" for i in range(start, end + 1))

    def _cmd_create(self, cmd: Mapping[str, Any]) -> str:
        rel = self._rel(cmd["path"])
        self.ctx.write(rel, str(cmd["file_text"]))
        return f"File created successfully at {cmd['path']}"

    def _cmd_str_replace(self, cmd: Mapping[str, Any]) -> str:
        rel = self._rel(cmd["path"])
        self.ctx.edit(rel, str(cmd["old_str"]), str(cmd.get("new_str", "")))
        return f"The file {cmd['path']} has been edited"

    def _cmd_insert(self, cmd: Mapping[str, Any]) -> str:
        rel = self._rel(cmd["path"])
        doc = self.ctx.get(rel)
        lines = doc.body.splitlines(keepends=True)
        at = int(cmd["insert_line"])
        if at < 0 or at > len(lines):
            raise _ToolInputError(f"insert_line {at} is outside 0..{len(lines)}; 0 inserts before the first line")
        text = str(cmd["insert_text"])
        if not text.endswith("\n"):
            text += "\n"
        if at > 0 and not lines[at - 1].endswith("\n"):
            lines[at - 1] += "\n"
        lines.insert(at, text)
        self.ctx.write(rel, "".join(lines), expected_version=doc.version)
        return f"Text inserted at line {at} of {cmd['path']}"

    def _cmd_delete(self, cmd: Mapping[str, Any]) -> str:
        rel = self._rel(cmd["path"])
        if rel == self.folder:
            raise _ToolInputError(f"{_VIRTUAL_ROOT} itself cannot be deleted; delete the files in it")
        entry = self.ctx.delete(rel)
        return f"Deleted {cmd['path']} (kept in the trash as {entry.id}; it can be restored)"

    def _cmd_rename(self, cmd: Mapping[str, Any]) -> str:
        src, dst = self._rel(cmd["old_path"]), self._rel(cmd["new_path"])
        self.ctx.move(src, dst)
        return f"Renamed {cmd['old_path']} to {cmd['new_path']}"


class _ToolInputError(Exception):
    """A command the model got wrong; reported back to it as text."""
