"""Anthropic's memory tool on a real root: the SDK's local-filesystem semantics, its tool runner, refusals.

The cases restate what the SDK's own local-filesystem memory tool does (semantics, not
wording): exclusive create, two-level directory views without hidden items, numbered
views with ranges, unique str_replace, insert keeping the trailing newline, guarded
delete and rename, owner-only modes. Then the SDK's tool runner drives the adapter
through a multi-step conversation against a mocked API (no network).
"""

from __future__ import annotations

import json
import stat

import httpx2 as httpx
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage

from conftest import assert_clean, commit_count, git
from contextfs import ContextFSError
from contextfs.integrations.memory_tool import MEMORY_TOOL_SPEC, MemoryToolAdapter, MemoryToolError

anthropic = pytest.importorskip("anthropic", reason="the anthropic extra is part of the dev install")


@pytest.fixture
def tool(ctx) -> MemoryToolAdapter:
    return MemoryToolAdapter(ctx)


def run(tool: MemoryToolAdapter, **command) -> str:
    return tool.execute(command)


def refused(tool: MemoryToolAdapter, **command) -> str:
    with pytest.raises(MemoryToolError) as info:
        tool.execute(command)
    assert isinstance(info.value, ContextFSError) and isinstance(info.value, anthropic.lib.tools.ToolError)
    return str(info.value)


def test_is_the_sdk_memory_tool(tool: MemoryToolAdapter) -> None:
    from anthropic.lib.tools import BetaAbstractMemoryTool

    assert isinstance(tool, BetaAbstractMemoryTool)
    assert tool.name == "memory" and tool.to_dict() == MEMORY_TOOL_SPEC
    cached = MemoryToolAdapter(tool.ctx, cache_control={"type": "ephemeral"})
    assert cached.to_dict() == {**MEMORY_TOOL_SPEC, "cache_control": {"type": "ephemeral"}}
    # The SDK's entry point takes the raw tool_use input.
    assert tool.call({"command": "create", "path": "/memories/a.md", "file_text": "x"}).startswith("File created")


def test_create_view_and_directory_listing(ctx, tool: MemoryToolAdapter) -> None:
    assert run(tool, command="view", path="/memories").endswith("excluding hidden items:\n0B\t/memories")
    assert run(tool, command="create", path="/memories/prefs.md", file_text="likes tea\nuses vim\n") == \
        "File created successfully at: /memories/prefs.md"
    assert "already exists" in refused(tool, command="create", path="/memories/prefs.md", file_text="other")
    assert ctx.read("memories/prefs.md") == "likes tea\nuses vim\n"
    run(tool, command="create", path="/memories/work/projects/alpha/notes.md", file_text="deep")
    run(tool, command="create", path="/memories/work/todo.txt", file_text="ship it")
    run(tool, command="create", path="/memories/.secret", file_text="hidden")
    listing = run(tool, command="view", path="/memories").splitlines()
    assert listing[0] == "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:"
    names = [line.split("\t")[1] for line in listing[1:]]
    assert names == ["/memories", "/memories/prefs.md", "/memories/work/", "/memories/work/projects/",
                     "/memories/work/todo.txt"]
    assert all(line.split("\t")[0][-1] in "BKMG" for line in listing[1:])
    sub = run(tool, command="view", path="/memories/work").splitlines()
    assert [line.split("\t")[1] for line in sub[1:]] == [
        "/memories/work", "/memories/work/projects/", "/memories/work/projects/alpha/", "/memories/work/todo.txt"]


def test_file_views_with_line_numbers_and_ranges(tool: MemoryToolAdapter) -> None:
    run(tool, command="create", path="/memories/n.md", file_text="one\ntwo\nthree\n")
    whole = run(tool, command="view", path="/memories/n.md")
    assert whole == "Here's the content of /memories/n.md with line numbers:\n     1\tone\n     2\ttwo\n     3\tthree\n     4\t"
    assert run(tool, command="view", path="/memories/n.md", view_range=[2, 3]).endswith("     2\ttwo\n     3\tthree")
    assert run(tool, command="view", path="/memories/n.md", view_range=[3, -1]).endswith("     3\tthree\n     4\t")
    for bad in (["1", "2"], [True, 2], "1-2"):
        message = refused(tool, command="view", path="/memories/n.md", view_range=bad)
        assert "view_range" in message
    # Out of the file or of another length: the SDK's rule (clamped, empty, or the whole file).
    assert run(tool, command="view", path="/memories/n.md", view_range=[0, 2]).endswith("     1\tone\n     2\ttwo")
    assert run(tool, command="view", path="/memories/n.md", view_range=[9, -1]).endswith("line numbers:\n")
    assert run(tool, command="view", path="/memories/n.md", view_range=[1, 2, 3]) == whole
    assert "does not exist" in refused(tool, command="view", path="/memories/missing.md")


