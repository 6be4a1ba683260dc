"""The public façade: a sorted, complete ``__all__`` in every package."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

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
LAZY = ["contextfs", "contextfs.manager", "contextfs.versioning", "contextfs.scopes", "contextfs.scopes.topics"]

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
    proc = subprocess.run([sys.executable, "-c", _LAZY_PROBE, name], capture_output=True, text=True, check=True)
    found = json.loads(proc.stdout)
    assert found["lazy"], f"{name} loads no name on first use"
    assert set(found["lazy"]) <= set(found["all"]), "a name loaded on first use is missing from __all__"
    assert found["resolved"] == found["all"], "a name in __all__ does not load from the module its table names"
    assert found["unknown"] is False
