"""The public façade: a sorted, complete ``__all__`` in every package."""

from __future__ import annotations

import importlib

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
