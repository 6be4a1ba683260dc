"""``contextfs search`` and ``contextfs reindex`` on a real root, plus the search demo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import SAMPLE

from contextfs import ContextManager
from contextfs.cli.search import demo, reindex, search


@click.group()
@click.option("--root", default=None)
@click.pass_context
def app(click_ctx: click.Context, root: str | None) -> None:
    click_ctx.ensure_object(dict).update(root=root, actor="human", session=None)


app.add_command(search)
app.add_command(reindex)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("cli") / "ctx"
    shutil.copytree(SAMPLE, dest)
    ContextManager(dest, actor="human").close()
    return dest


def run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--root", str(root), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_search_text_and_json(root: Path) -> None:
    code, out, _ = run(root, "search", "transactional outbox", "--limit", "2")
    assert code == 0
    assert out.splitlines()[0].startswith("project/decisions/0003-transactional-outbox.md")
    code, out, _ = run(root, "search", "webhook", "--tag", "adr", "--json")
    hits = json.loads(out)
    assert code == 0 and hits and all("adr" in h["tags"] for h in hits)
    assert set(hits[0]) >= {"path", "snippet", "score", "title", "tags", "updated", "version"}
    code, out, _ = run(root, "search", "billing", "--path", "topics", "--json")
    assert all(h["path"].startswith("topics/") for h in json.loads(out))
    code, out, _ = run(root, "search", "zzzzqqq")
    assert code == 0 and out.strip() == "no matches"


def test_bad_query_is_one_line_error(root: Path) -> None:
    code, out, err = run(root, "search", "foo AND")
    assert code == 1 and out == ""
    assert (
        err.startswith("error: ")
        and len(err.strip().splitlines()) == 1
        and "AND needs a word after it" in err
    )


def test_reindex_and_verify(root: Path) -> None:
    code, out, _ = run(root, "reindex")
    assert code == 0 and out.startswith("search index rebuilt:")
    code, out, _ = run(root, "reindex", "--verify")
    assert code == 0 and "no drift" in out
    (root / "memory" / "facts.md").write_text("replaced behind the back: heron", "utf-8")
    code, out, _ = run(root, "reindex", "--verify", "--json")
    report = json.loads(out)
    # Opening the root already committed the edit and re-indexed it (reconcile on open).
    assert report["checked"] >= 30 and not (
        report["missing"] or report["stale"] or report["rebuilt"]
    )
    code, out, _ = run(root, "search", "heron", "--json")
    assert [h["path"] for h in json.loads(out)] == ["memory/facts.md"]


@pytest.mark.parametrize("command", [search, reindex])
def test_help_has_an_example(command: click.Command) -> None:
    out = CliRunner().invoke(app, [command.name, "--help"]).stdout
    assert "Example" in out and "contextfs " + command.name in out


def test_demo_runs_offline(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    shutil.copytree(SAMPLE, dest)
    lines: list[str] = []
    with ContextManager(dest, actor="agent:demo") as ctx:
        demo(ctx, lines.append)
        assert not ctx.exists("memory/archive/demo-search.md")
    text = "\n".join(lines)
    assert "task/subtasks/dead-letter-queue.md" in text
    assert "['memory/archive/demo-search.md'" in text
