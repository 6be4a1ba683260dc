"""Sessions as the unit of review: listing, statuses, line counts, diffs, trash, the cache."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import git
from hypothesis import given
from hypothesis import strategies as st

import contextfs.clock
from contextfs import ContextManager, InvalidArgumentError, NotFoundError, ReviewError
from contextfs.review import log as session_log
from contextfs.review.branch import decode_session, encode_session
from contextfs.review.sessions import Sessions


def numstat_of(root: Path, session: str) -> tuple[int, int, set[str]]:
    """Lines added and removed and files touched by a session's commits, as git counts them."""
    out = git(
        root,
        "log",
        "--all",
        "--numstat",
        "--format=%x00%(trailers:key=Contextfs-Session,valueonly)",
    )
    added = removed = 0
    files: set[str] = set()
    for chunk in out.split("\0")[1:]:
        head, _, stats = chunk.partition("\n")
        if head.strip() != session:
            continue
        for line in stats.splitlines():
            parts = line.split("\t")
            if len(parts) == 3:
                added += int(parts[0])
                removed += int(parts[1])
                files.add(parts[2])
    return added, removed, files


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "ctx"


def test_sessions_list_who_what_when_and_how_many_lines(root: Path) -> None:
    person = ContextManager(root, actor="human", session="s-person", index=False)
    person.write("memory/facts.md", "- one\n- two\n")
    with person.provenance(actor="agent:scout", session="s-scout"):
        person.append("memory/facts.md", "- three\n")
        person.write("notes/a.md", "# A\nbody\n")
        person.edit("memory/facts.md", "- one", "- ONE")
    found = {s.id: s for s in Sessions(person).list()}
    scout = found["s-scout"]
    assert scout.status == "direct" and scout.agents == ("agent:scout",) and scout.pending == 0
    assert scout.files == ("memory/facts.md", "notes/a.md") and len(scout.commits) == 3
    added, removed, files = numstat_of(root, "s-scout")
    assert (scout.added, scout.removed, set(scout.files)) == (added, removed, files)
    assert scout.started <= scout.ended and found["s-person"].agents == ("human",)
    assert [s.id for s in Sessions(person).list(limit=1)] == [Sessions(person).list()[0].id]
    with pytest.raises(ReviewError, match="unknown session status"):
        Sessions(person).list(status="waiting")


def test_a_session_diff_goes_from_before_its_first_change_to_after_its_last(root: Path) -> None:
    ctx = ContextManager(root, actor="human", index=False)
    ctx.write("memory/facts.md", "- one\n- two\n")
    with ctx.provenance(actor="agent:scout", session="s-scout"):
        ctx.append("memory/facts.md", "- three\n")
        ctx.append("memory/facts.md", "- four\n")
        ctx.write("notes/new.md", "# New\n")
    ctx.append("memory/facts.md", "- five (a person, later)\n")
    changes = {c.path: c for c in Sessions(ctx).changes("s-scout")}
    assert set(changes) == {"memory/facts.md", "notes/new.md"}
    facts = changes["memory/facts.md"]
    assert facts.kind == "modified" and "+- three\n" in facts.diff and "+- four\n" in facts.diff
    assert "five" not in facts.diff and "five" not in (facts.after or "")
    assert changes["notes/new.md"].kind == "added" and changes["notes/new.md"].before is None
    assert Sessions(ctx).diff("s-scout") == facts.diff + changes["notes/new.md"].diff


def test_a_file_the_session_moved_to_the_trash_shows_its_entry_and_comes_back(root: Path) -> None:
    ctx = ContextManager(root, actor="human", index=False)
    ctx.write("notes/old.md", "# Old\nkeep me\n")
    with ctx.provenance(actor="agent:cleaner", session="s-clean"):
        entry = ctx.delete("notes/old.md")
    (change,) = Sessions(ctx).changes("s-clean")
    assert (change.path, change.kind, change.trash_entry) == ("notes/old.md", "trashed", entry.id)
    assert change.removed > 0 and "-keep me" in change.diff
    ctx.restore(change.trash_entry)
    assert ctx.read("notes/old.md") == "# Old\nkeep me\n"


def test_unknown_and_hostile_session_ids(root: Path) -> None:
    ctx = ContextManager(root, actor="human", index=False)
    ctx.write("a.md", "x")
    for unknown in ("s-nobody", "--all"):  # never an option: ids only ever reach git as data
        with pytest.raises(NotFoundError, match="no commit of session"):
            Sessions(ctx).get(unknown)
    for bad in ("../x", "a b", "", "x" * 200, "a\nContextfs-Approves: x"):
        with pytest.raises(InvalidArgumentError):
            Sessions(ctx).get(bad)


