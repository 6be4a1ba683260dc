"""contextfs sync between machines: real bare remotes, real clones, contextfs's merge rules.

Each of the first tests is one of the ways plain ``git pull`` fails a shared context
(frontmatter conflicts, a delete that swallows an edit, an add/add of one archival fact,
two active topics and two D1s, logs out of time order, a conflicted file that cannot be
read and is indexed with its markers, a remote whose HEAD is ``master``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import git
from sync_support import (
    bare_remote,
    committed_markers,
    first_machine,
    fsck,
    join_machine,
    pulled_into_conflict,
    run_git,
    tree_of,
)

from contextfs import ConflictError, ContextManager, TopicError
from contextfs.scopes import Memory, Topics


@pytest.fixture
def pair(tmp_path: Path) -> tuple[ContextManager, ContextManager, Path]:
    """Two machines, a laptop and a server, sharing one bare remote (HEAD: master)."""
    remote = bare_remote(tmp_path / "remote.git")
    url = remote.as_uri()
    laptop = first_machine(tmp_path / "laptop", url, "laptop", actor="agent:planner")
    laptop.write("project/README.md", "# Tidewater\n\nA billing service.\n")
    laptop.remote.sync()
    server = join_machine(tmp_path / "server", url, "server", actor="agent:worker")
    return laptop, server, remote


def converge(*machines: ContextManager) -> None:
    """Sync every machine twice round: after that they all hold the remote's tree."""
    for _ in range(2):
        for m in machines:
            m.remote.sync()
    trees = {tree_of(m.root) for m in machines}
    assert len(trees) == 1, trees
    for m in machines:
        fsck(m.root)
        assert committed_markers(m.root) == []
        assert git(m.root, "status", "--porcelain") == ""


# ---------------------------------------------------------------- 1. frontmatter both sides
def test_edits_of_one_note_on_two_machines_merge_key_by_key_and_line_by_line(pair) -> None:
    laptop, server, _ = pair
    text = "# Runbook\n\nStep one: drain the queue.\n\nStep two: rotate the key.\n\nStep three: deploy.\n"
    laptop.write("project/runbook.md", text, {"owner": "ops", "tags": ["ops"]})
    laptop.remote.sync()
    server.remote.sync()
    laptop.edit("project/runbook.md", "drain the queue", "drain the billing queue")
    laptop.update_metadata("project/runbook.md", {"tags": ["ops", "billing"]})
    server.edit("project/runbook.md", "deploy.", "deploy with the canary.")
    server.update_metadata("project/runbook.md", {"reviewed": True})
    converge(laptop, server)
    doc = server.get("project/runbook.md")
    assert "drain the billing queue" in doc.body and "deploy with the canary." in doc.body
    assert doc.metadata["tags"] == ["ops", "billing"] and doc.metadata["reviewed"] is True
    assert doc.metadata["owner"] == "ops" and doc.metadata["author"] in (
        "agent:planner",
        "agent:worker",
    )
    raw = (server.root / "project/runbook.md").read_text()
    assert raw.count("---\n") == 2 and raw.count("# Runbook") == 1
    assert laptop.remote.conflicts() == []


def test_a_person_key_set_differently_on_both_sides_keeps_one_value_and_reports_the_other(
    pair,
) -> None:
    laptop, server, _ = pair
    laptop.write("project/owner.md", "# Owner\n", {"owner": "ana"})
    laptop.remote.sync()
    server.remote.sync()
    laptop.update_metadata("project/owner.md", {"owner": "ben"})
    server.update_metadata("project/owner.md", {"owner": "cleo"})
    laptop.remote.sync()
    result = server.remote.sync()
    notes = [n for n in result.notes if n.kind == "key-conflict"]
    assert len(notes) == 1 and "'owner'" in notes[0].detail
    kept = server.get("project/owner.md").metadata["owner"]
    assert kept in ("ben", "cleo") and ({"ben", "cleo"} - {kept}).pop() in notes[0].detail


