"""What a writer gives is what they meant: content that starts with a frontmatter block is a
document in every interface (Python, the CLI, the agent tools), its keys merge under
``metadata=``'s, the writer's own text of those keys is kept, and text stored as it is
(memory tool, LangGraph store, memory blocks) stays text. Refusals count lines as the
writer wrote them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from secret_samples import SECRET_KINDS

from conftest import commit_count
from contextfs import ContentError, ContextManager, FrontmatterError
from contextfs.cli import cli
from contextfs.document import as_content, split_written
from contextfs.integrations.langchain_tools import make_tools

NOTE = "---\n# kept as written\ntitle: Kafka notes\ntags: [adr, database]   # flow style\n---\nThe broker runs on 3 nodes.\n"


@pytest.fixture
def mgr(tmp_path: Path):
    manager = ContextManager(tmp_path / "ctx", index=True)
    yield manager
    manager.close()


def frontmatter_blocks(text: str) -> int:
    return sum(1 for line in text.splitlines() if line == "---") // 2


def test_python_write_reads_the_block_as_frontmatter(mgr: ContextManager) -> None:
    doc = mgr.write("notes/kafka.md", NOTE)
    assert doc.metadata["title"] == "Kafka notes" and doc.metadata["tags"] == ["adr", "database"]
    assert doc.body == "The broker runs on 3 nodes.\n"
    text = (mgr.root / "notes" / "kafka.md").read_text("utf-8")
    assert frontmatter_blocks(text) == 1
    # the writer's own lines, comment and flow style included, come first and unchanged
    assert text.startswith("---\n# kept as written\ntitle: Kafka notes\ntags: [adr, database]   # flow style\n")
    assert [path for path, _ in mgr.search("tag:adr")] == ["notes/kafka.md"]


def test_metadata_wins_over_the_block_and_old_keys_are_kept(mgr: ContextManager) -> None:
    mgr.write("a.md", "body", {"owner": "ops", "title": "Old"})
    doc = mgr.write("a.md", "---\ntitle: From the block\nstatus: draft\n---\nnew body", {"status": "final"})
    assert doc.metadata["title"] == "From the block" and doc.metadata["status"] == "final"
    assert "owner" not in doc.metadata  # metadata= replaces the file's keys, as without a block
    doc = mgr.write("a.md", "---\nstatus: review\n---\nnewer body")
    assert doc.metadata["title"] == "From the block" and doc.metadata["status"] == "review"  # merged over
    assert doc.body == "newer body"


def test_writing_what_a_file_holds_changes_nothing(mgr: ContextManager) -> None:
    mgr.write("notes/kafka.md", NOTE)
    before = commit_count(mgr.root)
    whole = mgr.show_at("notes/kafka.md", "HEAD")
    assert whole is not None and mgr.write("notes/kafka.md", whole).body == "The broker runs on 3 nodes.\n"
    assert commit_count(mgr.root) == before


def test_create_the_library_keys_and_an_empty_block(mgr: ContextManager) -> None:
    doc = mgr.create("b.md", "---\nauthor: human\ncreated: 1970-01-01\ntitle: B\n---\nhello")
    assert doc.metadata["author"] == "agent" and doc.metadata["created"] != "1970-01-01"
    assert doc.metadata["title"] == "B" and doc.body == "hello"
    mgr.write("c.md", "body", {"title": "C"})
    doc = mgr.write("c.md", "---\n---\n---\nnot: frontmatter\n---\ntext")
    assert doc.metadata["title"] == "C" and doc.body == "---\nnot: frontmatter\n---\ntext"


def test_an_unclosed_fence_is_text_and_a_broken_block_is_refused(mgr: ContextManager) -> None:
    assert mgr.write("d.md", "---\nA thematic break, then text.\n").body == "---\nA thematic break, then text.\n"
    with pytest.raises(FrontmatterError, match="e.md, line "):
        mgr.write("e.md", "---\ntitle: [unclosed\n---\nbody")
    assert not mgr.exists("e.md")
    json_text = "---\ntitle: x\n---\n{}"
    assert mgr.write("f.json", json_text).body == json_text  # only markdown carries frontmatter


def test_the_cli_write_reads_the_block(mgr: ContextManager, tmp_path: Path) -> None:
    source = tmp_path / "note.md"
    source.write_text(NOTE, "utf-8")
    runner = CliRunner()
    result = runner.invoke(cli, ["--root", str(mgr.root), "write", "notes/kafka.md", "--file", str(source),
                                 "--meta", "status=final"])
    assert result.exit_code == 0, result.output
    shown = runner.invoke(cli, ["--root", str(mgr.root), "show", "notes/kafka.md"]).output
    assert frontmatter_blocks(shown) == 1 and "status: final" in shown
    data = json.loads(runner.invoke(cli, ["--root", str(mgr.root), "read", "notes/kafka.md", "--json"]).output)
    assert data["metadata"]["tags"] == ["adr", "database"] and data["body"] == "The broker runs on 3 nodes.\n"


def test_the_agent_tool_reads_the_block(mgr: ContextManager) -> None:
    write = {t.name: t for t in make_tools(mgr)}["write_context"]
    write.invoke({"path": "notes/kafka.md", "content": NOTE})
    doc = mgr.get("notes/kafka.md")
    assert doc.metadata["tags"] == ["adr", "database"] and doc.metadata["author"] == "agent:langchain"
    assert frontmatter_blocks((mgr.root / "notes" / "kafka.md").read_text("utf-8")) == 1


def test_text_stored_as_it_is_stays_text(mgr: ContextManager) -> None:
    from contextfs.integrations.langgraph_store import ContextStore
    from contextfs.integrations.memory_tool import MemoryToolAdapter
    from contextfs.scopes.memory import Memory

    text = "---\ntitle: mine\n---\nhello\n"
    store = ContextStore(mgr)
    store.put(("notes",), "k", {"content": text})
    assert store.get(("notes",), "k").value == {"content": text}
    tool = MemoryToolAdapter(mgr)
    tool.execute({"command": "create", "path": "/memories/n.md", "file_text": text})
    assert "     2\ttitle: mine" in tool.execute({"command": "view", "path": "/memories/n.md"})
    memory = Memory(mgr)
    memory.core_memory_rethink("persona", text)
    assert memory.core("persona").text == text


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(["-", "\n", "a", ":", " ", "+", "{", "}"]), max_size=24))
def test_as_content_gives_any_body_back_exactly(body: str) -> None:
    written = split_written(as_content("x.md", body), "x.md")
    assert written.body == body and not written.metadata


def test_a_refusal_counts_lines_as_the_writer_wrote_them(mgr: ContextManager) -> None:
    # Generated in AWS's shape (AWS's documented example key is a placeholder the gate lets through).
    key = SECRET_KINDS["AWS secret access key"](random.Random("written-lines")).text
    with pytest.raises(ContentError, match="AWS access key on line 1 "):
        mgr.write("s.md", key + "\n")
    with pytest.raises(ContentError, match="on line 5 "):
        mgr.write("s.md", f"---\ntitle: x\n---\nfirst line\n{key}\n")
    with pytest.raises(ContentError, match="GitHub token in the frontmatter"):
        mgr.write("s.md", "---\ntoken: ghp_1234567890abcdefghijklmnopqrstuvwxyzAB\n---\nbody\n")
    mgr.write("t.md", "one\ntwo\n")
    with pytest.raises(ContentError, match="on line 2 "):
        mgr.append("t.md", f"three\n{key}\n")  # an append counts from its own first line