def test_str_replace_insert_and_trailing_newlines(ctx, tool: MemoryToolAdapter) -> None:
    run(tool, command="create", path="/memories/p.md", file_text="likes tea\nuses vim\n")
    out = run(tool, command="str_replace", path="/memories/p.md", old_str="tea", new_str="coffee")
    assert out.startswith("The memory file has been edited.") and "     1\tlikes coffee" in out
    assert "did not appear verbatim" in refused(tool, command="str_replace", path="/memories/p.md", old_str="x", new_str="y")
    run(tool, command="create", path="/memories/d.md", file_text="a\nb\na\n")
    assert "lines: 1, 3" in refused(tool, command="str_replace", path="/memories/d.md", old_str="a", new_str="c")
    assert run(tool, command="insert", path="/memories/p.md", insert_line=1, insert_text="works late") == \
        "The file /memories/p.md has been edited."
    assert ctx.read("memories/p.md") == "likes coffee\nworks late\nuses vim\n"
    run(tool, command="insert", path="/memories/p.md", insert_line=0, insert_text="first\n")
    run(tool, command="insert", path="/memories/p.md", insert_line=4, insert_text="last")
    assert ctx.read("memories/p.md") == "first\nlikes coffee\nworks late\nuses vim\nlast\n"
    assert "range [0, 5]" in refused(tool, command="insert", path="/memories/p.md", insert_line=9, insert_text="x")
    for bad in ("1", 1.5, None, True):
        assert "insert_line" in refused(tool, command="insert", path="/memories/p.md", insert_line=bad, insert_text="x")
    assert "file_text" in refused(tool, command="create", path="/memories/none.md", file_text=None)
    assert not ctx.exists("memories/none.md")
    assert "new_str" in refused(tool, command="str_replace", path="/memories/p.md", old_str="first")


def test_delete_rename_and_their_guards(ctx, tool: MemoryToolAdapter) -> None:
    run(tool, command="create", path="/memories/a/one.md", file_text="1")
    run(tool, command="create", path="/memories/b.md", file_text="2")
    assert "Cannot delete the /memories directory itself" in refused(tool, command="delete", path="/memories")
    assert "Cannot delete the /memories directory itself" in refused(tool, command="delete", path="/memories/a/..")
    assert "does not exist" in refused(tool, command="delete", path="/memories/zzz")
    assert "already exists" in refused(tool, command="rename", old_path="/memories/b.md", new_path="/memories/a/one.md")
    assert "Cannot rename the /memories" in refused(tool, command="rename", old_path="/memories", new_path="/memories/x")
    assert "does not exist" in refused(tool, command="rename", old_path="/memories/q.md", new_path="/memories/r.md")
    assert run(tool, command="rename", old_path="/memories/b.md", new_path="/memories/new/dir/b.md") == \
        "Successfully renamed /memories/b.md to /memories/new/dir/b.md"
    assert ctx.read("memories/new/dir/b.md") == "2"
    assert run(tool, command="delete", path="/memories/a").startswith("Successfully deleted /memories/a")
    assert ctx.list("memories") == ["memories/new/dir/b.md"]
    assert [e.original_path for e in ctx.trash()] == ["memories/a"]
    assert set(git(ctx.root, "log", "--format=%an", "-n", "4").split()) == {"agent:claude-memory"}
    assert_clean(ctx.root)


def test_non_markdown_files_are_stored_exactly_as_written(ctx, tool: MemoryToolAdapter) -> None:
    doc = '{"user": "priya", "likes": ["tea"]}'
    run(tool, command="create", path="/memories/profile.json", file_text=doc)
    assert (ctx.root / "memories" / "profile.json").read_text("utf-8") == doc
    assert json.loads((ctx.root / "memories" / "profile.json").read_text("utf-8"))["user"] == "priya"
    run(tool, command="str_replace", path="/memories/profile.json", old_str='"tea"', new_str='"tea", "chess"')
    assert json.loads((ctx.root / "memories" / "profile.json").read_text("utf-8"))["likes"] == ["tea", "chess"]
    run(tool, command="create", path="/memories/log.txt", file_text="---\nnot: frontmatter\n---\nline\n")
    assert (ctx.root / "memories" / "log.txt").read_text("utf-8") == "---\nnot: frontmatter\n---\nline\n"
    assert "     2\tnot: frontmatter" in run(tool, command="view", path="/memories/log.txt")
    run(tool, command="rename", old_path="/memories/log.txt", new_path="/memories/log.md")
    assert ctx.read("memories/log.md") == "---\nnot: frontmatter\n---\nline\n"  # now markdown, same text
    assert (ctx.root / "memories" / "log.md").read_text("utf-8").startswith("---\n")


def test_modes_are_the_sdks(ctx, tool: MemoryToolAdapter) -> None:
    run(tool, command="create", path="/memories/deep/er/x.md", file_text="x")
    assert stat.S_IMODE((ctx.root / "memories" / "deep" / "er" / "x.md").stat().st_mode) == 0o600
    for folder in ("memories", "memories/deep", "memories/deep/er"):
        assert stat.S_IMODE((ctx.root / folder).stat().st_mode) == 0o700, folder
    run(tool, command="str_replace", path="/memories/deep/er/x.md", old_str="x", new_str="y")
    assert stat.S_IMODE((ctx.root / "memories" / "deep" / "er" / "x.md").stat().st_mode) == 0o600
    assert_clean(ctx.root)


