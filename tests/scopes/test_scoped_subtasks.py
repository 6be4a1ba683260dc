"""A subtask view is never assembled without the subtask it was asked for, and every view says
what it left out.

Python (``subtask_id=``), the CLI (``--subtask``), the tools (``subtask``) and the MCP resource
all check the id against the tree; a file that cannot be read is named in the text output, not
only in a log line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from langchain_core.tools import BaseTool

from contextfs import ContextManager
from contextfs.cli import cli
from contextfs.errors import InvalidArgumentError, NotFoundError
from contextfs.integrations.langchain_tools import make_tools
from contextfs.scopes import ScopedContext
from contextfs.scopes.views import DroppedItem, left_out_note

BROKEN = "---\ntags: [a\n---\nThe overview.\n"


@pytest.fixture
def ctx(tmp_path: Path) -> ContextManager:
    mgr = ContextManager(tmp_path / "ctx", actor="agent:test")
    mgr.write("project/README.md", "# Tidewater\n\nA billing service.\n")
    mgr.write("task/current.md", "Ship the invoice export.\n")
    mgr.write("task/subtasks/csv-export.md", "Export invoices as CSV.\n")
    mgr.write("task/subtasks/pdf-export.md", "Export invoices as PDF.\n")
    yield mgr
    mgr.close()


def _cli(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_missing_subtask_is_an_error_that_names_the_ones_there_are(ctx: ContextManager) -> None:
    scoped = ScopedContext(ctx)
    assert scoped.subtasks() == ["csv-export", "pdf-export"]
    for call in (
        lambda: scoped.assemble("subtask", "xml-export", budget=500),
        lambda: scoped.get_context("subtask", subtask_id="xml-export"),
        lambda: scoped.candidates("subtask", "xml-export"),
    ):
        with pytest.raises(NotFoundError) as err:
            call()
        assert "task/subtasks/xml-export.md" in str(err.value) and "csv-export, pdf-export" in str(
            err.value
        )
        assert "ctx.write('task/subtasks/xml-export.md'" in str(err.value)
    with pytest.raises(InvalidArgumentError, match="needs a subtask id .*csv-export"):
        scoped.assemble("subtask", budget=500)
    with pytest.raises(InvalidArgumentError, match="for the task scope.*scope='subtask'"):
        scoped.assemble("task", "csv-export", budget=500)
    assert "Export invoices as CSV." in scoped.get_context("subtask", subtask_id="csv-export")
    # leaving the scope out asks for the subtask scope when a subtask is named, else the task scope
    assert scoped.assemble(subtask_id="csv-export", budget=500).meta["scope"] == "subtask"
    assert scoped.assemble(budget=500).meta["scope"] == "task"
    assert "## Subtask: csv-export" in scoped.get_context(subtask_id="csv-export")


def test_a_subtask_is_looked_for_at_the_commit_a_view_is_for(ctx: ContextManager) -> None:
    rev = ctx.history(limit=1)[0].commit
    ctx.delete("task/subtasks/pdf-export.md")
    scoped = ScopedContext(ctx)
    assert "PDF" in scoped.assemble("subtask", "pdf-export", budget=500, as_of=rev).text
    assert scoped.subtasks(as_of=rev) == ["csv-export", "pdf-export"]
    with pytest.raises(NotFoundError, match="the subtasks are: csv-export\\)"):
        scoped.assemble("subtask", "pdf-export", budget=500)


def test_subtask_rules_of_any_shape_are_checked(ctx: ContextManager) -> None:
    ctx.write("work/csv-export/notes.md", "Quote every field.\n")
    rules = {"subtask": [{"path": "work/{subtask}/*.md", "priority": 5}]}
    scoped = ScopedContext(ctx, rules=rules)
    assert scoped.subtasks() == ["csv-export"]
    assert "Quote every field." in scoped.assemble("subtask", "csv-export", budget=500).text
    with pytest.raises(
        NotFoundError, match="work/pdf-export/\\*.md .*the subtasks are: csv-export"
    ):
        scoped.assemble("subtask", "pdf-export", budget=500)
    # rules that name no per-subtask file leave nothing to look for
    loose = ScopedContext(ctx, rules={"subtask": ["task/current.md"]})
    assert "invoice export" in loose.assemble("subtask", "anything", budget=500).text


def test_the_cli_checks_the_subtask_and_a_subtask_alone_asks_for_its_scope(
    ctx: ContextManager,
) -> None:
    code, out, _ = _cli(ctx.root, "context", "--subtask", "csv-export")
    assert code == 0 and "## Subtask: csv-export" in out and "Export invoices as CSV." in out
    code, _, err = _cli(ctx.root, "context", "--subtask", "xml-export", "--budget", "400")
    assert code == 1 and err.startswith(
        "error: subtask 'xml-export' has no file task/subtasks/xml-export.md"
    )
    assert "`contextfs write task/subtasks/xml-export.md`" in err
    code, _, err = _cli(ctx.root, "context", "--scope", "subtask")
    assert code == 1 and "needs a subtask id" in err and "pass --subtask" in err
    code, _, err = _cli(ctx.root, "context", "--scope", "project", "--subtask", "csv-export")
    assert code == 1 and "add --scope subtask" in err


def _tool(ctx: ContextManager) -> BaseTool:
    return next(t for t in make_tools(ctx) if t.name == "get_scoped_context")


def test_the_tool_checks_the_subtask_and_says_the_fix_in_tool_terms(ctx: ContextManager) -> None:
    tool = _tool(ctx)
    shown = tool.invoke(
        {
            "name": tool.name,
            "args": {"subtask": "pdf-export", "budget": 500},
            "id": "1",
            "type": "tool_call",
        }
    )
    assert shown.status != "error" and "Export invoices as PDF." in shown.content
    refused = tool.invoke(
        {"name": tool.name, "args": {"subtask": "xml-export"}, "id": "2", "type": "tool_call"}
    )
    assert (
        refused.status == "error"
        and "write_context" in refused.content
        and "ctx.write" not in refused.content
    )
    refused = tool.invoke(
        {
            "name": tool.name,
            "args": {"scope": "task", "subtask": "csv-export"},
            "id": "3",
            "type": "tool_call",
        }
    )
    assert refused.status == "error" and "set scope to 'subtask'" in refused.content


def test_a_file_left_out_is_named_in_the_text_output(ctx: ContextManager) -> None:
    (ctx.root / "project" / "README.md").write_text(BROKEN)  # a person's editor broke the YAML
    scoped = ScopedContext(ctx)
    plain = scoped.get_context("project")
    assert plain.splitlines()[-1].startswith("<!-- left out: project/README.md (unreadable: ")
    assert "invalid YAML frontmatter" in plain
    code, out, _ = _cli(ctx.root, "context", "--scope", "task")
    assert (
        code == 0
        and "Ship the invoice export." in out
        and "<!-- left out: project/README.md" in out
    )
    code, out, _ = _cli(ctx.root, "context", "--scope", "task", "--budget", "300")
    assert code == 0 and "<!-- left out: project/README.md (unreadable:" in out
    code, out, _ = _cli(ctx.root, "context", "--scope", "task", "--budget", "300", "--json")
    assert [d["path"] for d in json.loads(out)["dropped"]] == ["project/README.md"]


def test_a_left_out_note_cannot_be_closed_early() -> None:
    note = left_out_note(DroppedItem("notes/a-->b.md", "unreadable: --> <script>"))
    assert note.startswith("<!-- ") and note.endswith(" -->") and note.count("-->") == 1
