"""TOML (``+++``) and JSON (``{...}``) frontmatter, as static-site tools and note apps write it.

YAML between ``---`` fences is the codec's own format (:mod:`contextfs.document`); a file
that starts with a TOML block between ``+++`` lines (Hugo, Zola) or with a JSON object
(Hugo) is read the same way: its keys are the document's metadata, the rest is the body.
python-frontmatter's handlers are the format interface: its ``JSONHandler`` and a
``TOMLHandler`` on the standard ``tomllib`` (its own needs the unmaintained ``toml``
package) load a block and dump a whole one.

Writing keeps the person's format and text, as for YAML: a key whose value did not change
keeps its exact text (order, comments, spacing); only changed and new keys are dumped, new
ones after the last top-level key. The result is parsed back, and if it does not give
exactly the new metadata (a shape this line-by-line reuse cannot handle, such as dotted
keys or a changed table) the whole block is dumped afresh in the same format. TOML has no
null, so a key without a value cannot be written there.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable, Mapping
from datetime import date, datetime, time
from typing import Any, NamedTuple

from .errors import FrontmatterError

__all__ = ["Block", "dump", "find_block", "load"]

_TOML_FENCE = re.compile(r"\+\+\+[ \t]*\r?")
_TOML_KEY = re.compile(r"[ \t]*([A-Za-z0-9_-]+|\"[^\"\n]*\"|'[^'\n]*')[ \t]*=")


class Block(NamedTuple):
    """A TOML or JSON frontmatter block: its format, its text, the body, the body's first line."""

    format: str  # "toml" or "json"
    text: str
    body: str
    body_line: int


@functools.cache
def _toml_loads() -> Callable[[str], dict[str, Any]]:
    """The TOML parser, imported on the first TOML block: importing tomllib compiles its
    patterns (a few ms of every command's start-up), and most roots hold no TOML frontmatter."""
    if sys.version_info >= (3, 11):
        import tomllib  # startup cost: see the docstring
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # startup cost: see the docstring
    return tomllib.loads


@functools.cache
def _handlers() -> dict[str, Any]:
    """python-frontmatter's handler objects, on first use (it imports PyYAML)."""
    import tomli_w  # lazy: only a TOML block is written with it
    from frontmatter.default_handlers import BaseHandler, JSONHandler  # lazy, with PyYAML

    class TOMLHandler(BaseHandler):
        """TOML between ``+++`` lines, read with the standard library."""

        FM_BOUNDARY = re.compile(r"^\+{3,}\s*$", re.MULTILINE)
        START_DELIMITER = END_DELIMITER = "+++"

        def load(self, fm: str, **kwargs: object) -> Any:
            return _toml_loads()(fm)

        def export(self, metadata: dict[str, object], **kwargs: object) -> str:
            return str(tomli_w.dumps(metadata))

    return {"toml": TOMLHandler(), "json": JSONHandler()}


def find_block(text: str) -> Block | None:
    """The TOML or JSON block ``text`` starts with, or None (YAML and plain text included)."""
    first, sep, rest = text.partition("\n")
    if sep and _TOML_FENCE.fullmatch(first):
        offset = 0
        for line in rest.split("\n"):
            if _TOML_FENCE.fullmatch(line):
                body = rest[offset + len(line) + 1 :] if offset + len(line) < len(rest) else ""
                return Block("toml", rest[:offset], body, rest[:offset].count("\n") + 3)
            offset += len(line) + 1
        return None  # never closed: not a block
    if (
        sep and first.rstrip("\r") == "{"
    ):  # python-frontmatter's JSON form: "{" and "}" on lines of their own
        try:
            value, end = json.JSONDecoder().raw_decode(text)
        except ValueError:
            return None  # a body that starts with a brace
        tail = text[end:]
        newline = 2 if tail.startswith("\r\n") else 1 if tail.startswith("\n") else 0
        closing_alone = text.rfind("\n", 0, end - 1) == end - 2
        if isinstance(value, dict) and closing_alone and (newline or not tail):
            return Block("json", text[:end], tail[newline:], text[:end].count("\n") + 2)
    return None


def _plain(value: Any) -> Any:
    """TOML's dates and times as ISO strings (metadata holds JSON's types; YAML's loader
    keeps dates as strings too)."""
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def load(block: Block, path: str, max_bytes: int, max_depth: int) -> dict[str, Any]:
    """The block's keys, checked as YAML frontmatter is (size, nesting, a mapping)."""
    if len(block.text.encode("utf-8")) > max_bytes:
        raise FrontmatterError(
            f"{path}: frontmatter is larger than {max_bytes} bytes; move data into the body"
        )
    try:
        meta = _handlers()[block.format].load(block.text)
    except ValueError as exc:  # tomllib.TOMLDecodeError and json.JSONDecodeError are ValueErrors
        fences = "'+++' fences" if block.format == "toml" else "braces"
        raise FrontmatterError(
            f"{path}: invalid {block.format.upper()} frontmatter ({exc}); fix it between "
            f"the {fences}"
        ) from None

    def depth(value: Any, level: int = 0) -> int:
        inner = (
            value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        )
        return max((depth(v, level + 1) for v in inner), default=level)

    if depth(meta) > max_depth:
        raise FrontmatterError(
            f"{path}: frontmatter nests deeper than {max_depth} levels; flatten it"
        )
    return dict(_plain(meta))


