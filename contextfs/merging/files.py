"""One file merged from its three versions, by the rule of its kind (:mod:`.kinds`).

:func:`merge_file` never fails and never writes a conflict marker: it returns the bytes
to keep at the path (None when the path is gone), at most one conflict copy to put
beside it, and notes. The cases, in order:

* both sides agree, or only one changed: that version;
* one side deleted the file and the other changed it: the change survives, and the
  delete is reported (``delete-edit``);
* both added it (no base): merged against an empty base; an archival note saved on
  both sides with the same text is one note, the earlier one;
* both changed it: frontmatter key by key (:mod:`.frontmatter`) and the body by kind —
  entries as a union (:mod:`.lines`), numbered blocks renumbered (:mod:`.numbered`),
  anything else a clean three-way line merge; when that fails (or a side is not text),
  ours stays in place and theirs becomes a conflict copy (``conflict-copy``).

Which side is newer — it wins a key both sides set, and its entries go last where both
sides appended — is decided by the frontmatter's ``updated``, then by the commit times
the caller passes, then by the blob ids, so every machine decides the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..changes.setup import MANAGED
from ..document import blob_version, decode, is_markdown, parse
from ..errors import ContextFSError
from ..serializing import serialize
from .frontmatter import merge_metadata
from .kinds import kind_of
from .lines import merge_entries, merge_text
from .numbered import merge_numbered
from .report import MergeNote, conflict_copy_path

__all__ = ["FileMerge", "merge_file"]


@dataclass
class FileMerge:
    """The outcome for one path: what to keep there, a conflict copy, and notes."""

    data: bytes | None
    copy: tuple[str, bytes] | None = None
    notes: list[MergeNote] = field(default_factory=list)


def _updated(data: bytes | None, rel: str) -> str:
    if data is None or not is_markdown(rel):
        return ""
    try:
        value = parse(decode(data, rel), rel).metadata.get("updated")
    except ContextFSError:
        return ""
    return value if isinstance(value, str) else ""


def _ours_newer(
    rel: str, ours: bytes | None, theirs: bytes | None, when: tuple[float, float]
) -> bool:
    mine = (_updated(ours, rel), when[0], blob_version(ours or b""))
    other = (_updated(theirs, rel), when[1], blob_version(theirs or b""))
    return mine >= other


def _conflict(rel: str, ours: bytes, theirs: bytes, why: str) -> FileMerge:
    copy = conflict_copy_path(rel, theirs)
    return FileMerge(
        ours,
        (copy, theirs),
        [
            MergeNote(
                rel,
                "conflict-copy",
                f"{why}; ours stays in place, theirs is kept beside it as {copy}",
            )
        ],
    )


def _text(data: bytes, rel: str) -> str | None:
    try:
        return decode(data, rel)
    except ContextFSError:
        return None


def _merge_body(
    rel: str, kind: str, base: str, ours: str, theirs: str, ours_newer: bool, notes: list[MergeNote]
) -> str | None:
    if kind == "numbered":
        done = merge_numbered(base, ours, theirs, theirs_first=ours_newer)
        if done is not None:
            notes.extend(
                MergeNote(rel, "renumbered" if " is now " in line else "union", line)
                for line in done[1]
            )
            return done[0]
    if kind in ("entries", "log", "numbered"):
        body, unioned = merge_entries(
            base, ours, theirs, log=kind == "log", theirs_first=ours_newer
        )
        if unioned:
            notes.append(
                MergeNote(
                    rel, "union", "both sides added entries at the same place; all of them are kept"
                )
            )
        return body
    return merge_text(base, ours, theirs)


def _merge_markdown(
    rel: str, kind: str, base: str, ours: str, theirs: str, ours_newer: bool, notes: list[MergeNote]
) -> str | None:
    try:
        b, o, t = (parse(x, rel) for x in (base, ours, theirs))
    except ContextFSError:
        return None
    meta, conflicts = merge_metadata(b.metadata, o.metadata, t.metadata, ours_newer=ours_newer)
    for c in conflicts:
        notes.append(
            MergeNote(
                rel,
                "key-conflict",
                f"both sides set {c.key!r}: kept {_short(c.kept)}, the other value was {_short(c.other)}",
            )
        )
    body = _merge_body(rel, kind, b.body, o.body, t.body, ours_newer, notes)
    if body is None:
        return None
    if meta == o.metadata and body == o.body:
        return ours
    if meta == t.metadata and body == t.body:
        return theirs
    return serialize(meta, body, previous=ours)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def merge_file(
    rel: str,
    base: bytes | None,
    ours: bytes | None,
    theirs: bytes | None,
    *,
    when: tuple[float, float] = (0.0, 0.0),
) -> FileMerge:
    """Merge one root-relative path; ``when`` is (our, their) commit time for tie-breaks."""
    if ours == theirs or theirs == base:
        return FileMerge(ours)
    if ours == base:
        return FileMerge(theirs)
    kind = kind_of(rel)
    if ours is None or theirs is None:
        side = "ours" if ours is None else "theirs"
        return FileMerge(
            theirs if ours is None else ours,
            notes=[
                MergeNote(
                    rel,
                    "delete-edit",
                    f"deleted on {side} but changed on the other side; the change is kept",
                )
            ],
        )
    if kind == "managed" and rel in MANAGED:
        return FileMerge(MANAGED[rel].encode())
    ours_newer = _ours_newer(rel, ours, theirs, when)
    texts = [_text(x, rel) for x in (base or b"", ours, theirs)]
    if any(x is None for x in texts):
        return _conflict(rel, ours, theirs, "both sides changed it and it is not text")
    b, o, t = (x or "" for x in texts)
    notes: list[MergeNote] = []
    if base is None and kind == "note":
        try:
            same = parse(o, rel).body.strip() == parse(t, rel).body.strip()
        except ContextFSError:
            same = False
        if same:
            return FileMerge(
                theirs if ours_newer else ours,
                notes=[
                    MergeNote(
                        rel,
                        "same-note",
                        "the same note was saved on both sides; "
                        "the earlier one is kept (the other is in history)",
                    )
                ],
            )
    merged = (
        _merge_markdown(rel, kind, b, o, t, ours_newer, notes)
        if is_markdown(rel)
        else _merge_body(rel, kind, b, o, t, ours_newer, notes)
    )
    if merged is None and is_markdown(rel) and kind != "document":
        merged = _merge_body(rel, kind, b, o, t, ours_newer, notes)  # frontmatter broken on a side
    if merged is None:
        return _conflict(rel, ours, theirs, "both sides changed the same lines")
    return FileMerge(merged.encode("utf-8"), notes=notes)
