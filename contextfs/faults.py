"""Named fault points, so tests can kill or fail contextfs at exact steps of a change.

Production code calls :func:`point` at the steps where a crash is interesting (after a
snapshot is journaled, after a file is written, after the commit is ready, while git's
index or the branch is locked, ...). Unless a fault is armed this is one attribute
read. A fault is armed in-process with :func:`arm` or, for a child process that should
die for real, through the environment::

    CONTEXTFS_FAULTS="commit.ready=kill"          # SIGKILL at the first 'commit.ready'
    CONTEXTFS_FAULTS="change.written@3=kill"      # ... at the third 'change.written'
    CONTEXTFS_FAULTS="commit.prepared=enospc"     # raise OSError(ENOSPC) there

Actions: ``kill`` (SIGKILL this process, as a crash or power cut would stop it),
``enospc`` / ``eio`` (raise the OSError a full or failing disk gives), ``raise``
(RuntimeError). The point names are listed in :data:`POINTS`.

With ``CONTEXTFS_FAULTS_TRACE=<file>`` a fault appends ``<point>@<nth>=<action>`` to that
file (flushed) just before it acts, so a test can tell a kill at the named point from a
process that died or finished some other way.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Callable

__all__ = ["POINTS", "arm", "disarm", "point"]

#: Every fault point in the code, in the order a change passes them.
POINTS = (
    "change.touched",  # a snapshot is journaled, the file not yet changed
    "change.written",  # one file of the change is written (staged beside its place)
    "change.judged",  # a path was compared with what the change saw; it is about to be replaced, moved or removed
    "change.renamed",  # one rename of the change is done
    "change.published",  # the change's staged files are in place; its commit not yet built
    "commit.prepared",  # the commit's objects are written, the journal not yet 'ready'
    "commit.ready",  # the journal says 'ready'; git's index not yet updated
    "record.locked",  # git's index.lock exists, holding the new index
    "commit.recorded",  # git's index and the branch's new id are in their locks; neither moved yet
    "publish.locked",  # the branch's .lock file exists
    "commit.published",  # the branch moved; the journal not yet removed
    "index.filling",  # a search index rebuild has added documents, not yet swapped in
)

_armed: dict[str, tuple[int, str]] = {}
_seen: dict[str, int] = {}


def _parse(spec: str) -> dict[str, tuple[int, str]]:
    out = {}
    for item in spec.split(","):
        name, _, action = item.strip().partition("=")
        name, _, nth = name.partition("@")
        if name:
            out[name] = (int(nth or 1), action or "kill")
    return out


_armed.update(_parse(os.environ.get("CONTEXTFS_FAULTS", "")))
_hooks: dict[str, Callable[[], None]] = {}


def arm(name: str, action: str | Callable[[], None] = "raise", nth: int = 1) -> None:
    """Make the ``nth`` pass through ``name`` fail with ``action`` (or call it)."""
    if name not in POINTS:
        raise ValueError(f"unknown fault point {name!r}; choose from {', '.join(POINTS)}")
    _seen.pop(name, None)
    if callable(action):
        _hooks[name] = action
        _armed[name] = (nth, "hook")
    else:
        _armed[name] = (nth, action)


def disarm() -> None:
    _armed.clear()
    _seen.clear()
    _hooks.clear()


def _trace(line: str) -> None:
    path = os.environ.get("CONTEXTFS_FAULTS_TRACE")
    if not path:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def point(name: str) -> None:
    """A step where a fault may be injected (a no-op unless one is armed)."""
    if not _armed:
        return
    plan = _armed.get(name)
    if plan is None:
        return
    _seen[name] = _seen.get(name, 0) + 1
    nth, action = plan
    if _seen[name] != nth:
        return
    _trace(f"{name}@{nth}={action}")
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "enospc":
        raise OSError(errno.ENOSPC, "No space left on device (injected)")
    if action == "eio":
        raise OSError(errno.EIO, "Input/output error (injected)")
    if action == "hook":
        _hooks[name]()
        return
    raise RuntimeError(f"fault injected at {name}")
