"""Turning a write's body and metadata into the bytes to store, through the write gate.

Markdown gets its frontmatter: the caller's keys (as given, or the file's own when the
caller gave none) plus the keys the library maintains — ``created`` (kept once set),
``updated``, ``author``, ``session``, ``turn`` — and ``trust`` as the write gate decided
it. Every other file is stored exactly as written. Text itself is checked first: a
string, storable as UTF-8 (no lone surrogates), no NUL bytes, within the size limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from . import clock
from .document import LIBRARY_KEYS, Document, is_markdown, serialize
from .errors import ContentError
from .guard import TRUST_ORDER, WriteGuard
from .poisoning import trust_of
from .provenance import Provenance

__all__ = ["check_text", "clean_line", "render", "unchanged"]


def clean_line(text: str, limit: int = 200) -> str:
    """One line of at most ``limit`` characters (commit subjects, trailers)."""
    return " ".join(str(text).split())[:limit]


def check_text(rel: str, value: object, what: str = "content") -> str:
    """The write gate's checks on text itself: a string, storable as UTF-8, no NULs."""
    if not isinstance(value, str):
        raise ContentError(f"{what} for {rel} must be a string, not {type(value).__name__}; pass text")
    if "\x00" in value:
        raise ContentError(f"{what} for {rel} contains NUL bytes; contextfs stores text only")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ContentError(
            f"{what} for {rel} contains a lone surrogate (U+{ord(value[exc.start]):04X} at character {exc.start}), "
            "which is not valid text; remove it or encode the data"
        ) from None
    return value


def unchanged(old: Document | None, body: str, meta: Mapping[str, Any] | None) -> TypeGuard[Document]:
    """True when writing ``body`` (and ``meta``, if given) would change nothing a person wrote."""
    if old is None or body != old.body:
        return False
    if meta is not None and not isinstance(meta, Mapping):
        return False  # not a mapping: render() refuses it with a typed error
    return meta is None or ({k: v for k, v in meta.items() if k not in LIBRARY_KEYS}
                            == {k: v for k, v in old.metadata.items() if k not in LIBRARY_KEYS})


def _too_large(rel: str, size: int, limit: int) -> ContentError:
    return ContentError(f"{rel} would be {size} bytes, over the {limit}-byte limit; split it into several files")


def render(rel: str, body: str, user_meta: Mapping[str, Any] | None, old: Document | None, *,
           prov: Provenance, guard: WriteGuard, library: bool, max_bytes: int,
           new_part: str | None = None, previous: bytes | None = None, body_line: int = 1) -> bytes:
    """The bytes to store for one write, after the write gate passed them.

    ``new_part`` is the only new text (an append to a committed file): the secret scan
    then looks at it alone, and the file keeps the trust it had at best. ``previous`` is
    what the file holds now (or the caller's text with its own frontmatter block): its
    unchanged frontmatter keys keep their exact text. ``body_line`` is the line of the
    caller's text the body starts on: a refusal names lines as the caller counts them.
    """
    check_text(rel, body)
    if not is_markdown(rel):
        raw = body.encode("utf-8")  # stored exactly as written: see document.load
        if len(raw) > max_bytes:
            raise _too_large(rel, len(raw), max_bytes)
        guard.check(rel, body, actor=prov.actor, markdown=False, library=library, scan=new_part)
        return raw
    base = dict(old.metadata) if old is not None else {}
    if user_meta is not None:
        if not isinstance(user_meta, Mapping):
            raise ContentError(f"metadata for {rel} must be a mapping; pass a dict")
        kept = {k: v for k, v in base.items() if k in LIBRARY_KEYS}
        base = {k: v for k, v in user_meta.items() if k not in LIBRARY_KEYS}
        base.update(kept)
    for key, value in base.items():
        if isinstance(key, str):
            check_text(rel, key, "a metadata key")
        if isinstance(value, str):
            check_text(rel, value, f"metadata {key!r}")
    requested = base.get("trust") if isinstance(base.get("trust"), str) else None
    if new_part is not None and old is not None:
        requested = TRUST_ORDER[max(TRUST_ORDER.index(t) for t in (trust_of(old.metadata), requested or "trusted"))]
    now = clock.iso()
    base.setdefault("created", now)
    base["updated"] = now
    base["author"] = prov.actor
    for key, value in (("session", prov.session), ("turn", prov.turn)):
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    draft = serialize(base, body, previous=previous)
    # Lines of the draft from the body on are the caller's lines from body_line on; an
    # append is judged with the whole file but counts from its own first line.
    if new_part is not None and draft.endswith(new_part):
        lines = (draft[: len(draft) - len(new_part)].count("\n") + 1, 1)
    else:
        lines = (draft[: len(draft) - len(body)].count("\n") + 1, body_line)
    decision = guard.check(rel, draft, actor=prov.actor, markdown=True, library=library,
                           requested_trust=requested, scan=new_part, lines=lines)
    if decision.trust != "trusted" or "trust" in base:
        base["trust"] = decision.trust
        draft = serialize(base, body, previous=previous)
    data = draft.encode("utf-8")
    if len(data) > max_bytes:
        raise _too_large(rel, len(data), max_bytes)
    return data
