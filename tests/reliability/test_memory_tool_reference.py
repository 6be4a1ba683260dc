"""The memory-tool adapter against the anthropic SDK's own implementation of the tool.

``anthropic.tools.BetaLocalFilesystemMemoryTool`` is the SDK's reference: the same
command sequence runs on it (a plain folder) and on ``MemoryToolAdapter`` (a context
root: git, frontmatter, trash), and every answer must match. Two differences are by
design and compared accordingly: a directory view lists the same paths but not the same
sizes (a markdown memory is stored with frontmatter, and a folder's size is not the
file system's block size), a delete also says where the trash keeps what it removed, and
a refusal may be worded to end with its fix (the decision to refuse is compared), and a
folder is listed only while a file is under it (git keeps no empty folder).
One is stricter: a ``view_range`` outside the file is refused with a fix where the SDK
returns an empty or shortened view.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfs import ContextManager
from contextfs.integrations.memory_tool.adapter import MemoryToolAdapter

anthropic = pytest.importorskip(
    "anthropic", reason="the anthropic extra is part of the dev install"
)
from anthropic.lib.tools import ToolError  # noqa: E402 - after the importorskip above
from anthropic.tools import BetaLocalFilesystemMemoryTool  # noqa: E402

LISTING = "Here're the files and directories up to 2 levels deep in "
EXAMPLES = 200 if os.environ.get("CONTEXTFS_STRESS") else 12


def _answer(tool: Any, command: dict[str, Any]) -> tuple[str, str]:
    try:
        return "ok", tool.call(command)
    except ToolError as exc:
        return "error", str(exc)
    except OSError as exc:  # the SDK's own, e.g. a folder renamed into itself: a refusal too
        return "error", str(exc)


def _kept(ref: BetaLocalFilesystemMemoryTool, listing: list[str]) -> list[str]:
    """The listed paths a context root can hold: a folder only while a file is under it
    (git keeps no empty folder, so the store removes one when its last file goes)."""
    base = Path(ref.base_path)

    def has_file(path: str) -> bool:
        folder = base / path.strip("/")
        return any(files for _, _, files in os.walk(folder))

    return [p for p in listing if not p.endswith("/") or has_file(p)]


def _prune_empty(ref: BetaLocalFilesystemMemoryTool) -> None:
    """Remove the reference's folders that hold no file (a refused rename can leave the
    destination's new folder behind there; a context root keeps no empty folder)."""
    memories = Path(ref.base_path) / "memories"
    for folder, _dirs, _files in sorted(os.walk(memories), key=lambda w: -len(w[0])):
        if Path(folder) != memories and not any(Path(folder).iterdir()):
            Path(folder).rmdir()


def _same(
    command: dict[str, Any],
    ref: tuple[str, str],
    ours: tuple[str, str],
    tool: BetaLocalFilesystemMemoryTool,
) -> None:
    if "view_range" in command and ours[0] == "error" and "view_range" in ours[1]:
        # By design: a range outside the file is refused with a fix, where the SDK
        # answers with an empty or shortened view.
        start, end = command["view_range"]
        lines = ours[1]
        assert "outside" in lines or "view_range" in lines
        assert start < 1 or (end != -1 and end < start) or ref[1].endswith("line numbers:\n"), (
            command,
            ref,
            ours,
        )
        return
    assert ref[0] == ours[0], (command, ref, ours)
    if ref[0] == "ok" and ref[1].startswith(LISTING):
        paths = [
            [line.split("\t")[1] for line in out.splitlines()[1:]] for out in (ref[1], ours[1])
        ]
        assert ref[1].splitlines()[0] == ours[1].splitlines()[0], (command, ref, ours)
        assert paths[0][:1] + _kept(tool, paths[0][1:]) == paths[1], (command, ref, ours)
    elif ref[0] == "ok":  # delete included: the adapter answers in the SDK's words
        assert ref[1] == ours[1], (command, ref, ours)
    else:  # a refusal: the same decision; the wording may add the fix, in this library's way
        assert ours[1], (command, ref, ours)


def _both(tmp: Path) -> tuple[BetaLocalFilesystemMemoryTool, MemoryToolAdapter, ContextManager]:
    ctx = ContextManager(tmp / "ctx", index=False)
    return (
        BetaLocalFilesystemMemoryTool(base_path=str(tmp / "reference")),
        MemoryToolAdapter(ctx),
        ctx,
    )


