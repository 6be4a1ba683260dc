"""Hostile input at every agent-facing interface: LangChain tools, MCP tools, memory tool, LangGraph store.

Oracle: canary files outside the root (and outside each adapter's own folder inside it:
``memory/core/``, ``.git/config``) whose bytes and mtimes must not change, and a
``sys.addaudithook`` monitor that records every file event (open, rename, remove,
rmtree, mkdir, chmod...) on a path outside the allowed area while a call runs. Each call
must end in a typed or protocol error with nothing changed, or succeed strictly inside
its area. Cases are hand-written plus a Hypothesis generator over dangerous tokens.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from helpers import git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, PutOp, SearchOp

from contextfs import ContextFSError, ContextManager
from contextfs.integrations import MemoryToolAdapter, make_tools
from contextfs.integrations.langgraph.store import ContextStore
from contextfs.integrations.mcp_server import build_server

TOKENS = [
    "..",
    ".",
    "/",
    "//",
    "\\",
    "..\\",
    "%2e%2e",
    "%2f",
    "..%2f",
    "%00",
    "\u2024\u2024",
    "\uff0e\uff0e",
    "\u2215",
    "\uff0f",
    "e\u0301",
    "\u00e9",
    "A",
    "a",
    "\x00",
    "\x1b",
    "\x7f",
    "\u202e",
    "\u200b",
    "\u200c",
    "\ud800",
    "con",
    "NUL",
    "aux.txt",
    "COM1",
    "x" * 300,
    ".git",
    "GIT~1",
    ".git.",
    ".trash",
    ".contextfs",
    "~",
    "~root",
    "/etc/passwd",
    "memory",
    "core",
    "sessions",
    "store",
    "memories",
    "outside-canary.md",
    "..\u2215",
    " ",
    ".md",
]
dangerous = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=6).map("".join) | st.text(
    max_size=40
)
paths = st.lists(dangerous, min_size=1, max_size=4).map("/".join)

_WRITE_EVENTS = {
    "os.rename",
    "os.remove",
    "os.rmdir",
    "os.mkdir",
    "shutil.rmtree",
    "os.chmod",
    "os.chown",
    "os.link",
    "os.symlink",
    "os.truncate",
    "os.utime",
    "shutil.move",
    "shutil.copyfile",
}


def _hashing_for_gits_index() -> bool:
    """True inside the index writer's check of a racily clean entry (it compares the file's
    blob id with the entry's and returns nothing of its bytes), which runs only when a
    file changed in the same second as git's index: a timing, not an adapter reading."""
    frame = sys._getframe(2)  # noqa: SLF001 - the audit hook's caller
    for _ in range(4):
        if frame is None:
            return False
        code = frame.f_code
        if code.co_name == "_blob_id" and code.co_filename.endswith(
            os.path.join("versioning", "staging.py")
        ):
            return True
        frame = frame.f_back
    return False


class Monitor:
    """Records file events outside ``allowed`` (or inside ``protected``) while armed."""

    def __init__(self) -> None:
        self.armed = False
        self.allowed: list[str] = []
        self.protected: list[str] = []
        self.events: list[tuple[str, str]] = []
        sys.addaudithook(self._hook)

    def _paths(self, args: tuple) -> list[str]:
        out = []
        for arg in args[:2]:
            if isinstance(arg, (str, bytes, os.PathLike)):
                text = os.fsdecode(arg)
                if os.path.isabs(text):
                    out.append(os.path.normpath(text))
                elif ".." in text.split(os.sep):
                    out.append("relative-escape:" + text)
        return out

    def _hook(self, event: str, args: tuple) -> None:
        if not self.armed or (event != "open" and event not in _WRITE_EVENTS):
            return
        writing = event != "open" or (
            len(args) > 2
            and isinstance(args[2], int)
            and args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        )
        writing = writing or (
            event == "open" and isinstance(args[1], str) and any(c in args[1] for c in "wax+")
        )
        for path in self._paths(args):
            inside = any(path == a or path.startswith(a + os.sep) for a in self.allowed)
            guarded = any(path == p or path.startswith(p + os.sep) for p in self.protected)
            if guarded and not writing and _hashing_for_gits_index():
                continue  # git's index writer hashes a racily clean file, as git does: nothing read out
            if (
                guarded
                or path.startswith("relative-escape:")
                or (writing and not inside and path != os.devnull)
            ):
                self.events.append((event, path))


