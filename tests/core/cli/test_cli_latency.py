"""What each CLI call loads and touches: checked in fresh processes, never timed.

A call an agent shells out to pays for every module it imports. These tests pin which
heavy modules each reading command may load (GitPython, filelock, the write side,
Whoosh, numpy, tiktoken, the layers it does not use), that the commands which only read
open the root read-only (no root created, nothing committed), and that a repeated
``context`` view and a search on an index that matches the files load no encoder and
take no lock. The figures themselves are in docs/bench-cli.md (tests/benchmarks/bench_cli.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import application_repository, git, modules_after

from contextfs import ContextManager, clock
from contextfs.cli import cli
from contextfs.text.tokens import TokenCounter

# What only writing, history or other layers need: no reading command may import these.
WRITE_SIDE = (
    "contextfs.changes.transaction",
    "contextfs.changes.cycle",
    "contextfs.changes.journal",
    "contextfs.changes.writing",
    "contextfs.changes.rendering",
    "contextfs.gate.guard",
    "contextfs.config",
    "filelock",
)
GIT = ("git", "gitdb", "contextfs.versioning.repository", "contextfs.versioning.objects")
LAYERS = ("contextfs.scopes", "contextfs.evolve", "contextfs.integrations", "langchain_core")
SEARCH = ("whoosh", "numpy", "contextfs.search")
#: What no command on the sample loads: the TOML parser (no file there has TOML frontmatter),
#: difflib (only a mistyped command is answered with it) and the pure-Python stemmers of
#: every language (PyStemmer gives snowballstemmer's English stems, tests/core/text/test_stems.py).
NEVER = ("tomllib", "difflib", "snowballstemmer.english_stemmer", "snowballstemmer.arabic_stemmer")


def _among(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded for n in names if m == n or m.startswith(n + "."))


@pytest.fixture
def root(sample_root: Path) -> Path:
    ContextManager(sample_root, index=False).close()  # make it a root: reading commands never do
    return sample_root


def _settle_index(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Build the index and let its stamp record every file's times (as two seconds later would)."""
    with ContextManager(root, actor="human", read_only=True) as ctx:
        ctx.search("webhook")
    later = clock.now() + timedelta(seconds=30)
    with monkeypatch.context() as patch:
        patch.setattr(clock, "now", lambda: later)
        with ContextManager(root, actor="human", read_only=True) as ctx:
            ctx.search("webhook")  # the locked open records the digest of the files and their times


def test_read_and_ls_load_neither_git_nor_the_write_side(root: Path, tmp_path: Path) -> None:
    for args in (("read", "memory/facts.md"), ("ls", "memory")):
        loaded = modules_after(tmp_path, "--root", str(root), *args)
        assert _among(loaded, WRITE_SIDE + GIT + LAYERS + SEARCH + NEVER + ("tiktoken",)) == [], (
            args
        )
        assert "contextfs.manager" in loaded
    assert "yaml" not in modules_after(
        tmp_path, "--root", str(root), "ls", "memory"
    )  # no file is parsed


def test_history_commands_load_git_but_not_the_write_side(root: Path, tmp_path: Path) -> None:
    for args in (
        ("log", "-n", "2"),
        ("diff", "memory/facts.md", "HEAD"),
        ("show", "memory/facts.md", "--at", "HEAD"),
    ):
        loaded = modules_after(tmp_path, "--root", str(root), *args)
        assert "git" in loaded, args
        assert _among(loaded, WRITE_SIDE + LAYERS + SEARCH) == [], args


def test_search_on_an_index_that_matches_the_files_takes_no_lock_and_loads_no_git(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settle_index(root, monkeypatch)
    loaded = modules_after(tmp_path, "--root", str(root), "search", "webhook retry backoff")
    assert "whoosh" in loaded
    # a query over a small tree is scored by Whoosh's matchers: numpy's import is not worth it
    assert (
        _among(loaded, WRITE_SIDE + GIT + LAYERS + ("tiktoken", "numpy", "contextfs.search.rank"))
        == []
    )
    assert _among(loaded, NEVER) == []
    # the name generators are put in place for writers only (contextfs.search.compat.codec)
    assert _among(loaded, ("whoosh.writing", "whoosh.multiproc", "multiprocessing")) == []


def test_a_repeated_context_view_loads_no_encoder(root: Path, tmp_path: Path) -> None:
    args = ("context", "--scope", "task", "--budget", "2000")
    first = modules_after(tmp_path, "--root", str(root), *args)
    assert "tiktoken" in first  # nothing was counted before: the encoder loads once
    again = modules_after(tmp_path, "--root", str(root), *args)
    writing = tuple(
        m for m in WRITE_SIDE if m != "contextfs.config"
    )  # scope rules come from config.toml
    assert _among(again, ("tiktoken",) + writing + GIT + SEARCH) == []
    assert (
        _among(
            again,
            (
                "contextfs.scopes.memory",
                "contextfs.scopes.topics.facade",
                "contextfs.evolve",
                "contextfs.integrations",
            ),
        )
        == []
    )
    assert "contextfs.scopes.scoped" in again


def test_a_view_is_the_same_with_kept_counts(root: Path) -> None:
    args = ["--root", str(root), "context", "--scope", "task", "--budget", "900", "--json"]
    views = [
        subprocess.run(
            [sys.executable, "-m", "contextfs.cli", *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    ]
    assert views[0] == views[1]
    view = json.loads(views[1])
    assert (
        view["tokens"] == TokenCounter().count(view["text"]) <= 900
    )  # counted afresh: still exact


# ------------------------------------------------------------------ reading layers open read-only
LAYER_READERS = [
    ("context", "--scope", "task", "--budget", "1500"),
    ("context", "--scope", "project"),
    ("topic", "list"),
    ("topic", "show", "billing-migration"),
    ("memory", "search", "offer"),
    ("memory", "recall", "retry"),
]


@pytest.mark.parametrize("args", LAYER_READERS)
def test_layer_reading_commands_never_create_a_root(tmp_path: Path, args: tuple[str, ...]) -> None:
    root = tmp_path / "nothing-here"
    result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    assert result.exit_code == 1 and "contextfs init" in result.stderr, result.output
    assert not root.exists()


def test_layer_reading_commands_leave_an_application_repository_as_it_was(
    tmp_path: Path, sample_root: Path
) -> None:
    app = application_repository(tmp_path)
    context = app / "context"
    ContextManager(context, index=False).close()
    for item in sample_root.iterdir():  # the sample tree, as a person copied it in (uncommitted)
        target = context / item.name
        if item.is_dir():
            shutil.copytree(item, target, dirs_exist_ok=True)
        else:
            target.write_bytes(item.read_bytes())

    def snapshot() -> tuple[str, bytes, str]:
        return (
            git(app, "rev-parse", "HEAD"),
            (app / ".git" / "index").read_bytes(),
            git(app, "status", "--porcelain", "--untracked-files=all"),
        )

    before = snapshot()
    for args in LAYER_READERS:
        result = CliRunner().invoke(cli, ["--root", str(context), *args], catch_exceptions=False)
        assert result.exit_code == 0, (args, result.output)
    assert snapshot() == before  # HEAD, the git index and the work tree: byte-identical
