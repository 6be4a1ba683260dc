"""ContextManager: CRUD, trash, transactions, provenance, typed errors, atomic visibility."""

from __future__ import annotations

import dataclasses
import os
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import commit_count, git

import contextfs
from contextfs import (
    AlreadyExistsError,
    ConflictError,
    ContentError,
    ContextFSError,
    ContextManager,
    FrontmatterError,
    InvalidArgumentError,
    InvalidPathError,
    NotFoundError,
    TrashEntry,
)
from contextfs.files import durability


def raw(ctx: ContextManager, rel: str) -> str:
    return (ctx.root / rel).read_text("utf-8")


# ----------------------------------------------------------------- CRUD
def test_write_read_get_exists(ctx: ContextManager) -> None:
    doc = ctx.write(
        "memory/facts.md", "- Database: PostgreSQL 16\n", {"title": "Facts", "tags": ["db"]}
    )
    assert ctx.read("memory/facts.md") == "- Database: PostgreSQL 16\n"
    got = ctx.get("memory/facts.md")
    assert got.path == "memory/facts.md"
    assert got.body == "- Database: PostgreSQL 16\n"
    assert got.metadata["title"] == "Facts" and got.metadata["tags"] == ["db"]
    assert got.metadata["author"] == "agent"
    assert {"created", "updated", "session"} <= set(got.metadata)
    assert got.version == doc.version
    assert got.version == git(ctx.root, "rev-parse", "HEAD:memory/facts.md").strip()
    assert ctx.exists("memory/facts.md") and not ctx.exists("memory/other.md")
    assert not ctx.exists("memory")  # a folder is not a file
    assert ctx.read("memory/missing.md") is None
    with pytest.raises(NotFoundError) as info:
        ctx.get("memory/missing.md")
    assert info.value.path == "memory/missing.md"
    assert raw(ctx, "memory/facts.md").startswith("---\ntitle: Facts\n")


def test_write_keeps_user_metadata_and_metadata_replaces_it(ctx: ContextManager) -> None:
    ctx.write("a.md", "one", {"title": "A", "tags": ["x"]})
    created = ctx.get("a.md").metadata["created"]
    ctx.write("a.md", "two")
    meta = ctx.get("a.md").metadata
    assert meta["title"] == "A" and meta["tags"] == ["x"] and meta["created"] == created
    ctx.write("a.md", "three", {"status": "done"})
    meta = ctx.get("a.md").metadata
    assert "title" not in meta and meta["status"] == "done"
    assert meta["created"] == created and meta["author"] == "agent"


def test_create_refuses_to_overwrite(ctx: ContextManager) -> None:
    ctx.create("task/current.md", "v1")
    head = git(ctx.root, "rev-parse", "HEAD")
    with pytest.raises(AlreadyExistsError, match=r"ctx\.write"):
        ctx.create("task/current.md", "v2")
    assert ctx.read("task/current.md") == "v1"
    assert git(ctx.root, "rev-parse", "HEAD") == head


def test_append(ctx: ContextManager) -> None:
    ctx.append("memory/lessons.md", "- first")
    ctx.append("memory/lessons.md", "- second\n")
    ctx.append("memory/lessons.md", "- third")
    assert ctx.read("memory/lessons.md") == "- first\n- second\n- third"
    with pytest.raises(ContentError):
        ctx.append("memory/lessons.md", 42)  # type: ignore[arg-type]


def test_edit_exactly_once(ctx: ContextManager) -> None:
    ctx.write("a.md", "alpha beta alpha\n")
    head = git(ctx.root, "rev-parse", "HEAD")
    with pytest.raises(ConflictError, match="occurs 2 times"):
        ctx.edit("a.md", "alpha", "x")
    with pytest.raises(ConflictError, match="does not occur"):
        ctx.edit("a.md", "gamma", "x")
    with pytest.raises(ContentError):
        ctx.edit("a.md", "", "x")
    with pytest.raises(NotFoundError):
        ctx.edit("missing.md", "a", "b")
    assert git(ctx.root, "rev-parse", "HEAD") == head
    ctx.edit("a.md", "beta", "BETA")
    assert ctx.read("a.md") == "alpha BETA alpha\n"


def test_edit_does_not_touch_frontmatter_text(ctx: ContextManager) -> None:
    ctx.write("a.md", "body", {"title": "body"})
    ctx.edit("a.md", "body", "new")
    assert ctx.get("a.md").metadata["title"] == "body"
    assert ctx.read("a.md") == "new"


