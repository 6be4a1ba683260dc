"""What a write makes of its path: a folder is refused as a folder before anything else is
judged, only markdown content is read for a frontmatter block, a refusal of the content names
the file and counts lines as the body reads, and keys given beside a block replace the file's
own.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import commit_as_person, git
from secret_samples import SECRET_KINDS

from contextfs import (
    ConflictError,
    ContentError,
    ContextManager,
    FrontmatterError,
    InvalidPathError,
)
from contextfs.document import LIBRARY_KEYS

#: A block in YAML's frontmatter fences that YAML cannot read (an unclosed flow list).
BROKEN_BLOCK = "---\ntags: [adr, database\n---\nThe broker runs on 3 nodes.\n"
LIMIT = 4096


@pytest.fixture
def store(tmp_path: Path):
    manager = ContextManager(tmp_path / "ctx", index=False, max_file_bytes=LIMIT)
    yield manager
    manager.close()


# ------------------------------------------------------------------------- a folder
@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s: s.write("notes", "a line\n", expected_version="0" * 40), id="stale"),
        pytest.param(lambda s: s.write("notes", "x" * (LIMIT + 1)), id="write-too-big"),
        pytest.param(lambda s: s.append("notes", "x" * (LIMIT + 1)), id="append-too-big"),
    ],
)
def test_a_folder_is_refused_as_a_folder_whatever_else_is_wrong(
    store: ContextManager, call: Callable[[ContextManager], object]
) -> None:
    """The refusal names what blocks the write whatever the content or the version given:
    a version conflict would send the caller to read a folder again, and a size refusal to
    split text that can never go there."""
    store.write("notes/a.md", "hello\n")
    head = git(store.root, "rev-parse", "HEAD")
    with pytest.raises(InvalidPathError, match="notes is a folder"):
        call(store)
    assert store.list() == ["notes/a.md"] and store.read("notes/a.md") == "hello\n"
    assert git(store.root, "rev-parse", "HEAD") == head


# ------------------------------------------------------------------------- which files have frontmatter
@pytest.mark.parametrize("call", ["write", "create"])
@pytest.mark.parametrize("content", ["---\nk: v\n---\nbody\n", BROKEN_BLOCK])
def test_a_file_that_is_not_markdown_is_stored_exactly_as_written(
    store: ContextManager, call: str, content: str
) -> None:
    """Only markdown files carry frontmatter: text in any other file that looks like a block
    (readable or not) is its content, kept byte for byte, with no keys."""
    doc = getattr(store, call)("data/a.txt", content)
    assert doc.metadata == {} and doc.body == content
    assert (store.root / "data" / "a.txt").read_bytes() == content.encode("utf-8")
    assert git(store.root, "show", "HEAD:data/a.txt") == content


# ------------------------------------------------------------------------- what a refusal names
@pytest.mark.parametrize("call", ["write", "create"])
def test_a_block_yaml_cannot_read_is_refused_naming_the_file(tmp_path: Path, call: str) -> None:
    with ContextManager(tmp_path / "ctx", index=False) as store:
        with pytest.raises(FrontmatterError, match=r"^notes/kafka\.md, line \d+: invalid YAML"):
            getattr(store, call)("notes/kafka.md", BROKEN_BLOCK)
        assert not (store.root / "notes").exists()


@pytest.mark.parametrize("call", ["write", "create"])
def test_content_that_is_not_text_is_refused_naming_the_file(
    store: ContextManager, call: str
) -> None:
    with pytest.raises(ContentError, match=r"content for notes/a\.md contains NUL bytes"):
        getattr(store, call)("notes/a.md", "one\x00two\n")
    assert not (store.root / "notes").exists()


# ------------------------------------------------------------------------- keys given beside a block
def test_keys_given_beside_a_block_replace_the_files_keys(store: ContextManager) -> None:
    """``metadata`` replaces the file's user keys even when the content brings a block of its
    own: the file ends with the block's keys under the given ones, and no key it had before."""
    store.write("notes/a.md", "body\n", {"kept": "no", "title": "old"})
    doc = store.write("notes/a.md", "---\nown: 1\n---\nbody\n", {"title": "new"})
    for got in (doc, store.get("notes/a.md")):
        assert {k: v for k, v in got.metadata.items() if k not in LIBRARY_KEYS} == {
            "own": 1,
            "title": "new",
        }


# ------------------------------------------------------------------------- which lines a refusal names
def _key(name: str) -> str:
    return SECRET_KINDS["AWS secret access key"](random.Random(name)).text


def test_an_edit_is_refused_on_the_line_of_the_body_it_makes(store: ContextManager) -> None:
    store.write("notes/a.md", "one\ntwo\n", {"title": "A"})
    with pytest.raises(ContentError, match="AWS access key on line 3 "):
        store.edit("notes/a.md", "two\n", f"two\n{_key('edited')}\n")
    assert store.read("notes/a.md") == "one\ntwo\n"


def test_an_append_to_a_file_saved_since_its_commit_is_judged_and_counted_whole(
    store: ContextManager,
) -> None:
    """The saved version was never judged as committed: a secret in it refuses the append,
    named on its line of the body, and the save stays on disk as it was."""
    store.write("notes/a.md", "one\n")
    saved = f"one\n{_key('saved')}\n"
    (store.root / "notes" / "a.md").write_text(saved, "utf-8")
    with pytest.raises(ContentError, match="AWS access key on line 2 "):
        store.append("notes/a.md", "three\n")
    assert (store.root / "notes" / "a.md").read_text("utf-8") == saved


