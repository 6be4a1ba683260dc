"""Fixtures the file layer's tests share."""

from __future__ import annotations

import os

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


Flushed = list[tuple[int, int]]


@pytest.fixture
def flushed(monkeypatch: pytest.MonkeyPatch) -> Flushed:
    """(device, inode) of each file or folder os.fsync reaches, in order (the real fsync runs)."""
    seen: Flushed = []
    real = os.fsync

    def spy(fd: int) -> None:
        st = os.fstat(fd)
        seen.append((st.st_dev, st.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return seen