def test_update_metadata_keeps_body_bytes_and_key_order(ctx: ContextManager) -> None:
    body = "  leading spaces\r\nCRLF line\r\n\n\ntrailing blank lines\n\n\n"
    ctx.write("a.md", body, {"zeta": 1, "alpha": 2, "mid": 3})
    ctx.update_metadata("a.md", {"alpha": 20, "new": "n", "zeta": None})
    doc = ctx.get("a.md")
    assert doc.body == body
    user = [k for k in doc.metadata if k not in contextfs.document.LIBRARY_KEYS]
    assert user == ["alpha", "mid", "new"]
    assert doc.metadata["alpha"] == 20
    data = (ctx.root / "a.md").read_bytes()
    assert data.endswith(body.encode())


def test_author_cannot_be_spoofed(ctx: ContextManager) -> None:
    spoof = {
        "author": "human",
        "created": "1970-01-01",
        "session": "evil",
        "turn": "9",
        "updated": "x",
    }
    ctx.write("a.md", "x", {**spoof, "title": "T"})
    meta = ctx.get("a.md").metadata
    assert meta["author"] == "agent" and meta["session"] != "evil" and "turn" not in meta
    assert meta["created"] != "1970-01-01" and meta["title"] == "T"
    ctx.update_metadata("a.md", spoof)
    assert ctx.get("a.md").metadata["author"] == "agent"
    # Content that starts with a frontmatter block is a document: the keys the library
    # keeps are its own there too.
    ctx.write("b.md", "---\nauthor: human\ntitle: B\n---\nhello")
    doc = ctx.get("b.md")
    assert (
        doc.metadata["author"] == "agent" and doc.metadata["title"] == "B" and doc.body == "hello"
    )
    assert git(ctx.root, "log", "-1", "--format=%an").strip() == "agent"


def test_expected_version(ctx: ContextManager) -> None:
    v1 = ctx.write("a.md", "one").version
    v2 = ctx.write("a.md", "two", expected_version=v1).version
    head = git(ctx.root, "rev-parse", "HEAD")
    for call in (
        lambda: ctx.write("a.md", "three", expected_version=v1),
        lambda: ctx.edit("a.md", "two", "x", expected_version=v1),
        lambda: ctx.update_metadata("a.md", {"k": 1}, expected_version=v1),
        lambda: ctx.write("new.md", "x", expected_version=v1),
    ):
        with pytest.raises(ConflictError, match="read it again"):
            call()
    assert ctx.read("a.md") == "two" and not ctx.exists("new.md")
    assert git(ctx.root, "rev-parse", "HEAD") == head
    assert ctx.get("a.md").version == v2


def test_move_file_folder_and_case_only(ctx: ContextManager) -> None:
    ctx.write("notes/plan.md", "plan", {"title": "Plan"})
    ctx.write("notes/sub/deep.md", "deep")
    assert ctx.move("notes/plan.md", "archive/plan.md") == "archive/plan.md"
    assert ctx.read("archive/plan.md") == "plan" and not ctx.exists("notes/plan.md")
    assert ctx.get("archive/plan.md").metadata["title"] == "Plan"
    ctx.move("notes", "old-notes")
    assert ctx.list() == ["archive/plan.md", "old-notes/sub/deep.md"]
    assert not (ctx.root / "notes").exists()
    ctx.move("archive/plan.md", "archive/Plan.md")
    assert os.listdir(ctx.root / "archive") == ["Plan.md"]
    tracked = git(ctx.root, "ls-files").split()
    assert "archive/Plan.md" in tracked and "archive/plan.md" not in tracked
    ctx.write("x.md", "x")
    with pytest.raises(AlreadyExistsError):
        ctx.move("x.md", "old-notes/sub/deep.md")
    with pytest.raises(NotFoundError):
        ctx.move("missing.md", "y.md")
    with pytest.raises(InvalidPathError):
        ctx.move("old-notes", "old-notes/inner")


def test_list_semantics(ctx: ContextManager) -> None:
    ctx.write("b.md", "b")
    ctx.write("a/z.md", "z")
    ctx.write("a/b/c.md", "c")
    ctx.delete("b.md")
    assert ctx.list() == ["a/b/c.md", "a/z.md"]
    assert ctx.list("a/b") == ["a/b/c.md"]
    assert ctx.list("a/z.md") == []
    assert ctx.list("missing") == []
    assert all(not p.startswith((".trash", ".contextfs", ".git")) for p in ctx.list())


