"""Helpers the tests share: where the repository and the sample tree are, git as a person
runs it, the checks every write test makes, and probes of a fresh ``contextfs`` process.

Fixtures live in ``conftest.py``; everything a test imports lives here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

#: The tests folder (support scripts the tests start as processes live here) and the repository.
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SAMPLE = REPO / "sample-context"


def search_available() -> bool:
    return importlib.util.find_spec("contextfs.search") is not None


def git(root: Path, *args: str, check: bool = True) -> str:
    """Run git in ``root`` the way a person would (hooks and all), return stdout."""
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def commit_as_person(root: Path, message: str) -> str:
    """``git commit`` of what is staged in ``root``, as a person (``dev``) using plain git."""
    return git(
        root, "-c", "user.name=dev", "-c", "user.email=dev@x.invalid", "commit", "-qm", message
    )


def start_watch(root: Path, debounce: float) -> subprocess.Popen[str]:
    """``contextfs watch`` on ``root`` in a process of its own, output piped, that stops on
    Ctrl-C (``send_signal(SIGINT)``) as it would in a terminal: a shell that starts the suite
    as a background job starts it, and so every child, with SIGINT ignored."""
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from contextfs.cli.watch import watch; "
        "watch.main(['--debounce', sys.argv[2]], obj={'root': sys.argv[1]}, standalone_mode=True)"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, str(root), str(debounce)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def authors_and_bytes(root: Path, rel: str) -> list[tuple[str, str | None]]:
    """(author, the file's text or None) at every commit of ``root``, oldest first."""
    out = []
    for sha in git(root, "log", "--reverse", "--format=%H").split():
        author = git(root, "log", "-1", "--format=%an", sha).strip()
        listed = git(root, "ls-tree", sha, rel).strip()
        out.append((author, git(root, "show", f"{sha}:{rel}") if listed else None))
    return out


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
    proc = subprocess.run(
        [sys.executable, "-c", _MODULES_PROBE, str(out), *args],
        capture_output=True,
        text=True,
        check=False,
    )
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
    commit_as_person(app, "app")
    return app