def _refuse_none(metadata: Mapping[str, Any]) -> None:
    def has_none(value: Any) -> bool:
        if value is None:
            return True
        inner = (
            value.values()
            if isinstance(value, Mapping)
            else value
            if isinstance(value, list)
            else ()
        )
        return any(has_none(v) for v in inner)

    empty = [k for k, v in metadata.items() if has_none(v)]
    if empty:
        raise FrontmatterError(
            f"metadata {empty[0]!r} has no value, which TOML frontmatter cannot hold; "
            "give it a value or remove the key"
        )


def _toml_entries(text: str) -> tuple[list[tuple[str, str, str]], str] | None:
    """[(key, leading lines, own text)] of the top-level keys and the rest (tables), or None."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    entries: list[tuple[str, str, str]] = []
    lead: list[str] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            lead.append(lines[i])
            i += 1
            continue
        if stripped.startswith("["):
            return entries, "\n".join(lead + lines[i:]) + "\n"
        if not _TOML_KEY.match(lines[i]):
            return None  # a dotted key or something else this reuse does not handle
        for j in range(i, len(lines)):  # the entry ends where it parses as one key
            own = "\n".join(lines[i : j + 1]) + "\n"
            try:
                parsed = _toml_loads()(own)
            except ValueError:
                continue
            if len(parsed) != 1:
                return None
            entries.append((next(iter(parsed)), "".join(line + "\n" for line in lead), own))
            lead, i = [], j + 1
            break
        else:
            return None
    return entries, "".join(line + "\n" for line in lead)


def _json_members(text: str) -> tuple[list[tuple[str, str, str]], str] | None:
    """[(key, whitespace before it, its text)] of a JSON object and the space before ``}``."""
    decoder, at = json.JSONDecoder(), 1
    members: list[tuple[str, str, str]] = []
    while True:
        start = at
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if text[at] == "}":
            return members, text[start:at]
        if text[at] != '"':
            return None
        # ignore: json.decoder.scanstring is public and documented in the module, but
        # typeshed leaves it out of the stub.
        key, after = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
        colon = text.index(":", after)
        value_at = colon + 1
        while text[value_at] in " \t\r\n":
            value_at += 1
        _, end = decoder.raw_decode(text, value_at)
        members.append((key, text[start:at], text[at:end]))
        at = look = end
        while text[look] in " \t\r\n":
            look += 1
        if text[look] == ",":
            at = look + 1


def dump(
    block: Block, old: Mapping[str, Any], new: Mapping[str, Any], same: Callable[[Any, Any], bool]
) -> str:
    """The block's new text for ``new``, reusing ``block.text`` for keys whose value is ``same``."""
    handler = _handlers()[block.format]
    if block.format == "toml":
        _refuse_none(new)
        reused = _reuse_toml(block.text, old, new, same)
    else:
        reused = _reuse_json(block.text, old, new, same)
    if reused is not None:
        fenced = f"+++\n{reused}+++\n" if block.format == "toml" else reused
        found = find_block(fenced)
        try:
            again = (
                _plain(handler.load(found.text)) if found is not None and not found.body else None
            )
        except ValueError:
            again = None
        if again is not None and same(again, dict(new)):
            return reused
    if block.format == "toml":
        return str(handler.export(dict(new)))
    return json.dumps(dict(new), indent=4, ensure_ascii=False) + "\n"


def _reuse_toml(
    text: str, old: Mapping[str, Any], new: Mapping[str, Any], same: Callable[[Any, Any], bool]
) -> str | None:
    split = _toml_entries(text)
    if split is None:
        return None
    entries, tail = split
    tables = {k for k in old if k not in {key for key, _, _ in entries}}
    if any(k not in new or not same(new[k], old[k]) for k in tables):
        return None  # a table changed: dumped whole
    handler = _handlers()["toml"]
    parts = []
    for key, lead, own in entries:
        if key in new:
            if isinstance(new[key], Mapping) and not same(new[key], old.get(key)):
                return None
            parts.append(
                lead + (own if same(new[key], old.get(key)) else handler.export({key: new[key]}))
            )
    for key, value in new.items():
        if key not in old:
            if isinstance(value, Mapping):
                return None
            parts.append(handler.export({key: value}))
    return "".join(parts) + tail


def _reuse_json(
    text: str, old: Mapping[str, Any], new: Mapping[str, Any], same: Callable[[Any, Any], bool]
) -> str | None:
    try:
        split = _json_members(text)
    except (ValueError, IndexError):
        return None
    if split is None or len({key for key, _, _ in split[0]}) != len(split[0]):
        return None
    members, tail = split
    lead = members[-1][1] if members else "\n    "
    out = []
    for key, space, own in members:
        if key in new:
            fresh = (
                f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(new[key], ensure_ascii=False)}"
            )
            out.append(space + (own if same(new[key], old.get(key)) else fresh))
    out += [
        f"{lead}{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
        for k, v in new.items()
        if k not in old
    ]
    return "{" + ",".join(out) + (tail if members else "\n") + "}\n"
