"""Fixtures the commit cycle's tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from contextfs import ContextManager, faults


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ContextManager]:
    """A root an agent works in as ``agent:planner`` (no search index), holding its first plan
    at ``notes/plan.md``. A test file may define its own ``store`` instead."""
    manager = ContextManager(tmp_path / "ctx", actor="agent:planner", index=False)
    manager.write("notes/plan.md", "- the agent's first plan\n")
    yield manager
    manager.close()
    faults.disarm()
