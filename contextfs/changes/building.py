"""The commits of one change, built on HEAD: its outside versions first, then its own.

A change that publishes a commit built elsewhere (a merge, a fast-forward) takes that one
instead, and refuses when somebody saved under it meanwhile. A git commit made while the
change ran is built on, unless it already holds the change's own bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..document import blob_version
from ..errors import ConflictError, VersioningError
from . import adoption
from .recovery import OutsideCheck, commit_outside

if TYPE_CHECKING:
    from ..versioning import GitStore, Prepared
    from .commit_text import Header

__all__ = ["Building", "blob_ids", "build_commits", "check_not_taken"]


class Building(Protocol):
    """What building a change's commits reads of the change."""

    git: GitStore
    header: Header
    adopted: list[dict[str, bytes | None]]
    outside_author: str
    outside_check: OutsideCheck | None
    adoption_op: str
    adoption_subject: str | None
    executable: set[str]
    started_on: str | None
    prepared: Prepared | None


def build_commits(
    change: Building, own: dict[str, bytes | None], message: str, when: float
) -> tuple[str | None, list[tuple[Prepared, dict[str, Any]]], Prepared | None]:
    """The HEAD the commits are built on, the outside versions' commits (each with its journal
    entry) and the change's own commit (None: nothing of its own changed)."""
    git = change.git
    base, last, ours = git.head(), None, change.prepared
    outside: list[tuple[Prepared, dict[str, Any]]] = []
    if ours is not None:  # a merge built elsewhere: nothing may sit under it, so saves it found
        if any(change.adopted):  # are committed on their own, and the merge is made again on them
            commit_outside(
                git,
                [adoption.blobs(git, layer) for layer in change.adopted],
                change.outside_author,
                when,
                check=change.outside_check,
            )
            raise ConflictError(
                f"{', '.join(sorted(set().union(*change.adopted)))[:200]} changed while the merge "
                "was written (committed as an edit made outside contextfs); run the merge again"
            )
        return ours.parent, outside, ours
    if base != change.started_on:
        check_not_taken(git, own, base, change.started_on)
    outside, last = adoption.prepare(
        git,
        change.adopted,
        change.outside_author,
        change.adoption_op,
        change.adoption_subject,
        when=when,
        executable=change.executable,
    )
    if own:
        ours = git.prepare(
            own,
            message,
            change.header.actor,
            change.header.email,
            when=when,
            executable=change.executable & set(own),
            parent=last if last is not None else False,
        )
    return base, outside, ours


def check_not_taken(
    git: GitStore, own: Mapping[str, bytes | None], head: str | None, started_on: str | None
) -> None:
    """Refuse to commit when a git commit made during the change already holds its new bytes.

    A person's ``git commit -a`` between this change's writes and its commit sweeps
    them up under the person's name; committing on top would then record nothing of
    the change's own, so it fails (and is undone) instead, for the caller to retry.
    """
    for rel, data in own.items():
        new = blob_version(data) if data is not None else None
        if git.head_blob(rel, head) == new != git.head_blob(rel, started_on):
            raise VersioningError(
                f"a git commit made while this change was under way ({str(head)[:12]}) already "
                f"holds its version of {rel}; nothing was committed; retry the call"
            )


def blob_ids(git: GitStore, changes: Mapping[str, bytes | None]) -> dict[str, str | None]:
    """The change's new bytes stored as blobs (their ids; None: deleted), for the journal."""
    return {rel: (None if data is None else git.store_blob(data)) for rel, data in changes.items()}
