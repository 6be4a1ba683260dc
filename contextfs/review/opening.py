"""Opening a session's review branch: its work tree made from the main branch if new.

The agent's side of review mode (:mod:`contextfs.review.branch` says where a branch lives
and who needs review): :func:`enter` decides where a root opened with ``review=`` works,
and :func:`open_review` makes the linked work tree under the main root's write lock.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, ReviewError
from ..files.confined import RootFiles
from ..files.state import locate_root
from ..versioning.refs import Refs
from .branch import ReviewHandle, ReviewSpace, config_of, needs_review, review_actors, space_of

if TYPE_CHECKING:
    from ..parts import RootParts
    from ..provenance import Provenance

__all__ = ["OpenMain", "enter", "open_review"]

#: Opens the main root for writing, without review mode: (root, actor, session,
#: own_repository, durable) -> its parts.
OpenMain = Callable[[Path, str, str, bool, bool], "RootParts"]


def open_review(main: RootParts, session: str) -> ReviewHandle:
    """The work tree of ``session``'s review branch, made from the main branch if new.

    ``main`` is the handle of the main root (opened for writing: it holds the lock that
    keeps two processes from creating the same work tree at once).
    """
    git = main.git
    # The session id names the branch (encoded) before any commit on it could be gated.
    main.guard().check_names([session], what="the review session id (it names a branch)")
    space = space_of(git)
    ref, folder = space.ref(session), space.folder(session)
    with main.write_lock():
        tip = git.branches.read(ref)
        if not (folder / ".git").is_file():
            # A folder removed by hand leaves git's record of it behind.
            git.git("worktree", "prune")
            folder.parent.mkdir(parents=True, exist_ok=True)
            head = git.head()
            if head is None:
                raise ReviewError(
                    f"{main.root} has no commit yet; open it once without review mode first"
                )
            git.branches.add_worktree(folder, ref, tip or head, git.prefix, create=tip is None)
    return ReviewHandle(
        session=session, main_root=main.root, worktree=folder, root=space.root(session), branch=ref
    )


def enter(
    prov: Provenance,
    root: Path,
    review: bool | None,
    own_repository: bool,
    *,
    read_only: bool,
    durable: bool,
    open_main: OpenMain,
) -> tuple[ReviewHandle | None, Path, bool]:
    """Where a root being opened with ``review=`` by ``prov`` works: (its review handle,
    the root to open, own_repository), or (None, root, own_repository) for the main root.
    ``open_main`` opens the main root for writing (the façade passes its own constructor).

    ``review=True`` puts the session in review mode: its writes wait on a branch of their
    own until a person approves them; ``None`` follows ``[review] agents`` for the actor.
    """
    handle = _enter(
        root,
        actor=prov.actor,
        session=prov.session or "",
        review=review,
        read_only=read_only,
        own_repository=own_repository,
        durable=durable,
        open_main=open_main,
    )
    return (handle, handle.root, False) if handle is not None else (None, root, own_repository)


def _enter(
    root: Path,
    *,
    actor: str,
    session: str,
    review: bool | None,
    read_only: bool,
    own_repository: bool,
    durable: bool,
    open_main: OpenMain,
) -> ReviewHandle | None:
    if review is None:
        if not root.is_dir():
            return None
        try:
            listed = review_actors(config_of(RootFiles(root.resolve())))
        except ConfigError:
            return None  # reading still works; the first write raises the error (check_write)
        if not needs_review(actor, listed):
            return None
    if read_only:
        # Reading never creates the work tree: a session that wrote nothing yet sees main.
        git_dir, prefix = locate_root(root)[1:]
        space = ReviewSpace(Refs.of(git_dir).common_dir, prefix)
        folder = space.folder(session)
        if not (folder / ".git").is_file():
            return None
        return ReviewHandle(
            session, root.resolve(), folder, space.root(session), space.ref(session)
        )
    main = open_main(root, actor, session, own_repository, durable)
    return open_review(main, session)
