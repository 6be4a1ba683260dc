"""The document codec: markdown text with optional YAML frontmatter.

Parsing is done here rather than by ``frontmatter.loads`` alone because that call
strips whitespace from the body, and contextfs promises that a metadata-only change
leaves the body byte-for-byte. python-frontmatter's YAML handler still does the YAML
work, with a loader that keeps dates as the strings the author wrote and after a pass
over the YAML events that refuses aliases (billion-laughs bombs) and absurd nesting.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from .errors import ContentError, FrontmatterError

__all__ = [
    "LIBRARY_KEYS",
    "Document",
    "blob_version",
    "decode",
    "is_markdown",
    "load",
    "parse",
    "serialize",
]

#: Keys the library maintains; callers cannot set them through ``metadata``.
LIBRARY_KEYS = ("created", "updated", "author", "session", "turn")
MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_DEPTH = 16
_FENCE = re.compile(r"^---[ \t]*\r?$")
_CLOSE = re.compile(r"^(---|\.\.\.)[ \t]*\r?$")
_HANDLER = YAMLHandler()


# libyaml's parser when PyYAML was built with it: parsing is most of a write's CPU time.
_SafeBase: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeBase):  # type: ignore[misc,valid-type]
    """Safe loading without the timestamp resolver: '2026-10-02' stays a string."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


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
    """Bytes from disk to text, refusing binary files and invalid UTF-8."""
    if b"\x00" in data:
        raise ContentError(f"{path} looks binary (it contains NUL bytes); contextfs stores UTF-8 text only")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContentError(
            f"{path} is not valid UTF-8 (byte {exc.start}); re-save it as UTF-8 text"
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
    depth = 0
    try:
        for event in yaml.parse(yaml_text, Loader=_Loader):
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
    """Parse text into a :class:`Document`; raise FrontmatterError naming file and line."""
    yaml_text, body, first_line = _split(text, path)
    if yaml_text is None:
        return Document(path=path, metadata={}, body=body, version=version)
    if len(yaml_text.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"{path}: frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes; move data into the body")
    _check_events(yaml_text, path, first_line)
    try:
        meta = _HANDLER.load(yaml_text, Loader=_Loader) if yaml_text.strip() else {}
    except yaml.YAMLError as exc:
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


def serialize(metadata: Mapping[str, Any], body: str) -> str:
    """Render metadata and body; the body is appended exactly as given."""
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise FrontmatterError(f"metadata key {key!r} is not a non-empty string; use string keys")
        _check_value(key, value)
    # A body that starts like frontmatter (or with a BOM, which decode() drops) is
    # fenced off by an empty block so that parsing gives it back byte-for-byte.
    if not metadata and not _FENCE.match(body.partition("\n")[0]) and not body.startswith("\ufeff"):
        return body
    if not metadata:
        return "---\n---\n" + body
    dumped = _HANDLER.export(_plain(dict(metadata)), sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{dumped}\n---\n{body}"
