"""How a change's commit reads: who makes it (:class:`Header`, journaled first) and its message.

The message is ``<op>: <path>`` (or a transaction's own subject), the list of operations,
then the ``Contextfs-*`` trailers: what :mod:`contextfs.history` reads back and what the
commit gate (:mod:`contextfs.history_gate`) scans before anything is written.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .transaction import Change

__all__ = ["Header", "commit_message"]


@dataclass(frozen=True)
class Header:
    """Who makes a change and how its commit will read (journaled before anything else)."""

    op: str
    subject: str
    actor: str
    email: str
    session: str | None
    turn: str | None

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "subject": self.subject, "actor": self.actor, "email": self.email,
                "session": self.session, "turn": self.turn, "pid": os.getpid(), "started": time.time()}


def commit_message(change: Change, subject: str, prov: Any) -> str:
    """``<op>: <path>`` subject, the list of operations, then the ``Contextfs-*`` trailers."""
    body = "\n".join(f"- {op}" for op in change.ops[:50])
    trailers = {"Contextfs-Op": change.header.op, "Contextfs-Machine": change.git.machine}
    if prov.session:
        trailers["Contextfs-Session"] = prov.session
    if prov.turn:
        trailers["Contextfs-Turn"] = prov.turn
    for key, value in change.trailers.items():
        if value:
            trailers[key] = " ".join(str(value).split())[:120]
    message = " ".join(str(subject).split())[:200] + "\n\n"
    if body:
        message += body + "\n\n"
    return message + "".join(f"{k}: {v}\n" for k, v in trailers.items())
