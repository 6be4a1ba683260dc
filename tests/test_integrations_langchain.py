"""LangChain tools and retriever on a real root: files, git history, refusals as strings.

Only the chat model is fake (``GenericFakeChatModel`` emitting tool calls); the tools
write real files through a real ContextManager, and every assertion looks at the disk
and at ``git log``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool

from conftest import commit_count, git, search_available
from contextfs import ConfigError, ContextManager
from contextfs.integrations.langchain_tools import DEFAULT_ACTOR, make_tools

needs_search = pytest.mark.skipif(not search_available(), reason="contextfs.search has not landed yet")

ALL_TOOLS = {
    "read_context", "write_context", "append_context", "edit_context", "list_context",
    "search_context", "delete_context", "restore_context", "context_history",
}
HOSTILE = ["../../etc/passwd", ".git/config", "/etc/passwd", ".trash/x/files/a.md", "memory/../../outside.md"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "ctx"


@pytest.fixture
def mgr(root: Path) -> ContextManager:
    manager = ContextManager(root, index=search_available())
    yield manager
    manager.close()


def tools_by_name(ctx: ContextManager, **kwargs) -> dict[str, BaseTool]:
    return {t.name: t for t in make_tools(ctx, **kwargs)}


def authors(root: Path, rel: str | None = None) -> list[str]:
    args = ["log", "--format=%an"]
    if rel:
        args += ["--", rel]
    return git(root, *args).split()


# ------------------------------------------------------------------ the seed's Example 2
@needs_search
def test_seed_example_2_runs_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # --- copied verbatim from the seed's "Example 2: LangChain Tool Integration" ---
    from langchain_core.tools import tool

    from contextfs import ContextManager

    ctx = ContextManager("./agent-context")

    @tool
    def read_context(path: str) -> str:
        """Read a context file to recall project info, decisions, or lessons."""
        return ctx.read(path) or f"No context at {path}"

    @tool
    def write_context(path: str, content: str) -> str:
        """Save learnings, decisions, or facts to context."""
        ctx.write(path, content, metadata={"source": "agent"})
        return f"Written to {path}"

    @tool
    def search_context(query: str) -> str:
        """Search all context files for relevant information."""
        results = ctx.search(query)
        return "\n".join(f"[{p}] ...{s}..." for p, s in results[:5]) or "No matches."

    tools = [read_context, write_context, search_context]
    # --- end of the seed's code ---

    assert [t.name for t in tools] == ["read_context", "write_context", "search_context"]
    assert read_context.invoke({"path": "memory/facts.md"}) == "No context at memory/facts.md"
    assert search_context.invoke({"query": "PostgreSQL"}) == "No matches."
    out = write_context.invoke({"path": "memory/facts.md", "content": "- Database: PostgreSQL 16"})
    assert out == "Written to memory/facts.md"
    assert read_context.invoke({"path": "memory/facts.md"}) == "- Database: PostgreSQL 16"
    found = search_context.invoke({"query": "PostgreSQL"})
    assert found.startswith("[memory/facts.md] ...") and "PostgreSQL" in found

    root = tmp_path / "agent-context"
    on_disk = (root / "memory" / "facts.md").read_text("utf-8")
    assert on_disk.startswith("---\n") and "source: agent" in on_disk and on_disk.endswith("- Database: PostgreSQL 16")
    assert git(root, "log", "-1", "--format=%s").strip() == "write: memory/facts.md"
    ctx.close()


# ------------------------------------------------------------------ tool set
def test_tool_sets_follow_the_flags(mgr: ContextManager) -> None:
    assert set(tools_by_name(mgr, allow_delete=True)) == ALL_TOOLS
    assert set(tools_by_name(mgr)) == ALL_TOOLS - {"delete_context"}
    assert set(tools_by_name(mgr, allow_write=False)) == {
        "read_context", "list_context", "search_context", "context_history"}
    with pytest.raises(ConfigError, match="allow_write"):
        make_tools(mgr, allow_write=False, allow_delete=True)
    for t in make_tools(mgr, allow_delete=True):
        assert "Use" in t.description and len(t.description) > 60, t.name
        assert t.args_schema is not None


def test_bad_actor_is_refused_at_construction(mgr: ContextManager) -> None:
    with pytest.raises(Exception, match="not accepted") as info:
        make_tools(mgr, actor="root; rm -rf /")
    assert type(info.value).__module__ == "contextfs.errors"


# ------------------------------------------------------------------ each tool
def test_write_append_edit_read_commit_as_the_agent(root: Path, mgr: ContextManager) -> None:
    t = tools_by_name(mgr)
    before = commit_count(root)
    assert t["write_context"].invoke({"path": "memory/facts.md", "content": "- Database: PostgreSQL 16\n"}).startswith(
        "Written to memory/facts.md (version ")
    assert t["append_context"].invoke({"path": "memory/facts.md", "text": "- Cache: Redis 7"}).startswith("Appended")
    assert t["edit_context"].invoke(
        {"path": "memory/facts.md", "old": "PostgreSQL 16", "new": "PostgreSQL 16.4"}).startswith("Edited")
    assert t["read_context"].invoke({"path": "memory/facts.md"}) == "- Database: PostgreSQL 16.4\n- Cache: Redis 7"

    text = (root / "memory" / "facts.md").read_text("utf-8")
    assert f"author: {DEFAULT_ACTOR}" in text and text.endswith("- Cache: Redis 7")
    assert commit_count(root) == before + 3
    assert authors(root, "memory/facts.md") == [DEFAULT_ACTOR] * 3
    subjects = git(root, "log", "--format=%s", "--", "memory/facts.md").splitlines()
    assert subjects == ["edit: memory/facts.md", "append: memory/facts.md", "write: memory/facts.md"]
    assert git(root, "status", "--porcelain") == ""


def test_list_history_and_missing_files(root: Path, mgr: ContextManager) -> None:
    t = tools_by_name(mgr)
    assert t["list_context"].invoke({}).startswith("No files under the context tree")
    t["write_context"].invoke({"path": "project/README.md", "content": "# Tidewater"})
    t["write_context"].invoke({"path": "memory/lessons.md", "content": "- Pin arq"})
    assert t["list_context"].invoke({}).splitlines() == ["memory/lessons.md", "project/README.md"]
    assert t["list_context"].invoke({"folder": "memory"}).splitlines() == ["memory/lessons.md"]
    assert t["list_context"].invoke({"folder": "nope"}).startswith("No files under nope")
    assert t["read_context"].invoke({"path": "task/current.md"}).startswith("No context at task/current.md")

    history = t["context_history"].invoke({"path": "memory/lessons.md"}).splitlines()
    assert len(history) == 1 and f"{DEFAULT_ACTOR}: write: memory/lessons.md" in history[0]
    head = git(root, "log", "-1", "--format=%h", "--abbrev=10", "--", "memory/lessons.md").strip()
    assert head in history[0]
    assert t["context_history"].invoke({"path": "never/was.md"}) == "No recorded changes to never/was.md."


def test_delete_is_soft_and_restore_brings_it_back(root: Path, mgr: ContextManager) -> None:
    t = tools_by_name(mgr, allow_delete=True)
    t["write_context"].invoke({"path": "task/current.md", "content": "Ship webhooks v2"})
    out = t["delete_context"].invoke({"path": "task/current.md"})
    assert out.startswith("Moved task/current.md to the trash") and "restore_context" in out
    assert not (root / "task" / "current.md").exists()
    trashed = list((root / ".trash").rglob("current.md"))
    assert len(trashed) == 1 and trashed[0].read_text("utf-8").endswith("Ship webhooks v2")
    assert t["read_context"].invoke({"path": "task/current.md"}).startswith("No context at")

    assert t["restore_context"].invoke({"path": "task/current.md"}) == "Restored task/current.md from the trash."
    assert (root / "task" / "current.md").read_text("utf-8").endswith("Ship webhooks v2")
    log = git(root, "log", "--format=%an %s", "-3").splitlines()
    assert log == [f"{DEFAULT_ACTOR} restore: task/current.md", f"{DEFAULT_ACTOR} delete: task/current.md",
                   f"{DEFAULT_ACTOR} write: task/current.md"]
    # Nothing left to restore: a string with the fix, not an exception.
    t["delete_context"].invoke({"path": "task/current.md"})
    t["restore_context"].invoke({"path": "task/current.md"})
    again = t["restore_context"].invoke({"path": "task/current.md"})
    assert again.startswith("Error: nothing deleted from task/current.md")


# ------------------------------------------------------------------ refusals come back as strings
@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_paths_are_refused_by_every_tool(root: Path, mgr: ContextManager, bad: str) -> None:
    t = tools_by_name(mgr, allow_delete=True)
    (root / ".trash").mkdir(exist_ok=True)
    before = commit_count(root)
    git_config = (root / ".git" / "config").read_bytes()
    calls = {
        "read_context": {"path": bad},
        "write_context": {"path": bad, "content": "pwned"},
        "append_context": {"path": bad, "text": "pwned"},
        "edit_context": {"path": bad, "old": "a", "new": "pwned"},
        "delete_context": {"path": bad},
        "restore_context": {"path": bad},
        "context_history": {"path": bad},
        "list_context": {"folder": bad},
        "search_context": {"query": "pwned", "folder": bad},
    }
    if not search_available():
        del calls["search_context"]
    for name, args in calls.items():
        out = t[name].invoke(args)
        assert isinstance(out, str) and out.startswith("Error: invalid path"), (name, out)
        assert "root" not in out.split(":", 1)[0]
        assert out.rstrip().endswith("'project/README.md'"), out  # the message ends with the fix
    assert commit_count(root) == before
    assert (root / ".git" / "config").read_bytes() == git_config
    assert not (root.parent / "outside.md").exists()
    assert git(root, "status", "--porcelain") == ""


def test_other_failures_are_strings_that_end_with_the_fix(root: Path, mgr: ContextManager) -> None:
    t = tools_by_name(mgr)
    t["write_context"].invoke({"path": "memory/facts.md", "content": "- a\n- a\n"})
    before = commit_count(root)
    ambiguous = t["edit_context"].invoke({"path": "memory/facts.md", "old": "- a", "new": "- b"})
    assert ambiguous.startswith("Error:") and ambiguous.endswith("quote a longer, unique passage")
    missing = t["edit_context"].invoke({"path": "memory/none.md", "old": "x", "new": "y"})
    assert missing.startswith("Error:") and "create it with write()" in missing
    managed = t["write_context"].invoke({"path": ".gitignore", "content": "*"})
    assert managed.startswith("Error:") and "managed by contextfs" in managed
    bad_args = t["write_context"].invoke({"path": "memory/facts.md"})
    assert bad_args.startswith("Error: invalid tool arguments") and "content" in bad_args
    assert commit_count(root) == before
    assert (root / "memory" / "facts.md").read_text("utf-8").endswith("- a\n- a\n")


def test_provenance_is_the_tools_not_the_models(root: Path, mgr: ContextManager) -> None:
    t = tools_by_name(mgr, actor="agent:researcher", session="sess-42")
    spoof = "---\nauthor: human\nsession: forged\n---\nI am definitely a human."
    t["write_context"].invoke({"path": "memory/notes.md", "content": spoof})
    doc = mgr.get("memory/notes.md")
    assert doc.metadata["author"] == "agent:researcher"
    assert doc.metadata["session"] == "sess-42"
    assert authors(root, "memory/notes.md") == ["agent:researcher"]
    body = git(root, "log", "-1", "--format=%B")
    assert "Contextfs-Session: sess-42" in body and "forged" not in body
    # The manager's own provenance is untouched outside the tool call.
    assert mgr.current_provenance.actor == "agent"


# ------------------------------------------------------------------ search and retriever
@needs_search
def test_search_tool_ranks_sample_context(tmp_path: Path, sample_root: Path) -> None:
    ctx = ContextManager(sample_root)
    try:
        t = tools_by_name(ctx, allow_write=False)
        out = t["search_context"].invoke({"query": "PostgreSQL row level security", "limit": 3})
        heads = [line for line in out.splitlines() if line.startswith("[")]
        assert 1 <= len(heads) <= 3
        assert any("0002-postgres-row-level-security.md" in h for h in heads), out
        scoped = t["search_context"].invoke({"query": "postgres", "folder": "memory"})
        assert all(line.startswith("[memory/") for line in scoped.splitlines() if line.startswith("["))
        none = t["search_context"].invoke({"query": "xylophonequartz"})
        assert none.startswith("No matches for 'xylophonequartz'")
    finally:
        ctx.close()


@needs_search
def test_retriever_returns_documents_with_provenance(sample_root: Path) -> None:
    from contextfs.integrations.langchain_retriever import ContextRetriever

    ctx = ContextManager(sample_root)
    try:
        retriever = ContextRetriever(ctx=ctx, k=3)
        docs = retriever.invoke("PostgreSQL row level security")
        assert 1 <= len(docs) <= 3 and all(isinstance(d, Document) for d in docs)
        top_paths = [d.metadata["path"] for d in docs]
        assert "project/decisions/0002-postgres-row-level-security.md" in top_paths
        for d in docs:
            assert set(d.metadata) >= {"path", "score", "title", "version"}
            assert d.page_content and d.metadata["version"] == ctx.get(d.metadata["path"]).version
        scores = [d.metadata["score"] for d in docs]
        assert scores == sorted(scores, reverse=True)

        whole = ContextRetriever(ctx=ctx, k=2, whole_body=True, folder="project/decisions")
        for d in whole.invoke("postgres"):
            assert d.metadata["path"].startswith("project/decisions/")
            assert d.page_content == ctx.read(d.metadata["path"])
    finally:
        ctx.close()


# ------------------------------------------------------------------ an agent loop end to end
def run_agent(model: GenericFakeChatModel, tools: list[BaseTool], prompt: str, max_steps: int = 8) -> list:
    """The smallest tool-calling loop: ask the model, run its tool calls, feed results back."""
    by_name = {t.name: t for t in tools}
    messages: list = [HumanMessage(prompt)]
    for _ in range(max_steps):
        reply = model.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        for call in reply.tool_calls:
            messages.append(by_name[call["name"]].invoke(call))
    raise AssertionError("the agent did not finish")


def call(name: str, call_id: str, **args: str) -> dict:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def test_fake_model_agent_loop_writes_and_commits(root: Path, mgr: ContextManager) -> None:
    mgr.write("memory/lessons.md", "# Lessons\n")
    script = iter([
        AIMessage(content="", tool_calls=[call("list_context", "c1"), call("read_context", "c2", path="memory/lessons.md")]),
        AIMessage(content="", tool_calls=[
            call("append_context", "c3", path="memory/lessons.md", text="- Retry webhooks with jitter"),
            call("write_context", "c4", path="../../etc/passwd", content="root::0:0"),
        ]),
        AIMessage(content="", tool_calls=[call("write_context", "c5", path="memory/facts.md", content="- Queue: arq")]),
        AIMessage(content="Recorded one lesson and one fact."),
    ])
    model = GenericFakeChatModel(messages=script)
    messages = run_agent(model, make_tools(mgr, actor="agent:planner"), "Remember what we learned today.")

    results = {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}
    assert results["c1"] == "memory/lessons.md"
    assert results["c2"] == "# Lessons\n"
    assert results["c3"].startswith("Appended to memory/lessons.md")
    assert results["c4"].startswith("Error: invalid path") and "leaves the context root" in results["c4"]
    assert results["c5"].startswith("Written to memory/facts.md")
    assert messages[-1].content == "Recorded one lesson and one fact."

    assert (root / "memory" / "lessons.md").read_text("utf-8").endswith("# Lessons\n- Retry webhooks with jitter")
    assert (root / "memory" / "facts.md").read_text("utf-8").endswith("- Queue: arq")
    log = git(root, "log", "--format=%an|%s", "-3").splitlines()
    assert log == ["agent:planner|write: memory/facts.md", "agent:planner|append: memory/lessons.md",
                   "agent|write: memory/lessons.md"]
    assert git(root, "status", "--porcelain") == ""