# ----------------------------------------------------------------- trash
def test_delete_twice_keeps_both_entries_and_restore_latest(ctx: ContextManager) -> None:
    ctx.write("a.md", "first", {"title": "One"})
    e1 = ctx.delete("a.md")
    ctx.write("a.md", "second", {"title": "Two"})
    with ctx.provenance(actor="human"):
        e2 = ctx.delete("a.md")
    entries = ctx.trash()
    assert [e.id for e in entries] == [e1.id, e2.id]
    assert all(isinstance(e, TrashEntry) for e in entries)
    assert {e.original_path for e in entries} == {"a.md"}
    assert entries[0].actor == "agent" and entries[1].actor == "human"
    assert entries[1].deleted_at.endswith("Z")
    with pytest.raises(dataclasses.FrozenInstanceError):
        entries[0].actor = "x"  # type: ignore[misc]
    assert not (ctx.root / "a.md").exists()
    ctx.restore("a.md")
    assert ctx.read("a.md") == "second" and ctx.get("a.md").metadata["title"] == "Two"
    with pytest.raises(AlreadyExistsError):
        ctx.restore(e1.id)
    assert ctx.restore(e1.id, to="older/a.md") == "older/a.md"
    assert ctx.read("older/a.md") == "first" and ctx.get("older/a.md").metadata["title"] == "One"
    assert ctx.trash() == []
    assert not (ctx.root / ".trash").exists() or os.listdir(ctx.root / ".trash") == []
    with pytest.raises(NotFoundError):
        ctx.restore("a.md")
    with pytest.raises(NotFoundError):
        ctx.restore("20260101T000000Z-abcdef")


def test_delete_missing_and_folder(ctx: ContextManager) -> None:
    with pytest.raises(NotFoundError):
        ctx.delete("missing.md")
    ctx.write("dir/a.md", "a")
    ctx.write("dir/sub/b.md", "b")
    entry = ctx.delete("dir")
    assert entry.is_dir and ctx.list() == []
    ctx.restore("dir")
    assert ctx.list() == ["dir/a.md", "dir/sub/b.md"]


