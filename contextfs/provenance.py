"""Who writes: the actor, session and turn recorded with every version.

Provenance is set by the library (the manager's actor, ``provenance()`` blocks, the
toolkit's actor), never by text a model supplies, and every value that reaches git is
checked here first: an actor is ``agent``, ``agent:<name>``, ``human`` or ``remote``;
sessions and turns are short tokens, so they can never become git options or trailers
that mean something else.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import InvalidArgumentError

__all__ = ["Provenance", "Writers", "check_actor", "check_token", "email_of", "machine_name"]

_ACTOR = re.compile(r"^(agent(:[A-Za-z0-9_.-]{1,64})?|human|remote)\Z")
_TOKEN = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}\Z")


@dataclass(frozen=True)
class Provenance:
    """Who is writing: set by the library and by ``provenance()``, never by content."""

    actor: str = "agent"
    session: str | None = None
    turn: str | None = None


def check_actor(actor: object) -> str:
    if not isinstance(actor, str) or not _ACTOR.match(actor):
        raise InvalidArgumentError(
            f"actor {actor!r} is not accepted; use 'agent', 'agent:<name>', 'human' or 'remote'"
        )
    return actor


def check_token(name: str, value: object) -> str | None:
    """A session or turn id: None, or 1-128 letters, digits and ``. _ : @ -``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidArgumentError(f"{name} must be a string, not {type(value).__name__}")
    text = str(value)
    if not _TOKEN.match(text):
        raise InvalidArgumentError(
            f"{name} {text[:40]!r} is not accepted; use 1-128 letters, digits and . _ : @ -"
        )
    return text


def email_of(actor: str) -> str:
    """The commit e-mail of an actor (never the machine's global git identity)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", actor) + "@contextfs.invalid"


@functools.cache
def machine_name(configured: str | None = None) -> str:
    """The name of this machine in commit trailers (``Contextfs-Machine``).

    ``configured`` (a clone's ``contextfs.machine`` setting), else ``$CONTEXTFS_MACHINE``
    (several clones on one host, a fleet), else the host name; reduced to a token, so it
    can never become anything but a trailer value.
    """
    raw = configured or os.environ.get("CONTEXTFS_MACHINE")
    if not raw:
        import socket  # ~4 ms, paid by writers only: a reading command never names the machine

        raw = socket.gethostname() or "unknown"
    name = re.sub(r"[^A-Za-z0-9_.:@-]", "-", raw.strip())[:64].strip("-")
    return name or "unknown"


class Writers:
    """Who is writing, per thread: a root's own provenance and the ``provenance()`` blocks over it.

    ``actor_given`` says whether a person set the root's actor; with no block that sets
    one either, :attr:`chosen_actor` is None and a tool adapter uses its own default name.
    """

    def __init__(self, base: Provenance, *, actor_given: bool) -> None:
        self.base = base
        self._actor_given = actor_given
        self._local = threading.local()

    def _stack(self) -> list[tuple[Provenance, bool]]:
        stack: list[tuple[Provenance, bool]] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    @property
    def current(self) -> Provenance:
        stack = self._stack()
        return stack[-1][0] if stack else self.base

    @property
    def chosen_actor(self) -> str | None:
        """The actor a person set (on the root, or in an enclosing block), or None."""
        if self._actor_given or any(chosen for _, chosen in self._stack()):
            return self.current.actor
        return None

    @contextlib.contextmanager
    def push(
        self, actor: str | None, session: str | int | None, turn: str | int | None
    ) -> Iterator[Provenance]:
        """Change who is writing for the duration of a block (nests); values are checked first."""
        cur = self.current
        new = Provenance(
            actor=check_actor(actor) if actor is not None else cur.actor,
            session=check_token("session", session) if session is not None else cur.session,
            turn=check_token("turn", turn) if turn is not None else cur.turn,
        )
        stack = self._stack()
        stack.append((new, actor is not None))
        try:
            yield new
        finally:
            stack.pop()