MONITOR = Monitor()


class Oracle:
    """Canaries and the monitor around one root and one adapter area."""

    def __init__(self, tmp: Path, root: Path, area: str | None) -> None:
        self.root, self.area = root, area
        outside = tmp / "outside-canary.md"
        outside.write_text("canary: do not touch\n")
        self.canaries = [outside, root / ".git" / "config"]
        inside = root / "memory" / "core" / "canary.md"
        if area is not None:
            self.canaries.append(inside)
        self.snapshot = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in self.canaries}

    def run(self, fn, *args, **kwargs):
        MONITOR.events.clear()
        MONITOR.allowed = [str(self.root)]
        MONITOR.protected = [str(self.root.parent / "outside-canary.md")]
        if self.area is not None:
            MONITOR.protected.append(str(self.root / "memory" / "core"))
        MONITOR.armed = True
        try:
            return fn(*args, **kwargs)
        finally:
            MONITOR.armed = False

    def check(self, head_before: str, what: object) -> None:
        assert MONITOR.events == [], (what, MONITOR.events)
        for path, (data, mtime) in self.snapshot.items():
            assert path.read_bytes() == data and path.stat().st_mtime_ns == mtime, (what, path)
        changed = [
            p
            for p in git(self.root, "diff", "--name-only", "-z", head_before, "HEAD").split("\0")
            if p
        ]
        allowed = "" if self.area is None else self.area + "/"
        for rel in changed:
            parts = rel.split("/")
            if parts[0] == ".trash":  # a soft delete: the entry's record and the files it moved
                assert parts[2] == "entry.json" or "/".join(parts[3:]).startswith(allowed), (
                    what,
                    rel,
                )
                continue
            assert rel.startswith(allowed) and not rel.startswith((".git/", ".contextfs/")), (
                what,
                rel,
            )
            if self.area is None:
                assert not rel.startswith("memory/core/canary"), (what, rel)
        assert git(self.root, "status", "--porcelain", "--untracked-files=all") == "", what


def _root(tmp: Path) -> ContextManager:
    ctx = ContextManager(tmp / "ctx")
    ctx.write("memory/core/canary.md", "- pinned canary\n")
    ctx.write("memory/facts.md", "- a fact\n")
    return ctx


#: make stress (CONTEXTFS_STRESS) runs twenty times as many cases.
EXAMPLES = 500 if os.environ.get("CONTEXTFS_STRESS") else 25
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


# ------------------------------------------------------------------ LangChain tools
@pytest.fixture
def lc(tmp_path: Path):
    ctx = _root(tmp_path)
    oracle = Oracle(tmp_path, ctx.root, None)
    tools = {t.name: t for t in make_tools(ctx, allow_delete=True)}
    yield ctx, oracle, tools
    ctx.close()


def _lc_call(tools, name: str, args: dict):
    return tools[name].invoke({"name": name, "args": args, "id": "h", "type": "tool_call"})


