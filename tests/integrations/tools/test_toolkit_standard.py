"""langchain-tests' standard suites for every tool of the toolkit and for the retriever.

Each tool gets its own ``ToolsUnitTests`` class (the tools of one shared copy of the
example root: those suites never call a tool) and ``ToolsIntegrationTests`` class (a
fresh copy for every test of a tool that writes, so every call really writes files and
commits; one shared copy for the tools that only read),
plus a check that its documented example succeeds: the standard suites only look at
types, and a tool that always answered ``Error:`` would pass them.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import RetrieversIntegrationTests, ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from toolkit_support import example_root

from contextfs import ContextManager
from contextfs.integrations import ContextRetriever, all_specs, make_tools

SPECS = {s.name: s for s in all_specs()}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "ctx"
    example_root(root).close()
    return root


class _Tool:
    spec_name = ""
    _tool: BaseTool

    @property
    def tool_constructor(self) -> BaseTool:
        return self._tool

    @property
    def tool_invoke_params_example(self) -> dict:
        return dict(SPECS[self.spec_name].example or {})


@pytest.fixture(scope="module")
def shared_tools(
    template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, BaseTool]]:
    """One root for every unit suite: they look at a tool's name, schema and signature and
    never call it, so a copy each is setup for nothing (checked: nothing is committed)."""
    root = tmp_path_factory.mktemp("shared") / "ctx"
    shutil.copytree(template, root, symlinks=True)
    ctx = ContextManager(root)
    head = ctx.parts.git.head()
    yield {
        t.name: t for t in make_tools(ctx, allow_delete=True, actor="agent:standard", session="std")
    }
    assert ctx.parts.git.head() == head, (
        "a unit suite changed the shared root: give it a root of its own"
    )
    ctx.close()


class _UnitTool(_Tool):
    @pytest.fixture(autouse=True)
    def _shared(self, shared_tools: dict[str, BaseTool]) -> None:
        self._tool = shared_tools[self.spec_name]


@pytest.fixture(scope="module")
def read_root(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ContextManager]:
    """One root for the integration suites of the tools that only read: their calls leave
    the root as it was (checked: nothing is committed), so a copy each buys nothing."""
    root = tmp_path_factory.mktemp("read") / "ctx"
    shutil.copytree(template, root, symlinks=True)
    ctx = ContextManager(root)
    head = ctx.parts.git.head()
    yield ctx
    assert ctx.parts.git.head() == head, "a reading tool committed: give it a root of its own"
    ctx.close()


class _CalledTool(_Tool):
    """The integration suites call the tool: a tool that writes gets its own copy of the
    root for every test, one that only reads shares one."""

    @pytest.fixture(autouse=True)
    def _root(self, template: Path, tmp_path: Path, request: pytest.FixtureRequest):
        if SPECS[self.spec_name].read_only:
            ctx = request.getfixturevalue("read_root")
            own = None
        else:
            root = tmp_path / "ctx"
            shutil.copytree(template, root, symlinks=True)
            ctx = own = ContextManager(root)
        tools = make_tools(ctx, allow_delete=True, actor="agent:standard", session="std")
        self._tool = next(t for t in tools if t.name == self.spec_name)
        yield
        if own is not None:
            own.close()

    def test_example_succeeds_and_says_something(self) -> None:
        call = ToolCall(
            name=self.spec_name, args=self.tool_invoke_params_example, id="ex-1", type="tool_call"
        )
        msg = self._tool.invoke(call)
        assert msg.status == "success", msg.content
        assert isinstance(msg.content, str) and len(msg.content) > 10
        assert not msg.content.startswith("Error")


for _name in SPECS:
    _title = "".join(part.capitalize() for part in _name.split("_"))
    globals()[f"TestUnit{_title}"] = type(
        f"TestUnit{_title}", (_UnitTool, ToolsUnitTests), {"spec_name": _name}
    )
    globals()[f"TestIntegration{_title}"] = type(
        f"TestIntegration{_title}", (_CalledTool, ToolsIntegrationTests), {"spec_name": _name}
    )


class TestRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _root(self, tmp_path: Path):
        self._ctx = ContextManager(tmp_path / "ctx")
        for i in range(5):
            self._ctx.write(
                f"project/notes/n{i}.md", f"# Note {i}\n\nPostgres row level security, part {i}.\n"
            )
        yield
        self._ctx.close()

    @property
    def retriever_constructor(self) -> type[ContextRetriever]:
        return ContextRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"ctx": self._ctx}

    @property
    def retriever_query_example(self) -> str:
        return "postgres security"
