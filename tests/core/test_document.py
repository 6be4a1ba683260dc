"""The document codec: round-trips, and malformed frontmatter refused with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contextfs import ContentError, ContextManager, FrontmatterError
from contextfs.document import blob_version, decode, parse
from contextfs.serializing import serialize

# ----------------------------------------------------------------- Hypothesis
_keys = st.text(min_size=1, max_size=12).filter(lambda k: k.strip() == k and k != "")
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=12,
)
_metadata = st.dictionaries(_keys, _values, max_size=6)
_bodies = st.one_of(
    st.text(),
    st.lists(
        st.sampled_from(["---", "...", "--- ", "\r\n", "\n", "a: b", "# T", "\ufeff", " "])
    ).map("".join),
)


@settings(max_examples=120, deadline=None)
@given(metadata=_metadata, body=_bodies)
@example(metadata={"0": "\xa0"}, body="")
@example(metadata={"0\x850": None, "k": "a\u2028b"}, body="")
def test_round_trip_keeps_body_and_metadata(metadata: dict, body: str) -> None:
    text = serialize(metadata, body)
    doc = parse(text, "t.md")
    assert doc.body == body
    assert doc.metadata == metadata
    assert list(doc.metadata) == list(metadata)  # key order kept


@pytest.mark.parametrize("value", ["\xa0", "ends in a no-break space\xa0", "ideographic\u3000"])
def test_a_last_value_ending_in_a_space_that_is_not_ascii_keeps_it(value: str) -> None:
    """Such a value is written unquoted, so nothing after it may strip the block's end."""
    for metadata in ({"note": value}, {"first": 1, "note": value}):
        assert parse(serialize(metadata, "body\n"), "t.md").metadata == metadata


def test_keys_and_values_holding_a_yaml_line_break_keep_it() -> None:
    """NEL and the Unicode line and paragraph separators are line breaks to YAML, folded
    into spaces in an unquoted or single-quoted scalar: they come back as written."""
    metadata = {"a\x85b": "c\u2028d", "e": "f\u2029", "g": ["h\x85"]}
    assert parse(serialize(metadata, ""), "t.md").metadata == metadata


@settings(max_examples=60, deadline=None)
@given(metadata=_metadata, body=_bodies)
def test_round_trip_through_bytes(metadata: dict, body: str) -> None:
    body = body.replace("\x00", "")  # NUL marks a binary file; refused by design (below)
    data = serialize(metadata, body).encode("utf-8")
    doc = parse(decode(data, "t.md"), "t.md", version=blob_version(data))
    assert doc.body == body and doc.metadata == metadata


@settings(max_examples=200, deadline=None)
@given(body=st.text())
def test_plain_text_without_fence_is_all_body(body: str) -> None:
    if body.startswith("---"):
        return
    assert parse(body).body == body and parse(body).metadata == {}


