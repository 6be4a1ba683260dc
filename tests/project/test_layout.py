"""The shape of the whole package: small modules, small classes, no reaching in, no cycles.

These checks read the source (no imports run), so they hold for every module, including
ones no other test happens to import. ``tests/project/test_packaging.py`` checks that layers
depend one way (core <- scopes <- evolve <- integrations) and that each heavy library
stays in its adapter.
"""

from __future__ import annotations

import ast
import re

import pytest
from helpers import REPO

FOLDERS = ("contextfs", "scopes", "evolve", "integrations")
MAX_LINES = 500
#: Modules lying flat in the core package; the rest live in folders by concern.
MAX_FLAT_CORE = 20
#: About 20 is the rule of thumb; Topics has 21 (size() sits with index() and render_index()).
MAX_PUBLIC_METHODS = 21
#: The store's public API is the one façade allowed more: its methods are the calls
#: docs/store.md documents, each a delegation to a concern module (its names are counted
#: in tests/project/test_api.py).
FACADES = {("contextfs/manager.py", "ContextManager")}
#: Derived state is defined in one module, so moving it is one line per path.
DERIVED_MODULE = "scopes/derived.py"
DERIVED_MARKERS = ("active-vocabulary",)
#: Where derived state must never be: the work tree, where a clone could bring it.
WORK_TREE_STATE = (".contextfs/cache", ".contextfs/active-vocabulary")


def _sources() -> list[tuple[str, ast.Module, list[str]]]:
    out = []
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            text = path.read_text("utf-8")
            out.append(
                (path.relative_to(REPO).as_posix(), ast.parse(text, str(path)), text.splitlines())
            )
    return out


SOURCES = _sources()


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
        ):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_the_layers_have_their_packages() -> None:
    names = {rel for rel, _, _ in SOURCES}
    for package in ("scopes/topics/__init__.py", "scopes/memory/__init__.py"):
        assert package in names
    assert not {"scopes/topics.py", "scopes/memory.py", "scopes/buffer.py"} & names


@pytest.mark.parametrize("rel", [rel for rel, _, _ in SOURCES])
def test_no_module_is_over_the_size_limit(rel: str) -> None:
    lines = next(lines for r, _, lines in SOURCES if r == rel)
    assert len(lines) <= MAX_LINES, f"{rel} has {len(lines)} lines; split it along its concerns"


def test_no_class_has_too_many_public_methods() -> None:
    big = []
    for rel, tree, _ in SOURCES:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                public = [
                    n.name
                    for n in node.body
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and not n.name.startswith("_")
                    and not any(
                        isinstance(d, ast.Name) and d.id == "property" for d in n.decorator_list
                    )
                ]
                if len(public) > MAX_PUBLIC_METHODS and (rel, node.name) not in FACADES:
                    big.append(f"{rel}:{node.name} has {len(public)} public methods")
    assert big == [], "\n".join(big)


def _whoosh_hooks() -> frozenset[str]:
    """The private Whoosh names the search package may use: pinned and tested in ``compat``."""
    tree = ast.parse((REPO / "contextfs/search/compat.py").read_text("utf-8"))
    names = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("_")
    }
    return frozenset(names)


WHOOSH_HOOKS = _whoosh_hooks()


def _private_reaches(rel: str, tree: ast.Module) -> list[str]:
    """Imports of another module's ``_name`` and ``x._attr`` on anything but ``self``/``cls``.

    In the search package, the private Whoosh hooks listed in ``contextfs.search.compat``
    (whose test checks each one) are allowed.
    """
    allowed = WHOOSH_HOOKS if rel.startswith("contextfs/search/") else frozenset()
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            bad += [
                f"{rel}:{node.lineno} imports {a.name}"
                for a in node.names
                if a.name.startswith("_") and a.name not in allowed
            ]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            owner = node.value
            if (
                not (isinstance(owner, ast.Name) and owner.id in ("self", "cls"))
                and node.attr not in allowed
            ):
                bad.append(f"{rel}:{node.lineno} reads {ast.unparse(node)}")
    return bad


def _unexplained_lazy_imports(rel: str, tree: ast.Module, lines: list[str]) -> list[str]:
    """Imports below module level without a comment on their line or the line before."""
    top = {id(node) for node in tree.body}
    for node in tree.body:  # `if TYPE_CHECKING:` and try/except at module level count as top level
        if isinstance(node, (ast.If, ast.Try)):
            top.update(id(n) for n in ast.walk(node))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
            here, before = lines[node.lineno - 1], lines[node.lineno - 2] if node.lineno > 1 else ""
            if "#" not in here and "#" not in before:
                bad.append(f"{rel}:{node.lineno} {here.strip()}")
    return bad


def test_no_private_names_are_reached_across_modules() -> None:
    bad = [line for rel, tree, _ in SOURCES for line in _private_reaches(rel, tree)]
    assert bad == [], "\n".join(bad)


