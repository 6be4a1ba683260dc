"""Fixtures shared by the gate's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def detector_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the rule set's detectors are run on, in order (they still run)."""
    from contextfs.gate import secrets_detectors

    calls: list[str] = []
    real = secrets_detectors.find

    def counting(text: str, path: str | None, *, inline_allowlist: bool) -> list[object]:
        calls.append(text)
        return real(text, path, inline_allowlist=inline_allowlist)

    monkeypatch.setattr(secrets_detectors, "find", counting)
    return calls
