"""The document codec: markdown text with optional YAML frontmatter.

Parsing is done here rather than by ``frontmatter.loads`` alone because that call
strips whitespace from the body, and contextfs promises that a metadata-only change
leaves the body byte-for-byte. python-frontmatter's YAML handler still does the YAML
work, with a loader that keeps dates as the strings the author wrote and after a pass
over the YAML events that refuses aliases (billion-laughs bombs) and absurd nesting.

Writing a document back to text is :mod:`contextfs.serializing`.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from . import frontmatter_formats
from .errors import ContentError, FrontmatterError

if TYPE_CHECKING:
    import yaml

__all__ = [
    "FENCE",
    "LIBRARY_KEYS",
    "MAX_FRONTMATTER_BYTES",
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "TOO_LONG",
    "Document",
    "Written",
    "blob_version",
    "decode",
    "is_markdown",
    "load",
    "parse",
    "split_block",
    "split_written",
    "unparsed",
    "yaml_lib",
]

#: Keys the library maintains; callers cannot set them through ``metadata``.
LIBRARY_KEYS = ("created", "updated", "author", "session", "turn")
MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_DEPTH = 16
#: The longest whole number frontmatter may hold: Python converts at most 4,300 decimal
#: digits to or from text by default, and 14,000 bits stay below that (4,215 digits).
MAX_INT_BITS = 14_000
TOO_LONG = "a whole number with more than 4,200 digits, which cannot be read back as text; quote it as a string"
FENCE = re.compile(r"^---[ \t]*\r?$")
_CLOSE = re.compile(r"^(---|\.\.\.)[ \t]*\r?$")


@functools.cache
def yaml_lib() -> SimpleNamespace:
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
            raise yaml.constructor.ConstructorError(None, None, TOO_LONG, node.start_mark)
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
        raise ContentError(
            f"{path} is a binary file ({len(data)} bytes): contextfs keeps it as it is "
            "(listed, versioned, moved like any file) but reads only UTF-8 text; "
            "open it with a program made for it"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContentError(
            f"{path} is not valid UTF-8 text (byte {exc.start}): contextfs keeps it as it is but reads only "
            "UTF-8 text; re-save it as UTF-8 to read it here"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def split_block(text: str, path: str) -> tuple[str | None, str, int]:
    """Return (yaml text or None, body, line number where the YAML starts)."""
    first, sep, rest = text.partition("\n")
    if not sep or not FENCE.match(first):
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
    lib = yaml_lib()
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
    return FrontmatterError(
        f"{path}{where}: invalid YAML frontmatter ({problem}); fix the YAML between the '---' fences"
    )


def parse(text: str, path: str = "<text>", version: str | None = None) -> Document:
    """Parse text into a :class:`Document`; raise FrontmatterError naming file and line.

    YAML frontmatter between ``---`` fences is read here; a TOML (``+++``) or JSON block
    by :mod:`contextfs.frontmatter_formats`, with the same limits.
    """
    block = frontmatter_formats.find_block(text) if text[:1] in "+{" else None
    if block is not None:
        meta = frontmatter_formats.load(block, path, MAX_FRONTMATTER_BYTES, MAX_DEPTH)
        return Document(path=path, metadata=meta, body=block.body, version=version)
    yaml_text, body, first_line = split_block(text, path)
    if yaml_text is None:
        return Document(path=path, metadata={}, body=body, version=version)
    if len(yaml_text.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(
            f"{path}: frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes; move data into the body"
        )
    _check_events(yaml_text, path, first_line)
    lib = yaml_lib()
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
        raise FrontmatterError(
            f"{path}: frontmatter keys must be strings (found {bad[0]!r}); quote the key"
        )
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
    if (
        not sep
        or not FENCE.match(first)
        or not any(_CLOSE.match(line) for line in rest.split("\n"))
    ):
        return Written(None, text)
    doc = parse(text, path)
    return Written(doc.metadata, doc.body, text[: len(text) - len(doc.body)].count("\n") + 1)


def is_markdown(rel: str) -> bool:
    """Only markdown files carry frontmatter; every other file is stored exactly as written."""
    return rel.lower().endswith((".md", ".markdown"))


def load(data: bytes, rel: str) -> Document:
    """A file's bytes as a Document: markdown is parsed, anything else is all body.

    JSON Lines logs, ``.json``, ``.txt`` and other files keep their bytes as they are
    (provenance lives in the commit trailers), so a log line or a JSON document stays
    parseable on its own.
    """
    if is_markdown(rel):
        return parse(decode(data, rel), rel, version=blob_version(data))
    return unparsed(data, rel)


def unparsed(data: bytes, rel: str) -> Document:
    """A file's bytes as all body, no frontmatter read: how every file but markdown loads,
    and what a markdown file whose frontmatter cannot be read is to the calls that replace
    or repair it (its raw text)."""
    return Document(path=rel, metadata={}, body=decode(data, rel), version=blob_version(data))
