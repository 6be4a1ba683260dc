"""The memory tool's ``/memories`` namespace mapped onto one folder of a context root.

:meth:`MemoryPaths.rel` is the one gate every command goes through: the path must be
``/memories`` or start with ``/memories/``; it is normalised lexically (``.`` and empty
parts dropped, ``..`` taken back one level) and refused if that would leave
``/memories``; the result, joined onto the folder, then passes the core's path gate
(which refuses symlinks, internal folders, reserved and unportable names). So
``/memories/../x`` never reaches a file elsewhere in the root, and ``/memories/x/..`` is
``/memories`` itself, which cannot be deleted.

File contents go through the manager: markdown gets frontmatter, anything else is
stored exactly as written, and reads give back what the model wrote either way.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from contextfs.document import as_content
from contextfs.errors import ContentError, ContextFSError, InvalidPathError

from .tool_output import as_data

if TYPE_CHECKING:
    from contextfs import ContextManager

__all__ = ["VIRTUAL_ROOT", "MemoryPaths"]

VIRTUAL_ROOT = "/memories"
_EXAMPLE = f"use a path like '{VIRTUAL_ROOT}/notes.md'"
_CORE_EXAMPLE = "; use a relative POSIX path inside the context root, e.g. 'project/README.md'"


def _is_markdown(rel: str) -> bool:
    return rel.lower().endswith((".md", ".markdown"))


class MemoryPaths:
    """Path mapping, reads and writes for one memory folder."""

    def __init__(self, ctx: ContextManager, folder: str) -> None:
        if not isinstance(folder, str) or not folder.strip("/"):
            raise InvalidPathError(f"the memory folder {folder!r} is empty; pass a folder such as 'memories'")
        self.ctx = ctx
        self.folder = folder.strip("/")
        ctx.exists(self.folder)  # the core gate: no internal, reserved or symlinked folder

    # ------------------------------------------------------------------ the gate
    def rel(self, virtual: object) -> str:
        """``/memories/a/b.md`` -> ``<folder>/a/b.md``, or InvalidPathError in the tool's terms."""
        if not isinstance(virtual, str):
            raise InvalidPathError(f"the path must be a string like '{VIRTUAL_ROOT}/notes.md', not {type(virtual).__name__}")
        if virtual != VIRTUAL_ROOT and not virtual.startswith(VIRTUAL_ROOT + "/"):
            raise InvalidPathError(f"Path must start with {VIRTUAL_ROOT}, got: {_shown(virtual)}; {_EXAMPLE}")
        parts: list[str] = []
        for name in virtual[len(VIRTUAL_ROOT):].split("/"):
            if name in ("", "."):
                continue
            if name == "..":
                if not parts:
                    raise InvalidPathError(f"Path {virtual} would escape {VIRTUAL_ROOT} directory; {_EXAMPLE}")
                parts.pop()
                continue
            parts.append(name)
        rel = "/".join([self.folder, *parts])
        self._refuse_links(virtual, rel)
        self.ctx.exists(rel)  # the core gate, for every command before anything is touched
        return rel

    def _refuse_links(self, virtual: str, rel: str) -> None:
        """A path through a symbolic link is refused, said as the SDK says it for a link that
        leads out; one that stays inside is refused too, since contextfs follows no link."""
        parts = rel.split("/")
        for i in range(len(self.folder.split("/")), len(parts) + 1):
            kind = self.ctx.files.kind("/".join(parts[:i]))
            if kind is None:
                return  # nothing below a missing entry exists
            if kind == "link":
                link = self.virtual("/".join(parts[:i]))
                raise InvalidPathError(f"Path {_shown(virtual)} would escape {VIRTUAL_ROOT} directory: {link} is a "
                                       f"symbolic link, and links are never followed; {_EXAMPLE}")

    def ensure_folder(self) -> None:
        """The memory folder, made owner-only (0700) when the adapter has to create it."""
        if self.ctx.read_only or self.is_dir(self.folder):
            return
        for folder in self.missing_dirs(self.folder + "/x"):
            self.ctx.files.mkdir(folder)
            self.ctx.files.chmod(folder, 0o700)

    def virtual(self, rel: str) -> str:
        return VIRTUAL_ROOT + rel[len(self.folder):]

    def in_tool_terms(self, exc: ContextFSError) -> str:
        """A core refusal reworded for the model: ``/memories/...`` paths, no core API names."""
        text = str(exc).replace(_CORE_EXAMPLE, f"; {_EXAMPLE}")
        text = re.sub(rf"(?<![\w/.-]){re.escape(self.folder)}(?=/|\b)", VIRTUAL_ROOT, text)
        for api, command in (("write()", "create"), ("list()", "view"), ("create()", "create")):
            text = text.replace(api, command)
        return text

    # ------------------------------------------------------------------ what is there
    def is_dir(self, rel: str) -> bool:
        try:
            return self.ctx.files.kind(rel) == "dir"
        except ContextFSError:
            return False

    def missing_dirs(self, rel: str) -> list[str]:
        """The folders from the memory folder down to ``rel``'s parent that do not exist yet."""
        parts = rel.split("/")
        out = []
        for i in range(len(self.folder.split("/")), len(parts)):
            folder = "/".join(parts[:i])
            if not self.is_dir(folder):
                out.append(folder)
        return out

    def files_under(self, rel: str) -> list[str]:
        return self.ctx.list(rel) if self.is_dir(rel) else [rel]

    def tree(self, rel: str, depth: int) -> list[tuple[str, int, bool]]:
        """(name relative to ``rel``, size, is a folder) up to ``depth`` levels, hidden items left out,
        in the SDK's order: sorted by name, each folder followed by what is in it."""
        sizes: dict[tuple[str, ...], int] = {}
        folders: set[tuple[str, ...]] = set()
        cut = len(rel) + 1
        for path in self.ctx.list(rel):
            parts = tuple(path[cut:].split("/"))
            if any(p.startswith(".") for p in parts):
                continue
            try:
                st = self.ctx.files.lstat(path)
            except ContextFSError:
                continue
            if st is None:
                continue
            size = st.st_size
            for i in range(1, len(parts)):
                folders.add(parts[:i])
                sizes[parts[:i]] = sizes.get(parts[:i], 0) + size
            sizes[parts] = size
        entries = [p for p in sizes if len(p) <= depth]
        entries.sort()
        return [("/".join(p), sizes[p], p in folders) for p in entries]

    # ------------------------------------------------------------------ contents
    def read(self, rel: str) -> tuple[str, str]:
        """(the text the model wrote, its trust level)."""
        if _is_markdown(rel):
            doc = self.ctx.get(rel)
            trust = doc.metadata.get("trust", "trusted")
            return doc.body, trust if isinstance(trust, str) else "untrusted"
        data = self.ctx.read_raw(rel)
        if data is None:
            raise ContentError(f"{self.virtual(rel)} could not be read; view {VIRTUAL_ROOT} to see what is stored")
        try:
            return data.decode("utf-8"), "trusted"
        except UnicodeDecodeError:
            raise ContentError(f"{self.virtual(rel)} is not UTF-8 text; the memory tool only shows text files") from None

    def as_data(self, shown: str, virtual: str, trust: str, content: str) -> str:
        """Numbered lines as they are, or fenced as quoted data when the file is untrusted."""
        fenced = as_data(content, virtual, trust=trust)
        if fenced.startswith("[from "):
            return shown
        return as_data(shown, virtual, trust="untrusted" if trust == "trusted" else trust)

    def create(self, rel: str, text: str) -> None:
        self.ctx.create(rel, as_content(rel, text))  # stored as the model wrote it, as the SDK does

    def replace(self, rel: str, text: str) -> None:
        self.ctx.write(rel, as_content(rel, text))

    def move(self, src: str, dst: str) -> None:
        """Rename; a file changing between markdown and another kind is rewritten in the new form."""
        if self.is_dir(src) or _is_markdown(src) == _is_markdown(dst):
            self.ctx.move(src, dst)
            return
        content, _ = self.read(src)
        with self.ctx.transaction(f"memory-tool: rename {src} -> {dst}", op="move"):
            self.ctx.move(src, dst)
            self.ctx.write(dst, as_content(dst, content))


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 120 else repr(value[:117]) + "..."
