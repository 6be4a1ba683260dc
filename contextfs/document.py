"""The document codec: markdown text with optional YAML frontmatter.

Parsing is done here rather than by ``frontmatter.loads`` alone because that call
strips whitespace from the body, and contextfs promises that a metadata-only change
leaves the body byte-for-byte. python-frontmatter's YAML handler still does the YAML
work, with a loader that keeps dates as the strings the author wrote and after a pass
over the YAML events that refuses aliases (billion-laughs bombs) and absurd nesting.

Writing keeps a person's frontmatter as they wrote it. ``serialize(..., previous=text)``
re-emits every top-level key whose value did not change from the previous text itself
(its order, flow or block style, quoting, inline comment, and the comment lines above
it); only keys whose value changed, and new keys, are dumped afresh, so a library write
rewrites the lines of ``updated``, ``author``, ``session`` and ``turn`` and nothing else.
The spans come from the same PyYAML events that the safety pass reads (their line and
column marks). A round-trip YAML library (ruamel.yaml) was the alternative: it re-emits
the whole mapping with its own indentation and line width, so untouched keys could still
change, and it would be a second YAML stack and import on every CLI call. The reused
text is checked by parsing it back; if that does not give exactly the new metadata, the
whole mapping is dumped afresh.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from . import frontmatter_formats
from .errors import ContentError, ContextFSError, FrontmatterError

if TYPE_CHECKING:
    import yaml

__all__ = [
    "LIBRARY_KEYS",
    "Document",
    "Written",
    "as_content",
    "blob_version",
    "decode",
    "is_markdown",
    "load",
    "parse",
    "serialize",
    "split_written",
]

#: Keys the library maintains; callers cannot set them through ``metadata``.
LIBRARY_KEYS = ("created", "updated", "author", "session", "turn")
MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_DEPTH = 16
#: The longest whole number frontmatter may hold: Python converts at most 4,300 decimal
#: digits to or from text by default, and 14,000 bits stay below that (4,215 digits).
MAX_INT_BITS = 14_000
_TOO_LONG = "a whole number with more than 4,200 digits, which cannot be read back as text; quote it as a string"
_FENCE = re.compile(r"^---[ \t]*\r?$")
_CLOSE = re.compile(r"^(---|\.\.\.)[ \t]*\r?$")


@functools.cache
def _lib() -> SimpleNamespace:
    """PyYAML, the safe loader contextfs uses and python-frontmatter's handler, on first use.

    Importing them costs about 15 ms (PyYAML compiles its reader's character classes at
    import), paid by every CLI call that opens a root; a file without frontmatter, and
    commands such as ``ls`` and ``log`` that parse none, do not need them.
    """
    import yaml  # lazy: about 15 ms, see above
    from frontmatter.default_handlers import YAMLHandler  # lazy, with PyYAML

    # libyaml's parser when PyYAML was built with it: parsing is most of a write's CPU time.
    base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    # ignore: the base is picked at run time, so mypy cannot check the subclass against it.
    class Loader(base):  # type: ignore[misc]
        """Safe loading without the timestamp resolver: '2026-10-02' stays a string."""

    Loader.yaml_implicit_resolvers = {
        key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_int(loader: Any, node: Any) -> int:
        # int() refuses more than 4,300 decimal digits with a ValueError (not a YAML error),
        # and hex or sexagesimal literals build numbers that can never be printed again.
        try:
            value = int(yaml.constructor.SafeConstructor.construct_yaml_int(loader, node))
        except ValueError:
            value = None
        if value is None or value.bit_length() > MAX_INT_BITS:
            raise yaml.constructor.ConstructorError(None, None, _TOO_LONG, node.start_mark)
        return value

    Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    return SimpleNamespace(yaml=yaml, Loader=Loader, handler=YAMLHandler())


@dataclass(frozen=True)
class Document:
    """One version of one file: its path, frontmatter, body and git blob id."""

    path: str
    metadata: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    version: str | None = None

    @property
    def title(self) -> str:
        """The frontmatter title, else the first heading, else the file name."""
        title = self.metadata.get("title")
        if isinstance(title, str) and title.strip():
            return title.strip()
        for line in self.body.splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip()
        return self.path.rsplit("/", 1)[-1]


def blob_version(data: bytes) -> str:
    """git's blob id of ``data``: the version recorded in manifests and used for CAS."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def decode(data: bytes, path: str) -> str:
    """Bytes from disk to text; a binary or non-UTF-8 file is a ContentError.

    Such a file is still kept as it is — committed, listed, moved, deleted and restored
    like any other — but it is not a document: it cannot be read, searched or packed
    into a view, and the message says so rather than that it cannot be stored.
    """
    if b"\x00" in data:
        raise ContentError(f"{path} is a binary file ({len(data)} bytes): contextfs keeps it as it is "
                           "(listed, versioned, moved like any file) but reads only UTF-8 text; "
                           "open it with a program made for it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContentError(
            f"{path} is not valid UTF-8 text (byte {exc.start}): contextfs keeps it as it is but reads only "
            "UTF-8 text; re-save it as UTF-8 to read it here"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def _split(text: str, path: str) -> tuple[str | None, str, int]:
    """Return (yaml text or None, body, line number where the YAML starts)."""
    first, sep, rest = text.partition("\n")
    if not sep or not _FENCE.match(first):
        return None, text, 0
    lines = rest.split("\n")
    offset = 0
    for line in lines:
        if _CLOSE.match(line):
            yaml_text = rest[:offset]
            body = rest[offset + len(line) + 1 :] if offset + len(line) < len(rest) else ""
            return yaml_text, body, 2
        offset += len(line) + 1
    raise FrontmatterError(
        f"{path}: the frontmatter fence opened on line 1 is never closed; "
        "add a line with '---' after the metadata"
    )


def _check_events(yaml_text: str, path: str, first_line: int) -> None:
    lib = _lib()
    yaml = lib.yaml
    depth = 0
    try:
        for event in yaml.parse(yaml_text, Loader=lib.Loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                line = first_line + event.start_mark.line
                raise FrontmatterError(
                    f"{path}, line {line}: YAML anchors and aliases are not allowed in frontmatter; "
                    "write the values out"
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    line = first_line + event.start_mark.line
                    raise FrontmatterError(
                        f"{path}, line {line}: frontmatter nests deeper than {MAX_DEPTH} levels; flatten it"
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, path, first_line) from None


def _yaml_error(exc: yaml.YAMLError, path: str, first_line: int) -> FrontmatterError:
    mark = getattr(exc, "problem_mark", None)
    where = f", line {first_line + mark.line}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return FrontmatterError(f"{path}{where}: invalid YAML frontmatter ({problem}); fix the YAML between the '---' fences")


def parse(text: str, path: str = "<text>", version: str | None = None) -> Document:
    """Parse text into a :class:`Document`; raise FrontmatterError naming file and line.

    YAML frontmatter between ``---`` fences is read here; a TOML (``+++``) or JSON block
    by :mod:`contextfs.frontmatter_formats`, with the same limits.
    """
    block = frontmatter_formats.find_block(text) if text[:1] in "+{" else None
    if block is not None:
        meta = frontmatter_formats.load(block, path, MAX_FRONTMATTER_BYTES, MAX_DEPTH)
        return Document(path=path, metadata=meta, body=block.body, version=version)
    yaml_text, body, first_line = _split(text, path)
    if yaml_text is None:
        return Document(path=path, metadata={}, body=body, version=version)
    if len(yaml_text.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"{path}: frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes; move data into the body")
    _check_events(yaml_text, path, first_line)
    lib = _lib()
    try:
        meta = lib.handler.load(yaml_text, Loader=lib.Loader) if yaml_text.strip() else {}
    except lib.yaml.YAMLError as exc:
        raise _yaml_error(exc, path, first_line) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontmatterError(
            f"{path}, line {first_line}: frontmatter must be a mapping of keys to values, "
            f"not a {type(meta).__name__}; write 'key: value' lines"
        )
    bad = [k for k in meta if not isinstance(k, str)]
    if bad:
        raise FrontmatterError(f"{path}: frontmatter keys must be strings (found {bad[0]!r}); quote the key")
    return Document(path=path, metadata=dict(meta), body=body, version=version)


@dataclass(frozen=True)
class Written:
    """Text a caller writes to a markdown file, read as a document.

    ``metadata`` is the frontmatter block it starts with (None when it has none), ``body``
    what follows, and ``body_line`` the line of the text the body starts on (1 without a
    block), so a message about the body can count lines as the caller wrote them.
    """

    metadata: dict[str, Any] | None
    body: str
    body_line: int = 1


def split_written(text: str, path: str = "<text>") -> Written:
    """Content given to a write: a leading frontmatter block is its frontmatter, not body text.

    A file's text and the content of a write are read the same way, so writing what a file
    holds writes that file. A first line ``---`` that is never closed is a thematic break,
    not a block: the whole text is the body. A body that must start with a block of its own
    is written after an empty block (``---\n---\n``), as the file stores it
    (:func:`as_content`). Invalid YAML in the block is a FrontmatterError, as in a file.
    """
    block = frontmatter_formats.find_block(text) if text[:1] in "+{" else None
    if block is not None:
        return Written(parse(text, path).metadata, block.body, block.body_line)
    first, sep, rest = text.partition("\n")
    if not sep or not _FENCE.match(first) or not any(_CLOSE.match(line) for line in rest.split("\n")):
        return Written(None, text)
    doc = parse(text, path)
    return Written(doc.metadata, doc.body, text[: len(text) - len(doc.body)].count("\n") + 1)


def as_content(rel: str, body: str) -> str:
    """The content of a write to ``rel`` whose body is exactly ``body``: for text that is
    stored as it is, never read as a document (``body`` itself unless ``rel`` is markdown
    and ``body`` starts like frontmatter or with a BOM)."""
    return serialize({}, body) if is_markdown(rel) else body


def is_markdown(rel: str) -> bool:
    """Only markdown files carry frontmatter; every other file is stored exactly as written."""
    return rel.lower().endswith((".md", ".markdown"))


def load(data: bytes, rel: str) -> Document:
    """A file's bytes as a Document: markdown is parsed, anything else is all body.

    JSON Lines logs, ``.json``, ``.txt`` and other files keep their bytes as they are
    (provenance lives in the commit trailers), so a log line or a JSON document stays
    parseable on its own.
    """
    text = decode(data, rel)
    if is_markdown(rel):
        return parse(text, rel, version=blob_version(data))
    return Document(path=rel, metadata={}, body=text, version=blob_version(data))


def _check_value(key: str, value: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise FrontmatterError(f"metadata {key!r} nests deeper than {MAX_DEPTH} levels; flatten it")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise FrontmatterError(f"metadata {key!r} holds {_TOO_LONG}")
    if value is None or isinstance(value, (str, bool, int, float)):
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise FrontmatterError(f"metadata {key!r} has a non-string key {k!r}; use string keys")
            _check_value(key, v, depth + 1)
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            _check_value(key, v, depth + 1)
        return
    raise FrontmatterError(
        f"metadata {key!r} has a value of type {type(value).__name__}; use strings, numbers, booleans, lists or mappings"
    )


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def serialize(metadata: Mapping[str, Any], body: str, *, previous: str | bytes | None = None) -> str:
    """Render metadata and body; the body is appended exactly as given.

    ``previous`` is the text the file holds now (or its bytes as stored): keys whose
    value is unchanged keep their exact text from it, see the module docstring.
    """
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise FrontmatterError(f"metadata key {key!r} is not a non-empty string; use string keys")
        _check_value(key, value)
    # A body that starts like frontmatter (or with a BOM, which decode() drops) is
    # fenced off by an empty block so that parsing gives it back byte-for-byte.
    looks_like_block = bool(_FENCE.match(body.partition("\n")[0])) or frontmatter_formats.find_block(body) is not None
    if not metadata and not looks_like_block and not body.startswith("\ufeff"):
        return body
    if not metadata:
        return "---\n---\n" + body
    other = _other_format(metadata, previous) if previous else None
    if other is not None:
        return other + body
    kept = _keep_previous(metadata, previous) if previous else None
    if kept is not None:
        return f"---\n{kept}---\n{body}"
    return f"---\n{_dump(metadata)}\n---\n{body}"


def _other_format(metadata: Mapping[str, Any], previous: str | bytes) -> str | None:
    """The frontmatter in the previous text's format when it was TOML or JSON, else None."""
    try:
        text = decode(previous, "<previous>") if isinstance(previous, bytes) else previous
    except ContextFSError:
        return None
    block = frontmatter_formats.find_block(text) if text[:1] in "+{" else None
    if block is None:
        return None
    try:
        old = frontmatter_formats.load(block, "<previous>", MAX_FRONTMATTER_BYTES, MAX_DEPTH)
    except FrontmatterError:
        old = {}
    fresh = frontmatter_formats.dump(block, old, _plain(dict(metadata)), _same)
    return f"+++\n{fresh}+++\n" if block.format == "toml" else fresh


def _dump(metadata: Mapping[str, Any], *, flow: bool = False) -> str:
    # flow=True writes innermost lists and mappings inline ('tags: [a, b]'), for a key
    # the person wrote that way.
    return _lib().handler.export(_plain(dict(metadata)), sort_keys=False, allow_unicode=True,
                           default_flow_style=None if flow else False, width=1000)


def _same(a: Any, b: Any) -> bool:
    """Equal with equal types all the way down (``True == 1`` in Python, not in YAML)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _entries(yaml_text: str) -> tuple[str, list[tuple[str, str, str, bool]], str] | None:
    """Split a block mapping's text into (head, [(key, leading lines, key text, flow)], tail).

    An entry's own text runs from its key's line to the end of the line where its value
    ends (an inline comment stays with it); comment and blank lines between two entries
    lead the next one. ``flow`` says the value was written inline (``[a, b]``). None when
    the text is not a plain block mapping of scalar keys.
    """
    starts = [0]
    starts += [i + 1 for i, ch in enumerate(yaml_text) if ch == "\n"]

    def offset(mark: Any) -> int:
        return starts[mark.line] + mark.column

    def line_end(at: int) -> int:
        nl = yaml_text.find("\n", at)
        return len(yaml_text) if nl < 0 else nl + 1

    lib = _lib()
    yaml = lib.yaml
    spans: list[list[Any]] = []  # [key, start of the key's line, end of the value's last content, flow]
    depth, flows, expect_key = 0, [], False
    for event in yaml.parse(yaml_text, Loader=lib.Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            if depth == 0:
                if not isinstance(event, yaml.MappingStartEvent) or event.flow_style:
                    return None
                expect_key = True
            elif depth == 1 and expect_key:
                return None  # a collection used as a key
            elif depth == 1:
                spans[-1][3] = bool(event.flow_style)
            depth += 1
            flows.append(bool(event.flow_style))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            if flows.pop() and depth >= 1:
                spans[-1][2] = offset(event.end_mark)  # just after the closing ] or }
            if depth == 1:
                expect_key = True
        elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)) and depth >= 1:
            if depth == 1 and expect_key:
                if not isinstance(event, yaml.ScalarEvent):
                    return None
                spans.append([event.value, starts[event.start_mark.line], offset(event.end_mark), False])
                expect_key = False
            else:
                spans[-1][2] = offset(event.end_mark)
                if depth == 1:
                    expect_key = True
    if not spans or len({span[0] for span in spans}) != len(spans):
        return None
    # A value that ends at a line start (a block scalar takes its line break) ends there;
    # otherwise the rest of its line (an inline comment) belongs to it.
    line_starts = set(starts)
    ends = [end if end in line_starts else line_end(end) for _, _, end, _ in spans]
    entries = []
    for i, (key, start, _, flow) in enumerate(spans):
        lead_from = ends[i - 1] if i else start
        entries.append((key, yaml_text[lead_from:start], yaml_text[start:ends[i]], flow))
    return yaml_text[: spans[0][1]], entries, yaml_text[ends[-1]:]


def _keep_previous(metadata: Mapping[str, Any], previous: str | bytes) -> str | None:
    """The new frontmatter text, reusing ``previous``'s text for unchanged keys (or None)."""
    lib = _lib()
    try:
        text = decode(previous, "<previous>") if isinstance(previous, bytes) else previous
        yaml_text, _, _ = _split(text, "<previous>")
        if not yaml_text or re.search("\r(?!\n)|[\x85\u2028\u2029]", yaml_text):
            return None  # no frontmatter, or line breaks that YAML and str.split disagree on
        old = parse(text).metadata
        split = _entries(yaml_text)
    except (ContextFSError, lib.yaml.YAMLError):
        return None
    if split is None:
        return None
    head, entries, tail = split
    new = _plain(dict(metadata))
    parts = [head]
    for key, lead, own, flow in entries:
        if key not in new:
            continue
        parts.append(lead)
        parts.append(own if _same(new[key], old.get(key)) else _dump({key: new[key]}, flow=flow) + "\n")
    parts.append(tail)
    added = {k: v for k, v in new.items() if k not in old}
    if added:
        if not "".join(parts).endswith("\n"):
            parts.append("\n")
        parts.append(_dump(added) + "\n")
    out = "".join(parts)
    if not out.endswith("\n"):
        out += "\n"
    try:
        again = lib.yaml.load(out, Loader=lib.Loader) or {}
    except lib.yaml.YAMLError:
        return None
    return out if _same(again, new) else None
