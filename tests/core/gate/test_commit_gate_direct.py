"""The commit gate's second look, where the write gate never looked first.

Every public write judges a name and its bytes before the commit gate sees them, so the
commit gate's own checks (:mod:`contextfs.gate.history`) decide only for what a change
carries that no write judged: an old version a revert brings back, a file a move or a delete
takes along under its new name, a person's version the change adopts. Each test below mixes
such bytes or names with ones the gate may pass over (bytes the write gate vetted, bytes
HEAD already holds at a path the change moved), sorted so that the harmless path comes
first, and checks that the refusal is typed, names the path and the channel, commits
nothing, and leaves a person's bytes where they saved them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import commit_as_person, git
from secret_samples import SECRET_KINDS

from contextfs import ContentError, ContextManager

TOKEN = SECRET_KINDS["GitHub classic token"](random.Random(11)).payload


def _log(root: Path) -> list[str]:
    return git(root, "log", "--format=%H").split()


def _not_echoed(message: str) -> None:
    assert not any(TOKEN[i : i + 10] in message for i in range(len(TOKEN) - 9)), message


def _in_history(root: Path) -> bool:
    text = git(root, "log", "--all", "-p", "--name-only", "--format=%B")
    return TOKEN in text


@pytest.fixture
def root(tmp_path: Path) -> ContextManager:
    """A root whose history holds, one version back, ``notes/keys.txt`` with a token that a
    person committed with plain git (so no gate saw it), rotated since through contextfs."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    ctx.write("notes/base.md", "# Base\n\nAn ordinary note.\n")
    (ctx.root / "notes" / "keys.txt").write_text(f"token: {TOKEN}\n", "utf-8")
    git(ctx.root, "add", "notes/keys.txt")
    commit_as_person(ctx.root, "old keys")
    ctx.write("notes/keys.txt", "rotated\n")
    return ctx


def _old_keys(ctx: ContextManager) -> str:
    return _log(ctx.root)[1]


def _write_a_plan(ctx: ContextManager) -> None:
    # notes/a-plan.md: vetted by the write gate, and a new path (no blob at HEAD), which
    # must match no other bytes.
    ctx.write("notes/a-plan.md", "# Plan\n\nShip on Friday.\n")


def _move_the_base(ctx: ContextManager) -> None:
    # notes/base.md moved to notes/b.md: HEAD holds those bytes already, so they pass.
    ctx.move("notes/base.md", "notes/b.md")


@pytest.mark.parametrize(
    ("first", "made"),
    [(_write_a_plan, "notes/a-plan.md"), (_move_the_base, "notes/b.md")],
    ids=["a vetted write", "bytes already in history moved"],
)
def test_bytes_passed_over_sorted_first_do_not_let_a_reverted_secret_through(
    root: ContextManager, first: Callable[[ContextManager], None], made: str
) -> None:
    # The path ``first`` makes sorts before notes/keys.txt, whose old version no gate in
    # this change judged: passing over the first must not end the look at the rest.
    old = _old_keys(root)
    before = _log(root.root)
    with pytest.raises(ContentError) as caught, root.transaction("tidy the notes"):
        first(root)
        root.revert("notes/keys.txt", old)
    message = str(caught.value)
    _not_echoed(message)
    assert message.startswith("refused: notes/keys.txt holds a secret: GitHub token on line 1"), (
        message
    )
    assert _log(root.root) == before
    assert not (root.root / made).exists()
    assert (root.root / "notes" / "base.md").read_text("utf-8").endswith("An ordinary note.\n")
    assert (root.root / "notes" / "keys.txt").read_text("utf-8") == "rotated\n"
    assert git(root.root, "status", "--porcelain") == ""


