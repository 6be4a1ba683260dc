"""Undoing a session: what it leaves alone (the root's creation, earlier undos, a person's
managed files, paths changed since), how each undo commit is named, and the trash entries
it drops or keeps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import assert_clean, git

from contextfs import ContextManager
from contextfs.errors import InvalidArgumentError


def test_undoing_a_session_twice_undoes_it_once(tmp_path: Path) -> None:
    # The root's own first commit carries the session too, and adopts what the folder
    # held: undoing the session never undoes the root's creation, nor (the second time)
    # its own earlier undo.
    (tmp_path / "ctx").mkdir()
    (tmp_path / "ctx" / "before.md").write_text("there before the store\n")
    ctx = ContextManager(tmp_path / "ctx", session="s1", index=False)
    assert ctx.history()[0].op == "init" and ctx.history()[0].session == "s1"
    tracked = git(ctx.root, "ls-files")
    ctx.write("a.md", "made by s1\n")
    made = ctx.history(limit=1)[0].commit
    report = ctx.revert_session("s1")
    head = ctx.history(limit=1)[0]
    assert (report.reverted, report.commits, report.conflicts) == ([made], [head.commit], [])
    assert head.op == "revert-session" and head.message == f"revert-session: s1 {made[:12]}"
    assert head.trailers["Contextfs-Reverts"] == made
    again = ctx.revert_session("s1")
    assert (again.reverted, again.commits) == ([], [])
    assert again.conflicts == [f"a.md (changed after {made[:12]})"]
    assert not ctx.exists("a.md") and [e.original_path for e in ctx.trash()] == ["a.md"]
    assert ctx.read("before.md") == "there before the store\n"
    [entry] = ctx.trash()
    assert sorted(git(ctx.root, "ls-files").split()) == sorted(
        [*tracked.split(), entry.meta_path, entry.stored_path]
    )
    assert_clean(ctx.root)


def test_a_conflict_leaves_the_rest_of_its_commit_to_be_undone(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", session="base", index=False)
    ctx.write("a.md", "a before\n")
    ctx.write("b.md", "b before\n")
    with ctx.provenance(session="s1"), ctx.transaction("both"):
        ctx.write("a.md", "a by s1\n")
        ctx.write("b.md", "b by s1\n")
    both = ctx.history(limit=1)[0].commit
    ctx.write("a.md", "a fixed later\n")
    report = ctx.revert_session("s1")
    assert report.reverted == [both]
    assert report.conflicts == [f"a.md (changed after {both[:12]})"]
    assert (ctx.read("a.md"), ctx.read("b.md")) == ("a fixed later\n", "b before\n")
    assert_clean(ctx.root)


def test_undone_deletions_come_back_and_only_their_own_trash_entries_go(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", session="base", index=False)
    for rel in ("notes/a.md", "notes/b.md", "x.md", "y.md", "z.md"):
        ctx.write(rel, f"{rel} as written\n")
    with ctx.provenance(session="s1"):
        ctx.delete("notes")  # a folder: one entry for both files
        with ctx.transaction("two at once"):  # two entries in one commit
            ctx.delete("x.md")
            ctx.delete("y.md")
        ctx.delete("z.md")
    ctx.restore("x.md")  # someone brought x back already: its entry is gone
    ctx.write("z.md", "a new z\n")  # and wrote a new z: the old one stays in the trash
    report = ctx.revert_session("s1")
    assert len(report.reverted) == 2 and len(report.conflicts) == 2
    assert [c.split(" ")[0] for c in report.conflicts] == ["x.md", "z.md"]
    for rel in ("notes/a.md", "notes/b.md", "x.md", "y.md"):
        assert ctx.read(rel) == f"{rel} as written\n"
    assert ctx.read("z.md") == "a new z\n"
    [kept] = ctx.trash()
    assert kept.original_path == "z.md"
    assert ctx.restore(kept.id, to="old-z.md") == "old-z.md"
    assert ctx.read("old-z.md") == "z.md as written\n" and ctx.trash() == []
    assert_clean(ctx.root)


def test_a_session_in_a_persons_first_commit_is_undone_but_not_their_git_files(
    tmp_path: Path,
) -> None:
    # A repository that starts with a commit marked with a session (as a shallow clone's
    # oldest commit can be): it has no parent, so what it added is what it made.
    root = tmp_path / "repo"
    (root / "notes").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "a.md").write_text("imported\n")
    (root / "notes" / ".gitignore").write_text("*.tmp\n")
    git(root, "add", "-A")
    git(
        root,
        *("-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-q"),
        *("-m", "import", "-m", "Contextfs-Session: imported"),
    )
    first = git(root, "rev-parse", "HEAD").strip()
    ctx = ContextManager(root, session="base", index=False)
    report = ctx.revert_session("imported")
    assert (report.reverted, report.conflicts) == ([first], [])
    assert not ctx.exists("a.md") and [e.original_path for e in ctx.trash()] == ["a.md"]
    assert (root / "notes" / ".gitignore").read_text() == "*.tmp\n"
    assert_clean(ctx.root)


def test_a_long_session_is_undone_to_its_first_commit(tmp_path: Path) -> None:
    # More commits than a history page (50): every one of them is undone.
    ctx = ContextManager(tmp_path / "ctx", session="base", index=False)
    ctx.write("count.md", "0\n")
    with ctx.provenance(session="s1"):
        for n in range(1, 52):
            ctx.write("count.md", f"{n}\n")
    report = ctx.revert_session("s1")
    assert len(report.reverted) == 51 and report.conflicts == []
    assert ctx.read("count.md") == "0\n"


@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ContextManager]:
    ctx = ContextManager(tmp_path_factory.mktemp("ids") / "ctx", index=False)
    yield ctx
    ctx.close()


@pytest.mark.parametrize(
    ("session", "message"),
    [
        (3.5, "^session must be a string, not float"),
        ("two words", "^session 'two words' is not accepted"),
        (None, "needs the id of the session"),
    ],
)
def test_a_session_id_that_is_not_one_is_refused_by_name(
    blank: ContextManager, session: object, message: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        blank.revert_session(session)  # type: ignore[arg-type]
