"""Writing a document: metadata and body back to text, the person's own frontmatter kept.

``serialize(..., previous=text)`` re-emits every top-level key whose value did not change
from the previous text itself (its order, flow or block style, quoting, inline comment,
and the comment lines above it); only keys whose value changed, and new keys, are dumped
afresh, so a library write rewrites the lines of ``updated``, ``author``, ``session`` and
``turn`` and nothing else. The spans come from the same PyYAML events that the safety pass
of :mod:`contextfs.document` reads (their line and column marks). A round-trip YAML library
(ruamel.yaml) was the alternative: it re-emits the whole mapping with its own indentation
and line width, so untouched keys could still change, and it would be a second YAML stack
and import on every CLI call. The reused text is checked by parsing it back; if that does
not give exactly the new metadata, the whole mapping is dumped afresh.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from . import frontmatter_formats
from .document import (
    FENCE,
    MAX_DEPTH,
    MAX_FRONTMATTER_BYTES,
    MAX_INT_BITS,
    TOO_LONG,
    decode,
    is_markdown,
    parse,
    split_block,
    yaml_lib,
)
from .errors import ContextFSError, FrontmatterError

__all__ = ["as_content", "serialize"]


def as_content(rel: str, body: str) -> str:
    """The content of a write to ``rel`` whose body is exactly ``body``: for text that is
    stored as it is, never read as a document (``body`` itself unless ``rel`` is markdown
    and ``body`` starts like frontmatter or with a BOM)."""
    return serialize({}, body) if is_markdown(rel) else body


def _check_value(key: str, value: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise FrontmatterError(f"metadata {key!r} nests deeper than {MAX_DEPTH} levels; flatten it")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise FrontmatterError(f"metadata {key!r} holds {TOO_LONG}")
    if value is None or isinstance(value, (str, bool, int, float)):
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise FrontmatterError(
                    f"metadata {key!r} has a non-string key {k!r}; use string keys"
                )
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


def serialize(
    metadata: Mapping[str, Any], body: str, *, previous: str | bytes | None = None
) -> str:
    """Render metadata and body; the body is appended exactly as given.

    ``previous`` is the text the file holds now (or its bytes as stored): keys whose
    value is unchanged keep their exact text from it, see the module docstring.
    """
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise FrontmatterError(
                f"metadata key {key!r} is not a non-empty string; use string keys"
            )
        _check_value(key, value)
    # A body that starts like frontmatter (or with a BOM, which decode() drops) is
    # fenced off by an empty block so that parsing gives it back byte-for-byte.
    looks_like_block = (
        bool(FENCE.match(body.partition("\n")[0]))
        or frontmatter_formats.find_block(body) is not None
    )
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
    text: str = yaml_lib().yaml.dump(
        _plain(dict(metadata)),
        Dumper=_dumper(),
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=None if flow else False,
        width=1000,
    )
    # Only the final line break goes: the last value may end in a space that is not ASCII
    # (a no-break or an ideographic space), written unquoted, which str.strip() would take
    # with it (python-frontmatter's export strips).
    return text.removesuffix("\n")


@functools.cache
def _dumper() -> Any:
    """PyYAML's safe dumper, writing text that holds a YAML line break double-quoted."""
    yaml = yaml_lib().yaml

    class Dumper(yaml.SafeDumper):  # type: ignore[misc,name-defined]
        pass

    def text(dumper: Any, value: str) -> Any:
        # NEL and the Unicode line and paragraph separators are line breaks to YAML: in a
        # plain or single-quoted key or value they are folded into a space when read back,
        # while double quotes keep them as escapes (\N, \L, \P).
        style = '"' if any(c in value for c in "\x85\u2028\u2029") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return Dumper


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

    lib = yaml_lib()
    yaml = lib.yaml
    spans: list[
        list[Any]
    ] = []  # [key, start of the key's line, end of the value's last content, flow]
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
                spans.append(
                    [event.value, starts[event.start_mark.line], offset(event.end_mark), False]
                )
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
        entries.append((key, yaml_text[lead_from:start], yaml_text[start : ends[i]], flow))
    return yaml_text[: spans[0][1]], entries, yaml_text[ends[-1] :]


def _keep_previous(metadata: Mapping[str, Any], previous: str | bytes) -> str | None:
    """The new frontmatter text, reusing ``previous``'s text for unchanged keys (or None)."""
    lib = yaml_lib()
    try:
        text = decode(previous, "<previous>") if isinstance(previous, bytes) else previous
        yaml_text, _, _ = split_block(text, "<previous>")
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
        parts.append(
            own if _same(new[key], old.get(key)) else _dump({key: new[key]}, flow=flow) + "\n"
        )
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