def test_purge_trash_older_than_with_fake_clock(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    now = [start]
    monkeypatch.setattr(contextfs.clock, "now", lambda: now[0])
    ctx.write("old.md", "old")
    old = ctx.delete("old.md")
    now[0] = start + timedelta(days=20)
    ctx.write("new.md", "new")
    ctx.delete("new.md")
    now[0] = start + timedelta(days=31)
    assert ctx.purge_trash(older_than=timedelta(days=30)) == 1
    assert [e.original_path for e in ctx.trash()] == ["new.md"]
    assert not (ctx.root / old.folder).exists()
    assert ctx.purge_trash(older_than=30) == 0  # days
    assert ctx.purge_trash() == 1
    assert ctx.trash() == []
    # git still has the purged bytes
    assert "old" in git(ctx.root, "log", "--all", "-p", "--", ".trash")


# ----------------------------------------------------------------- transactions
def test_transaction_is_one_commit(ctx: ContextManager) -> None:
    before = commit_count(ctx.root)
    with ctx.transaction("set up the project", trailers={"Contextfs-Topic": "setup"}):
        ctx.write("a.md", "a")
        ctx.write("b.md", "b")
        ctx.append("a.md", "more")
        ctx.delete("b.md")
        with ctx.transaction("nested joins the outer"):
            ctx.write("c.md", "c")
    assert commit_count(ctx.root) == before + 1
    message = git(ctx.root, "log", "-1", "--format=%B")
    assert message.startswith("set up the project")
    assert "Contextfs-Topic: setup" in message and "Contextfs-Op: transaction" in message
    assert set(git(ctx.root, "show", "--name-only", "--format=", "HEAD").split()) >= {
        "a.md",
        "c.md",
    }


def test_transaction_rollback_restores_and_commits_nothing(ctx: ContextManager) -> None:
    ctx.write("keep.md", "original", {"title": "K"})
    ctx.write("gone.md", "will be deleted")
    original = (ctx.root / "keep.md").read_bytes()
    head = git(ctx.root, "rev-parse", "HEAD")
    with pytest.raises(RuntimeError), ctx.transaction("doomed"):
        ctx.write("keep.md", "changed")
        ctx.write("new/file.md", "new")
        ctx.delete("gone.md")
        ctx.move("keep.md", "moved.md")
        with ctx.transaction("inner"):
            ctx.write("inner.md", "x")
        raise RuntimeError("boom")
    assert git(ctx.root, "rev-parse", "HEAD") == head
    assert (ctx.root / "keep.md").read_bytes() == original
    assert ctx.read("gone.md") == "will be deleted"
    assert (
        not ctx.exists("new/file.md") and not ctx.exists("moved.md") and not ctx.exists("inner.md")
    )
    assert ctx.trash() == []
    assert git(ctx.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_failed_call_inside_transaction_can_be_caught(ctx: ContextManager) -> None:
    ctx.write("a.md", "a")
    before = commit_count(ctx.root)
    with ctx.transaction("partial"):
        ctx.write("b.md", "b")
        with pytest.raises(AlreadyExistsError):
            ctx.create("a.md", "again")
    assert commit_count(ctx.root) == before + 1 and ctx.read("b.md") == "b"


# ----------------------------------------------------------------- provenance
def test_provenance_changes_author_and_trailers(ctx: ContextManager) -> None:
    with ctx.provenance(actor="agent:planner", session="sess-1", turn=3):
        assert ctx.parts.current_provenance.actor == "agent:planner"
        ctx.write("a.md", "a")
        with ctx.provenance(actor="human"):
            ctx.write("b.md", "b")
    assert ctx.parts.current_provenance.actor == "agent"
    meta = ctx.get("a.md").metadata
    assert (meta["author"], meta["session"], meta["turn"]) == ("agent:planner", "sess-1", "3")
    assert ctx.get("b.md").metadata["author"] == "human"
    log = git(ctx.root, "log", "-2", "--format=%an|%ae|%B%x00").split("\x00")
    assert log[0].startswith("human|")
    assert log[1].strip().startswith("agent:planner|agent-planner@contextfs.invalid|write: a.md")
    assert "Contextfs-Session: sess-1" in log[1] and "Contextfs-Turn: 3" in log[1]
    # A bad actor or session is a bad argument, not a bad path.
    with pytest.raises(InvalidArgumentError, match="actor"), ctx.provenance(actor="root <evil@x>"):
        pass
    with (
        pytest.raises(InvalidArgumentError, match="session"),
        ctx.provenance(session="--upload-pack=evil"),
    ):
        pass
    with pytest.raises(InvalidArgumentError, match="actor 'Mallory' is not accepted"):
        ContextManager(ctx.root, actor="Mallory", index=False)


# ----------------------------------------------------------------- typed errors
def test_read_only_folder_gives_typed_error(ctx: ContextManager) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores permissions")
    ctx.write("ro/a.md", "a")
    os.chmod(ctx.root / "ro", 0o500)
    try:
        with pytest.raises(ContextFSError):
            ctx.write("ro/a.md", "b")
    finally:
        os.chmod(ctx.root / "ro", 0o700)


def test_unreadable_content_gives_typed_errors(ctx: ContextManager) -> None:
    (ctx.root / "bin.md").write_bytes(b"\x89PNG\x00\x00")
    (ctx.root / "latin.md").write_bytes(b"caf\xe9\n")
    (ctx.root / "dir.md").mkdir()
    for call in (
        lambda: ctx.read("bin.md"),
        lambda: ctx.get("latin.md"),
        lambda: ctx.append("bin.md", "x"),
        lambda: ctx.edit("latin.md", "caf", "x"),
        lambda: ctx.write("dir.md", "x"),
        lambda: ctx.write("a.md", None),  # type: ignore[arg-type]
        lambda: ctx.write("a.md", "nul\x00byte"),
        lambda: ctx.write("a.md", "x", metadata=["not", "a", "dict"]),  # type: ignore[arg-type]
        lambda: ctx.write("a.md", "x", metadata={"when": datetime.now()}),
        lambda: ctx.write("a.md", "x" * (5 * 1024 * 1024)),
        lambda: ctx.update_metadata("latin.md", {"a": 1}),
        lambda: ctx.update_metadata("a.md", "nope"),  # type: ignore[arg-type]
        lambda: ctx.read_at("a.md", "--output=/tmp/x"),
        lambda: ctx.read_at("a.md", "deadbeef"),
        lambda: ctx.diff("a.md", "HEAD@{1}"),
        lambda: ctx.revert("a.md", "main..HEAD"),
        lambda: ctx.restore("not-an-entry"),
        lambda: ctx.history("../x"),
    ):
        with pytest.raises(ContextFSError) as info:
            call()
        assert not isinstance(info.value, OSError)
        assert str(info.value).strip()
    assert ctx.read("dir.md") is None


def test_frontmatter_error_is_typed(ctx: ContextManager) -> None:
    (ctx.root / "bad.md").write_text("---\n[1, 2\n---\n")
    with pytest.raises(FrontmatterError, match="bad.md, line"):
        ctx.get("bad.md")


# ----------------------------------------------------------------- atomic visibility
def test_reader_never_sees_a_torn_file(ctx: ContextManager) -> None:
    versions = {f"v{i}": (f"v{i}\n" + chr(ord("a") + i) * 200_000) for i in range(4)}
    ctx.write("big.md", versions["v0"])
    stop = threading.Event()
    seen: list[str] = []
    errors: list[BaseException] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                body = ctx.read("big.md")
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)
                return
            seen.append(body or "")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(12):
            ctx.write("big.md", versions[f"v{i % 4}"])
    finally:
        stop.set()
        thread.join()
    assert not errors
    assert seen
    valid = set(versions.values())
    assert all(body in valid for body in seen)
    assert not [p for p in os.listdir(ctx.root) if p.endswith(".cfs-tmp")]


# ----------------------------------------------------------------- a project in a few calls
def test_setting_up_a_project_context_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    from contextfs import ContextManager

    ctx = ContextManager("./my-project-context")

    # Initialize project context
    ctx.write("project/README.md", "# E-commerce Platform\nNext.js + Postgres + Stripe")
    ctx.write("memory/facts.md", "- Database: PostgreSQL 16\n- Auth: NextAuth with Google OAuth")
    ctx.write("memory/preferences.md", "- Use TypeScript strict mode\n- Prefer server components")
    ctx.write("skills/coding-style.md", "- camelCase variables\n- Zod for validation")

    root = tmp_path / "my-project-context"
    assert ctx.read("project/README.md") == "# E-commerce Platform\nNext.js + Postgres + Stripe"
    assert ctx.list() == [
        "memory/facts.md",
        "memory/preferences.md",
        "project/README.md",
        "skills/coding-style.md",
    ]
    subjects = git(root, "log", "--format=%s").splitlines()
    assert subjects[:4] == [
        "write: skills/coding-style.md",
        "write: memory/preferences.md",
        "write: memory/facts.md",
        "write: project/README.md",
    ]
    ctx.close()


def test_disk_failure_is_typed_and_leaves_no_trace(ctx: ContextManager) -> None:
    """An OSError from the disk (EIO, ENOSPC) surfaces as ContentError; no commit, no temp file."""
    import ctypes
    import errno

    ctx.write("a.md", "original")
    original = (ctx.root / "a.md").read_bytes()
    head = git(ctx.root, "rev-parse", "HEAD")

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def failing_syncfs(fd: int) -> int:
        ctypes.set_errno(errno.ENOSPC)
        return -1

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", failing_fsync)
        patch.setattr(durability, "_SYNCFS", failing_syncfs)
        with pytest.raises(ContentError, match="free disk space"):
            ctx.write("a.md", "new")
        with pytest.raises(ContentError):
            ctx.create("b.md", "new")
    assert (ctx.root / "a.md").read_bytes() == original
    assert not ctx.exists("b.md")
    assert git(ctx.root, "rev-parse", "HEAD") == head
    assert git(ctx.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_restore_latest_even_with_a_frozen_clock(
    ctx: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'Most recent' must not depend on the clock moving between two deletions."""
    frozen = datetime(2026, 3, 1, tzinfo=timezone.utc)
    monkeypatch.setattr(contextfs.clock, "now", lambda: frozen)
    for _ in range(4):
        ctx.write("a.md", "older")
        ctx.delete("a.md")
        ctx.write("a.md", "newer")
        ctx.delete("a.md")
        ctx.restore("a.md")
        assert ctx.read("a.md") == "newer"
        ctx.delete("a.md")
        ctx.purge_trash()
    ids = []
    for i in range(3):
        ctx.write("b.md", str(i))
        ids.append(ctx.delete("b.md").id)
    assert ids == sorted(ids) and len(set(ids)) == 3
