"""Anthropic's client-side memory tool (``memory_20250818``) backed by a context root.

Claude's memory tool sends commands (``view``, ``create``, ``str_replace``, ``insert``,
``delete``, ``rename``) against a ``/memories`` directory and expects the client to keep
the files. Here ``/memories`` is a folder of the context root (``memories/`` by default),
so every command is an atomic write and a git commit by the adapter's actor, and deletes
go to the trash. The commands follow the SDK's local-filesystem memory tool: ``create``
refuses an existing file, directory views go two levels deep and leave hidden items out,
files are created ``0600`` and folders ``0700``. Markdown files get contextfs's
frontmatter (who wrote them, when); every other file (``.json``, ``.txt``...) is stored
exactly as written.

With the ``anthropic`` extra installed, :class:`MemoryToolAdapter` *is* the SDK's
``BetaAbstractMemoryTool``, so ``client.beta.messages.tool_runner(tools=[adapter], ...)``
runs it; refusals are raised as the SDK's ``ToolError`` (the runner reports them with
``is_error``). Without the SDK it is a plain adapter: :meth:`~MemoryToolAdapter.run` takes
a command mapping and returns text, and :meth:`~MemoryToolAdapter.handle_tool_call`
answers a LangChain tool call with a ``ToolMessage``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage

from contextfs.errors import ContextFSError
from contextfs.fixes import speaking

from .memory_paths import VIRTUAL_ROOT, MemoryPaths
from .tool_output import check_text_args, seal, seal_refusal

if TYPE_CHECKING:
    from anthropic.types.beta import BetaCacheControlEphemeralParam, BetaMemoryTool20250818Param

    from contextfs import ContextManager

try:  # the SDK's base class when the anthropic extra is installed
    from anthropic.lib.tools import BetaAbstractMemoryTool as _Base
    from anthropic.lib.tools import ToolError as _SDKToolError
except ImportError:  # pragma: no cover - exercised only without the extra
    # ignore: mypy checks against the SDK (a dev dependency); these stand in for its names.
    _Base = object  # type: ignore[assignment,misc]

    class _SDKToolError(Exception):  # type: ignore[no-redef]
        def __init__(self, content: str) -> None:
            super().__init__(content)
            self.content = content


__all__ = ["MEMORY_TOOL_SPEC", "MemoryToolAdapter", "MemoryToolError"]

#: The tool definition to bind to an Anthropic chat model (the SDK's ``to_dict()``).
MEMORY_TOOL_SPEC: BetaMemoryTool20250818Param = {"type": "memory_20250818", "name": "memory"}
DEFAULT_MEMORY_ACTOR = "agent:claude-memory"
_LINE_WIDTH = 6
_COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
_FILE_MODE = 0o600
_DIR_MODE = 0o700
_MAX_LINES = 999_999  # the SDK's view limit


class MemoryToolError(ContextFSError, _SDKToolError):
    """A memory command refused, in the tool's own terms (``/memories/...`` paths, command names).

    It is a :class:`~contextfs.ContextFSError` and, with the SDK installed, also the SDK's
    ``ToolError``, so the tool runner reports it to the model with ``is_error``.
    """

    def __init__(self, message: str) -> None:
        _SDKToolError.__init__(self, message)
        self.content = message


class MemoryToolAdapter(_Base):
    """Memory-tool commands on ``<root>/<folder>``, committed and soft-deleted."""

    def __init__(self, ctx: ContextManager, *, folder: str = "memories", actor: str | None = None,
                 session: str | None = None, cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        if _Base is not object:
            super().__init__(cache_control=cache_control)
        self._cache = cache_control.copy() if cache_control else None
        with ctx.provenance(actor=actor or DEFAULT_MEMORY_ACTOR, session=session):
            pass  # the manager's own checks of actor and session, now rather than on the first command
        self.ctx = ctx
        self.paths = MemoryPaths(ctx, folder)
        self.folder = self.paths.folder
        self._actor = actor
        self.session = session
        self.paths.ensure_folder()  # as the SDK's tool makes its folder: there, owner-only

    @property
    def actor(self) -> str:
        """Who commands write as: the adapter's actor, else the manager's, else :data:`DEFAULT_MEMORY_ACTOR`."""
        return self._actor or self.ctx.chosen_actor or DEFAULT_MEMORY_ACTOR

    # ------------------------------------------------------------------ protocol surfaces
    def to_dict(self) -> BetaMemoryTool20250818Param:
        """The tool definition the API expects (what ``MEMORY_TOOL_SPEC`` holds, plus cache control)."""
        out = MEMORY_TOOL_SPEC.copy()
        if self._cache is not None:
            out["cache_control"] = self._cache
        return out

    def call(self, input: object) -> str:  # noqa: A002 - the SDK's parameter name
        """The SDK's entry point: one tool_use input; refusals raise :class:`MemoryToolError`."""
        return self.execute(input)

    def execute(self, command: Any) -> str:
        """Run one command (a mapping, or the SDK's typed command); raise MemoryToolError on refusal."""
        name = _arg(command, "command")
        if name not in _COMMANDS:
            raise MemoryToolError(f"Unknown command {name!r}; use one of {', '.join(_COMMANDS)}")
        return self._command(name, command)

    def _command(self, name: str, command: Any) -> str:
        """Every command's one path, whether the runner calls it through :meth:`execute` or a
        caller calls ``view``/``create``/... directly (as the SDK's own tests do): the
        adapter's actor and session, fixes in the tool's terms, refusals as MemoryToolError.
        Answers and refusals quote paths and file lines, so both leave sealed."""
        try:
            with speaking("memory-tool"), self.ctx.provenance(actor=self.actor, session=self.session):
                answer: str = getattr(self, f"_{name}")(command)
        except MemoryToolError as exc:
            raise MemoryToolError(seal_refusal(str(exc), f"a refused {name} command, quoting its input")) from exc
        except ContextFSError as exc:
            raise MemoryToolError(seal_refusal(self.paths.in_tool_terms(exc),
                                               f"a refused {name} command, quoting its input")) from exc
        return seal(answer, f"the memory tool's {name} answer")

    # The SDK's command methods, each through _command.
    def view(self, command: Any) -> str:
        return self._command("view", command)

    def create(self, command: Any) -> str:
        return self._command("create", command)

    def str_replace(self, command: Any) -> str:
        return self._command("str_replace", command)

    def insert(self, command: Any) -> str:
        return self._command("insert", command)

    def delete(self, command: Any) -> str:
        return self._command("delete", command)

    def rename(self, command: Any) -> str:
        return self._command("rename", command)

    def run(self, command: Mapping[str, Any]) -> str:
        """Like :meth:`execute`, but a refusal comes back as ``Error: ...`` text (for plain use)."""
        try:
            return self.execute(command)
        except MemoryToolError as exc:
            return f"Error: {exc}"

    def handle_tool_call(self, tool_call: Mapping[str, Any]) -> ToolMessage:
        """Answer a LangChain tool call named ``memory``; a refusal has ``status="error"``."""
        call_id = str(tool_call.get("id") or "")
        try:
            return ToolMessage(content=self.execute(tool_call.get("args") or {}), tool_call_id=call_id, name="memory")
        except MemoryToolError as exc:
            return ToolMessage(content=f"Error: {exc}", tool_call_id=call_id, name="memory", status="error")

    # ------------------------------------------------------------------ commands
    def _view(self, command: Any) -> str:
        virtual = _text(command, "path")
        rel = self.paths.rel(virtual)
        view_range = _arg(command, "view_range")
        if self.paths.is_dir(rel) or rel == self.folder:
            return self._view_dir(virtual, rel)  # a range has no meaning here: ignored, as by the SDK
        if not self.ctx.exists(rel):
            raise MemoryToolError(f"The path {virtual} does not exist. Please provide a valid path.")
        content, trust = self.paths.read(rel)
        lines = content.split("\n")
        if len(lines) > _MAX_LINES:
            raise MemoryToolError(f"File {virtual} exceeds maximum line limit of 999,999 lines.")
        start, end = _line_range(view_range, len(lines))
        numbered = "\n".join(f"{str(n).rjust(_LINE_WIDTH)}\t{lines[n - 1]}" for n in range(start, end + 1))
        return f"Here's the content of {virtual} with line numbers:\n" + self.paths.as_data(numbered, virtual, trust, content)

    def _view_dir(self, virtual: str, rel: str) -> str:
        entries = self.paths.tree(rel, depth=2)
        shown = self.paths.virtual(rel)
        total = sum(size for name, size, is_dir in entries if not is_dir and "/" not in name)
        total += sum(size for name, size, is_dir in entries if is_dir and "/" not in name)
        lines = [f"{_size(total)}\t{shown}"]
        lines += [f"{_size(size)}\t{shown}/{name}{'/' if is_dir else ''}" for name, size, is_dir in entries]
        header = f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
        return header + "\n" + "\n".join(lines)

    def _create(self, command: Any) -> str:
        virtual = _text(command, "path")
        text = _text(command, "file_text", allow_empty=True)
        rel = self.paths.rel(virtual)
        if rel == self.folder:
            raise MemoryToolError(f"{VIRTUAL_ROOT} is a directory; create a file inside it, e.g. {VIRTUAL_ROOT}/notes.md")
        if self.paths.is_dir(rel) or self.ctx.exists(rel):
            raise MemoryToolError(f"File {virtual} already exists")
        made = self.paths.missing_dirs(rel)
        self.paths.create(rel, text)
        self._secure(rel, made)
        return f"File created successfully at: {virtual}"

    def _str_replace(self, command: Any) -> str:
        virtual = _text(command, "path")
        old = _text(command, "old_str")
        new = _text(command, "new_str", allow_empty=True)
        rel = self._existing_file(virtual)
        with self.ctx.transaction(f"memory-tool: str_replace {rel}", op="edit"):
            content, _ = self.paths.read(rel)
            count = content.count(old)
            if count == 0:
                raise MemoryToolError(
                    f"No replacement was performed, old_str `{old}` did not appear verbatim in {virtual}.")
            if count > 1:
                starts = [i for i in range(len(content)) if content.startswith(old, i)]
                at = ", ".join(str(content[:i].count("\n") + 1) for i in starts)
                raise MemoryToolError(f"No replacement was performed. Multiple occurrences of old_str `{old}` "
                                      f"in lines: {at}. Please ensure it is unique")
            changed_line = content[: content.find(old)].count("\n")
            updated = content.replace(old, new, 1)
            self.paths.replace(rel, updated)
        self._secure(rel, [])
        stored, trust = self.paths.read(rel)
        new_lines = updated.split("\n")
        first, last = max(0, changed_line - 2), min(len(new_lines), changed_line + 3)
        snippet = "\n".join(f"{str(n).rjust(_LINE_WIDTH)}\t{new_lines[n - 1]}" for n in range(first + 1, last + 1))
        # The lines come from the file: fenced exactly as `view` fences them.
        return ("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
                + self.paths.as_data(snippet, virtual, trust, stored))

    def _insert(self, command: Any) -> str:
        virtual = _text(command, "path")
        at = _arg(command, "insert_line")
        text = _text(command, "insert_text", allow_empty=True)
        if isinstance(at, bool) or not isinstance(at, int):
            raise MemoryToolError(f"insert_line must be a whole number (0 inserts before the first line), not {at!r}")
        rel = self._existing_file(virtual)
        with self.ctx.transaction(f"memory-tool: insert {rel}", op="edit"):
            content, _ = self.paths.read(rel)
            lines = content.split("\n")
            if lines and lines[-1] == "":
                lines.pop()  # a trailing newline ends the last line; it does not start another
            if not 0 <= at <= len(lines):
                raise MemoryToolError(f"Invalid `insert_line` parameter: {at}. It should be within the range [0, {len(lines)}].")
            lines.insert(at, text.rstrip("\n"))
            updated = "\n".join(lines)
            self.paths.replace(rel, updated if updated.endswith("\n") else updated + "\n")
        self._secure(rel, [])
        return f"The file {virtual} has been edited."

    def _delete(self, command: Any) -> str:
        virtual = _text(command, "path")
        rel = self.paths.rel(virtual)
        if rel == self.folder:
            raise MemoryToolError(f"Cannot delete the {VIRTUAL_ROOT} directory itself")
        if not (self.paths.is_dir(rel) or self.ctx.exists(rel)):
            raise MemoryToolError(f"The path {virtual} does not exist")
        self.ctx.delete(rel)  # into the root's trash; the answer is the SDK's, the trash is for people
        return f"Successfully deleted {virtual}"

    def _rename(self, command: Any) -> str:
        old_virtual, new_virtual = _text(command, "old_path"), _text(command, "new_path")
        src, dst = self.paths.rel(old_virtual), self.paths.rel(new_virtual)
        if src == self.folder:
            raise MemoryToolError(f"Cannot rename the {VIRTUAL_ROOT} directory itself")
        if dst == self.folder or self.paths.is_dir(dst) or self.ctx.exists(dst):
            raise MemoryToolError(f"The destination {new_virtual} already exists")
        if not (self.paths.is_dir(src) or self.ctx.exists(src)):
            raise MemoryToolError(f"The path {old_virtual} does not exist")
        if dst.startswith(src + "/"):
            raise MemoryToolError(f"Cannot move {old_virtual} into itself; pick a destination outside it")
        made = self.paths.missing_dirs(dst)
        self.paths.move(src, dst)
        self._secure(dst, made)
        return f"Successfully renamed {old_virtual} to {new_virtual}"

    def clear_all_memory(self) -> str:
        """Move everything under ``/memories`` to the trash (one commit); the SDK's reset."""
        with self.ctx.provenance(actor=self.actor, session=self.session):
            if self.ctx.list(self.folder):
                self.ctx.delete(self.folder)
            self.paths.ensure_folder()
        return "All memory cleared"

    # ------------------------------------------------------------------ helpers
    def _existing_file(self, virtual: str) -> str:
        rel = self.paths.rel(virtual)
        if self.paths.is_dir(rel):
            raise MemoryToolError(f"The path {virtual} is not a file.")
        if not self.ctx.exists(rel):
            raise MemoryToolError(f"The path {virtual} does not exist. Please provide a valid path.")
        return rel

    def _secure(self, rel: str, new_dirs: list[str]) -> None:
        """The SDK's modes: files owner-only (0600), folders it created owner-only (0700)."""
        for folder, mode in [*((f, _DIR_MODE) for f in new_dirs), *((n, _FILE_MODE) for n in self.paths.files_under(rel))]:
            # A vanished or swapped entry keeps its mode; the content is already committed.
            with contextlib.suppress(ContextFSError):
                self.ctx.files.chmod(folder, mode)