# ---------------------------------------------------------------- 2. delete against edit
def test_a_delete_on_one_machine_and_an_edit_on_the_other_keep_the_edit(pair) -> None:
    laptop, server, _ = pair
    laptop.write("task/plan.md", "# Plan\n\n- step one\n")
    laptop.remote.sync()
    server.remote.sync()
    laptop.delete("task/plan.md")
    server.edit("task/plan.md", "- step one", "- step one, then two")
    laptop.remote.sync()
    result = server.remote.sync()
    assert [n.kind for n in result.notes if n.path == "task/plan.md"] == ["delete-edit"]
    converge(laptop, server)
    for machine in (laptop, server):
        assert machine.read("task/plan.md") == "# Plan\n\n- step one, then two\n"
        assert machine.history("task/plan.md", limit=1)[0].op in ("merge", "edit")
    # The deleted version is still in the trash and in history: nothing is lost either way.
    assert [e.original_path for e in laptop.trash()] == ["task/plan.md"]


def test_a_persons_git_pull_of_a_delete_against_an_edit_stops_and_sync_keeps_the_edit(
    tmp_path: Path,
) -> None:
    laptop = ContextManager(tmp_path / "laptop", index=False)
    laptop.write("task/plan.md", "# Plan\n\n- step one\n")
    run_git("clone", "-q", str(laptop.root), str(tmp_path / "server"))
    server = ContextManager(tmp_path / "server", index=False)
    laptop.delete("task/plan.md")
    server.edit("task/plan.md", "- step one", "- step one, then two")
    # Rename detection is off in a root's own repository: git stops on modify/delete
    # instead of applying the edit to the trash copy.
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(server.root),
            "-c",
            "user.name=p",
            "-c",
            "user.email=p@x.invalid",
            "pull",
            "-q",
            "--no-rebase",
            str(laptop.root),
            "main",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0 and "modify/delete" in proc.stdout + proc.stderr
    server.remote.sync()
    assert server.read("task/plan.md") == "# Plan\n\n- step one, then two\n"


# ---------------------------------------------------------------- 3. one fact, two machines
def test_the_same_archival_fact_saved_on_two_machines_is_one_note(pair) -> None:
    laptop, server, _ = pair
    fact = "The staging database is refreshed every Monday at 06:00"
    one = Memory(laptop).archival_memory_insert(fact, tags=["ops"])
    two = Memory(server).archival_memory_insert(fact, tags=["ops"])
    assert one.path == two.path  # the name comes from the text
    laptop.remote.sync()
    result = server.remote.sync()
    assert [n.kind for n in result.notes] == ["same-note"]
    converge(laptop, server)
    assert [p for p in server.list("memory/archive")] == [one.path]
    assert server.remote.conflicts() == []


# ---------------------------------------------------------------- 4. topics and decisions
def test_each_machine_keeps_its_own_active_topic_after_a_sync(pair) -> None:
    laptop, server, _ = pair
    Topics(laptop).create("Billing migration", "relevant when invoices come up", name="billing")
    Topics(laptop).create("School run", "relevant when the kids come up", name="school")
    laptop.remote.sync()
    server.remote.sync()
    Topics(laptop).switch("billing")
    Topics(server).switch("school")
    converge(laptop, server)
    for machine, mine in ((laptop, "billing"), (server, "school")):
        topics = Topics(machine)
        assert topics.active().name == mine
        assert [t.name for t in topics.list() if t.status == "active"] == [mine]
        assert f"`{mine}` [active]" in topics.render_index()


def test_decisions_both_machines_record_get_unique_ids_and_their_references_follow(pair) -> None:
    laptop, server, _ = pair
    Topics(laptop).create("Billing migration", "relevant when invoices come up", name="billing")
    laptop.remote.sync()
    server.remote.sync()
    a = Topics(laptop).decisions
    b = Topics(server).decisions
    assert a.decide("billing", "Cut over in January", reason="December freeze") == "D1"
    assert (
        a.decide("billing", "Run both systems for a week", depends_on=["D1"], reason="safety")
        == "D2"
    )
    assert b.decide("billing", "Keep the old system read-only", reason="auditors") == "D1"
    assert (
        b.decide("billing", "Archive the old invoices", depends_on=["D1"], reason="space") == "D2"
    )
    laptop.remote.sync()
    result = server.remote.sync()
    assert any(n.kind == "renumbered" for n in result.notes)
    converge(laptop, server)
    items = {d.id: d for d in Topics(server).decisions.of("billing")}
    assert sorted(items) == ["D1", "D2", "D3", "D4"]
    by_text = {d.title: d for d in items.values()}
    cut, both = by_text["Cut over in January"], by_text["Run both systems for a week"]
    keep, archive = by_text["Keep the old system read-only"], by_text["Archive the old invoices"]
    assert both.depends_on == [cut.id] and archive.depends_on == [keep.id]
    chain = Topics(laptop).decisions.chain("billing", archive.id)
    assert "Keep the old system read-only" in chain and "Cut over" not in chain
    assert Topics(laptop).decisions.decide("billing", "Next", depends_on=[keep.id]) == "D5"


