"""Hostile repositories: what arrives by clone, pull or a copied folder is never trusted.

Each test builds a repository the way an attacker would (committed derived state, planted
symlinks, crafted trash entries, filter drivers), opens it the way a user would, and
checks with canary files and sentinels that nothing ran, nothing outside the root was
read or written, and the call either worked inside the root or failed with a typed error.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import git

from contextfs import ConfigError, ContextFSError, ContextManager, InvalidPathError, NotFoundError
from contextfs.search import INDEX_DIR, STAMP_FILE


class _Payload:
    """Unpickling this runs a command (what a hostile index would carry)."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.sentinel}",))


def _clone(src: Path, dst: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(src), str(dst)], check=True, capture_output=True)
    return dst


def _run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contextfs.cli", "--root", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def _origin(tmp_path: Path) -> Path:
    origin = tmp_path / "origin"
    with ContextManager(origin) as ctx:
        ctx.write("project/README.md", "# Tidewater\nThe ingestion pipeline uses Kafka.")
        ctx.write("memory/facts.md", "- Database: Postgres 16")
        assert ctx.search("kafka")
    return origin


def test_committed_index_with_a_pickle_payload_never_runs(tmp_path: Path) -> None:
    origin = _origin(tmp_path)
    sentinel = tmp_path / "pwned"
    planted = origin / ".contextfs" / "index"
    shutil.rmtree(planted, ignore_errors=True)
    planted.mkdir(parents=True)
    # A real Whoosh table of contents whose pickled segment list is the payload.
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    from contextfs.search.schema import make_schema

    TOC(make_schema(), _Payload(sentinel), 1).write(FileStorage(str(planted)), "MAIN")
    toc = next(planted.glob("_MAIN_*.toc"))
    payload = toc.read_bytes()
    # A stamp as an attacker would write it: every field recomputed, checksums included.
    from contextfs.search import codec, schema, stamp

    sums = {toc.name: [len(payload), hashlib.sha1(payload).hexdigest()]}
    (planted / STAMP_FILE).write_text(
        json.dumps(
            {
                "magic": stamp.STAMP_MAGIC,
                "format": stamp.INDEX_FORMAT,
                "schema": schema.SCHEMA_FINGERPRINT,
                "codec": codec.CODEC_ID,
                "whoosh": stamp.WHOOSH_VERSION,
                "build": "b",
                "head": git(origin, "rev-parse", "HEAD").strip(),
                "files": sums,
            }
        )
    )
    git(origin, "add", "-f", ".contextfs/index")
    git(origin, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "add an index")
    clone = _clone(origin, tmp_path / "clone")
    with ContextManager(clone) as ctx:
        assert [h.path for h in ctx.search("kafka")] == ["project/README.md"]
    for command in (("ls",), ("search", "kafka"), ("read", "memory/facts.md")):
        assert _run_cli(clone, *command).returncode == 0
    assert not sentinel.exists()