def _named_after_a_token(tmp_path: Path) -> ContextManager:
    """A root where a person committed notes/<token>.md with plain git."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    ctx.write("notes/base.md", "# Base\n\nAn ordinary note.\n")
    (ctx.root / "notes" / f"{TOKEN}.md").write_text("an innocent body\n", "utf-8")
    git(ctx.root, "add", "notes")
    commit_as_person(ctx.root, "a note named after a token")
    return ctx


def _secrets_in_history(root: Path) -> set[str]:
    from contextfs.gate.secrets import scan

    text = git(root, "log", "--all", "-p", "--name-only", "--format=%B")
    return {finding.fingerprint for finding in scan(text)}


@pytest.mark.parametrize(
    "step",
    [
        pytest.param(lambda ctx: ctx.delete(f"notes/{TOKEN}.md"), id="delete"),
        pytest.param(lambda ctx: ctx.move(f"notes/{TOKEN}.md", "notes/renamed.md"), id="move-away"),
        pytest.param(lambda ctx: ctx.move("notes", "archive"), id="folder-move"),
        pytest.param(
            lambda ctx: ctx.restore(ctx.delete(f"notes/{TOKEN}.md").id), id="delete-then-restore"
        ),
    ],
)
def test_a_name_history_already_holds_can_be_moved_or_deleted(
    tmp_path: Path, step: Callable[[ContextManager], object]
) -> None:
    # The name is in history already: refusing the commit that moves it away or deletes it
    # (its subject naming the old path, the trash entry keeping it) would only keep it in
    # the tree. Such a commit adds no secret history does not hold.
    ctx = _named_after_a_token(tmp_path)
    known = _secrets_in_history(ctx.root)
    assert known, "the token is a secret to the scanner"
    before = _log(ctx.root)
    step(ctx)
    assert len(_log(ctx.root)) > len(before)
    assert _secrets_in_history(ctx.root) == known
    assert git(ctx.root, "status", "--porcelain") == ""


def test_a_new_secret_name_beside_one_history_holds_is_still_refused(tmp_path: Path) -> None:
    # Only the secrets of the names the change takes from HEAD are known: another token in
    # the same change's names is refused as ever, and nothing is committed.
    ctx = _named_after_a_token(tmp_path)
    other = SECRET_KINDS["GitHub classic token"](random.Random(12)).payload
    before = _log(ctx.root)
    with pytest.raises(ContentError) as caught, ctx.transaction("tidy up"):
        ctx.move(f"notes/{TOKEN}.md", "notes/renamed.md")
        ctx.move("notes/base.md", f"notes/{other}.md")
    message = str(caught.value)
    _not_echoed(message)
    assert other[4:14] not in message
    assert message.startswith("refused: a file or folder name in this change holds a secret"), (
        message
    )
    assert _log(ctx.root) == before
    assert (ctx.root / "notes" / f"{TOKEN}.md").read_text("utf-8") == "an innocent body\n"
    assert not (ctx.root / "notes" / f"{other}.md").exists()


def test_a_folder_delete_does_not_adopt_a_persons_file_under_a_secret_name(
    tmp_path: Path,
) -> None:
    # A person saved notes/<token>.md and never committed it; deleting the folder takes it
    # along, so it would be committed first as their version. Its name is refused as the
    # name of a file saved outside contextfs, and it stays on disk where they saved it.
    ctx = ContextManager(tmp_path / "ctx", index=False)
    ctx.write("notes/base.md", "# Base\n\nAn ordinary note.\n")
    saved = ctx.root / "notes" / f"{TOKEN}.md"
    saved.write_text("a person's note\n", "utf-8")
    before = _log(ctx.root)
    with pytest.raises(ContentError) as caught:
        ctx.delete("notes")
    message = str(caught.value)
    _not_echoed(message)
    assert message.startswith(
        "refused: the name of a file saved outside contextfs in this change holds a secret"
    ), message
    assert _log(ctx.root) == before
    assert saved.read_text("utf-8") == "a person's note\n"
    assert (ctx.root / "notes" / "base.md").read_text("utf-8").endswith("An ordinary note.\n")
    assert not _in_history(ctx.root)
    assert git(ctx.root, "status", "--porcelain", "--untracked-files=all").split() == [
        "??",
        f"notes/{TOKEN}.md",
    ]


def test_a_synced_version_sorted_first_does_not_let_an_adopted_secret_through(
    tmp_path: Path,
) -> None:
    # A person edited notes/a.md (harmless) and notes/z.md (a token). A sync inside the
    # transaction scans both, takes notes/a.md (its bytes vetted) and holds notes/z.md back;
    # the agent's write over notes/z.md then adopts their version, to commit first. The
    # vetted one sorts first: passing over it must not end the look at notes/z.md.
    ctx = ContextManager(tmp_path / "ctx", index=False)
    ctx.write("notes/a.md", "# A\n\nFirst.\n")
    ctx.write("notes/z.md", "# Z\n\nLast.\n")
    before = _log(ctx.root)
    (ctx.root / "notes" / "a.md").write_text("# A\n\nEdited by a person.\n", "utf-8")
    (ctx.root / "notes" / "z.md").write_text(f"# Z\n\ntoken: {TOKEN}\n", "utf-8")
    with pytest.raises(ContentError) as caught, ctx.transaction("tidy the notes"):
        assert ctx.sync() == []  # inside the transaction: committed with it, or not at all
        assert list(ctx.parts.last_sync.held) == ["notes/z.md"]
        ctx.write("notes/z.md", "# Z\n\nRewritten by the agent.\n")
    message = str(caught.value)
    _not_echoed(message)
    assert message.startswith(
        "notes/z.md holds a version saved outside contextfs and not committed yet, which this "
        "change would commit first; nothing was written or committed and that version stays on disk."
    ), message
    assert _log(ctx.root) == before
    assert not _in_history(ctx.root)
    assert (ctx.root / "notes" / "z.md").read_text("utf-8") == f"# Z\n\ntoken: {TOKEN}\n"
    assert (ctx.root / "notes" / "a.md").read_text("utf-8") == "# A\n\nEdited by a person.\n"
