"""Sessions, the unit a person reviews: who changed what, when, and whether it counts yet.

Every commit contextfs makes names its session in a ``Contextfs-Session`` trailer, so a
session is the set of commits carrying one id, on the main branch or on a review branch
(:mod:`contextfs.review.decisions`). :class:`Sessions` lists them from the history and the review
refs, with each session's agents, machines where the commits name one
(``Contextfs-Machine``), time span, files, lines added and removed, and status:

==========  ===========================================================================
pending     some of its commits wait on its review branch for a person's decision
approved    a person approved it: its commits reached the main branch in a merge
direct      written straight to the main branch (no review mode)
discarded   a person discarded it; its commits can be recovered until they expire
==========  ===========================================================================

``reverted`` says that ``revert_session`` (``undo``) later undid some of it. The commit
records come from :class:`~contextfs.review.log.CommitLog`, which reads each commit of
a long history once and keeps it, so listing sessions costs one ``git rev-list`` plus the
commits made since the last call.
"""

from __future__ import annotations

import builtins  # Sessions.list() shadows the builtin in the class body's annotations
import difflib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..changes.trash import TRASH_DIR
from ..document import decode
from ..errors import ContextFSError, NotFoundError, ReviewError
from ..fixes import Fix
from ..parts import HasParts, RootParts, parts_of
from ..provenance import check_token
from .decisions import Discarded, Review, ReviewBranch
from .log import CommitLog, CommitRecord, reachable
from .merge import ApproveReport

if TYPE_CHECKING:
    from ..changes.history import RevertReport

__all__ = ["STATUSES", "FileChange", "Session", "Sessions"]

STATUSES = ("pending", "approved", "direct", "discarded")


@dataclass(frozen=True)
class Session:
    """One session as a reviewer sees it."""

    id: str
    status: str
    agents: tuple[str, ...]
    machines: tuple[str, ...]
    started: str
    ended: str
    #: Its commits, newest first.
    commits: tuple[str, ...]
    files: tuple[str, ...]
    added: int
    removed: int
    #: Commits still waiting on the review branch.
    pending: int = 0
    approved_by: str | None = None
    #: The merge commit of the last approval.
    approved_in: str | None = None
    reverted: bool = False
    #: When a discarded session's commits stop being recoverable.
    expires: str | None = None


@dataclass(frozen=True)
class FileChange:
    """What a session did to one file, from before its first change to after its last."""

    path: str
    #: ``added``, ``modified``, ``deleted``, ``trashed`` (moved to the trash) or ``restored``.
    kind: str
    before: str | None
    after: str | None
    diff: str
    added: int
    removed: int
    #: The trash entry a ``trashed`` file can be restored from.
    trash_entry: str | None = None