def test_paths_stay_in_memories(ctx, tool: MemoryToolAdapter) -> None:
    ctx.write("memory/core/rules.md", "- Never deploy on Fridays\n")
    head, rules = ctx.git.head(), (ctx.root / "memory/core/rules.md").read_bytes()
    for command in (
        {"command": "view", "path": "/memories/../memory/core/rules.md"},
        {"command": "create", "path": "/memories/../memory/core/rules.md", "file_text": "pwned"},
        {"command": "str_replace", "path": "/memories/../memory/core/rules.md", "old_str": "Never", "new_str": "Always"},
        {"command": "delete", "path": "/memories/../memory"},
        {"command": "rename", "old_path": "/memories/../memory/core/rules.md", "new_path": "/memories/r.md"},
        {"command": "rename", "old_path": "/memories/x.md", "new_path": "/memories/../../escape.md"},
        {"command": "view", "path": "/etc/passwd"},
        {"command": "view", "path": "/memoriesX/a.md"},
        {"command": "create", "path": "/memories/.git/config", "file_text": "x"},
        {"command": "create", "path": "/memories/a\\..\\b.md", "file_text": "x"},
        {"command": "create", "path": 7, "file_text": "x"},
        {"command": "format_disk"},
    ):
        message = tool.run(command)
        assert message.startswith("Error: "), (command, message)
        assert "write()" not in message and "list()" not in message
    assert ctx.git.head() == head and (ctx.root / "memory/core/rules.md").read_bytes() == rules
    assert "/memories/" in tool.run({"command": "create", "path": "/memories/.git/x", "file_text": "x"})


def test_handle_tool_call_from_a_chat_model(ctx, tool: MemoryToolAdapter) -> None:
    good = {"name": "memory", "id": "call-1", "args": {"command": "create", "path": "/memories/fact.md",
                                                          "file_text": "Deploys on Fridays are frozen."}}
    bad = {"name": "memory", "id": "call-2", "args": {"command": "view", "path": "/memories/../x"}}
    model = GenericFakeChatModel(messages=iter([AIMessage(content="", tool_calls=[good, bad])]))
    reply = model.invoke("remember the deploy rule")
    answers = [tool.handle_tool_call(tc) for tc in reply.tool_calls]
    assert isinstance(answers[0], ToolMessage) and answers[0].status == "success"
    assert answers[1].status == "error" and answers[1].content.startswith("Error: ")
    assert ctx.read("memories/fact.md") == "Deploys on Fridays are frozen."


def test_sdk_tool_runner_completes_a_multi_step_loop(ctx) -> None:
    """The SDK's own tool runner, against an API mocked at the HTTP transport."""
    tool = MemoryToolAdapter(ctx, session="claude-run")
    turns = [
        [("toolu_1", {"command": "view", "path": "/memories"})],
        [("toolu_2", {"command": "create", "path": "/memories/user.md", "file_text": "Name: Priya\nCity: Pune\n"}),
         ("toolu_3", {"command": "view", "path": "/memories/../escape.md"})],
        [("toolu_4", {"command": "str_replace", "path": "/memories/user.md", "old_str": "Pune", "new_str": "Hyderabad"})],
        [("toolu_5", {"command": "view", "path": "/memories/user.md"})],
    ]
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        n = len(seen)
        if n <= len(turns):
            content = [{"type": "tool_use", "id": tid, "name": "memory", "input": args} for tid, args in turns[n - 1]]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "I will remember that you moved to Hyderabad."}], "end_turn"
        return httpx.Response(200, json={
            "id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        })

    client = anthropic.Anthropic(api_key="test-key", base_url="http://mock.invalid",
                                 http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    runner = client.beta.messages.tool_runner(
        model="claude-test", max_tokens=256, tools=[tool],
        messages=[{"role": "user", "content": "I moved from Pune to Hyderabad; remember it."}],
    )
    final = runner.until_done()
    assert final.content[0].text == "I will remember that you moved to Hyderabad."
    assert seen[0]["tools"] == [MEMORY_TOOL_SPEC]
    results = {b["tool_use_id"]: b for body in seen[1:] for b in body["messages"][-1]["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"}
    assert set(results) == {"toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5"}
    assert results["toolu_3"].get("is_error") is True
    assert all(not results[k].get("is_error") for k in ("toolu_1", "toolu_2", "toolu_4", "toolu_5"))
    assert ctx.read("memories/user.md") == "Name: Priya\nCity: Hyderabad\n"
    log = git(ctx.root, "log", "--format=%an|%(trailers:key=Contextfs-Session,valueonly)", "-2").split()
    assert log == ["agent:claude-memory|claude-run"] * 2
    assert commit_count(ctx.root) >= 3
    assert_clean(ctx.root)
