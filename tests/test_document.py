"""The document codec: round-trips, and malformed frontmatter refused with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextfs import ContentError, ContextManager, FrontmatterError
from contextfs.document import blob_version, decode, parse, serialize

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
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)
    ),
    max_leaves=12,
)
_metadata = st.dictionaries(_keys, _values, max_size=6)
_bodies = st.one_of(
    st.text(),
    st.lists(st.sampled_from(["---", "...", "--- ", "\r\n", "\n", "a: b", "# T", "\ufeff", " "]))
    .map("".join),
)


@settings(max_examples=120, deadline=None)
@given(metadata=_metadata, body=_bodies)
def test_round_trip_keeps_body_and_metadata(metadata: dict, body: str) -> None:
    text = serialize(metadata, body)
    doc = parse(text, "t.md")
    assert doc.body == body
    assert doc.metadata == metadata
    assert list(doc.metadata) == list(metadata)  # key order kept


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
    [{1: "x"}, {"": "x"}, {"k": object()}, {"k": {1, 2}}, {"k": b"bytes"}, {"k": {"inner": {2: "x"}}}],
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
    for call in (
        lambda: ctx.read(name),
        lambda: ctx.get(name),
        lambda: ctx.write(name, "new body"),
        lambda: ctx.append(name, "more"),
        lambda: ctx.edit(name, "body", "BODY"),
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