# ------------------------------------------------------------------------- a block kept as written
#: The opening fence and the keys of a person's block, with a comment and a flow-style list.
KEYS = "---\n# kept as written\ntitle: Kafka notes\ntags: [adr, database]   # flow style\n"
NOTE = KEYS + "---\nThe broker runs on 3 nodes.\n"


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s: s.append("notes/kafka.md", "And a fourth.\n"), id="append"),
        pytest.param(lambda s: s.edit("notes/kafka.md", "3 nodes", "4 nodes"), id="edit"),
        pytest.param(lambda s: s.update_metadata("notes/kafka.md", {"owner": "ops"}), id="meta"),
        pytest.param(lambda s: s.write("notes/kafka.md", "Rewritten.\n"), id="write"),
    ],
)
def test_a_change_to_a_file_keeps_the_text_of_its_unchanged_keys(
    store: ContextManager, call: Callable[[ContextManager], object]
) -> None:
    """Keys a call does not change keep their text as the file has it: comments, flow style
    and spacing, read from what the file holds."""
    (store.root / "notes").mkdir()
    (store.root / "notes" / "kafka.md").write_text(NOTE, "utf-8")
    git(store.root, "add", "notes/kafka.md")
    commit_as_person(store.root, "kafka notes")
    call(store)
    text = (store.root / "notes" / "kafka.md").read_text("utf-8")
    assert text.startswith(KEYS)


@pytest.mark.parametrize("broken", ["+++\ntitle = [broken\n+++\nbody\n", BROKEN_BLOCK])
def test_a_file_whose_block_cannot_be_read_is_replaced_whole(
    store: ContextManager, broken: str
) -> None:
    """Nothing is read from a block that cannot be read, its format neither: the file is
    written as a new one would be."""
    (store.root / "notes").mkdir()
    (store.root / "notes" / "broken.md").write_text(broken, "utf-8")
    doc = store.write("notes/broken.md", "new body\n", {"title": "T"})
    assert doc.metadata["title"] == "T" and doc.body == "new body\n"
    text = (store.root / "notes" / "broken.md").read_text("utf-8")
    assert text.startswith("---\ntitle: T\n") and text.endswith("---\nnew body\n")


# ------------------------------------------------------------------------- a log's own records
def test_a_log_whose_older_records_hold_a_secret_still_takes_new_ones(
    store: ContextManager,
) -> None:
    """A log append is judged on the records it adds, by the write gate and then by the commit
    gate: a record a person committed before is not the agent's to answer for."""
    from contextfs.scopes import Memory

    memory = Memory(store)
    memory.log_message("user", "the first message")
    (log,) = (p for p in (store.root / "sessions").glob("*.jsonl"))
    first = log.read_text("utf-8")
    log.write_text(first + first.replace("the first message", _key("logged")), "utf-8")
    rel = log.relative_to(store.root).as_posix()
    git(store.root, "add", rel)
    commit_as_person(store.root, "a record by hand")
    memory.log_message("user", "and another")
    records = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert len(records) == 3 and records[-1]["content"] == "and another"
    assert git(store.root, "status", "--porcelain") == ""


@pytest.mark.parametrize("call", ["write", "edit"])
def test_a_file_whose_block_cannot_be_read_is_at_its_git_version(
    store: ContextManager, call: str
) -> None:
    """Its version is its blob id, as any file's: a replacement or a repair made against it
    goes through, one made against another version is a conflict."""
    (store.root / "notes").mkdir()
    (store.root / "notes" / "broken.md").write_text(BROKEN_BLOCK, "utf-8")
    version = git(store.root, "hash-object", "notes/broken.md").strip()
    args = {"write": ("a fresh start\n",), "edit": ("database\n", "database]\n")}[call]
    with pytest.raises(ConflictError):
        getattr(store, call)("notes/broken.md", *args, expected_version="0" * 40)
    doc = getattr(store, call)("notes/broken.md", *args, expected_version=version)
    assert doc.body == {"write": "a fresh start\n", "edit": "The broker runs on 3 nodes.\n"}[call]


def test_an_edit_of_a_file_whose_block_cannot_be_read_is_held_to_the_size_limit(
    store: ContextManager,
) -> None:
    """An edit of a file whose block cannot be read works on its raw text (so the block can
    be repaired) and is stored as written, not rendered: the size limit still holds, and the
    refusal says so and changes nothing."""
    (store.root / "notes").mkdir()
    path = store.root / "notes" / "broken.md"
    path.write_text(BROKEN_BLOCK, "utf-8")
    git(store.root, "add", "notes/broken.md")
    commit_as_person(store.root, "a note with a broken block")
    head = git(store.root, "rev-parse", "HEAD")
    with pytest.raises(ContentError, match=f"over the {LIMIT}-byte limit"):
        store.edit("notes/broken.md", "3 nodes", "3 nodes " + "x" * LIMIT)
    assert path.read_text("utf-8") == BROKEN_BLOCK
    assert git(store.root, "rev-parse", "HEAD") == head
    assert git(store.root, "status", "--porcelain") == ""
