"""TOML (``+++``) and JSON frontmatter, as Hugo, Zola and note apps write it: read as the
document's keys, and written back in the same format with the person's own lines kept
byte for byte (only the keys that changed, and contextfs's own, are written)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextfs import ContextManager, FrontmatterError
from contextfs.document import as_content, parse, serialize
from contextfs.scopes import ScopedContext

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

HUGO = ('+++\ntitle = "Deploying with Kamal"  # from the blog\ntags = ["deploy", "kamal"]\n'
        'date = 2024-05-01T09:30:00Z\n\n[params]\n  series = "ops"\n+++\nWe deploy with Kamal 2.\n')
JSON_NOTE = '{\n    "title": "Queue sizing",\n    "tags": ["kafka"],\n    "draft": false\n}\nThree brokers.\n'


@pytest.fixture
def mgr(tmp_path: Path):
    manager = ContextManager(tmp_path / "ctx")
    yield manager
    manager.close()


def person_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(
        ("created", "updated", "author", "session", "turn", "trust"))]


def test_a_hugo_note_is_read_as_a_document(mgr: ContextManager) -> None:
    (mgr.root / "notes").mkdir()
    (mgr.root / "notes" / "kamal.md").write_text(HUGO, "utf-8")
    mgr.sync()
    doc = mgr.get("notes/kamal.md")
    assert doc.metadata["title"] == "Deploying with Kamal" and doc.metadata["tags"] == ["deploy", "kamal"]
    assert doc.metadata["date"] == "2024-05-01T09:30:00+00:00" and doc.metadata["params"] == {"series": "ops"}
    assert doc.body == "We deploy with Kamal 2.\n" and doc.title == "Deploying with Kamal"
    hits = mgr.search("tag:kamal")
    assert hits[0][0] == "notes/kamal.md" and "+++" not in hits[0][1]


def test_writes_keep_the_format_and_the_persons_lines(mgr: ContextManager) -> None:
    mgr.write("notes/kamal.md", HUGO)  # content with a TOML block: one TOML block on disk
    mgr.append("notes/kamal.md", "- Rollback: kamal rollback\n")
    mgr.update_metadata("notes/kamal.md", {"status": "current"})
    text = (mgr.root / "notes" / "kamal.md").read_text("utf-8")
    assert text.startswith("+++\n") and text.count("+++\n") == 2 and "---" not in text
    assert person_lines(HUGO)[:4] == person_lines(text)[:4]  # title, tags, date as written
    assert '[params]\n  series = "ops"\n+++' in text  # the table stays last, as written
    block = text.split("+++\n")[1]
    meta = tomllib.loads(block)
    assert meta["author"] == "agent" and meta["status"] == "current" and "created" in meta
    assert mgr.read("notes/kamal.md") == "We deploy with Kamal 2.\n- Rollback: kamal rollback\n"


def test_json_frontmatter_too(mgr: ContextManager) -> None:
    mgr.write("notes/queue.md", JSON_NOTE)
    mgr.update_metadata("notes/queue.md", {"draft": True})
    text = (mgr.root / "notes" / "queue.md").read_text("utf-8")
    block, _, body = text.partition("\n}\n")
    meta = json.loads(block + "\n}")
    assert meta["title"] == "Queue sizing" and meta["draft"] is True and meta["author"] == "agent"
    assert text.startswith('{\n    "title": "Queue sizing",\n    "tags": ["kafka"],\n    "draft": true,')
    assert body == "Three brokers.\n"


def test_views_show_the_body_not_the_block(mgr: ContextManager) -> None:
    mgr.write("memory/facts.md", HUGO)
    view = ScopedContext(mgr, budget=2000).assemble("project")
    assert "We deploy with Kamal 2." in view.text and "+++" not in view.text


def test_broken_and_unwritable_blocks_are_refused(mgr: ContextManager) -> None:
    with pytest.raises(FrontmatterError, match=r"notes/bad.md: invalid TOML frontmatter"):
        mgr.write("notes/bad.md", '+++\ntitle = "unclosed\n+++\nbody')
    mgr.write("notes/t.md", '+++\ntitle = "T"\n+++\nbody')
    with pytest.raises(FrontmatterError, match="TOML frontmatter cannot hold"):
        mgr.update_metadata("notes/t.md", {"owner": ["ops", None]})
    text = "+++\nnot = 'frontmatter'\n+++\nstored as text"
    assert mgr.write("notes/literal.md", as_content("notes/literal.md", text)).body == text


def test_text_that_only_looks_like_json_is_body() -> None:
    for text in ('{"inline": 1}\nbody', "{\nnot json\n}\nbody", '{\n  "a": 1 }\nbody', "{"):
        assert parse(text, "x.md").body == text and parse(text, "x.md").metadata == {}


flat = st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
                       st.one_of(st.text(max_size=12), st.integers(-1000, 1000), st.booleans(),
                                 st.lists(st.text(max_size=6), max_size=3)), min_size=1, max_size=5)


@settings(max_examples=80, deadline=None)
@given(flat, flat, st.sampled_from(["toml", "json"]))
def test_unchanged_keys_keep_their_text(before: dict, changes: dict, kind: str) -> None:
    import tomli_w

    if kind == "toml":
        text = "+++\n" + tomli_w.dumps(before) + "+++\nbody\n"
    else:
        text = json.dumps(before, indent=2, ensure_ascii=False).replace("\n}", "\n}", 1) + "\nbody\n"
    assert parse(text, "x.md").metadata == before
    after = {**before, **changes}
    out = serialize(after, "body\n", previous=text)
    assert parse(out, "x.md").metadata == after and parse(out, "x.md").body == "body\n"
    kept = [k for k in before if k not in changes or changes[k] == before[k]]
    lines = out.splitlines()
    for key in kept:  # a key nobody changed keeps its own line
        own = [line for line in text.splitlines() if line.lstrip().startswith((f"{key} =", f'"{key}":'))]
        assert all(line in lines or line.rstrip(",") in [x.rstrip(",") for x in lines] for line in own), (key, out)
