"""Shared fixtures: an isolated git identity for every test, a manager, a sample tree.

CI machines have no global git identity and no config; the autouse fixture recreates
that here so a test can never pass only because the developer's ``~/.gitconfig`` exists.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextfs import ContextManager

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample-context"

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


@pytest.fixture(scope="session")
def rule_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One compiled-rule cache of the secret scanner's vendor rule set for the session: the
    cache normally lives in the user's cache folder, which every test replaces, and
    compiling the rules again costs seconds in every process that scans."""
    return tmp_path_factory.mktemp("kingfisher-rule-cache")


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, rule_cache: Path) -> Path:
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


def search_available() -> bool:
    return importlib.util.find_spec("contextfs.search") is not None


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


def git(root: Path, *args: str, check: bool = True) -> str:
    """Run git in ``root`` the way a person would (hooks and all), return stdout."""
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def commit_count(root: Path) -> int:
    out = git(root, "rev-list", "--count", "HEAD", check=False).strip()
    return int(out) if out.isdigit() else 0


def assert_clean(root: Path) -> None:
    """What a person sees after a call returns: nothing staged, nothing modified, fsck clean."""
    status = git(root, "status", "--porcelain", "--untracked-files=all")
    assert status == "", f"git status is not clean:\n{status}"
    diff = git(root, "diff", "HEAD", "--stat")
    assert diff == "", diff
    fsck = subprocess.run(
        ["git", "-C", str(root), "fsck", "--strict", "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert "error" not in fsck.stderr.lower(), fsck.stderr


_MODULES_PROBE = """
import json, sys
from contextfs.cli import main
try:
    main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
with open(sys.argv[1], "w") as fh:
    json.dump({"code": code, "modules": sorted(sys.modules)}, fh)
"""


def modules_after(tmp_path: Path, *args: str) -> set[str]:
    """The modules a fresh ``contextfs ARGS`` process had imported when it finished (it must succeed)."""
    out = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", _MODULES_PROBE, str(out), *args], capture_output=True, text=True,
                          check=False)
    data = json.loads(out.read_text())
    assert data["code"] in (0, None), proc.stderr
    return set(data["modules"])


def application_repository(tmp_path: Path) -> Path:
    """A developer's own git repository (one committed ``main.py``) that a context root may sit in."""
    app = tmp_path / "app"
    app.mkdir()
    git(app, "init", "-q")
    (app / "main.py").write_text("print('app')\n", "utf-8")
    git(app, "add", "main.py")
    git(app, "-c", "user.name=dev", "-c", "user.email=dev@x.invalid", "commit", "-qm", "app")
    return app
