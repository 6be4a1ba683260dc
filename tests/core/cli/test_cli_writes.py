"""Writing from a shell: `append` adds, `--meta` values read as YAML, a terminal is told what
to type, and empty content is refused rather than stored by mistake."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import commit_count

from contextfs import ContextManager
from contextfs.cli import cli
from contextfs.cli.store import meta_value


@pytest.fixture
def run(tmp_path: Path):
    root = tmp_path / "ctx"

    def invoke(*args: str, input: str | None = None, code: int = 0):
        result = CliRunner().invoke(
            cli, ["--root", str(root), *args], input=input, prog_name="contextfs"
        )
        assert result.exit_code == code, result.output
        return result

    invoke.root = root  # type: ignore[attr-defined]
    return invoke


def test_a_second_fact_is_appended_not_replacing_the_first(run, tmp_path: Path) -> None:
    run("write", "memory/facts.md", input="- Database: PostgreSQL 16\n")
    out = run("append", "memory/facts.md", input="- Cache: Redis 7\n").output
    assert out.startswith("appended to memory/facts.md (version ")
    extra = tmp_path / "more.md"
    extra.write_text("- Queue: Kafka\n", "utf-8")
    run("append", "memory/facts.md", "--file", str(extra))
    assert (
        run("read", "memory/facts.md").output
        == "- Database: PostgreSQL 16\n- Cache: Redis 7\n- Queue: Kafka\n"
    )
    assert commit_count(run.root) >= 3
    run("append", "memory/new.md", input="created by append\n")
    assert run("read", "memory/new.md").output == "created by append\n"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[adr, database]", ["adr", "database"]),
        ("adr", "adr"),
        ("a,b", "a,b"),
        ("true", True),
        ("3", 3),
        ("'3'", "3"),
        ("Note: draft", "Note: draft"),
        ("{owner: ops}", {"owner": "ops"}),
        ("", None),
        ("2026-10-02", "2026-10-02"),
        ("[unclosed", "[unclosed"),
        ("*alias", "*alias"),
        ("x\nauthor: me", "x\nauthor: me"),
    ],
)
def test_meta_values_read_as_they_would_in_frontmatter(text: str, value: object) -> None:
    assert meta_value(text) == value


def test_meta_lists_are_lists_and_tag_search_finds_them(run) -> None:
    run(
        "write",
        "project/decisions/db.md",
        "--meta",
        "tags=[adr, database]",
        "--meta",
        "draft=false",
        input="Use PostgreSQL.\n",
    )
    meta = json.loads(run("read", "project/decisions/db.md", "--json").output)["metadata"]
    assert meta["tags"] == ["adr", "database"] and meta["draft"] is False
    hits = json.loads(run("search", "tag:adr", "--json").output)
    assert [h["path"] for h in hits] == ["project/decisions/db.md"]


def test_empty_content_is_refused_unless_asked_for(run) -> None:
    refused = run("write", "a.md", input="", code=2)
    assert (
        "nothing to write: stdin was empty" in refused.stderr and "--allow-empty" in refused.stderr
    )
    assert not (run.root / "a.md").exists()
    assert "nothing to append" in run("append", "a.md", input="", code=2).stderr
    run("write", "a.md", "--allow-empty", input="")
    assert ContextManager(run.root, read_only=True).read("a.md") == ""


def test_a_terminal_is_told_what_to_type(tmp_path: Path) -> None:
    """stdin is a real terminal (a pty): the hint comes first, then the text typed and Ctrl-D."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "contextfs.cli",
            "--root",
            str(tmp_path / "ctx"),
            "write",
            "notes/typed.md",
        ],
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(secondary)
    try:
        hint = b""
        deadline = time.monotonic() + 120
        while b"Ctrl-D" not in hint and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                hint += os.read(proc.stderr.fileno(), 4096)
        assert b"reading the content from the terminal" in hint and b"Ctrl-D" in hint
        os.write(primary, b"typed by hand\n")
        os.write(primary, b"\x04")  # end of input, as Ctrl-D sends it
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(primary)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and out.startswith(b"wrote notes/typed.md")
    assert (
        ContextManager(tmp_path / "ctx", read_only=True).read("notes/typed.md") == "typed by hand\n"
    )


def test_a_file_given_with_file_is_read_as_a_stored_file_is(run, tmp_path: Path) -> None:
    """--file takes any name the command line holds and any bytes the file holds: what cannot
    be read is a one-line error naming it, never a traceback, and nothing is written."""
    binary = tmp_path / "bad.bin"
    binary.write_bytes(b"\xff\xfe not UTF-8")
    out = run("write", "notes/a.md", "--file", str(binary), code=1).output
    assert "is not valid UTF-8 text (byte 0)" in out and "Traceback" not in out
    for name in ("\ud800", "a\x00b", str(tmp_path / "missing.md"), str(tmp_path)):
        out = run("append", "notes/a.md", "--file", name, code=2).output
        assert "cannot read" in out and "--file" in out and "Traceback" not in out
    assert run("read", "notes/a.md", code=1).exit_code == 1  # nothing was written
    # '-' is stdin, as before
    run("write", "notes/a.md", "--file", "-", input="from stdin\n")
    assert run("read", "notes/a.md").output == "from stdin\n"
