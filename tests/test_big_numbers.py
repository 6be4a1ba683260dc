"""A number too long to print arrives by clone or in metadata: typed errors, never a traceback.

Python refuses to turn integers of more than 4,300 decimal digits into text or back (the
limit against quadratic conversions). YAML reads ``n: 1111...`` through ``int()``, a hex
literal of any length parses but cannot be printed, and JSON does the same; so a note
holding one must not take the root down. The file is read as a file whose frontmatter
cannot be used (a :class:`~contextfs.FrontmatterError` naming the fix), every other file
opens, searches and indexes as before, and writing such a number is refused up front.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import git
from contextfs import ContextFSError, ContextManager, FrontmatterError
from contextfs.cli import cli

HUGE = {
    "decimal": "1" * 4400,
    "negative": "-" + "9" * 4400,
    "underscored": "1_" * 4400 + "1",
    "hex": "0x" + "f" * 5000,
    "octal": "0" + "7" * 6000,
    "sexagesimal": "1" + ":59" * 3000,
}


def cloned_root(tmp_path: Path, value: str) -> Path:
    """A repository someone else made (plain git), holding a note with ``n: <value>``."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    (origin / "notes").mkdir()
    (origin / "notes" / "big.md").write_text(f"---\ntitle: Big\nn: {value}\n---\nThe big number note.\n", "utf-8")
    (origin / "notes" / "ordinary.md").write_text("The staging database runs PostgreSQL 16.\n", "utf-8")
    git(origin, "add", "-A")
    git(origin, "-c", "user.name=dev", "-c", "user.email=dev@x.invalid", "commit", "-qm", "notes")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    return clone


@pytest.mark.parametrize("kind", sorted(HUGE))
def test_a_cloned_note_with_a_huge_number_never_takes_the_root_down(tmp_path: Path, kind: str) -> None:
    root = cloned_root(tmp_path, HUGE[kind])
    ctx = ContextManager(root, index=True)
    assert [hit.path for hit in ctx.search("PostgreSQL")] == ["notes/ordinary.md"]
    with pytest.raises(FrontmatterError) as caught:
        ctx.read("notes/big.md")
    assert "digits" in str(caught.value) and "notes/big.md" in str(caught.value)
    assert ctx.index.verify(fix=False) is not None
    ctx.write("notes/big.md", "Replaced by a readable note.\n")  # a broken file can still be replaced
    assert ctx.read("notes/big.md") == "Replaced by a readable note.\n"
    ctx.close()
    reader = ContextManager(root, read_only=True)
    assert reader.search("PostgreSQL")[0].path == "notes/ordinary.md"


@pytest.mark.parametrize("command", [["search", "PostgreSQL"], ["search", "big", "--json"], ["reindex"],
                                     ["reindex", "--verify"], ["read", "notes/big.md"], ["ls"],
                                     ["context", "--scope", "project"], ["log"]])
def test_the_cli_prints_one_line_not_a_traceback(tmp_path: Path, command: list[str]) -> None:
    root = cloned_root(tmp_path, HUGE["decimal"])
    result = CliRunner().invoke(cli, ["--root", str(root), *command])
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        assert result.output.count("\n") == 1 and result.output.startswith("error: "), result.output


def test_the_cli_in_a_real_process(tmp_path: Path) -> None:
    root = cloned_root(tmp_path, HUGE["decimal"])
    for command in (["search", "PostgreSQL"], ["reindex"]):
        proc = subprocess.run([sys.executable, "-m", "contextfs.cli", "--root", str(root), *command],
                              capture_output=True, text=True, check=False)
        assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("value", [10 ** 4400, -(10 ** 4400), 16 ** 5000, {"deep": [10 ** 4400]}],
                         ids=["decimal", "negative", "hex-sized", "nested"])
def test_writing_a_huge_number_in_metadata_is_refused(ctx: ContextManager, value: object) -> None:
    with pytest.raises(FrontmatterError) as caught:
        ctx.write("notes/n.md", "body\n", {"n": value})
    assert "digits" in str(caught.value)
    with pytest.raises(ContextFSError):
        ctx.write("notes/n.md", "body\n")
        ctx.update_metadata("notes/n.md", {"n": value})
    assert ctx.get("notes/n.md").metadata.get("n") is None


def test_a_huge_number_in_a_store_value_or_config_is_typed(ctx: ContextManager) -> None:
    from contextfs.integrations.langgraph_store import ContextStore

    store = ContextStore(ctx)
    with pytest.raises(ContextFSError):
        store.put(("ns",), "k", {"n": 10 ** 4400})
    (ctx.root / ".contextfs" / "config.toml").write_text("[memory]\ncore_limit = " + "1" * 4400 + "\n", "utf-8")
    with pytest.raises(ContextFSError):
        ctx.write("notes/x.md", "fine\n")
