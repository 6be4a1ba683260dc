"""Anthropic's memory tool commands on a real root: files, commits, trash, refusals."""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage

from conftest import assert_clean, git
from contextfs.integrations.memory_tool import MEMORY_TOOL_SPEC, MemoryToolAdapter


def test_full_command_cycle(ctx) -> None:
    tool = MemoryToolAdapter(ctx)
    assert "empty" in tool.execute({"command": "view", "path": "/memories"})
    assert "created" in tool.execute({"command": "create", "path": "/memories/prefs.md", "file_text": "likes tea\nuses vim\n"})
    assert ctx.read("memories/prefs.md") == "likes tea\nuses vim\n"
    assert tool.execute({"command": "view", "path": "/memories/prefs.md"}) == "     1\tlikes tea\n     2\tuses vim"
    assert tool.execute({"command": "view", "path": "/memories/prefs.md", "view_range": [2, -1]}) == "     2\tuses vim"
    assert "edited" in tool.execute({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "tea", "new_str": "coffee"})
    assert "inserted" in tool.execute({"command": "insert", "path": "/memories/prefs.md", "insert_line": 1, "insert_text": "works late"})
    assert ctx.read("memories/prefs.md") == "likes coffee\nworks late\nuses vim\n"
    assert "Renamed" in tool.execute({"command": "rename", "old_path": "/memories/prefs.md", "new_path": "/memories/user/prefs.md"})
    assert "/memories/user/prefs.md" in tool.execute({"command": "view", "path": "/memories"})
    assert "trash" in tool.execute({"command": "delete", "path": "/memories/user/prefs.md"})
    assert ctx.list("memories") == []
    assert [e.original_path for e in ctx.trash()] == ["memories/user/prefs.md"]
    authors = set(git(ctx.root, "log", "--format=%an", "-n", "5").split())
    assert authors == {"agent:claude-memory"}
    assert_clean(ctx.root)


def test_hostile_and_malformed_commands_answer_with_errors(ctx) -> None:
    tool = MemoryToolAdapter(ctx)
    head = ctx.git.head()
    for command in (
        {"command": "view", "path": "/etc/passwd"},
        {"command": "create", "path": "/memories/../../escape.md", "file_text": "x"},
        {"command": "create", "path": "/memories/.git/config", "file_text": "x"},
        {"command": "create", "path": "/memories/a.md"},
        {"command": "str_replace", "path": "/memories/missing.md", "old_str": "a", "new_str": "b"},
        {"command": "format_disk"},
        {"command": "view", "path": "/memories/missing.md"},
    ):
        answer = tool.execute(command)
        assert answer.startswith("Error: "), (command, answer)
    assert ctx.git.head() == head
    assert not (ctx.root.parent / "escape.md").exists()


def test_tool_calls_from_a_chat_model(ctx) -> None:
    """A scripted model emits a memory tool call; the adapter answers with a ToolMessage."""
    call = {"name": "memory", "id": "call-1", "args": {"command": "create", "path": "/memories/fact.md", "file_text": "Deploys on Fridays are frozen."}}
    model = GenericFakeChatModel(messages=iter([AIMessage(content="", tool_calls=[call])]))
    reply = model.invoke("remember the deploy rule")
    tool = MemoryToolAdapter(ctx)
    messages = [tool.handle_tool_call(tc) for tc in reply.tool_calls]
    assert isinstance(messages[0], ToolMessage) and messages[0].tool_call_id == "call-1"
    assert ctx.read("memories/fact.md") == "Deploys on Fridays are frozen."
    assert MEMORY_TOOL_SPEC == {"type": "memory_20250818", "name": "memory"}
