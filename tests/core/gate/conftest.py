"""Fixtures shared by the gate's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _cold_clean_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test scans with an empty cache of clean texts: a verdict another test left (or a
    process this one was forked from, as mutation testing does) would answer for the code
    under test without running it."""
    from contextfs.gate import secrets

    monkeypatch.setattr(secrets, "_CLEAN", {})


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
