"""Review mode in one process: branches, approve, discard, recover, expiry, who may decide."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import application_repository, assert_clean, git

import contextfs.clock
from contextfs import ConfigError, ContextManager, ReviewError
from contextfs.review.decisions import Review
from contextfs.review.sessions import Sessions


def agent(root: Path, session: str = "s-scout", actor: str = "agent:scout") -> ContextManager:
    return ContextManager(root, actor=actor, session=session, review=True, index=False)


@pytest.fixture
def person(tmp_path: Path) -> ContextManager:
    ctx = ContextManager(tmp_path / "ctx", actor="human", index=False)
    ctx.write("memory/facts.md", "- one\n- two\n- three\n")
    return ctx


def test_the_agent_reads_its_own_writes_and_nobody_else_does(person: ContextManager) -> None:
    scout = agent(person.root)
    scout.append("memory/facts.md", "- four\n")
    scout.write("notes/new.md", "# New\n")
    assert scout.read("memory/facts.md").endswith("- four\n") and scout.exists("notes/new.md")
    # Its work tree is under the git folder.
    assert scout.root != person.root and ".git" in scout.root.parts
    for reader in (
        person,
        ContextManager(person.root, actor="human", read_only=True, index=False),
        agent(person.root, session="s-other"),
    ):
        assert "four" not in (reader.read("memory/facts.md") or "") and not reader.exists(
            "notes/new.md"
        )
    assert_clean(person.root)  # the person's work tree holds nothing of the review branch
    (pending,) = Sessions(person).list(status="pending")
    assert (pending.id, pending.pending, pending.files) == (
        "s-scout",
        2,
        ("memory/facts.md", "notes/new.md"),
    )


def test_approve_merges_with_the_agents_authors_and_the_person_as_merger(
    person: ContextManager,
) -> None:
    scout = agent(person.root)
    scout.append("memory/facts.md", "- four\n")
    report = Sessions(person).approve("s-scout")
    assert report.merged == ["memory/facts.md"] and not report.conflict_copies
    assert person.read("memory/facts.md").endswith("- three\n- four\n")
    parents = git(person.root, "log", "-1", "--format=%P %an").split()
    assert len(parents) == 3 and parents[2] == "human"  # a merge commit by the person
    assert git(person.root, "log", "-1", "--format=%an", parents[1]).strip() == "agent:scout"
    assert "Contextfs-Approves: s-scout" in git(person.root, "log", "-1", "--format=%B")
    assert Sessions(person).get("s-scout").status == "approved"
    assert_clean(person.root)
    with pytest.raises(ReviewError, match="nothing waiting"):
        Sessions(person).approve("s-scout")
    # The session goes on: the next approval takes only what is new.
    scout.append("memory/facts.md", "- five\n")
    assert Sessions(person).get("s-scout").pending == 1
    Sessions(person).approve("s-scout")
    assert person.read("memory/facts.md").endswith("- four\n- five\n")


def test_a_conflicting_change_on_main_becomes_a_conflict_copy(person: ContextManager) -> None:
    person.write("project/plan.md", "# Plan\n\n- one\n- two\n- three\n")
    scout = agent(person.root)
    scout.edit("project/plan.md", "- two", "- two (agent)")
    person.edit("project/plan.md", "- two", "- two (person)")
    report = Sessions(person).approve("s-scout")
    ((copy, original),) = report.conflict_copies.items()
    assert original == "project/plan.md" and copy.startswith("project/plan.conflict-")
    assert "- two (person)" in person.read("project/plan.md")
    assert "- two (agent)" in person.read(copy)
    for path in person.list():
        assert "<<<<<<<" not in (person.read(path) or "")
    assert any(copy in note for note in report.notes)


def test_changes_on_both_sides_merge_by_the_kind_of_file(person: ContextManager) -> None:
    person.write("project/plan.md", "# Plan\n\n- one\n\n## Later\n\n- three\n")
    scout = agent(person.root)
    scout.edit("project/plan.md", "- three", "- three, then four")  # the body's end
    scout.append("memory/facts.md", "- four (agent)\n")
    person.edit("project/plan.md", "- one", "- one, done")  # its start
    person.append("memory/facts.md", "- five (person)\n")
    report = Sessions(person).approve("s-scout")
    assert not report.conflict_copies  # frontmatter key by key, the bodies' lines merged
    assert "- one, done" in person.read("project/plan.md") and "- three, then four" in person.read(
        "project/plan.md"
    )
    facts = person.read("memory/facts.md")  # an entries file: the union, each line once
    assert "- four (agent)" in facts and "- five (person)" in facts and facts.count("- two") == 1


def test_a_delete_against_an_edit_keeps_the_edit(person: ContextManager) -> None:
    person.write("notes/plan.md", "# Plan\n- a\n")
    scout = agent(person.root)
    scout.delete("notes/plan.md")
    person.append("notes/plan.md", "- b\n")
    report = Sessions(person).approve("s-scout")
    assert person.read("notes/plan.md") == "# Plan\n- a\n- b\n"
    assert any("the change is kept" in note for note in report.notes), report.notes


def test_discard_keeps_the_changes_recoverable_until_they_expire(
    person: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    scout = agent(person.root)
    scout.write("notes/idea.md", "# Idea\n")
    folder = scout.parts.review.worktree
    gone = Sessions(person).discard("s-scout")
    assert not folder.exists() and gone.session == "s-scout"
    assert Sessions(person).get("s-scout").status == "discarded"
    with pytest.raises(ReviewError, match="discarded or closed"):
        scout.write("notes/more.md", "x")  # the agent's handle knows its branch is gone
    Sessions(person).recover("s-scout")
    assert Sessions(person).get("s-scout").status == "pending"
    again = agent(person.root)  # reopening the session brings its work tree back
    assert again.read("notes/idea.md") == "# Idea\n"
    Sessions(person).discard("s-scout")
    later = datetime.now(timezone.utc) + timedelta(days=15)
    monkeypatch.setattr(contextfs.clock, "now", lambda: later)
    assert Review(person).expire() == ["s-scout"]
    with pytest.raises(ReviewError, match="can be recovered"):
        Sessions(person).recover("s-scout")
    with pytest.raises(Exception, match="s-scout"):
        Sessions(person).get("s-scout")


def test_agents_never_decide(person: ContextManager) -> None:
    scout = agent(person.root)
    scout.write("notes/x.md", "x\n")
    with (
        person.provenance(actor="agent:planner"),
        pytest.raises(ReviewError, match="cannot approve"),
    ):
        Sessions(person).approve("s-scout")
    with pytest.raises(ReviewError, match="cannot discard"):
        Sessions(scout).discard("s-scout")
    with pytest.raises(ReviewError, match="main root"), scout.provenance(actor="human"):
        Sessions(scout).approve("s-scout")
    assert Sessions(person).get("s-scout").status == "pending"


def test_review_per_agent_from_the_config(person: ContextManager) -> None:
    config = person.root / ".contextfs" / "config.toml"
    config.write_text('[review]\nagents = ["agent:scout*"]\nkeep_days = 3\n')
    person.sync()
    scout = ContextManager(person.root, actor="agent:scout-2", session="s-cfg", index=False)
    assert scout.parts.review is not None  # the config put it in review mode
    scout.write("notes/a.md", "a\n")
    assert not person.exists("notes/a.md")
    other = ContextManager(person.root, actor="agent:writer", index=False)
    assert other.parts.review is None
    other.write("notes/b.md", "b\n")
    # Through a handle that is not in review mode, a listed agent's write is refused.
    with person.provenance(actor="agent:scout-3"), pytest.raises(ReviewError, match="review=True"):
        person.write("notes/c.md", "c\n")
    assert not person.exists("notes/c.md")
    assert (
        Review(person)
        .discard("s-cfg")
        .expires.startswith((datetime.now(timezone.utc) + timedelta(days=3)).strftime("%Y-%m-%d"))
    )


def test_a_root_inside_an_application_repository(tmp_path: Path) -> None:
    app = application_repository(tmp_path)
    person = ContextManager(app / "context", actor="human", index=False)
    person.write("memory/facts.md", "- one\n")
    scout = agent(app / "context")
    assert (scout.parts.review.worktree / "context" / "memory" / "facts.md").is_file()
    assert not (
        scout.parts.review.worktree / "main.py"
    ).exists()  # only the root's folder is written out
    scout.append("memory/facts.md", "- two\n")
    assert Sessions(person).get("s-scout").files == ("memory/facts.md",)
    Sessions(person).approve("s-scout")
    assert person.read("memory/facts.md") == "- one\n- two\n"
    assert (app / "main.py").read_text() == "print('app')\n"
    assert git(app, "status", "--porcelain") == ""


def test_a_broken_review_setting_refuses_agents_writes_not_their_reads(
    person: ContextManager,
) -> None:
    (person.root / ".contextfs" / "config.toml").write_text('[review]\nagents = "agent:*"\n')
    scout = ContextManager(person.root, actor="agent:scout", index=False)
    assert scout.read("memory/facts.md") == "- one\n- two\n- three\n"
    with pytest.raises(ConfigError, match="agents must be a list"):
        scout.write("notes/x.md", "x\n")
    assert not (person.root / "notes" / "x.md").exists()


def test_the_agents_tool_lists_what_waits_and_nothing_decides(person: ContextManager) -> None:
    from contextfs.integrations import Toolkit, all_specs
    from contextfs.integrations.tools.review import REVIEW_TOOLS

    scout = agent(person.root)
    kit = Toolkit(scout, actor="agent:scout", session="s-scout")
    (spec,) = REVIEW_TOOLS
    assert "No session is waiting" in kit.call(spec, spec.args(limit=5))
    kit.call(
        next(s for s in all_specs() if s.name == "append_context"),
        next(s for s in all_specs() if s.name == "append_context").args(
            path="memory/facts.md", text="- four"
        ),
    )
    listed = kit.call(spec, spec.args(limit=5))
    assert (
        "s-scout (this session)" in listed
        and "memory/facts.md" in listed
        and "only a person" in listed
    )
    assert spec.read_only
    assert not [
        s.name for s in all_specs() if any(w in s.name for w in ("approve", "discard", "recover"))
    ]
