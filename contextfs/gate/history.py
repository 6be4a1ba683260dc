"""The commit gate: nothing enters git history that the secret scan has not seen.

A commit carries more than the bodies the write gate renders: the names of its tree
entries (paths, move and restore targets, the memory tool's paths, topic names, the
LangGraph store's keys), its subject and body, the ``Contextfs-*`` trailers (session,
turn, the caller's own), its author, and bytes no write gate rendered (a person's
uncommitted edit carried along by a move or a delete, an old version brought back by a
revert, a trash entry's record). :func:`check` runs on every commit, after the change's
files are in place and before any object of the commit is written; a refusal undoes the
change (see :meth:`contextfs.changes.cycle.Writes.change`):

* the names of every path that gets bytes, the whole message and the author pass
  :meth:`~contextfs.gate.guard.WriteGuard.check_history`, which lets through only the
  secrets that the names HEAD holds at the paths the change moves or deletes hold already
  (:meth:`~contextfs.gate.guard.WriteGuard.knowing`: such a file can be moved away or
  deleted, and the commit that does it adds nothing history lacks);
* bytes that no gate judged in this change (:attr:`Change.vetted`) and that HEAD does not
  already hold at a path the change moved or touched (an unchanged file moved or deleted, a
  conflict copy taken back as the file) are scanned like an edit made outside contextfs,
  which is what they are;
* the outside versions the change found and is about to commit first (:attr:`Change.adopted`:
  a person's save under an agent's write, see :mod:`contextfs.changes.adoption`) are a person's edits:
  their names and bytes pass the scan sync gives such edits (unless sync or opening a root
  scanned them already). A secret there refuses the whole change; the person's version stays
  on disk, uncommitted, as sync leaves it;
* an outside version an undone change commits on its own (somebody saved over the change's
  bytes before it was undone, here or by recovery after a kill: see
  :func:`contextfs.changes.recovery.commit_outside`) passes the same check of a person's
  version (:meth:`~contextfs.gate.guard.WriteGuard.check_outside`), and one holding a secret
  is held back and logged instead of committed.

A change that publishes a commit built elsewhere (:attr:`Change.prepared`: a sync's merge or
fast-forward) brings files from another machine's history; those pass the incoming gate
(:mod:`contextfs.remote.incoming`), which reports a secret there instead of refusing it,
since it is in that history already. What the merge commit itself adds — its message and
author, written here — passes :meth:`~contextfs.gate.guard.WriteGuard.check_history`; a
fast-forward to a commit that came from the remote adds nothing of its own.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..document import blob_version
from ..errors import ContentError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..changes.transaction import Change
    from ..parts import RootParts
    from ..versioning import Prepared
    from .guard import WriteGuard

__all__ = ["check"]


def check(parts: RootParts, change: Change, message: str) -> None:
    """Refuse (ContentError, nothing echoed) a commit whose names, message, author or new bytes hold a secret."""
    guard = parts.guard()
    _check_adopted(parts, change)
    if change.prepared is not None:
        message_here = _written_here(parts, change.prepared)
        if message_here is not None:
            # commit_text writes the signature a commit is prepared with as its author and
            # its committer alike, and the signature is encoded from text: valid UTF-8.
            guard.check_history(message=message_here, author=change.prepared.signature.decode())
        return
    changed = {rel: data for rel, data in change.changes().items() if data is not None}
    # What HEAD holds at the paths this change moved or touched is in history as it is (a
    # rename touches every path it moves first, so change.before holds the sources too):
    # read only when needed, which an ordinary write, its bytes vetted, never is.
    in_head: dict[str, str | None] = {}

    def head_versions() -> dict[str, str | None]:
        if not in_head and change.before:
            head = parts.git.head()  # resolved once for every path (head_blob would per path)
            in_head.update({p: parts.git.head_blob(p, head) for p in sorted(change.before)})
        return in_head

    def judged(run: Callable[[WriteGuard], None]) -> None:
        """``run`` with the gate; when it refuses, with the gate that knows the secrets of the
        names HEAD holds there (WriteGuard.knowing: a file under such a name can be moved
        away or deleted)."""
        try:
            run(guard)
        except ContentError:
            wider = guard.knowing(p for p, blob in head_versions().items() if blob is not None)
            if wider is guard:
                raise
            run(wider)

    judged(
        lambda g: g.check_history(
            names=sorted(changed), message=message, author=change.header.actor
        )
    )
    for rel, data in sorted(changed.items()):
        blob = blob_version(data)
        # Bytes HEAD holds at such a path (a move, a delete into the trash, a conflict copy
        # taken back as the file) are in history already.
        if blob in change.vetted or blob in head_versions().values():
            continue
        judged(functools.partial(_scan_bytes, rel=rel, text=data.decode("utf-8", "replace")))


def _scan_bytes(guard: WriteGuard, *, rel: str, text: str) -> None:
    """Bytes no gate judged are scanned like an edit a person made outside contextfs."""
    guard.check_secrets(rel, text, actor="human")


def _check_adopted(parts: RootParts, change: Change) -> None:
    """Refuse a change whose outside versions (committed first, as a person's) hold a secret."""
    guard = parts.guard()
    for layer in change.adopted:
        kept = {rel: data for rel, data in layer.items() if data is not None}
        # Names first, all of them: the message below names the path whose bytes are refused.
        guard.check_names(sorted(kept), what="the name of a file saved outside contextfs")
        for rel, data in sorted(kept.items()):
            if blob_version(data) in change.vetted:
                continue
            try:
                guard.check_outside(rel, data, actor=parts.outside_actor)
            except ContentError as exc:
                raise ContentError(
                    f"{rel} holds a version saved outside contextfs and not committed yet, which this change "
                    f"would commit first; nothing was written or committed and that version stays on disk. {exc}; "
                    "then make the call again"
                ) from None


def _written_here(parts: RootParts, prepared: Prepared) -> str | None:
    """The message of a prepared commit written in this process; None for one that came from
    elsewhere (its committer line is not the signature it was prepared with)."""
    kind, raw = parts.git.objects.read(bytes.fromhex(prepared.sha))
    head, _, body = raw.partition(b"\n\n")
    if kind != "commit" or b"committer " + prepared.signature not in head.split(b"\n"):
        return None
    # commit_text writes the message with surrogateescape, so it may hold bytes that are not
    # UTF-8: they are read as replacement characters, and the rest is still scanned.
    return body.decode("utf-8", "replace")