def test_a_decision_id_two_blocks_share_is_refused_not_guessed(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", index=False)
    topics = Topics(ctx)
    topics.create("Billing", "relevant when billing comes up", name="billing")
    topics.decisions.decide("billing", "First")
    rel = "topics/billing/decisions.md"
    # What a plain git merge of two machines' decision logs leaves: two D1 blocks.
    ctx.append(
        rel,
        "\n## D1: Another first\n- text: Another first\n- reason: r\n- depends_on: []\n"
        "- supersedes: null\n- time: 2026-01-01T00:00:00Z\n",
    )
    with pytest.raises(TopicError, match="2 decisions with the id D1"):
        topics.decisions.decide("billing", "Second", depends_on=["D1"])
    with pytest.raises(TopicError, match="id D1"):
        topics.decisions.chain("billing", "D1")


def test_a_plain_git_merge_of_two_switches_leaves_one_active_topic_per_machine(
    tmp_path: Path,
) -> None:
    """The same with people's own git: switching writes nothing that could make two topics active."""
    laptop = ContextManager(tmp_path / "laptop", index=False)
    Topics(laptop).create("Billing migration", "relevant when invoices come up", name="billing")
    Topics(laptop).create("School run", "relevant when the kids come up", name="school")
    run_git("clone", "-q", str(laptop.root), str(tmp_path / "server"))
    server = ContextManager(tmp_path / "server", index=False)
    Topics(laptop).switch("billing")
    Topics(server).switch("school")
    run_git(
        "-C",
        str(server.root),
        "-c",
        "user.name=p",
        "-c",
        "user.email=p@x.invalid",
        "pull",
        "-q",
        "--no-rebase",
        "--no-edit",
        str(laptop.root),
        "main",
    )
    topics = Topics(ContextManager(tmp_path / "server", index=False))
    assert [t.name for t in topics.list() if t.status == "active"] == ["school"]


# ---------------------------------------------------------------- 5. logs in time order
def test_conversation_log_lines_from_two_machines_merge_in_time_order(pair) -> None:
    laptop, server, _ = pair
    rel = "sessions/shared.jsonl"
    with laptop.provenance(session="shared"):
        Memory(laptop).log_message("user", "first", time="2026-11-30T10:00:00Z")
    laptop.remote.sync()
    server.remote.sync()
    with laptop.provenance(session="shared"):
        Memory(laptop).log_message("user", "third", time="2026-11-30T10:00:03Z")
        Memory(laptop).log_message("user", "fifth", time="2026-11-30T10:00:05Z")
    with server.provenance(session="shared"):
        Memory(server).log_message("assistant", "second", time="2026-11-30T10:00:02Z")
        Memory(server).log_message("assistant", "fourth", time="2026-11-30T10:00:04Z")
    converge(laptop, server)
    lines = [json.loads(line) for line in (server.root / rel).read_text().splitlines()]
    assert [m["content"] for m in lines] == ["first", "second", "third", "fourth", "fifth"]


# ---------------------------------------------------------------- 6. a person's own git merge
def test_during_a_git_merge_read_says_so_search_skips_markers_and_sync_resolves(
    tmp_path: Path,
) -> None:
    laptop, server, remote = pulled_into_conflict(tmp_path)
    with pytest.raises(ConflictError, match="in conflict: a merge is in progress.*ctx.remote.sync"):
        server.read("memory/notes.md")
    hits = server.search("Valkey")
    assert hits and all(
        "<<<<<<<" not in str(h.snippet) and "=======" not in str(h.snippet) for h in hits
    )
    result = server.remote.sync()
    assert result.state == "resolved" and "git commit" in str(result.push_skipped)
    assert "<<<<<<<" not in (server.root / "memory/notes.md").read_text()
    assert server.remote.conflicts()  # both wrote the same line: theirs is a copy beside it
    run_git(
        "-C",
        str(server.root),
        "-c",
        "user.name=p",
        "-c",
        "user.email=p@x.invalid",
        "commit",
        "-q",
        "--no-edit",
    )
    run_git("-C", str(laptop.root), "remote", "add", "origin", str(remote))
    converge(laptop, server)
    assert "Valkey" in server.read("memory/notes.md") or "Valkey" in server.read(
        server.remote.conflicts()[0].path
    )


# ---------------------------------------------------------------- 7. the remote's branch
def test_the_branch_follows_the_remote_head_and_clones_get_no_warning(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git", head="master")
    ctx = first_machine(tmp_path / "first", remote.as_uri(), "first")
    assert git(ctx.root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    ctx.write("memory/facts.md", "- one\n")
    result = ctx.remote.sync()
    assert (result.branch, result.pushed) == ("master", True)
    assert git(ctx.root, "config", "branch.main.merge").strip() == "refs/heads/master"
    out = run_git("clone", str(remote.as_uri()), str(tmp_path / "second"))
    assert "warning" not in out.lower()
    assert (tmp_path / "second" / "memory" / "facts.md").exists()


# ---------------------------------------------------------------- conflict copies
def test_the_same_lines_changed_on_both_sides_leave_a_conflict_copy_resolved_with_one_call(
    pair,
) -> None:
    laptop, server, _ = pair
    laptop.write("project/notes.md", "# Notes\n\nThe cache is Redis.\n")
    laptop.remote.sync()
    server.remote.sync()
    laptop.edit("project/notes.md", "Redis", "Redis 7")
    server.edit("project/notes.md", "Redis", "Valkey")
    laptop.remote.sync()
    result = server.remote.sync()
    assert len(result.conflict_copies) == 1
    converge(laptop, server)
    [copy] = laptop.remote.conflicts()
    assert copy.original == "project/notes.md" and copy.original_exists
    texts = {laptop.read("project/notes.md"), laptop.read(copy.path)}
    assert any("Redis 7" in t for t in texts) and any("Valkey" in t for t in texts)
    laptop.remote.resolve(copy.path, keep="copy")
    assert laptop.remote.conflicts() == [] and laptop.read(copy.path) is None
    converge(laptop, server)
    assert server.remote.conflicts() == []


# ---------------------------------------------------------------- pushes that race
def test_a_rejected_push_fetches_merges_and_retries(pair, monkeypatch) -> None:
    laptop, server, _ = pair
    from contextfs.remote import syncing

    real_fetch = syncing.fetch
    raced = []

    def fetch_then_race(git, target):  # type: ignore[no-untyped-def]
        sha = real_fetch(git, target)
        if not raced and git is laptop.parts.git:
            raced.append(True)
            server.append("memory/facts.md", "- from the server, pushed meanwhile\n")
            server.remote.sync()
        return sha

    monkeypatch.setattr(syncing, "fetch", fetch_then_race)
    laptop.append("memory/facts.md", "- from the laptop\n")
    result = laptop.remote.sync()
    assert result.pushed and result.rejected_pushes == 1 and result.state == "merged"
    monkeypatch.undo()
    converge(laptop, server)
    assert "from the server" in laptop.read("memory/facts.md") and "from the laptop" in laptop.read(
        "memory/facts.md"
    )


# ---------------------------------------------------------------- authors and undo
def test_git_log_names_agent_and_machine_and_a_session_from_another_machine_can_be_undone(
    pair,
) -> None:
    laptop, server, _ = pair
    with server.provenance(session="night-run"):
        server.write("memory/server-notes.md", "- The nightly export finished\n")
        server.append("project/README.md", "\nExports run nightly.\n")
    server.remote.sync()
    laptop.remote.sync()
    log = git(
        laptop.root, "log", "--format=%an|%(trailers:key=Contextfs-Machine,valueonly)", "-n", "20"
    )
    assert "agent:worker|server" in log and "agent:planner|laptop" in log
    report = laptop.revert_session("night-run")
    assert len(report.reverted) == 2 and report.conflicts == []
    assert laptop.read("memory/server-notes.md") is None and "nightly" not in laptop.read(
        "project/README.md"
    )
    converge(laptop, server)
    assert server.read("memory/server-notes.md") is None
    # Undoing the laptop's own session undoes what the laptop wrote, never what its syncs received.
    laptop.write("memory/laptop-notes.md", "- a laptop note\n")
    server.write("memory/more-server.md", "- more from the server\n")
    server.remote.sync()
    assert laptop.remote.sync().state == "merged"
    laptop.revert_session(laptop.parts.session)
    assert laptop.read("memory/laptop-notes.md") is None
    assert laptop.read("memory/more-server.md") == "- more from the server\n"