def test_the_commit_log_reads_each_commit_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = ContextManager(root, actor="human", index=False)
    for n in range(5):
        with ctx.provenance(actor=f"agent:a{n}"):
            ctx.write(f"n{n}.md", f"{n}\n")
    asked: list[int] = []
    real = session_log.read_commits

    def counting(git_store, shas):  # type: ignore[no-untyped-def]
        shas = list(shas)
        asked.append(len(shas))
        return real(git_store, shas)

    monkeypatch.setattr(session_log, "read_commits", counting)
    first = Sessions(ctx).list()  # one walk of the history, then the cache answers
    assert Sessions(ctx).list() == first and asked == []
    ctx.write("n9.md", "9\n")
    assert len(Sessions(ctx).list()[0].commits) == 7 and asked == [1]
    # A line this machine did not sign (a forged author here) is read again from git:
    # the six commits of the first listing's line.
    cache = ctx.parts.state.file("session-log.jsonl")
    cache.write_bytes(cache.read_bytes().replace(b'"agent:a3"', b'"agent:evil"'))
    assert "agent:evil" not in str(Sessions(ctx).list()) and asked == [1, 6]
    assert any("agent:a3" in s.agents for s in Sessions(ctx).list()) and asked == [1, 6]


@given(st.text(alphabet="abcXYZ019_.:@-", min_size=1, max_size=40))
def test_session_ids_round_trip_through_ref_names(session: str) -> None:
    part = encode_session(session)
    assert decode_session(part) == session
    assert all(ch.isalnum() or ch in "_-" for ch in part)


def test_undo_reverts_a_direct_session_and_refuses_a_pending_one(root: Path) -> None:
    ctx = ContextManager(root, actor="human", index=False)
    ctx.write("memory/facts.md", "- one\n")
    with ctx.provenance(actor="agent:scout", session="s-scout"):
        ctx.append("memory/facts.md", "- wrong\n")
    report = Sessions(ctx).undo("s-scout")
    assert report.reverted and ctx.read("memory/facts.md") == "- one\n"
    assert Sessions(ctx).get("s-scout").reverted
    agent = ContextManager(root, actor="agent:scout", session="s-later", review=True, index=False)
    agent.write("x.md", "x\n")
    with pytest.raises(ReviewError, match="discard it instead"):
        Sessions(ctx).undo("s-later")


def test_times_come_from_the_commits(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import datetime, timezone

    moments = iter(
        [
            datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc),
            datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc),
        ]
    )
    ctx = ContextManager(root, actor="human", index=False)
    with ctx.provenance(session="s-timed"):
        for n in range(2):
            moment = next(moments)
            monkeypatch.setattr(contextfs.clock, "now", lambda moment=moment: moment)
            ctx.write(f"t{n}.md", "x\n")
    found = Sessions(ctx).get("s-timed")
    assert (found.started, found.ended) == ("2026-03-01T09:00:00Z", "2026-03-01T09:30:00Z")
    out = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%an"], capture_output=True, text=True
    )
    assert out.stdout.strip() == "human"


def test_a_main_branch_moved_back_by_hand_is_read_again(root: Path) -> None:
    ctx = ContextManager(root, actor="human", index=False)
    ctx.write("a.md", "a\n")
    with ctx.provenance(session="s-gone"):
        ctx.write("b.md", "b\n")
    assert "s-gone" in [s.id for s in Sessions(ctx).list()]
    git(root, "reset", "-q", "--hard", "HEAD~1")  # a person's own git, behind the store's back
    again = ContextManager(root, actor="human", index=False)
    assert "s-gone" not in [s.id for s in Sessions(again).list()]
    again.write("c.md", "c\n")  # and the list grows from there as usual
    listed = {s.id: s for s in Sessions(again).list()}
    assert "s-gone" not in listed and listed[again.parts.session or ""].files == ("c.md",)


def test_one_sessions_object_sees_what_was_committed_since(root: Path) -> None:
    ctx = ContextManager(root, actor="human", index=False)
    ctx.write("a.md", "a\n")
    sessions = Sessions(ctx)
    assert "s-later" not in [s.id for s in sessions.list()]
    with ctx.provenance(session="s-later"):
        ctx.write("b.md", "b\n")
    assert "s-later" in [s.id for s in sessions.list()]
    agent = ContextManager(root, actor="agent:scout", session="s-review", review=True, index=False)
    agent.write("c.md", "c\n")  # a review ref moved, the main branch did not
    assert sessions.get("s-review").status == "pending"
