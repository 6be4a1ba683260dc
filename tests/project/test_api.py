"""The public façade: a sorted, complete ``__all__`` in every package."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

PACKAGES = ["contextfs", "contextfs.scopes", "contextfs.evolve", "contextfs.integrations"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=str), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported)
    for attr in exported:
        assert getattr(module, attr) is not None, f"{name}.{attr} is missing"


def test_top_level_exports_the_whole_exception_tree() -> None:
    import contextfs
    from contextfs import errors

    assert set(errors.__all__) <= set(contextfs.__all__)
    for attr in errors.__all__:
        assert issubclass(getattr(contextfs, attr), contextfs.ContextFSError)


def test_main_entry_points_are_importable_from_the_top() -> None:
    from contextfs import ContextManager, ScopedContext  # noqa: F401
    from contextfs.evolve import EvolvingAgent  # noqa: F401
    from contextfs.scopes import Memory, Topics  # noqa: F401
    from contextfs.scopes import ScopedContext as S2

    assert S2 is ScopedContext


#: Packages and modules whose names are loaded on first use (``contextfs.lazy.exports``).
LAZY = [
    "contextfs",
    "contextfs.manager",
    "contextfs.versioning",
    "contextfs.scopes",
    "contextfs.scopes.topics",
]

#: Run in a fresh process, so that no earlier import has loaded any of the names yet.
_LAZY_PROBE = """
import importlib, json, sys
module = importlib.import_module(sys.argv[1])
at_import = set(vars(module))
lazy = sorted(set(dir(module)) - at_import)
print(json.dumps({"lazy": lazy, "all": list(module.__all__), "unknown": hasattr(module, "no_such_name"),
                  "resolved": [n for n in module.__all__ if getattr(module, n, None) is not None]}))
"""


@pytest.mark.parametrize("name", LAZY)
def test_names_loaded_on_first_use_are_the_exported_ones_and_all_resolve(name: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _LAZY_PROBE, name], capture_output=True, text=True, check=True
    )
    found = json.loads(proc.stdout)
    assert found["lazy"], f"{name} loads no name on first use"
    assert set(found["lazy"]) <= set(found["all"]), (
        "a name loaded on first use is missing from __all__"
    )
    assert found["resolved"] == found["all"], (
        "a name in __all__ does not load from the module its table names"
    )
    assert found["unknown"] is False


#: ``ContextManager`` holds the user API docs/store.md documents, and nothing else: the
#: plumbing the concern modules and the layers above use is one object, ``ctx.parts``.
MAX_FACADE_NAMES = 30


def test_the_facade_is_the_documented_api_and_small(tmp_path: Path) -> None:
    from contextfs import ContextManager

    with ContextManager(tmp_path / "root", actor="human", index=False) as ctx:
        names = sorted(n for n in dir(ctx) if not n.startswith("_"))
    assert len(names) <= MAX_FACADE_NAMES, names
    page = (REPO / "docs" / "store.md").read_text("utf-8")
    assert [n for n in names if f"`{n}" not in page and f"ctx.{n}" not in page] == []


def test_no_core_concern_module_imports_the_facade() -> None:
    """The concern modules take the root's parts; only the edges (CLI, demo, watcher, the
    top-level package) and the façade itself name ``contextfs.manager``."""
    edges = {
        "contextfs/__init__.py",
        "contextfs/manager.py",
        "contextfs/demo.py",
        "contextfs/watcher.py",
    }
    found = []
    for path in sorted((REPO / "contextfs").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel in edges or rel.startswith("contextfs/cli/"):
            continue
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("manager"):
                found.append(f"{rel}:{node.lineno}")
    assert found == []
