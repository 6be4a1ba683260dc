"""Replacing a passage that must occur once: a missing passage and a repeated one each get
their own fix, the same for a file's edit, a memory block and in every interface."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from contextfs import ConflictError, ContextManager
from contextfs.cli import cli
from contextfs.integrations.langchain_tools import make_tools
from contextfs.scopes.memory import Memory


@pytest.fixture
def mgr(tmp_path: Path):
    manager = ContextManager(tmp_path / "ctx", index=False)
    yield manager
    manager.close()


def test_a_missing_passage_says_to_copy_it_and_a_repeated_one_names_its_lines(mgr: ContextManager) -> None:
    mgr.write("memory/facts.md", "- Database: PostgreSQL 16\n- Cache: Redis\n- Queue: Redis streams\n")
    with pytest.raises(ConflictError) as missing:
        mgr.edit("memory/facts.md", "Postgres 16", "PostgreSQL 17")
    assert str(missing.value) == ("the text to replace does not occur in memory/facts.md; copy it exactly as "
                                  "the file has it now; copy it from ctx.read('memory/facts.md')")
    assert "longer" not in str(missing.value)
    with pytest.raises(ConflictError, match=r"other spacing or case"):
        mgr.edit("memory/facts.md", "database:  postgresql 16", "x")
    with pytest.raises(ConflictError) as repeated:
        mgr.edit("memory/facts.md", "Redis", "Valkey")
    assert "occurs 2 times in memory/facts.md (lines 2, 3)" in str(repeated.value)
    assert str(repeated.value).endswith("quote a longer passage, with the words around it, that occurs once")


def test_memory_blocks_and_the_cli_say_the_same(mgr: ContextManager) -> None:
    Memory(mgr).core_memory_append("persona", "Lives in Pune")
    with pytest.raises(ConflictError, match=r"does not occur in core block 'persona'; copy it exactly"):
        Memory(mgr).core_memory_replace("persona", "Mumbai", "Hyderabad")
    mgr.close()
    result = CliRunner().invoke(cli, ["--root", str(mgr.root), "memory", "core", "persona", "--replace", "Mumbai", "X"])
    assert result.exit_code == 1
    assert result.stderr.strip().endswith("copy it from `contextfs read memory/core/persona.md`")
    result = CliRunner().invoke(cli, ["--root", str(mgr.root), "edit", "memory/core/persona.md", "Mumbai", "X"])
    assert "copy it from `contextfs read memory/core/persona.md`" in result.stderr


def test_the_agent_tool_is_told_which_tool_to_read_with(mgr: ContextManager) -> None:
    mgr.write("memory/facts.md", "- Database: PostgreSQL 16\n")
    edit = {t.name: t for t in make_tools(mgr)}["edit_context"]
    out = edit.invoke({"type": "tool_call", "id": "1", "name": "edit_context",
                       "args": {"path": "memory/facts.md", "old": "MySQL", "new": "x"}})
    assert out.status == "error" and out.content.endswith("copy it from read_context")