SCRIPT: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/prefs.md", "file_text": "likes tea\nuses vim\n"},
    {"command": "create", "path": "/memories/prefs.md", "file_text": "other"},
    {"command": "create", "path": "/memories/work/projects/alpha/notes.md", "file_text": "deep"},
    {"command": "create", "path": "/memories/work/todo.txt", "file_text": "ship it"},
    {"command": "create", "path": "/memories/.hidden", "file_text": "hidden"},
    {"command": "create", "path": "/memories/crlf.txt", "file_text": "one\r\ntwo\r\n"},
    {"command": "create", "path": "/memories/ünïcode.md", "file_text": "naïve café\n"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/work"},
    {"command": "view", "path": "/memories/prefs.md"},
    {"command": "view", "path": "/memories/crlf.txt"},
    {"command": "view", "path": "/memories/ünïcode.md"},
    {"command": "view", "path": "/memories/prefs.md", "view_range": [2, -1]},
    {"command": "view", "path": "/memories/prefs.md", "view_range": [1, 2]},
    {"command": "view", "path": "/memories/prefs.md", "view_range": [3, 1]},
    {"command": "view", "path": "/memories/prefs.md", "view_range": [0, 2]},
    {"command": "str_replace", "path": "/memories/prefs.md", "old_str": "tea", "new_str": "coffee"},
    {"command": "str_replace", "path": "/memories/prefs.md", "old_str": "zzz", "new_str": "coffee"},
    {"command": "create", "path": "/memories/twice.md", "file_text": "a\nb\na\n"},
    {"command": "str_replace", "path": "/memories/twice.md", "old_str": "a", "new_str": "c"},
    {"command": "str_replace", "path": "/memories/crlf.txt", "old_str": "two", "new_str": "three"},
    {"command": "view", "path": "/memories/crlf.txt"},
    {
        "command": "insert",
        "path": "/memories/prefs.md",
        "insert_line": 1,
        "insert_text": "works late",
    },
    {"command": "insert", "path": "/memories/prefs.md", "insert_line": 0, "insert_text": "first\n"},
    {"command": "insert", "path": "/memories/prefs.md", "insert_line": 4, "insert_text": "last"},
    {"command": "insert", "path": "/memories/prefs.md", "insert_line": 9, "insert_text": "x"},
    {"command": "view", "path": "/memories/prefs.md"},
    {
        "command": "rename",
        "old_path": "/memories/work/todo.txt",
        "new_path": "/memories/done/todo.txt",
    },
    {"command": "rename", "old_path": "/memories/twice.md", "new_path": "/memories/prefs.md"},
    {"command": "rename", "old_path": "/memories/nope.md", "new_path": "/memories/x.md"},
    {"command": "delete", "path": "/memories/work"},
    {"command": "delete", "path": "/memories"},
    {"command": "delete", "path": "/memories/gone.md"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/done/todo.txt"},
    {"command": "view", "path": "/memories/missing.md"},
]


def test_a_session_answers_as_the_sdks_own_memory_tool(tmp_path: Path) -> None:
    ref, ours, ctx = _both(tmp_path)
    try:
        for command in SCRIPT:
            _same(command, _answer(ref, command), _answer(ours, command), ref)
    finally:
        ctx.close()


_NAMES = st.sampled_from(
    [
        "/memories/a.md",
        "/memories/b.txt",
        "/memories/d/c.md",
        "/memories/d",
        "/memories/d/e/f.md",
        "/memories",
    ]
)
_TEXT = st.text(alphabet="ab \n", max_size=12)
_COMMANDS = st.one_of(
    st.fixed_dictionaries({"command": st.just("view"), "path": _NAMES}),
    st.fixed_dictionaries({"command": st.just("create"), "path": _NAMES, "file_text": _TEXT}),
    st.fixed_dictionaries(
        {
            "command": st.just("str_replace"),
            "path": _NAMES,
            "old_str": st.sampled_from(["a", "b", "ab", "\n", "zz"]),
            "new_str": _TEXT,
        }
    ),
    st.fixed_dictionaries(
        {
            "command": st.just("insert"),
            "path": _NAMES,
            "insert_line": st.integers(-1, 4),
            "insert_text": _TEXT,
        }
    ),
    st.fixed_dictionaries({"command": st.just("delete"), "path": _NAMES}),
    st.fixed_dictionaries({"command": st.just("rename"), "old_path": _NAMES, "new_path": _NAMES}),
)


@given(script=st.lists(_COMMANDS, min_size=1, max_size=10))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_generated_sessions_answer_as_the_sdk(
    tmp_path_factory: pytest.TempPathFactory, script: list[dict[str, Any]]
) -> None:
    ref, ours, ctx = _both(tmp_path_factory.mktemp("session"))
    try:
        for command in script:
            _same(command, _answer(ref, command), _answer(ours, command), ref)
            _prune_empty(ref)
    finally:
        ctx.close()