PATH_TOOLS = [
    ("read_context", {}),
    ("write_context", {"content": "pwned"}),
    ("append_context", {"text": "pwned"}),
    ("edit_context", {"old": "a", "new": "pwned"}),
    ("delete_context", {}),
    ("restore_context", {}),
    ("context_history", {}),
    ("context_diff", {"rev": "HEAD"}),
    ("revert_context", {"rev": "HEAD"}),
]
HAND_PATHS = [
    "../outside-canary.md",
    "../../etc/passwd",
    ".git/config",
    "/etc/passwd",
    "memory/../../outside-canary.md",
    ".trash/x/files/a.md",
    ".contextfs/config.toml",
    "memory\\..\\..\\x",
    "%2e%2e/outside-canary.md",
    "memory/\u2215..\u2215x",
    ".GIT/config",
    "con.md",
    "a\x00b",
    "x\ud800.md",
    "\u202e/x.md",
    "~/x",
]


@pytest.mark.parametrize("bad", HAND_PATHS)
def test_langchain_hand_written(lc, bad: str) -> None:
    ctx, oracle, tools = lc
    head = ctx.parts.git.head()
    for name, extra in PATH_TOOLS:
        msg = oracle.run(_lc_call, tools, name, {"path": bad, **extra})
        assert msg.status in ("error", "success"), name
        if msg.status == "success":
            assert "canary: do not touch" not in msg.content and "root:x:0:0" not in msg.content
    for name, args in [
        ("list_context", {"folder": bad}),
        ("search_context", {"query": "x", "folder": bad}),
    ]:
        msg = oracle.run(_lc_call, tools, name, args)
        assert msg.status == "error" or msg.content.startswith(("No files under", "No matches")), (
            name,
            msg.content,
        )
    oracle.check(head, bad)


@given(path=paths, tool=st.sampled_from(PATH_TOOLS))
@SETTINGS
def test_langchain_generated(tmp_path_factory, path: str, tool) -> None:
    tmp = tmp_path_factory.mktemp("lc")
    ctx = _root(tmp)
    try:
        oracle = Oracle(tmp, ctx.root, None)
        tools = {t.name: t for t in make_tools(ctx, allow_delete=True)}
        head = ctx.parts.git.head()
        name, extra = tool
        msg = oracle.run(_lc_call, tools, name, {"path": path, **extra})
        assert msg.status in ("error", "success")
        assert "canary: do not touch" not in str(msg.content)
        oracle.check(head, (name, path))
    finally:
        ctx.close()


# ------------------------------------------------------------------ MCP tools (in process: the monitor sees it)
def test_mcp_hand_written(tmp_path: Path) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    ctx = _root(tmp_path)
    try:
        oracle = Oracle(tmp_path, ctx.root, None)
        server = build_server(ctx, allow_delete=True)
        head = ctx.parts.git.head()
        for bad in HAND_PATHS:
            for name, extra in PATH_TOOLS:
                try:
                    result = oracle.run(asyncio.run, server.call_tool(name, {"path": bad, **extra}))
                except ToolError as exc:  # the in-process form of isError: true
                    assert str(exc), (name, bad)
                    continue
                text = "".join(getattr(c, "text", "") for c in result.content)
                assert "canary: do not touch" not in text and "root:x:0:0" not in text
        oracle.check(head, "mcp")
    finally:
        ctx.close()


# ------------------------------------------------------------------ memory tool
MEMORY_HAND = [
    "/memories/../memory/core/canary.md",
    "/memories/../../outside-canary.md",
    "/memories/x/../..",
    "/memories/..",
    "/memories/.git/config",
    "/memories/../.git/config",
    "/etc/passwd",
    "memories/x",
    "/memories\\..\\x",
    "/memories/%2e%2e/x",
    "/memories/\x00",
    "/memories/\ud800",
    "/memories/con",
    "/memoriesx/y",
    "/memories/" + "x" * 300,
    "//memories/../x",
    "/memories/./../x",
]


def _memory_commands(path: str) -> list[dict]:
    return [
        {"command": "view", "path": path},
        {"command": "create", "path": path, "file_text": "pwned"},
        {"command": "str_replace", "path": path, "old_str": "pinned", "new_str": "pwned"},
        {"command": "insert", "path": path, "insert_line": 0, "insert_text": "pwned"},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": path, "new_path": "/memories/r.md"},
        {"command": "rename", "old_path": "/memories/a.md", "new_path": path},
    ]