def test_blob_version_matches_git() -> None:
    # `printf 'hello\n' | git hash-object --stdin`
    assert blob_version(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


# ----------------------------------------------------------------- edge cases
def test_bom_is_dropped_and_frontmatter_read() -> None:
    text = decode("\ufeff---\ntitle: T\n---\nbody\n".encode(), "bom.md")
    doc = parse(text, "bom.md")
    assert doc.metadata == {"title": "T"} and doc.body == "body\n"


def test_crlf_frontmatter_and_body_kept() -> None:
    doc = parse("---\r\ntitle: T\r\n---\r\nline one\r\nline two\r\n", "crlf.md")
    assert doc.metadata == {"title": "T"}
    assert doc.body == "line one\r\nline two\r\n"


def test_fence_must_be_on_its_own_line() -> None:
    doc = parse("--- title: T\nbody\n", "x.md")
    assert doc.metadata == {} and doc.body == "--- title: T\nbody\n"


def test_dots_close_frontmatter_and_body_fences_are_body() -> None:
    doc = parse("---\na: 1\n...\n---\nnot: meta\n---\n", "x.md")
    assert doc.metadata == {"a": 1}
    assert doc.body == "---\nnot: meta\n---\n"


def test_empty_frontmatter() -> None:
    doc = parse("---\n---\nbody", "x.md")
    assert doc.metadata == {} and doc.body == "body"


def test_dates_stay_strings() -> None:
    doc = parse("---\ndue: 2026-10-02\n---\n", "x.md")
    assert doc.metadata == {"due": "2026-10-02"}


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("---\ntitle: T\nbody without a closing fence\n", 1, "never closed"),
        ("---\ntitle: [unclosed\n---\nbody\n", 3, "invalid YAML"),
        ("---\ntitle: T\n  bad: indent\n---\n", 3, "invalid YAML"),
        ("---\n- a\n- b\n---\nbody\n", 2, "must be a mapping"),
        ("---\njust a string\n---\nbody\n", 2, "must be a mapping"),
        ("---\na: &x [1, 2]\nb: *x\n---\n", 2, "anchors and aliases"),
        ("---\n" + "a: " + "[" * 40 + "]" * 40 + "\n---\n", 2, "nests deeper"),
        ("---\n!!python/object:os.system {}\n---\n", 2, "invalid YAML"),
        ("---\n1: one\n---\n", None, "keys must be strings"),
    ],
)
def test_malformed_frontmatter_names_file_and_line(text: str, line: int | None, what: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        parse(text, "notes/bad.md")
    message = str(info.value)
    assert message.startswith("notes/bad.md")
    assert what in message
    if line is not None:
        assert f"line {line}" in message


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "---\n" + "\n".join(lines) + "\n---\nbody\n"
    with pytest.raises(FrontmatterError, match="anchors and aliases"):
        parse(text, "bomb.md")


def test_oversized_frontmatter_is_refused() -> None:
    text = "---\n" + "".join(f"k{i}: {'v' * 60}\n" for i in range(2000)) + "---\n"
    with pytest.raises(FrontmatterError, match="larger than"):
        parse(text, "big.md")


@pytest.mark.parametrize(
    "metadata",
    [
        {1: "x"},
        {"": "x"},
        {"k": object()},
        {"k": {1, 2}},
        {"k": b"bytes"},
        {"k": {"inner": {2: "x"}}},
    ],
)
def test_serialize_refuses_unrepresentable_metadata(metadata: dict) -> None:
    with pytest.raises(FrontmatterError):
        serialize(metadata, "body")


def test_deep_metadata_is_refused_on_write() -> None:
    value: object = "leaf"
    for _ in range(40):
        value = [value]
    with pytest.raises(FrontmatterError, match="nests deeper"):
        serialize({"deep": value}, "")


def test_decode_refuses_binary_and_bad_utf8() -> None:
    with pytest.raises(ContentError, match="binary"):
        decode(b"abc\x00def", "bin.md")
    with pytest.raises(ContentError, match="not valid UTF-8"):
        decode(b"caf\xe9", "latin.md")


# ----------------------------------------------------------------- through the manager
BAD_FILES = {
    "unterminated.md": "---\ntitle: T\nbody\n",
    "list.md": "---\n- a\n---\nbody\n",
    "alias.md": "---\na: &x 1\nb: *x\n---\n",
    "yaml.md": "---\ntitle: [\n---\n",
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_manager_reports_bad_frontmatter_and_leaves_the_file(tmp_path: Path, name: str) -> None:
    root = tmp_path / "ctx"
    root.mkdir()
    (root / name).write_bytes(BAD_FILES[name].encode())
    ctx = ContextManager(root, index=False)  # adopts the file as the first commit
    original = (root / name).read_bytes()
    # write() and edit() are how such a file is replaced or repaired (tests/core/changes/test_reliability_writes.py).
    for call in (
        lambda: ctx.read(name),
        lambda: ctx.get(name),
        lambda: ctx.append(name, "more"),
        lambda: ctx.update_metadata(name, {"tags": ["x"]}),
    ):
        with pytest.raises(FrontmatterError) as info:
            call()
        assert name in str(info.value)
    assert (root / name).read_bytes() == original
    # Replacing the file whole with explicit metadata is still a way out? No: write keeps the
    # user keys it cannot read, so it refuses too; deleting always works.
    ctx.delete(name)
    assert not (root / name).exists()


# ----------------------------------------------------------------- frontmatter kept as written
LIBRARY_LINE = ("updated:", "author:", "session:", "turn:")
PERSON = """---
# What this note is about
title: "Quarterly plan"
tags: [a, b]   # keep these short
created: 2024-01-05
owner: 'Dana'
reviewers:
- Ines
- Marisol
---
Body
"""


def _frontmatter_lines(text: str) -> list[str]:
    return text.split("\n---\n", 1)[0].split("\n")[1:]


def _library_write(
    previous: str, now: str = "2026-12-01T10:00:00Z", session: str | None = "s-1"
) -> str:
    """What the manager does on a write that keeps the user keys: set the library keys."""
    meta = dict(parse(previous).metadata)
    meta.setdefault("created", now)
    meta["updated"] = now
    meta["author"] = "agent:planner"
    if session is None:
        meta.pop("session", None)
    else:
        meta["session"] = session
    return serialize(meta, parse(previous).body, previous=previous)


def _without_library_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith(LIBRARY_LINE)]


def test_a_library_write_rewrites_only_library_lines() -> None:
    out = _library_write(PERSON)
    before, after = _frontmatter_lines(PERSON), _frontmatter_lines(out)
    assert _without_library_lines(after) == before  # order, flow list, quotes, comments, created
    assert [line for line in after if line.startswith(LIBRARY_LINE)] == [
        "updated: '2026-12-01T10:00:00Z'",
        "author: agent:planner",
        "session: s-1",
    ]
    assert parse(out).body == "Body\n"
    again = _library_write(out, now="2026-12-02T10:00:00Z", session=None)
    assert "updated: '2026-12-02T10:00:00Z'" in again and "session:" not in again
    assert _without_library_lines(_frontmatter_lines(again)) == before


def test_a_changed_value_is_rewritten_in_its_own_style_and_place() -> None:
    meta = dict(parse(PERSON).metadata)
    meta["tags"] = ["a", "b", "c"]
    del meta["reviewers"]
    meta["status"] = "draft"
    out = serialize(meta, "Body\n", previous=PERSON)
    assert _frontmatter_lines(out) == [
        "# What this note is about",
        'title: "Quarterly plan"',
        "tags: [a, b, c]",
        "created: 2024-01-05",
        "owner: 'Dana'",
        "status: draft",
    ]
    assert parse(out).metadata == meta


@pytest.mark.parametrize(
    "previous",
    [
        "---\n{title: T, tags: [a]}\n---\nflow mapping\n",  # not a block mapping: dumped whole
        "no frontmatter at all\n",
        "---\ntitle: [unclosed\n---\n",  # unreadable: dumped whole from the new metadata
        "---\ntitle: T\rtags: [a]\n---\nold Mac line breaks\n",
    ],
)
def test_unusable_previous_text_falls_back_to_a_full_dump(previous: str) -> None:
    meta = {"title": "T", "tags": ["a"], "updated": "2026-12-01T10:00:00Z"}
    out = serialize(meta, "b\n", previous=previous)
    assert out == serialize(meta, "b\n") and parse(out).metadata == meta


_WORDS = st.sampled_from(
    ["alpha", "Beta", "two words", "x-1", "ünï", "a: b", "#tag", "it's", "2024-01-05", "42"]
)
_KEYS = st.sampled_from(
    [
        "title",
        "tags",
        "owner",
        "status",
        "aliases",
        "links",
        "priority",
        "notes",
        "kind",
        "created",
        "author",
        "updated",
        "session",
    ]
)


def _quote(word: str, style: str) -> str:
    if style == "double":
        return '"' + word.replace('"', '\\"') + '"'
    if style == "single" or not word.replace(" ", "").replace("-", "").isalnum():
        return "'" + word.replace("'", "''") + "'"
    return word


@st.composite
def _user_entry(draw, key: str) -> list[str]:
    """One top-level key as a person might write it: the lines of its text."""
    style = draw(st.sampled_from(["plain", "double", "single"]))
    words = draw(st.lists(_WORDS, min_size=1, max_size=3))
    shape = draw(
        st.sampled_from(["scalar", "flow", "block", "block0", "map", "flowmap", "literal"])
    )
    comment = draw(st.sampled_from(["", "  # why", " # ünïcode note"]))
    if key in ("created", "author", "updated", "session"):
        shape = "scalar"  # library keys hold one string
    if shape == "scalar":
        lines = [f"{key}: {_quote(words[0], style)}{comment}"]
    elif shape == "flow":
        lines = [f"{key}: [{', '.join(_quote(w, style) for w in words)}]{comment}"]
    elif shape in ("block", "block0"):
        pad = "  " if shape == "block" else ""
        lines = [f"{key}:{comment}"] + [f"{pad}- {_quote(w, style)}" for w in words]
    elif shape == "map":
        lines = [f"{key}:"] + [f"  k{i}: {_quote(w, style)}" for i, w in enumerate(words)]
    elif shape == "flowmap":
        lines = [
            f"{key}: {{{', '.join(f'k{i}: {_quote(w, style)}' for i, w in enumerate(words))}}}{comment}"
        ]
    else:
        lines = [f"{key}: |"] + [f"  {w}" for w in words]
    lead = draw(st.sampled_from([[], ["# a comment above"], [""], ["", "# after a blank line"]]))
    return lead + lines


@st.composite
def _person_frontmatter(draw) -> str:
    keys = draw(st.lists(_KEYS, min_size=1, max_size=6, unique=True))
    lines: list[str] = []
    for key in keys:
        lines += draw(_user_entry(key))
    return "---\n" + "\n".join(lines) + "\n---\nThe body.\n"


def _user_lines(text: str, had_created: bool) -> list[str]:
    """The frontmatter lines that are not the library's (created counts once it existed)."""
    keep = []
    for line in _frontmatter_lines(text):
        if line.startswith(LIBRARY_LINE) or (not had_created and line.startswith("created:")):
            continue
        keep.append(line)
    return keep


@settings(max_examples=150, deadline=None)
@given(previous=_person_frontmatter())
def test_library_writes_change_only_library_lines(previous: str) -> None:
    had_created = "created" in parse(previous).metadata
    out = _library_write(previous)
    assert _user_lines(out, had_created) == _user_lines(previous, had_created)
    expected = dict(parse(previous).metadata)
    expected.setdefault("created", "2026-12-01T10:00:00Z")
    expected.update(updated="2026-12-01T10:00:00Z", author="agent:planner", session="s-1")
    assert parse(out).metadata == expected and parse(out).body == "The body.\n"


def test_writes_through_the_manager_keep_a_persons_frontmatter(tmp_path: Path) -> None:
    """Hypothesis through the real library: append, edit and write on hand-written files."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    counter = iter(range(10**6))

    @settings(max_examples=25, deadline=None)
    @given(previous=_person_frontmatter(), how=st.sampled_from(["append", "edit", "write"]))
    def check(previous: str, how: str) -> None:
        rel = f"notes/n{next(counter)}.md"
        full = ctx.root / rel
        full.parent.mkdir(exist_ok=True)
        full.write_text(previous, "utf-8")
        ctx.sync()  # the person's file as committed, byte for byte
        had_created = "created" in parse(previous).metadata
        if how == "append":
            ctx.append(rel, "More.\n")
        elif how == "edit":
            ctx.edit(rel, "The body.", "The new body.")
        else:
            ctx.write(rel, "A new body.\n")
        after = full.read_text("utf-8")
        assert _user_lines(after, had_created) == _user_lines(previous, had_created)
        assert parse(after).metadata["author"] == "agent"

    check()
    ctx.close()
