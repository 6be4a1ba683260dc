"""Each integration imports only the packages it uses: the tool table and the MCP server
never load the Anthropic SDK, and the package itself loads no framework at all (the SDK
and LangChain's tracers cost seconds, paid by every MCP server start and every CLI call
that reaches an integration)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def _top_level_after(module: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, module], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout))


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        (
            "contextfs.integrations",
            {"anthropic", "langchain_core", "langchain", "langgraph", "mcp"},
        ),
        ("contextfs.integrations.mcp_server", {"anthropic", "langgraph"}),
        ("contextfs.integrations.langgraph.store", {"anthropic", "mcp"}),
    ],
)
def test_an_integration_imports_only_what_it_uses(module: str, absent: set[str]) -> None:
    assert not _top_level_after(module) & absent


def test_the_public_names_still_resolve() -> None:
    import contextfs.integrations as integrations

    for name in integrations.__all__:
        assert getattr(integrations, name) is not None, name
    assert set(integrations.__all__) <= set(dir(integrations))
