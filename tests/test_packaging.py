"""Packaging and layering: the wheel's layout, and who may import what."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

LAYERS = {"scopes": 1, "evolve": 2, "integrations": 3}
#: Heavy libraries and the one module (pattern) allowed to import each.
ADAPTERS = {
    "git": ("contextfs/versioning/",),
    "gitdb": ("contextfs/versioning/",),
    "whoosh": ("contextfs/search",),
    "watchdog": ("contextfs/watcher.py",),
    "detect_secrets": ("contextfs/secrets_detectors.py", "contextfs/secrets_syntax.py"),
}
#: Core modules that compose every layer.
COMPOSERS = ("contextfs/cli.py", "contextfs/demo.py")


def _package_of(rel: str) -> str:
    """The import package a source file lives in, e.g. 'scopes/x.py' -> 'contextfs.scopes'."""
    top, _, _ = rel.partition("/")
    return "contextfs" if top == "contextfs" else f"contextfs.{top}"


def _imports(path: Path, rel: str) -> list[tuple[str, bool]]:
    """(absolute module name, at module top level?) for every import in a file."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    top_level = {id(node) for node in tree.body}
    for node in tree.body:  # imports under `if TYPE_CHECKING:` / try at top level count as top level
        if isinstance(node, (ast.If, ast.Try)):
            top_level.update(id(n) for n in ast.walk(node))
    package = _package_of(rel)
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((name, id(node) in top_level))
            if node.module is None or node.level:
                # `from . import scopes` names a submodule in the alias.
                found += [(f"{name}.{alias.name}", id(node) in top_level) for alias in node.names]
    return found


def _sources() -> list[tuple[str, Path]]:
    out = []
    for folder in ("contextfs", *LAYERS):
        for path in sorted((REPO / folder).rglob("*.py")):
            out.append((path.relative_to(REPO).as_posix(), path))
    return out


def test_heavy_libraries_stay_in_their_adapter() -> None:
    bad = []
    for rel, path in _sources():
        for name, _ in _imports(path, rel):
            lib = name.split(".")[0]
            allowed = ADAPTERS.get(lib)
            if allowed is not None and not rel.startswith(allowed):
                bad.append(f"{rel} imports {name}")
    assert bad == [], "\n".join(bad)


def test_dependencies_point_one_way() -> None:
    bad = []
    for rel, path in _sources():
        top = rel.split("/")[0]
        mine = LAYERS.get(top, 0)
        for name, at_top in _imports(path, rel):
            parts = name.split(".")
            if parts[0] != "contextfs" or len(parts) < 2 or parts[1] not in LAYERS:
                continue
            theirs = LAYERS[parts[1]]
            if theirs <= mine:
                continue
            if top == "contextfs" and (rel in COMPOSERS or (rel == "contextfs/__init__.py" and not at_top)):
                continue
            bad.append(f"{rel} imports {name}")
    assert bad == [], "\n".join(bad)


def test_scanner_sees_relative_and_lazy_imports(tmp_path: Path) -> None:
    """Guard the guard: the scanner resolves relative imports and sees imports in functions."""
    sample = tmp_path / "x.py"
    sample.write_text("from ..evolve import agent\nfrom . import rules\ndef f():\n    import git\n")
    names = dict(_imports(sample, "scopes/x.py"))
    assert names["contextfs.evolve"] is True and "contextfs.scopes.rules" in names
    assert names["git"] is False


@pytest.mark.slow
def test_wheel_maps_sibling_folders_into_the_namespace(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "LICENSE", "README.md"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, src / name)
    for folder in ("contextfs", *LAYERS, "sample-context"):
        if (REPO / folder).exists():
            shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob("contextfs_git-*.whl"))
    assert len(wheels) == 1, list(out.iterdir())
    names = zipfile.ZipFile(wheels[0]).namelist()
    tops = {n.split("/")[0] for n in names}
    for layer in LAYERS:
        assert f"contextfs/{layer}/__init__.py" in names
        assert layer not in tops, f"bare top-level package {layer!r} in the wheel"
    assert "contextfs/__init__.py" in names and "contextfs/py.typed" in names
    assert tops <= {"contextfs", next(t for t in tops if t.endswith(".dist-info"))}
    metadata = zipfile.ZipFile(wheels[0]).read(
        next(n for n in names if n.endswith(".dist-info/METADATA"))
    ).decode()
    assert "Name: contextfs-git" in metadata
    assert "Requires-Python: >=3.10" in metadata