def test_an_index_copied_from_another_machine_is_rebuilt_not_unpickled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = _origin(tmp_path)
    with ContextManager(origin, sync=False, index=False) as ctx:
        index = ctx.parts.state.file(INDEX_DIR)
    sentinel = tmp_path / "pwned"
    toc = next(index.glob("_MAIN_*.toc"))
    toc.write_bytes(pickle.dumps(_Payload(sentinel)))
    # The attacker recomputes every checksum the stamp lists: without this machine's key
    # the stamp's HMAC cannot be recomputed, so the index is rebuilt instead of opened.
    stamp = json.loads((index / STAMP_FILE).read_text())
    data = toc.read_bytes()
    stamp["files"][toc.name] = [len(data), hashlib.sha1(data).hexdigest()]
    stamp.pop("mac", None)
    (index / STAMP_FILE).write_text(json.dumps(stamp))
    with ContextManager(origin) as ctx:
        assert [h.path for h in ctx.search("kafka")] == ["project/README.md"]
    assert not sentinel.exists()
    # A copy of the whole folder (with .git) opened by another user: their key differs.
    copy = tmp_path / "copy"
    shutil.copytree(origin, copy, symlinks=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other-user-state"))
    with ContextManager(copy) as ctx:
        assert ctx.index.rebuilds == 1
        assert [h.path for h in ctx.search("postgres")] == ["memory/facts.md"]


def test_a_committed_contextfs_symlink_leads_nowhere(tmp_path: Path) -> None:
    origin = _origin(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.toml").write_text("[scopes]\nproject = '../../etc'\n")
    before = sorted(p.name for p in outside.iterdir())
    shutil.rmtree(origin / ".contextfs", ignore_errors=True)
    (origin / ".contextfs").symlink_to(outside)
    git(origin, "add", ".contextfs")
    git(origin, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "link")
    clone = _clone(origin, tmp_path / "clone")
    assert (clone / ".contextfs").is_symlink()
    with ContextManager(clone) as ctx:
        ctx.write("memory/new.md", "written after the clone")
        assert ctx.search("clone")
        with pytest.raises(ConfigError, match="symlink"):
            _ = ctx.parts.config
        with pytest.raises(InvalidPathError):
            ctx.read(".contextfs/config.toml")
    assert sorted(p.name for p in outside.iterdir()) == before


def test_a_crafted_trash_entry_cannot_pull_files_into_the_root(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    with ContextManager(root) as ctx:
        ctx.write("a.md", "a")
        entry = ctx.delete("a.md")
        folder = root / ".trash" / entry.id
        for original in (
            "../../secret.txt",
            "../../../secret.txt",
            ".git/config",
            "/etc/passwd",
            "a/../../x",
        ):
            (folder / "entry.json").write_text(
                json.dumps(
                    {
                        "id": entry.id,
                        "original_path": original,
                        "deleted_at": "2026-01-01T00:00:00Z",
                        "actor": "agent",
                    }
                )
            )
            for call in (
                lambda: ctx.restore(entry.id, to="stolen.md"),
                lambda: ctx.restore(entry.id),
            ):
                with pytest.raises(NotFoundError):
                    call()
            assert not (root / "stolen.md").exists()
        assert ctx.trash() == []  # a damaged entry is not listed
    assert secret.read_text() == "top secret"
    assert (root / ".git" / "config").is_file()


def test_a_tracked_folder_swapped_for_a_symlink_is_never_followed(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "facts.md").write_text("OUTSIDE secret fact about zeppelins")
    with ContextManager(root) as ctx:
        ctx.write("memory/facts.md", "- inside fact")
        ctx.write("project/a.md", "project note")
    shutil.rmtree(root / "memory")
    (root / "memory").symlink_to(outside)
    head = git(root, "rev-parse", "HEAD")
    for _ in range(2):  # the next opens keep working
        with ContextManager(root) as ctx:
            assert (
                "memory/facts.md" in ctx.parts.last_sync.held
                or "memory" in ctx.parts.last_sync.held
            )
            assert ctx.search("zeppelins") == []
            with pytest.raises(InvalidPathError):
                ctx.read("memory/facts.md")
            assert ctx.read("project/a.md") == "project note"
    assert git(root, "rev-parse", "HEAD") == head
    assert "zeppelins" not in git(root, "log", "-p", "--all")


def test_filter_drivers_never_run(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    sentinel = tmp_path / "filter-ran"
    with ContextManager(root) as ctx:
        ctx.write("a.md", "a")
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho x >> {sentinel}\ncat\n")
    script.chmod(0o755)
    for key in ("clean", "smudge", "process"):
        git(root, "config", f"filter.evil.{key}", str(script))
    git(root, "config", "filter.evil.required", "true")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    (root / "memory").mkdir()
    (root / "memory" / "human.md").write_text("edited by hand")
    with ContextManager(root) as ctx:
        ctx.write("b.md", "b")
        ctx.append("a.md", "more")
        ctx.move("b.md", "c.md")
        ctx.delete("c.md")
        ctx.restore("c.md")
        ctx.history("a.md")
        ctx.revert("a.md", "HEAD~1")
        ctx.search("more")
    assert not sentinel.exists()


def test_a_hostile_clone_is_safe_through_the_cli(tmp_path: Path) -> None:
    """Every CLI command on a clone with planted links and entries fails typed or works inside."""
    origin = _origin(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside")
    (origin / "project" / "link.md").symlink_to(outside / "x.md")
    (origin / "skills").symlink_to(outside)
    git(origin, "add", "project/link.md", "skills")
    git(origin, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "links")
    clone = _clone(origin, tmp_path / "clone")
    for command in (
        ("read", "project/link.md"),
        ("read", "skills/x.md"),
        ("write", "skills/y.md"),
        ("ls", "skills"),
        ("search", "outside"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "contextfs.cli", "--root", str(clone), *command],
            input="hello",
            capture_output=True,
            text=True,
            check=False,
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "outside" not in proc.stdout.replace(str(tmp_path), "")
    assert sorted(p.name for p in outside.iterdir()) == ["x.md"]
    assert (outside / "x.md").read_text() == "outside"


def test_typed_errors_on_hostile_paths_through_links(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    outside = tmp_path / "outside"
    outside.mkdir()
    with ContextManager(root) as ctx:
        (root / "linkdir").symlink_to(outside)
        (root / "link.md").symlink_to(outside / "target.md")
        for call in (
            lambda: ctx.write("linkdir/a.md", "x"),
            lambda: ctx.write("link.md", "x"),
            lambda: ctx.read("link.md"),
            lambda: ctx.append("linkdir/b.md", "x"),
            lambda: ctx.move("link.md", "other.md"),
            lambda: ctx.delete("linkdir"),
        ):
            with pytest.raises(ContextFSError):
                call()
    assert list(outside.iterdir()) == []
