"""What the docs say about the code is checked against the code, so it cannot drift: where
derived state lives, and the modules the layout tables name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LAYERS = ("contextfs", "scopes", "evolve", "integrations")
#: What may sit under .contextfs/ in a root: the committed settings. Everything derived
#: (index, caches, locks, the active topic's vocabulary) is in the state folder under .git.
COMMITTED = {"config.toml"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_derived_state_is_never_placed_under_dot_contextfs(page: Path) -> None:
    named = set(re.findall(r"\.contextfs/([\w.-]+)", page.read_text("utf-8")))
    assert named <= COMMITTED, f"{page.name} places {sorted(named - COMMITTED)} under .contextfs/; derived state " \
                               "lives in the state folder under the git directory (ctx.state)"


def _modules() -> set[str]:
    names = {"tests", "docs", *LAYERS}
    for layer in LAYERS:
        for path in (REPO / layer).rglob("*"):
            if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
                names.add(path.stem if path.suffix else path.name)
    return names


@pytest.mark.parametrize("page", ["docs/development.md", "docs/architecture.md"])
def test_the_layout_tables_name_modules_that_exist(page: str) -> None:
    modules = _modules()
    missing = []
    for line in (REPO / page).read_text("utf-8").splitlines():
        if not line.startswith("|"):
            continue
        for token in re.findall(r"`([a-z_][a-z0-9_]*\*?)/?`", line):
            known = any(m.startswith(token[:-1]) for m in modules) if token.endswith("*") else token in modules
            # syncfs(2) is the system call; a dunder (`__all__`) is a name in a module, not one
            if not known and token != "syncfs" and not token.startswith("__"):
                missing.append(token)
    assert missing == [], f"{page} names modules that do not exist: {missing}"
