"""A refusal's fix is said in the terms of the interface that was used.

The same mistakes (a missing file, an occupied name, a bad revision, an unknown trash
entry) through Python, the CLI, the LangChain tools and the memory tool: each message ends
with what to do next, naming that interface's operation and none of the others'.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from contextfs import AlreadyExistsError, ContextFSError, ContextManager, NotFoundError
from contextfs.cli import cli
from contextfs.fixes import DIALECTS, Fix, speaking
from contextfs.integrations import MemoryToolAdapter, make_tools

PYTHON_WORDS = ("ctx.", "write()", "list()", "trash()", "history()", "create()", "Topics.")


def test_every_fix_has_every_dialect() -> None:
    from contextfs import fixes

    for action, forms in fixes._FIXES.items():  # noqa: SLF001 - the table itself is what is checked
        assert set(forms) == set(DIALECTS), action
        for dialect in DIALECTS:
            assert Fix(action, "memory/x.md").render(dialect).strip()


def test_python_names_python_calls(ctx: ContextManager) -> None:
    ctx.write("a.md", "a")
    with pytest.raises(NotFoundError, match=r"ctx\.write\('missing\.md'"):
        ctx.edit("missing.md", "x", "y")
    with pytest.raises(AlreadyExistsError, match=r"ctx\.write\('a\.md'"):
        ctx.create("a.md", "b")
    with pytest.raises(NotFoundError, match=r"ctx\.trash\(\)"):
        ctx.restore("20260101T000000Z-abcdef")
    with pytest.raises(NotFoundError, match=r"ctx\.history\(\)"):
        ctx.read_at("a.md", "deadbeef")


def test_the_cli_names_commands(ctx: ContextManager) -> None:
    runner = CliRunner()
    cases = [
        (["edit", "missing.md", "x", "y"], "`contextfs write missing.md`"),
        (["rm", "nope/gone.md"], "`contextfs ls nope`"),
        (["restore", "20260101T000000Z-abcdef"], "`contextfs trash`"),
        (["show", "a.md", "--at", "deadbeef"], "`contextfs log`"),
        (["ls", "nope"], "list what is there with `contextfs ls`"),
        (["ls", "nope/deeper"], "`contextfs ls nope`"),
        (["log", "memory/nope.md"], "`contextfs ls memory`"),
        (["revert", "--session", "nope"], "`contextfs log` names each commit's session"),
    ]
    ctx.write("a.md", "a")
    for args, hint in cases:
        result = runner.invoke(cli, ["--root", str(ctx.root), *args])
        assert result.exit_code != 0, args
        assert hint in result.output, (args, result.output)
        assert not any(word in result.output for word in PYTHON_WORDS), result.output


def test_a_fix_on_the_whole_root_names_no_folder() -> None:
    assert Fix("list", "").render("cli") == "list what is there with `contextfs ls`"
    assert Fix("list", "").render("python") == "list what is there with ctx.list()"
    assert Fix("list", "memory").render("cli") == "list what is there with `contextfs ls memory`"


def test_a_missing_root_names_init_in_the_cli(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--root", str(tmp_path / "nowhere"), "ls"])
    assert result.exit_code != 0 and "contextfs init" in result.output


def test_tools_name_tools(ctx: ContextManager) -> None:
    tools = {t.name: t for t in make_tools(ctx)}
    ctx.write("a.md", "a")
    calls = [
        ("edit_context", {"path": "missing.md", "old": "x", "new": "y"}, "write_context"),
        ("context_diff", {"path": "a.md", "rev": "deadbeef"}, "context_history"),
    ]
    for name, args, hint in calls:
        out = tools[name].invoke({"id": "1", "name": name, "type": "tool_call", "args": args})
        assert out.status == "error", out
        assert hint in out.content, out.content
        assert not any(word in out.content for word in PYTHON_WORDS), out.content


def test_the_memory_tool_names_its_commands(ctx: ContextManager) -> None:
    tool = MemoryToolAdapter(ctx)
    out = tool.run(
        {"command": "str_replace", "path": "/memories/missing.md", "old_str": "x", "new_str": "y"}
    )
    assert out.startswith("Error") and not any(word in out for word in PYTHON_WORDS), out


def test_a_fix_is_said_where_the_error_was_raised() -> None:
    with speaking("cli"):
        error = NotFoundError("a.md does not exist", path="a.md", fix=Fix("list", "notes"))
    assert str(error).endswith(
        "`contextfs ls notes`"
    )  # shown later, outside the block: still the CLI's words
    with pytest.raises(ValueError), speaking("klingon"):
        pass
    assert isinstance(error, ContextFSError) and error.path == "a.md"
