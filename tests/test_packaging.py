"""Packaging and layering: the wheel's layout, and who may import what."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
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
    "kingfisher_sdk": ("contextfs/secrets_rules.py",),
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the source tree (no build isolation: no downloads)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "LICENSE", "README.md"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, src / name)
    for folder in ("contextfs", *LAYERS, "sample-context"):
        if (REPO / folder).exists():
            shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (tmp / "build.log").write_text(proc.stdout + proc.stderr, "utf-8")
    wheels = list(out.glob("contextfs_git-*.whl"))
    assert len(wheels) == 1, list(out.iterdir())
    return wheels[0]


@pytest.mark.slow
def test_wheel_maps_sibling_folders_into_the_namespace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    for layer in LAYERS:
        assert f"contextfs/{layer}/__init__.py" in names
        assert layer not in tops, f"bare top-level package {layer!r} in the wheel"
    assert "contextfs/__init__.py" in names and "contextfs/py.typed" in names
    assert tops <= {"contextfs", next(t for t in tops if t.endswith(".dist-info"))}
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith(".dist-info/METADATA"))
    ).decode()
    assert "Name: contextfs-git" in metadata
    assert "Requires-Python: >=3.10" in metadata


@pytest.mark.slow
def test_the_build_prints_no_warning_wall(wheel: Path) -> None:
    """The sample context is package data; setuptools must not take its folders for packages
    ("Package would be ignored", one block of 30 lines per folder)."""
    log = (wheel.parent.parent / "build.log").read_text("utf-8")
    for noise in ("would be ignored", "is absent from the `packages` configuration", "Warning:", "!!"):
        assert noise not in log, log


@pytest.mark.slow
def test_wheel_ships_the_whole_sample_context(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    sample = {p.relative_to(REPO / "sample-context").as_posix() for p in (REPO / "sample-context").rglob("*")
              if p.is_file()}
    assert sample and {f"contextfs/sample_context/{rel}" for rel in sample} <= names


@pytest.mark.slow
def test_demo_runs_from_the_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    """pip-install the wheel into a fresh venv outside the source tree, then `contextfs demo`.

    The venv has no pip and no network: its only contextfs is the wheel, installed with
    --no-deps, while the third-party dependencies come from this interpreter's
    site-packages through a .pth line (a path added that way does not run the editable
    install's own .pth hook, so the checkout stays invisible). `pip check` then verifies
    that the wheel's declared requirements are all met there.
    """
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "contextfs-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CONTEXTFS_ROOT", "VIRTUAL_ENV")}

    def run(*args: str, cwd: Path = tmp_path) -> str:
        proc = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    run(str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel))
    run(str(python), "-m", "pip", "check")
    where = run(str(python), "-c", "import contextfs.demo as d; print(d.__file__); print(d.find_sample_context())")
    assert all(line.startswith(purelib) for line in where.split()), where  # not the checkout
    target = tmp_path / "demo-root"
    demo = subprocess.run([str(venv / "bin" / "contextfs"), "demo", "--dir", str(target)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    out = demo.stdout
    assert demo.returncode == 0 and demo.stderr == "", demo.stderr  # the walkthrough alone, no log lines in it
    assert f"the context root is {target.resolve()}" in out
    assert "git log:" in out and (target / ".git").is_dir() and (target / "project" / "README.md").is_file()
    # A folder named like the package next to the script (a clone of contextfs, a root
    # called contextfs/) does not hide an installed package.
    (tmp_path / "contextfs").mkdir()
    run(str(python), "-c", "from contextfs import ContextManager")
