"""What one sync of a root with its remote did: the state it ended in, the files it
changed, the merge notes, whether it pushed (``ctx.remote.sync()`` returns it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..merging import MergeNote

__all__ = ["SyncResult"]


@dataclass
class SyncResult:
    """What one sync did."""

    remote: str
    branch: str
    #: The remote's URL without user name and password (:func:`transport.without_credentials`).
    url: str
    state: str = (
        "up-to-date"  # up-to-date | fast-forward | merged | resolved (a person's git merge)
    )
    head: str | None = None
    committed_outside: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    notes: list[MergeNote] = field(default_factory=list)
    pushed: bool = False
    rejected_pushes: int = 0
    push_skipped: str | None = None

    @property
    def conflict_copies(self) -> list[str]:
        """Conflict copies this sync made (``contextfs conflicts`` lists all of them)."""
        return sorted(
            {
                n.detail.rsplit(" as ", 1)[-1]
                for n in self.notes
                if n.kind == "conflict-copy" and " as " in n.detail
            }
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "branch": self.branch,
            "url": self.url,
            "state": self.state,
            "head": self.head,
            "committed_outside": self.committed_outside,
            "changed": self.changed,
            "notes": [{"path": n.path, "kind": n.kind, "detail": n.detail} for n in self.notes],
            "pushed": self.pushed,
            "rejected_pushes": self.rejected_pushes,
            "push_skipped": self.push_skipped,
            "conflict_copies": self.conflict_copies,
        }
