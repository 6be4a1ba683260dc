"""The gate for what a fetch brings: the same checks a clone's content gets, before it is written.

A merge's changes that came (wholly or partly) from the other side are checked one by
one before any of them reaches the work tree:

* **paths**: the store's path gate (traversal, ``.git`` in any disguise, reserved and
  unportable names, a symlink on the way, a name that differs only in case from one
  here) — a path that fails is refused;
* **entries that are not plain files** (symlinks, submodules): refused, never checked out;
* **size and encoding**: over the root's file limit, or not UTF-8 text: refused;
* **secrets**: the write gate's scanner runs on the text, and the write gate's name check
  (:meth:`~contextfs.gate.guard.WriteGuard.name_findings`, what refuses a local write's
  path) on the path — a file added or renamed there; a finding is reported (the secret is
  already in the remote's history, so refusing it here would only keep the machines apart;
  the report says to rotate it), never echoed;
* **trust**: a markdown file's ``trust`` marking is recomputed from its text and its name
  by the poisoning guard (:func:`~contextfs.gate.poisoning.assess_file`, as the write gate
  judges an agent's write) under this root's policy and can only go down; a remote's
  frontmatter is never believed when it says ``trusted``.

A refused path keeps our version (or stays absent) and is reported as ``refused``; the
merged tree holds what this machine vouches for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..changes.setup import MANAGED
from ..document import decode, is_markdown, parse
from ..errors import ContextFSError, InvalidPathError
from ..files import paths
from ..gate.poisoning import TRUST_LEVELS, assess_file, trust_of
from ..gate.secrets import SecretFinding, describe
from ..merging import MergeNote, TreeMerge
from ..serializing import serialize
from ..versioning import EXEC_MODE, FILE_MODE

if TYPE_CHECKING:
    from ..gate.guard import WriteGuard
    from ..parts import RootParts

__all__ = ["gate_incoming", "incoming_trust", "note_line"]

#: What a report about an incoming secret asks for, the secret being in that history already.
_ROTATE = "it is in the remote's history already: rotate it and remove it from the"


def incoming_trust(text: str, rel: str, policy: str) -> tuple[str, tuple[str, ...]] | None:
    """The trust a markdown file's text and name earn under ``policy`` (None: as the file says is fine)."""
    verdict = assess_file(text, rel)
    if not verdict.suspicious:
        return None
    return ("untrusted" if policy == "tag" else "quarantined"), tuple(verdict.reasons)


def _retrust(rel: str, data: bytes, policy: str) -> tuple[bytes, str] | None:
    """The file with its trust lowered to what its text earns, and why; None when it is fine."""
    try:
        doc = parse(decode(data, rel), rel)
    except ContextFSError:
        return None
    earned = incoming_trust(doc.body, rel, policy)
    if earned is None:
        return None
    trust, reasons = earned
    have = trust_of(doc.metadata)
    if TRUST_LEVELS.index(have) >= TRUST_LEVELS.index(trust):
        return None
    meta: dict[str, Any] = dict(doc.metadata)
    meta["trust"] = trust
    meta["flagged"] = (
        sorted({*(meta.get("flagged") or []), *reasons})
        if isinstance(meta.get("flagged", []), list)
        else list(reasons)
    )
    text = serialize(meta, doc.body, previous=data)
    return (
        text.encode("utf-8"),
        f"its text or its name reads as an instruction ({', '.join(reasons)}): trust lowered to {trust}",
    )


def _withheld(findings: list[SecretFinding]) -> str:
    listed = "; ".join(f"{f.kind} (fingerprint {f.fingerprint})" for f in findings)
    return f"[a name holding {listed}]"


def note_line(note: MergeNote, guard: WriteGuard) -> str:
    """A note as a merge commit's message lists it: a path that holds a secret (a name another
    machine or a review branch committed) is named by what was found in it, never repeated,
    as the commit gate requires; a line that would still hold one keeps only the note's kind."""
    found = guard.name_findings([note.path])
    line = str(note)
    if found:
        folder = note.path.rpartition("/")[0]
        line = line.replace(
            note.path, f"{folder}/{_withheld(found)}" if folder else _withheld(found)
        )
    if guard.name_findings([line]):  # the detail quotes it some other way
        line = f"a {note.kind} note that would repeat a secret (see the report of the merge)"
    return line


def gate_incoming(parts: RootParts, merged: TreeMerge) -> None:
    """Check every incoming change of ``merged`` in place: refuse, report, or re-mark trust."""
    objects = parts.git.objects
    guard = parts.guard()
    for rel in sorted(merged.incoming):
        change = merged.changes.get(rel)
        if change is None:
            continue
        sha, mode = change

        def refuse(why: str, rel: str = rel) -> None:
            del merged.changes[rel]
            merged.notes.append(MergeNote(rel, "refused", f"not taken from the remote: {why}"))

        if mode not in (FILE_MODE, EXEC_MODE):
            refuse("it is a symlink or a submodule, which contextfs never checks out")
            continue
        try:
            managed = rel in MANAGED
            paths.check(parts.root, rel, write=not managed, allow_internal=True)
        except InvalidPathError as exc:
            refuse(str(exc))
            continue
        kind, data = objects.read(sha)
        if kind != "blob":
            refuse(f"it is a git {kind}, not a file")
            continue
        if len(data) > parts.max_file_bytes:
            refuse(f"it is {len(data)} bytes, over the {parts.max_file_bytes}-byte limit")
            continue
        try:
            text = decode(data, rel)
        except ContextFSError as exc:
            refuse(str(exc))
            continue
        try:
            findings = guard.secrets.findings(text, path=rel)
        except ContextFSError as exc:
            findings = []
            merged.notes.append(
                MergeNote(rel, "secret", f"could not be scanned for secrets ({exc})")
            )
        if findings:
            merged.notes.append(
                MergeNote(rel, "secret", describe(findings, path=rel) + f"; {_ROTATE} file")
            )
        named = guard.name_findings([rel])  # the check a local write's path passes
        if named:
            listed = "; ".join(f"{f.kind} (fingerprint {f.fingerprint})" for f in named)
            merged.notes.append(
                MergeNote(rel, "secret", f"its name holds a secret: {listed}; {_ROTATE} name")
            )
        if is_markdown(rel):
            lowered = _retrust(rel, data, guard.poisoning)
            if lowered is not None:
                new, why = lowered
                merged.changes[rel] = (objects.store(b"blob", new), mode)
                merged.notes.append(MergeNote(rel, "trust", why))
