"""Shared fixtures (and only fixtures): an isolated git identity for every test, a manager,
a sample tree. Helpers tests import live in ``helpers.py``.

CI machines have no global git identity and no config; the autouse fixture recreates
that here so a test can never pass only because the developer's ``~/.gitconfig`` exists.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import SAMPLE, search_available

from contextfs import ContextManager

_IDENTITY_VARS = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "EMAIL",
)

# Under mutmut, the order a mutant's tests run in (tests/mutant_order.py).
pytest_plugins = ["mutant_order", "mutant_hangs"]


@pytest.fixture(scope="session")
def rule_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One compiled-rule cache of the secret scanner's vendor rule set: the cache normally
    lives in the user's cache folder, which every test replaces, and compiling the rules
    costs about 5 s in the first process that scans (0.3 s to load them after).

    It lives beside this session's temporary folder, not in it, so the workers of one
    ``pytest -n`` run share it, and so do the back-to-back sessions of a mutation run (one
    per mutant, each of which would otherwise compile the rules again). Its entries are
    named by the rule set they hold, and a bad one is compiled again, so sharing is safe.
    """
    cache = tmp_path_factory.getbasetemp().parent / "kingfisher-rule-cache"
    cache.mkdir(mode=0o700, exist_ok=True)
    return cache


@pytest.fixture(autouse=True)
def isolated_git(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, rule_cache: Path
) -> Path:
    """No global/system git config and no identity in the environment, as on CI."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("KF_RULE_CACHE_DIR", str(rule_cache))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in _IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def ctx(tmp_path: Path) -> ContextManager:
    """A fresh manager on an empty root (with the search index once it exists)."""
    root = tmp_path / "ctx"
    manager = ContextManager(root, index=search_available())
    yield manager
    manager.close()


@pytest.fixture(scope="module")
def sample_ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ContextManager]:
    """One copy of sample-context/ shared by a module's read-only tests (building it costs ~1 s)."""
    root = tmp_path_factory.mktemp("sample") / "ctx"
    shutil.copytree(SAMPLE, root)
    manager = ContextManager(root, actor="human")
    yield manager
    manager.close()


@pytest.fixture
def sample_root(tmp_path: Path) -> Path:
    """A private copy of sample-context/ (not yet a repository)."""
    dest = tmp_path / "sample"
    shutil.copytree(SAMPLE, dest)
    return dest
