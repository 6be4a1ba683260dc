"""Namespace labels and keys of the LangGraph store as file and folder names, reversibly.

LangGraph accepts almost any string as a namespace label or key: upper and lower case
twins, ``? : * | " \\``, control characters, ``con``, ``..``, thousands of characters.
File names cannot hold most of that portably, so every label and key goes through one
encoding:

* a **plain** name is kept as it is: lowercase ASCII letters, digits, ``_`` and ``-``
  (``.`` inside keys), 1 to 100 characters, not a Windows device name. Lowercase only, so
  two plain names never differ just by case, which a case-insensitive disk would merge;
* anything else becomes ``~`` + the lowercase base32 of its UTF-8 bytes (``"Alice"`` ->
  ``~ifwgsy3f``). base32 is case-blind and uses only ``a-z2-7``, so an encoded name is
  valid everywhere and can never look like a plain one (those cannot start with ``~``);
* a name whose encoding would pass :data:`MAX_NAME` characters becomes ``~~`` + a
  base32 SHA-256 digest; the original is then kept in the item's frontmatter
  (``langgraph.key`` / ``langgraph.namespace``), which is where :func:`decode` cannot
  look and the store does.

Keys are stored as ``<name>.md``. Decoding accepts only the canonical form of a name, so
a file a person adds under ``store/`` with another spelling is not mistaken for an item.
"""

from __future__ import annotations

import base64
import hashlib
import re

from contextfs.errors import InvalidArgumentError

__all__ = ["HASHED", "MAX_NAME", "decode", "encode_key", "encode_label", "is_hashed"]

#: Longest folder or file stem this encoding produces (file names get ``.md`` on top).
MAX_NAME = 100
HASHED = "~~"
_PLAIN_LABEL = re.compile(r"^[a-z0-9_-]{1,100}\Z")
_PLAIN_KEY = re.compile(r"^[a-z0-9_-](?:[a-z0-9_.-]{0,98}[a-z0-9_-])?\Z")
_DEVICES = {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(10)}


def _raw(text: str, what: str) -> bytes:
    if not isinstance(text, str):
        raise InvalidArgumentError(f"{what} {text!r} is not a string; LangGraph labels and keys are strings")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError(
            f"{what} {text!r} contains a lone surrogate (not valid Unicode); pass valid text"
        ) from None


def _encode(text: str, plain: re.Pattern[str], what: str) -> str:
    raw = _raw(text, what)
    if plain.match(text) and ".." not in text and text.split(".", 1)[0] not in _DEVICES:
        return text
    coded = "~" + base64.b32encode(raw).decode("ascii").rstrip("=").lower()
    if len(coded) <= MAX_NAME:
        return coded
    digest = base64.b32encode(hashlib.sha256(raw).digest()).decode("ascii").rstrip("=").lower()
    return HASHED + digest


def encode_label(label: str) -> str:
    """The folder name for one namespace label (labels must be non-empty)."""
    if isinstance(label, str) and not label:
        raise InvalidArgumentError("a namespace label is empty; use non-empty strings, e.g. ('users', '42')")
    return _encode(label, _PLAIN_LABEL, "namespace label")


def encode_key(key: str) -> str:
    """The file stem for one key (the file is ``<stem>.md``)."""
    return _encode(key, _PLAIN_KEY, "key")


def is_hashed(name: str) -> bool:
    return name.startswith(HASHED)


def decode(name: str, *, key: bool) -> str | None:
    """The label or key a canonical name stands for; None for hashed or foreign names."""
    if name.startswith(HASHED) or not name:
        return None
    if name.startswith("~"):
        body = name[1:]
        if not re.fullmatch(r"[a-z2-7]*", body):
            return None
        try:
            text = base64.b32decode(body.upper() + "=" * (-len(body) % 8)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
    else:
        text = name
    try:
        canonical = encode_key(text) if key else encode_label(text)
    except InvalidArgumentError:
        return None
    return text if canonical == name else None