# ---------------------------------------------------------------------- argument reading
def _arg(command: Any, name: str) -> Any:
    if isinstance(command, Mapping):
        return command.get(name)
    return getattr(command, name, None)


def _text(command: Any, name: str, *, allow_empty: bool = False) -> str:
    value = _arg(command, name)
    if not isinstance(value, str):
        verb = _arg(command, "command")
        raise MemoryToolError(f"{verb} needs `{name}` as a string (got {type(value).__name__}); send it again")
    if not value and not allow_empty:
        raise MemoryToolError(f"`{name}` is empty; send the exact text")
    try:
        check_text_args({name: value})
    except ContextFSError as exc:
        raise MemoryToolError(str(exc)) from exc
    return value


def _line_range(view_range: Any, count: int) -> tuple[int, int]:
    """The lines ``view_range`` shows, by the SDK's rule: ``[start, end]`` 1-based and
    inclusive, ``end`` -1 for the last line, a start below 1 read as 1, lines past the end
    simply absent (an empty view); a list of another length shows the whole file. What is
    not a list of whole numbers is refused (the SDK's typed command refuses it, and its
    tool would fail on it)."""
    if view_range is None:
        return 1, count
    if (not isinstance(view_range, (list, tuple))
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)):
        raise MemoryToolError(
            f"view_range must be two whole numbers [start, end] (end -1 for the last line), not {view_range!r}")
    if len(view_range) != 2:
        return 1, count
    start, end = view_range
    return max(1, start), count if end == -1 else min(end, count)


def _size(n: int) -> str:
    """Sizes as the SDK prints them: 0B, 512B, 1.5K, 2M."""
    value = float(n)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
        value /= 1024
    return f"{n}B"  # pragma: no cover