def _iso(when: int) -> str:
    return datetime.fromtimestamp(when, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Acc:
    commits: list[CommitRecord] = field(default_factory=list)
    pending: int = 0

    def add(self, record: CommitRecord, pending: bool) -> None:
        self.commits.append(record)
        self.pending += pending


@dataclass(frozen=True)
class _Snapshot:
    by_session: dict[str, _Acc]
    approvals: dict[str, CommitRecord]
    discarded: builtins.list[Discarded]
    reverted: set[str]
    tips: tuple[str | None, builtins.list[str], builtins.list[Discarded]]


class Sessions:
    """The sessions of one root, and what a person can do with each.

    An object keeps what it read and reads again only what changed since (the main
    branch's head and the review refs are checked on every call).
    """

    def __init__(self, root: RootParts | HasParts) -> None:
        """``root``: a :class:`~contextfs.ContextManager` (or its ``parts``)."""
        ctx = self.ctx = parts_of(root)
        self.review = Review(ctx)
        self.log = CommitLog(ctx.git, ctx.state)
        # The history as last read, and the tips it was read at: read again only when the
        # main branch or a review ref moved, however many sessions a caller (a page) asks about.
        self._seen: _Snapshot | None = None

    # ------------------------------------------------------------ listing
    def _tips(self) -> tuple[str | None, builtins.list[str], builtins.list[Discarded]]:
        head = self.review.main_head()
        branches = [info.sha for _session, info in self.review.branch_refs()]
        return head, branches, self.review.discarded()

    def _snapshot(self) -> _Snapshot:
        tips = self._tips()
        if self._seen is None or self._seen.tips != tips:
            self._seen = _Snapshot(*self._gather(*tips), tips=tips)
        return self._seen

    def _gather(
        self,
        head: str | None,
        branches: builtins.list[str],
        discarded: builtins.list[Discarded],
    ) -> tuple[dict[str, _Acc], dict[str, CommitRecord], builtins.list[Discarded], set[str]]:
        records, on_main = self.log.records(head, [*branches, *(d.tip for d in discarded)])
        waiting: set[str] = set()
        for tip in branches:
            waiting.update(reachable(self.ctx.git, [tip], [head] if head else []))
        by_session: dict[str, _Acc] = {}
        approvals: dict[str, CommitRecord] = {}
        for record in records:  # newest first
            if len(record.parents) > 1:
                # A merge (an approval, a sync's) brings other sessions' commits; it is
                # nobody's own change, and an approval says whose session it approved.
                target = record.trailers.get("Contextfs-Approves")
                if target and record.op == "approve" and record.sha in on_main:
                    approvals.setdefault(target, record)
                continue
            if record.session and (record.sha in on_main or record.sha in waiting):
                by_session.setdefault(record.session, _Acc()).add(record, record.sha in waiting)
        lost = {d.session for d in discarded} - set(by_session)
        for record in records:
            if record.session in lost and record.sha not in on_main:
                by_session.setdefault(record.session, _Acc()).add(record, False)
        reverted = {
            sha.strip()
            for r in records
            if r.op == "revert-session"
            for sha in r.trailers.get("Contextfs-Reverts", "").split(",")
        }
        return by_session, approvals, discarded, reverted

    def list(
        self, *, status: str | None = None, limit: int | None = None
    ) -> builtins.list[Session]:
        """Sessions, the most recently active first; ``status`` keeps one of :data:`STATUSES`."""
        if status is not None and status not in STATUSES:
            raise ReviewError(
                f"unknown session status {status!r}; use one of {', '.join(STATUSES)}"
            )
        seen = self._snapshot()
        out = [
            s
            for s in (self._summarise(seen, sid) for sid in seen.by_session)
            if status is None or s.status == status
        ]
        out.sort(key=lambda s: (s.ended, s.id), reverse=True)
        return out if limit is None else out[:limit]

    @staticmethod
    def _summarise(seen: _Snapshot, sid: str) -> Session:
        acc, approval = seen.by_session[sid], seen.approvals.get(sid)
        expires = next((d.expires for d in seen.discarded if d.session == sid), None)
        commits = acc.commits
        agents = tuple(dict.fromkeys(c.author for c in reversed(commits)))
        machines = tuple(
            dict.fromkeys(
                m for c in reversed(commits) if (m := c.trailers.get("Contextfs-Machine"))
            )
        )
        files = sorted({p for c in commits for p in c.paths})
        if acc.pending:
            status = "pending"
        elif expires is not None:
            status = "discarded"
        elif approval is not None:
            status = "approved"
        else:
            status = "direct"
        return Session(
            id=sid,
            status=status,
            agents=agents,
            machines=machines,
            started=_iso(min(c.time for c in commits)),
            ended=_iso(max(c.time for c in commits)),
            commits=tuple(c.sha for c in commits),
            files=tuple(files),
            added=sum(c.added for c in commits),
            removed=sum(c.removed for c in commits),
            pending=acc.pending,
            approved_by=approval.author if approval else None,
            approved_in=approval.sha if approval else None,
            reverted=any(c.sha in seen.reverted for c in commits),
            expires=expires if status == "discarded" else None,
        )

    def get(self, session: str) -> Session:
        """One session; NotFoundError when no commit names it."""
        sid = check_token("session", session)
        seen = self._snapshot()
        if sid not in seen.by_session:
            raise NotFoundError(
                f"no commit of session {sid!r} is in the history or waiting for review",
                path=None,
                fix=Fix("sessions"),
            )
        return self._summarise(seen, sid)

    def commits(self, session: str) -> builtins.list[CommitRecord]:
        """A session's commits, oldest first (its timeline)."""
        found = self.get(session)
        return list(reversed(self._snapshot().by_session[found.id].commits))

    # ------------------------------------------------------------ changes
    def changes(self, session: str) -> builtins.list[FileChange]:
        """What the session did to each file, from before its first change to after its last."""
        timeline = self.commits(session)
        first: dict[str, str] = {}
        last: dict[str, str] = {}
        for record in timeline:
            for rel in record.paths:
                if rel not in first:
                    first[rel] = record.parents[0] if record.parents else ""
                last[rel] = record.sha
        versions = {rel: (self._blob(rel, first[rel]), self._blob(rel, last[rel])) for rel in first}
        return self._describe(versions)

    def _blob(self, rel: str, rev: str) -> bytes | None:
        return self.ctx.git.blob_at(rel, rev) if rev else None

    def _describe(
        self, versions: dict[str, tuple[bytes | None, bytes | None]]
    ) -> builtins.list[FileChange]:
        trashed: dict[str, str] = {}
        restored: set[str] = set()
        hidden: set[str] = set()
        for rel, (before, after) in versions.items():
            parts = rel.split("/")
            if parts[0] != TRASH_DIR or len(parts) < 3:
                continue
            hidden.add(rel)
            if len(parts) > 3 and parts[2] == "files":
                original = "/".join(parts[3:])
                if original in versions and after is not None and versions[original][1] is None:
                    trashed[original] = parts[1]
                elif original in versions and before is not None and versions[original][0] is None:
                    restored.add(original)
                else:
                    hidden.discard(rel)
            elif parts[2] != "entry.json":
                hidden.discard(rel)
        out = []
        for rel in sorted(versions):
            if rel in hidden:
                continue
            before, after = versions[rel]
            if before == after:
                continue
            text_a, text_b = self._text(rel, before), self._text(rel, after)
            lines = list(
                difflib.unified_diff(
                    (text_a or "").splitlines(keepends=True),
                    (text_b or "").splitlines(keepends=True),
                    fromfile=f"a/{rel}",
                    tofile=f"b/{rel}",
                )
            )
            kind = (
                "trashed"
                if rel in trashed
                else "restored"
                if rel in restored
                else "added"
                if before is None
                else "deleted"
                if after is None
                else "modified"
            )
            out.append(
                FileChange(
                    path=rel,
                    kind=kind,
                    before=text_a,
                    after=text_b,
                    diff="".join(
                        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                        for line in lines
                    ),
                    added=sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++")),
                    removed=sum(
                        1 for ln in lines if ln.startswith("-") and not ln.startswith("---")
                    ),
                    trash_entry=trashed.get(rel),
                )
            )
        return out

    @staticmethod
    def _text(rel: str, data: bytes | None) -> str | None:
        if data is None:
            return None
        try:
            return decode(data, rel)
        except ContextFSError:
            return f"(binary or unreadable content, {len(data)} bytes)\n"

    def diff(self, session: str) -> str:
        """The session's changes as one unified diff, file by file."""
        return "".join(change.diff for change in self.changes(session))

    # ------------------------------------------------------------ decisions
    def approve(self, session: str) -> ApproveReport:
        """Merge a pending session into the main branch (a person only)."""
        return self.review.approve(check_token("session", session) or "")

    def discard(self, session: str) -> Discarded:
        """Drop a pending session; recoverable for ``[review] keep_days`` (a person only)."""
        return self.review.discard(check_token("session", session) or "")

    def recover(self, session: str) -> ReviewBranch:
        """Make a discarded session pending again (a person only)."""
        return self.review.recover(check_token("session", session) or "")

    def undo(self, session: str) -> RevertReport:
        """Undo a session already on the main branch, as new commits (``revert_session``)."""
        found = self.get(session)
        if found.status == "pending":
            raise ReviewError(
                f"session {found.id} is waiting for review, not on the main branch; discard it "
                "instead (`contextfs sessions discard`)"
            )
        from ..changes import history  # with difflib: ~3 ms that only undoing a session needs

        return history.revert_session(self.ctx, found.id)
