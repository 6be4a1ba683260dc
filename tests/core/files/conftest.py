"""Fixtures the file layer's tests share."""

from __future__ import annotations

import pytest

from contextfs.files import confined, opening


@pytest.fixture(params=[True, False], ids=["dir_fd", "paths"])
def fd_ops(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The layer both ways: with ``dir_fd`` (Linux), and on joined paths as where ``open``
    takes no folder descriptor (Windows)."""
    value: bool = request.param
    monkeypatch.setattr(opening, "FD_OPS", value)
    monkeypatch.setattr(confined, "FD_OPS", value)
    return value
