"""An approval's merge: a review branch brought into the main branch by the merge engine.

The same merge a sync between machines makes (:mod:`contextfs.merging`: three-way per
path from git's three trees, frontmatter key by key, append-only files as a union,
numbered ids renumbered, other bodies a clean line merge or a conflict copy, never a
conflict marker, every decision a note), the same gate for what comes in
(:func:`contextfs.remote.incoming.gate_incoming`: paths, links, sizes, secrets reported,
trust recomputed), and the same way of publishing a merge commit
(:func:`contextfs.versioning.graph.write_commit` through
:attr:`contextfs.changes.transaction.Change.prepared`, journaled like any write). The commit is
the person's (``approve: session <id>``, trailer ``Contextfs-Approves``); its second
parent is the review branch's tip, so the agent's commits keep their authors in
``git log`` and ``git blame``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..merging import merge_trees, original_of
from ..provenance import email_of
from ..remote.incoming import gate_incoming, note_line
from ..versioning.graph import commit_time, merge_base, write_commit
from ..versioning.objects import TREE_MODE

if TYPE_CHECKING:
    from ..parts import RootParts
    from ..versioning import GitStore

__all__ = ["ApproveReport", "merge_branch"]


@dataclass(frozen=True)
class ApproveReport:
    """What an approval merged."""

    session: str
    #: The merge commit on the main branch.
    commit: str | None
    #: Files the session's changes reached (conflict copies excluded).
    merged: list[str] = field(default_factory=list)
    #: Conflict copies made beside files both sides changed: copy path -> the file.
    conflict_copies: dict[str, str] = field(default_factory=dict)
    #: Every decision the merge took that a person may want to look at.
    notes: list[str] = field(default_factory=list)


def _root_tree(git: GitStore, commit: str | None) -> bytes | None:
    """The tree of the context root in ``commit`` (the root may be a folder of the repository)."""
    if commit is None:
        return None
    tree = git.objects.commit_tree(commit)
    if not git.prefix:
        return tree
    entry = git.objects.lookup(tree, git.prefix.rstrip("/"))
    return entry[0] if entry is not None and entry[1] == TREE_MODE else None


def _message(parts: RootParts, session: str, notes: list[str], files: int) -> str:
    body = "\n".join(f"- {n}" for n in notes[:50])
    trailers = {"Contextfs-Op": "approve", "Contextfs-Machine": parts.git.machine}
    if parts.session:
        trailers["Contextfs-Session"] = parts.session
    trailers["Contextfs-Approves"] = session
    text = f"approve: session {session} ({files} file(s))\n\n" + (body + "\n\n" if body else "")
    return text + "".join(f"{k}: {v}\n" for k, v in trailers.items())


def merge_branch(parts: RootParts, session: str, head: str, tip: str) -> ApproveReport:
    """Merge ``tip`` (a session's review branch) into the main branch at ``head``.

    The caller holds the root's write lock and has committed any outside edit (so the
    work tree holds exactly ``head``'s files for every path the merge writes).
    """
    git = parts.git
    base = merge_base(git, head, tip)
    merged = merge_trees(
        git.objects,
        _root_tree(git, base),
        _root_tree(git, head),
        _root_tree(git, tip),
        when=(commit_time(git, head), commit_time(git, tip)),
    )
    gate_incoming(parts, merged)
    full = {git.prefix + rel: change for rel, change in merged.changes.items()}
    ours = git.objects.commit_tree(head)
    tree = (git.objects.rewrite(ours, full) if full else ours) or git.objects.store(b"tree", b"")
    # As the merge message lists them: a path holding a secret is named by kind and fingerprint.
    notes = [note_line(note, parts.guard()) for note in merged.notes]
    actor = parts.current_provenance.actor
    prepared = write_commit(
        git,
        tree,
        [head, tip],
        _message(parts, session, notes, len(merged.changes)),
        actor,
        email_of(actor),
        head=head,
    )
    with parts.change(
        "approve", f"session {session}", trailers={"Contextfs-Approves": session}
    ) as change:
        for rel, entry in sorted(merged.changes.items()):
            if entry is None:
                if parts.files.kind(rel) is not None:
                    change.remove(rel)
            else:
                _kind, data = git.objects.read(entry[0])
                change.write(rel, data)
        change.prepared = prepared
    copies = {rel: original for rel in merged.changes if (original := original_of(rel)) is not None}
    return ApproveReport(
        session, git.head(), sorted(r for r in merged.changes if r not in copies), copies, notes
    )
