"""A core memory block has one name everywhere: ``label`` in the Python calls, the agent
tools' arguments, the CLI and the block itself, so a call written from one works in another."""

from __future__ import annotations

import inspect
from pathlib import Path

from contextfs import ContextManager
from contextfs.integrations import all_specs, make_tools
from contextfs.scopes.memory import Memory


def test_the_tools_take_the_python_calls_own_parameter_names() -> None:
    specs = {s.name: s for s in all_specs()}
    for name in ("core_memory_append", "core_memory_replace"):
        python = list(inspect.signature(getattr(Memory, name)).parameters)[1:]
        assert list(specs[name].args.model_fields) == python, name
    assert list(inspect.signature(Memory.core).parameters)[1:] == ["label"]
    assert list(inspect.signature(Memory.core_memory_rethink).parameters)[1:] == ["label", "text"]


def test_a_call_written_for_python_works_as_a_tool_call_and_back(tmp_path: Path) -> None:
    with ContextManager(tmp_path / "ctx", index=False) as ctx:
        memory = Memory(ctx)
        block = memory.core_memory_append(label="persona", text="Speaks German")
        assert block.label == "persona"
        tools = {t.name: t for t in make_tools(ctx)}
        args = {"label": "persona", "old": "German", "new": "German and Turkish"}
        out = tools["core_memory_replace"].invoke({"type": "tool_call", "id": "1", "name": "core_memory_replace",
                                                   "args": args})
        assert out.status == "success"
        assert memory.core(label="persona").text.strip() == "Speaks German and Turkish"
        wrong = tools["core_memory_append"].invoke({"type": "tool_call", "id": "2", "name": "core_memory_append",
                                                    "args": {"section": "persona", "text": "x"}})
        assert wrong.status == "error" and "label: Field required" in wrong.content
