"""A change never erases bytes it has not seen: a person's saved edit survives every write.

A person saves a file in their editor while a long-lived ``ContextManager`` (an MCP server,
a LangChain app) holds the same root. Whatever the agent then does to that path — write,
append, edit, move, delete, restore, revert, a tool call, a memory-tier write, a LangGraph
put, a transaction — the person's version is committed first, authored ``human`` (or the
configured outside author), and the agent's change is a second commit on top of it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import assert_clean, git, start_watch

from contextfs import ConflictError, ContextManager, VersioningError, faults

PERSON = b"---\ntitle: Facts\n---\n- Database: PostgreSQL 16\n- Typed by the person in vim\n"


@pytest.fixture
def agent(tmp_path: Path) -> ContextManager:
    """The long-lived manager of an agent process, opened before the person starts editing."""
    manager = ContextManager(tmp_path / "ctx", actor="agent:planner", index=False)
    manager.write("memory/facts.md", "- Database: PostgreSQL 16\n", {"title": "Facts"})
    yield manager
    manager.close()


def save(root: Path, rel: str, data: bytes) -> None:
    """What an editor does on save: write the whole file in place."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


def versions(root: Path, rel: str) -> list[tuple[str, str, bytes | None]]:
    """(commit, author, bytes of ``rel`` at that commit) for every commit, oldest first."""
    out = []
    for line in git(root, "log", "--reverse", "--format=%H %an").splitlines():
        sha, author = line.split(" ", 1)
        blob = subprocess.run(
            ["git", "-C", str(root), "show", f"{sha}:{rel}"], capture_output=True, check=False
        )
        out.append((sha, author, blob.stdout if blob.returncode == 0 else None))
    return out


def person_version_is_committed(root: Path, rel: str, data: bytes, outside: str = "human") -> str:
    """The commit that holds the person's bytes at ``rel``; it is authored as an outside edit."""
    found = [(sha, author) for sha, author, blob in versions(root, rel) if blob == data]
    assert found, f"the person's version of {rel} is in no commit"
    sha, author = found[0]
    assert author == outside, f"the person's version of {rel} was committed by {author}"
    subject = git(root, "log", "-1", "--format=%s%n%b", sha)
    assert "Contextfs-Session" not in subject  # an outside edit belongs to no agent session
    return sha


def parent(root: Path, sha: str) -> str:
    return git(root, "rev-parse", f"{sha}^").strip()


def test_an_agent_write_keeps_the_persons_saved_edit(agent: ContextManager) -> None:
    root = agent.root
    save(root, "memory/facts.md", PERSON)
    agent.write("memory/facts.md", "- Database: PostgreSQL 17\n")
    human = person_version_is_committed(root, "memory/facts.md", PERSON)
    head = git(root, "rev-parse", "HEAD").strip()
    assert parent(root, head) == human  # the agent's change applies on top of the person's
    assert (
        git(root, "log", "-1", "--format=%an|%s").strip() == "agent:planner|write: memory/facts.md"
    )
    assert agent.read("memory/facts.md") == "- Database: PostgreSQL 17\n"
    assert agent.history("memory/facts.md")[1].author == "human"
    assert_clean(root)