def test_imports_inside_functions_say_why() -> None:
    bad = [
        line for rel, tree, lines in SOURCES for line in _unexplained_lazy_imports(rel, tree, lines)
    ]
    assert bad == [], (
        "imports inside functions need a comment with the measured reason:\n" + "\n".join(bad)
    )


def test_derived_state_paths_are_defined_in_one_module() -> None:
    layers = [src for src in SOURCES if src[0].startswith(("scopes/", "evolve/"))]
    found = []
    for rel, tree, _ in layers:
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and any(marker in node.value for marker in DERIVED_MARKERS)
            ):
                found.append(rel)
    assert set(found) == {DERIVED_MODULE}, found
    in_tree = [
        rel
        for rel, tree, _ in layers
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and any(marker in node.value for marker in WORK_TREE_STATE)
    ]
    assert in_tree == [], in_tree


def _module_name(rel: str) -> str:
    top, _, rest = rel.partition("/")
    parts = ([] if top == "contextfs" else [top]) + rest.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["contextfs", *parts])


def _imports(rel: str, tree: ast.Module) -> set[str]:
    """Modules of the package that ``rel`` imports anywhere: at the top, inside functions
    (deferred) and under ``TYPE_CHECKING`` alike, since each is an edge a reader follows."""
    package = (
        _module_name(rel) if rel.endswith("__init__.py") else _module_name(rel).rpartition(".")[0]
    )
    found: set[str] = set()
    for sub in ast.walk(tree):
        if isinstance(sub, ast.ImportFrom):
            if sub.level:
                base = package.split(".")[: len(package.split(".")) - (sub.level - 1)]
                name = ".".join(base + ([sub.module] if sub.module else []))
            else:
                name = sub.module or ""
            found.add(name)
            found.update(f"{name}.{a.name}" for a in sub.names)
        elif isinstance(sub, ast.Import):
            found.update(a.name for a in sub.names)
    return {n for n in found if n.startswith("contextfs")}


def _import_graph() -> dict[str, set[str]]:
    modules = {_module_name(rel): rel for rel, _, _ in SOURCES}
    graph = {
        _module_name(rel): {m for m in _imports(rel, tree) if m in modules} - {_module_name(rel)}
        for rel, tree, _ in SOURCES
    }
    # A package's __init__ importing its own submodules is how a façade works, not a cycle.
    for name in graph:
        if modules[name].endswith("__init__.py"):
            graph[name] = {m for m in graph[name] if not m.startswith(name + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_there_are_no_import_cycles() -> None:
    """Every edge counts: an import inside a function or under TYPE_CHECKING still ties the
    two modules together for a reader, so none of them may close a circle."""
    cycles = _cycles(_import_graph())
    assert cycles == [], "\n".join(cycles)


def test_the_cycle_finder_counts_deferred_and_type_only_imports() -> None:
    text = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .b import B\n"
        "def f():\n"
        "    from .c import g  # deferred\n"
    )
    assert _imports("contextfs/a.py", ast.parse(text)) >= {"contextfs.b", "contextfs.c"}
    assert _cycles({"a": {"b"}, "b": {"a"}}) == ["a -> b -> a"]


def test_the_scanner_sees_what_it_forbids() -> None:
    """Guard the guard: a private import, a reach-in and an unexplained lazy import are all found."""
    text = (
        "from .x import _hidden\n"
        "def f(ctx):\n"
        "    import json\n"
        "    # lazy: an optional extra\n"
        "    import yaml\n"
        "    return ctx._hook, self._mine\n"
    )
    tree = ast.parse(text)
    assert _private_reaches("x.py", tree) == ["x.py:1 imports _hidden", "x.py:6 reads ctx._hook"]
    assert _unexplained_lazy_imports("x.py", tree, text.splitlines()) == ["x.py:3 import json"]


def _mapped_modules() -> set[str]:
    """The modules docs/architecture.md's map names (its ``## The map`` section)."""
    page = (REPO / "docs/architecture.md").read_text("utf-8")
    section = page.split("## The map", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`((?:contextfs|scopes|evolve|integrations)/[\w/]+\.py)`", section))


def test_the_architecture_map_names_every_module_and_only_those() -> None:
    modules = {rel for rel, _, _ in SOURCES}
    mapped = _mapped_modules()
    assert sorted(modules - mapped) == [], "modules missing from docs/architecture.md's map"
    assert sorted(mapped - modules) == [], (
        "docs/architecture.md's map names modules that do not exist"
    )


def test_the_core_keeps_at_most_twenty_modules_flat() -> None:
    flat = sorted(path.name for path in (REPO / "contextfs").glob("*.py"))
    assert len(flat) <= MAX_FLAT_CORE, f"{len(flat)} modules lie flat in contextfs/: {flat}"