def _memory_case(tool: MemoryToolAdapter, oracle: Oracle, command: dict) -> None:
    try:
        out = oracle.run(tool.execute, command)
    except ContextFSError:
        return  # MemoryToolError: typed, and the SDK's ToolError
    # The canaries' contents, not their names: a path inside /memories may well be called 'canary'.
    assert (
        "canary: do not touch" not in out and "pinned canary" not in out and "root:x:0:0" not in out
    )


@pytest.mark.parametrize("bad", MEMORY_HAND)
def test_memory_tool_hand_written(tmp_path: Path, bad: str) -> None:
    ctx = _root(tmp_path)
    try:
        tool = MemoryToolAdapter(ctx)
        tool.execute({"command": "create", "path": "/memories/a.md", "file_text": "a"})
        oracle = Oracle(tmp_path, ctx.root, "memories")
        head = ctx.parts.git.head()
        for command in _memory_commands(bad):
            _memory_case(tool, oracle, command)
        assert (ctx.root / "memories").is_dir()
        oracle.check(head, bad)
    finally:
        ctx.close()


@given(path=paths.map(lambda p: "/memories/" + p), which=st.integers(0, 6))
@SETTINGS
def test_memory_tool_generated(tmp_path_factory, path: str, which: int) -> None:
    tmp = tmp_path_factory.mktemp("mem")
    ctx = _root(tmp)
    try:
        tool = MemoryToolAdapter(ctx)
        tool.execute({"command": "create", "path": "/memories/a.md", "file_text": "a"})
        oracle = Oracle(tmp, ctx.root, "memories")
        head = ctx.parts.git.head()
        _memory_case(tool, oracle, _memory_commands(path)[which])
        oracle.check(head, path)
    finally:
        ctx.close()


# ------------------------------------------------------------------ LangGraph store
@given(ns=st.lists(dangerous, min_size=1, max_size=3), key=dangerous, delete=st.booleans())
@SETTINGS
def test_store_generated(tmp_path_factory, ns: list[str], key: str, delete: bool) -> None:
    tmp = tmp_path_factory.mktemp("store")
    ctx = _root(tmp)
    try:
        store = ContextStore(ctx)
        oracle = Oracle(tmp, ctx.root, "store")
        head = ctx.parts.git.head()
        namespace = tuple(ns)
        try:
            oracle.run(store.batch, [PutOp(namespace, key, {"v": key})])
        except ContextFSError:
            # A typed refusal (e.g. a lone surrogate): nothing may have changed.
            assert ctx.parts.git.head() == head
            oracle.check(head, (namespace, key))
            return
        # Accepted: the item reads back, is found, and goes away when deleted.
        got = oracle.run(store.batch, [GetOp(namespace, key), SearchOp(namespace[:1])])
        assert got[0].value == {"v": key} and got[0].key == key and got[0].namespace == namespace
        assert any(item.key == key and item.namespace == namespace for item in got[1])
        if delete:
            oracle.run(store.batch, [PutOp(namespace, key, None)])
            assert store.batch([GetOp(namespace, key)]) == [None]
        oracle.check(head, (namespace, key))
    finally:
        ctx.close()


def test_the_oracle_sees_an_escape(tmp_path: Path) -> None:
    """The monitor and the canaries are not blind: a write outside the root is caught."""
    ctx = _root(tmp_path)
    try:
        oracle = Oracle(tmp_path, ctx.root, "memories")
        head = ctx.parts.git.head()
        oracle.run((tmp_path / "escaped.md").write_text, "x")
        assert any(path.endswith("escaped.md") for _, path in MONITOR.events)
        oracle.run((ctx.root / "memory" / "core" / "canary.md").write_text, "changed")
        with pytest.raises(AssertionError):
            oracle.check(head, "planted escape")
    finally:
        ctx.close()