def test_an_agent_append_appends_to_the_persons_text_in_its_own_commit(
    agent: ContextManager,
) -> None:
    root = agent.root
    save(root, "memory/facts.md", PERSON)
    agent.append("memory/facts.md", "- Cache: Redis 7\n")
    human = person_version_is_committed(root, "memory/facts.md", PERSON)
    head = git(root, "rev-parse", "HEAD").strip()
    assert parent(root, head) == human
    added = [
        line
        for line in git(root, "show", "--format=", "HEAD", "--", "memory/facts.md").splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    assert "+- Cache: Redis 7" in added
    assert not any("Typed by the person" in line for line in added)  # not under the agent's name
    assert agent.read("memory/facts.md").endswith(
        "- Typed by the person in vim\n- Cache: Redis 7\n"
    )
    assert_clean(root)


def _restore(ctx: ContextManager) -> None:
    ctx.restore("memory/facts.md")


def _tool(ctx: ContextManager) -> None:
    from contextfs.integrations import make_tools

    tool = next(t for t in make_tools(ctx) if t.name == "write_context")
    tool.invoke({"path": "memory/facts.md", "content": "- written by a tool\n"})


def _core_memory(ctx: ContextManager) -> None:
    from contextfs.scopes import Memory

    Memory(ctx).core_memory_append("facts", "- from core memory")


def _langgraph(ctx: ContextManager) -> None:
    from contextfs.integrations.langgraph.store import ContextStore

    ContextStore(ctx, prefix="store").put(("users",), "facts", {"content": "- from a graph"})


def _transaction(ctx: ContextManager) -> None:
    with ctx.transaction("task: two files"):
        ctx.write("task/current.md", "# Rotate the secret\n")
        ctx.append("memory/facts.md", "- rotated\n")


#: (operation, the path the person edits first, how the agent changes it)
OPERATIONS: list[tuple[str, str, Callable[[ContextManager], object]]] = [
    ("write", "memory/facts.md", lambda c: c.write("memory/facts.md", "- replaced\n")),
    ("append", "memory/facts.md", lambda c: c.append("memory/facts.md", "- appended\n")),
    (
        "edit",
        "memory/facts.md",
        lambda c: c.edit("memory/facts.md", "PostgreSQL 16", "PostgreSQL 17"),
    ),
    (
        "metadata",
        "memory/facts.md",
        lambda c: c.update_metadata("memory/facts.md", {"tags": ["db"]}),
    ),
    ("move", "memory/facts.md", lambda c: c.move("memory/facts.md", "memory/old-facts.md")),
    ("delete", "memory/facts.md", lambda c: c.delete("memory/facts.md")),
    ("revert", "memory/facts.md", lambda c: c.revert("memory/facts.md", "HEAD")),
    ("tool", "memory/facts.md", _tool),
    ("core memory", "memory/core/facts.md", _core_memory),
    ("langgraph", "store/users/facts.md", _langgraph),
    ("transaction", "memory/facts.md", _transaction),
]


@pytest.mark.parametrize(("name", "rel", "operation"), OPERATIONS, ids=[o[0] for o in OPERATIONS])
def test_every_change_commits_the_persons_version_first(
    agent: ContextManager, name: str, rel: str, operation: Callable[[ContextManager], object]
) -> None:
    root = agent.root
    if rel != "memory/facts.md":
        operation(agent)  # the path exists and is committed before the person edits it
    data = (
        PERSON if rel == "memory/facts.md" else (root / rel).read_bytes() + b"- the person's line\n"
    )
    save(root, rel, data)
    operation(agent)
    human = person_version_is_committed(root, rel, data)
    agents = [sha for sha, author, _ in versions(root, rel) if author == "agent:planner"]
    assert git(root, "rev-parse", "HEAD").strip() in agents
    assert parent(root, git(root, "rev-parse", "HEAD").strip()) == human
    assert_clean(root)


def test_a_save_in_the_middle_of_a_transaction_is_committed_first(agent: ContextManager) -> None:
    root = agent.root
    with agent.transaction("task: two passes over the facts"):
        agent.write("memory/facts.md", "- first pass\n")
        save(root, "memory/facts.md", PERSON)  # saved between the transaction's two writes
        agent.write("memory/facts.md", "- second pass\n")
    human = person_version_is_committed(root, "memory/facts.md", PERSON)
    assert parent(root, git(root, "rev-parse", "HEAD").strip()) == human
    assert agent.read("memory/facts.md") == "- second pass\n"
    assert_clean(root)


def test_undoing_a_change_puts_back_the_persons_latest_save(agent: ContextManager) -> None:
    root = agent.root
    head = git(root, "rev-parse", "HEAD")
    with pytest.raises(RuntimeError), agent.transaction("task: doomed"):
        agent.write("memory/facts.md", "- doomed 1\n")
        save(root, "memory/facts.md", PERSON)
        agent.write("memory/facts.md", "- doomed 2\n")
        raise RuntimeError("the task failed")
    assert (root / "memory/facts.md").read_bytes() == PERSON
    assert (
        git(root, "rev-parse", "HEAD") == head
    )  # nothing committed; the next sync adopts the save
    agent.sync()
    person_version_is_committed(root, "memory/facts.md", PERSON)


def test_a_restore_commits_a_persons_edit_of_the_trashed_file_first(agent: ContextManager) -> None:
    root = agent.root
    entry = agent.delete("memory/facts.md")
    save(root, entry.stored_path, PERSON)  # edited where it lies in the trash
    agent.restore(entry.id)
    person_version_is_committed(root, entry.stored_path, PERSON)
    assert (root / "memory/facts.md").read_bytes() == PERSON
    assert_clean(root)


def test_a_person_deleting_a_file_is_committed_before_the_agent_recreates_it(
    agent: ContextManager,
) -> None:
    root = agent.root
    os.remove(root / "memory/facts.md")
    agent.write("memory/facts.md", "- recreated\n")
    history = versions(root, "memory/facts.md")
    assert history[-2][1:] == ("human", None)  # the person's deletion, then the agent's new file
    assert history[-1][1] == "agent:planner"
    assert_clean(root)


def test_a_stale_expected_version_is_a_conflict_and_the_persons_edit_stays(
    agent: ContextManager,
) -> None:
    root = agent.root
    seen = agent.get("memory/facts.md").version
    save(root, "memory/facts.md", PERSON)
    with pytest.raises(ConflictError):
        agent.write("memory/facts.md", "- replaced\n", expected_version=seen)
    assert (root / "memory/facts.md").read_bytes() == PERSON
    agent.sync()
    person_version_is_committed(root, "memory/facts.md", PERSON)


def test_the_outside_author_can_be_configured(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:sync", outside_actor="remote", index=False)
    ctx.write("notes.md", "first\n")
    save(ctx.root, "notes.md", b"pulled from elsewhere\n")
    ctx.append("notes.md", "agent line\n")
    person_version_is_committed(ctx.root, "notes.md", b"pulled from elsewhere\n", outside="remote")
    save(ctx.root, "other.md", b"by hand\n")
    ctx.sync()
    person_version_is_committed(ctx.root, "other.md", b"by hand\n", outside="remote")


def test_an_unchanged_file_costs_no_outside_commit(agent: ContextManager) -> None:
    root = agent.root
    before = git(root, "rev-list", "--count", "HEAD").strip()
    agent.write("memory/facts.md", "- Database: PostgreSQL 17\n")
    agent.append("memory/facts.md", "- one more\n")
    assert int(git(root, "rev-list", "--count", "HEAD")) == int(before) + 2
    assert "human" not in git(root, "log", "--format=%an")


def test_an_edit_saved_while_contextfs_watch_runs_is_kept(tmp_path: Path) -> None:
    """``contextfs watch`` in its own process, and an agent write 0.1 s after the person's save."""
    root = tmp_path / "ctx"
    agent = ContextManager(root, actor="agent:planner", index=False)
    agent.write("memory/facts.md", "- Database: PostgreSQL 16\n", {"title": "Facts"})
    proc = start_watch(root, 0.5)
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("watching")
        save(root, "memory/facts.md", PERSON)
        time.sleep(0.1)  # the agent's write lands inside the watcher's quiet period
        agent.write("memory/facts.md", "- Database: PostgreSQL 17\n")
        time.sleep(1.5)  # let the watcher's debounce expire (ordering, not a timed assertion)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    person_version_is_committed(root, "memory/facts.md", PERSON)
    assert agent.read("memory/facts.md") == "- Database: PostgreSQL 17\n"
    assert_clean(root)
    agent.close()


def test_a_person_commit_that_sweeps_up_an_agents_write_fails_that_write(
    agent: ContextManager,
) -> None:
    """``git commit -a`` between an agent's file write and its commit: the write is not acknowledged."""
    root = agent.root

    def person_commits() -> None:
        git(
            root,
            "-c",
            "user.name=human",
            "-c",
            "user.email=human@example.invalid",
            "commit",
            "-qam",
            "mine",
        )

    faults.arm(
        "change.published", person_commits
    )  # the agent's file is in place, its commit not yet made
    try:
        with pytest.raises(VersioningError, match="retry"):
            agent.write("memory/facts.md", "- the agent's version\n")
    finally:
        faults.disarm()
    assert git(root, "log", "-1", "--format=%an|%s").strip() == "human|mine"
    assert "agent:planner" not in git(root, "log", "-1", "--format=%an")
    agent.write(
        "memory/facts.md", "- the agent's version, again\n"
    )  # the retry is the agent's own commit
    assert git(root, "log", "-1", "--format=%an").strip() == "agent:planner"


def test_a_save_between_an_appends_read_and_its_write_is_appended_to(agent: ContextManager) -> None:
    root = agent.root
    save(root, "memory/facts.md", PERSON)
    later = PERSON + b"- saved again while the agent was appending\n"
    faults.arm(
        "change.touched", lambda: save(root, "memory/facts.md", later)
    )  # once, right after the read
    try:
        agent.append("memory/facts.md", "- Cache: Redis 7\n")
    finally:
        faults.disarm()
    person_version_is_committed(root, "memory/facts.md", later)
    assert agent.read("memory/facts.md").endswith(
        "- saved again while the agent was appending\n- Cache: Redis 7\n"
    )
    added = [
        line
        for line in git(root, "show", "--format=", "HEAD").splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    assert "+- Cache: Redis 7" in added and not any("saved again" in line for line in added)
    assert_clean(root)


def test_inside_a_transaction_a_stale_read_undoes_the_transaction(agent: ContextManager) -> None:
    root = agent.root
    head = git(root, "rev-parse", "HEAD")
    faults.arm("change.touched", lambda: save(root, "memory/facts.md", PERSON), nth=2)
    try:
        with pytest.raises(ConflictError, match="retry"), agent.transaction("task: two files"):
            agent.write("task/current.md", "# Rotate the secret\n")
            agent.append("memory/facts.md", "- rotated\n")
    finally:
        faults.disarm()
    assert git(root, "rev-parse", "HEAD") == head and not (root / "task/current.md").exists()
    assert (
        root / "memory/facts.md"
    ).read_bytes() == PERSON  # theirs, for the next change to commit first


def test_a_person_commit_made_while_an_agent_commits_is_built_on(agent: ContextManager) -> None:
    root = agent.root
    (root / "notes.md").write_text("the person's own note\n")

    def person_commits_another_file() -> None:
        git(root, "add", "notes.md")
        git(
            root,
            "-c",
            "user.name=human",
            "-c",
            "user.email=human@example.invalid",
            "commit",
            "-qm",
            "mine",
            "--",
            "notes.md",
        )

    # Between the agent's commit and its branch move: the last moment git's index is free (it
    # is then locked, with the branch, until the branch has moved, as git commit does).
    faults.arm("commit.ready", person_commits_another_file)
    try:
        agent.write("memory/facts.md", "- Database: PostgreSQL 17\n")
    finally:
        faults.disarm()
    assert git(root, "log", "-2", "--format=%an|%s").splitlines() == [
        "agent:planner|write: memory/facts.md",
        "human|mine",
    ]
    assert_clean(root)


def test_a_merge_built_elsewhere_is_not_published_over_a_save_it_found(
    agent: ContextManager,
) -> None:
    """A commit built outside the cycle (a sync's merge, an approved review) cannot have an
    outside version put under it: the save is committed on its own and the merge refused."""
    from contextfs.versioning.graph import write_commit

    root, git_ = agent.root, agent.parts.git
    head = git_.head()
    merged = b"- the merge's version\n"
    tree = git_.objects.rewrite(
        git_.objects.commit_tree(head),
        {"memory/facts.md": (git_.objects.store(b"blob", merged), 0o100644)},
    )
    prepared = write_commit(
        git_, tree, [head], "sync: merge\n", "remote", "remote@contextfs.invalid", head=head
    )
    save(root, "memory/facts.md", PERSON)
    with (
        pytest.raises(ConflictError, match="run the merge again"),
        agent.parts.change("merge", "origin/main") as change,
    ):
        change.write("memory/facts.md", merged)
        change.prepared = prepared
    person_version_is_committed(root, "memory/facts.md", PERSON)
    assert (root / "memory/facts.md").read_bytes() == PERSON
    assert_clean(root)
