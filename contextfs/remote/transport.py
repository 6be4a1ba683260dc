"""Talking to a git remote: which remote and branch, fetch, push, with nothing run on the way.

**Which remote and branch.** From the repository's configuration: the current branch's
upstream (``branch.<name>.remote`` and ``.merge``), else the only remote there is, with
the branch the remote's HEAD names (so a bare remote whose HEAD is ``master`` is synced on
``master``, whatever the local branch is called). An explicit ``remote=``/``branch=`` (the
CLI's ``--remote``/``--branch``) overrides both; nothing an agent or a file says can.
Both are checked as names before git sees them.

**What may run.** Every call keeps the store's safe configuration (no hooks, no filters,
no pagers, :mod:`contextfs.versioning.gitcmd`) and re-allows only the transports
``file``, ``git``, ``ssh``, ``http`` and ``https`` (remote helpers such as ``ext::`` stay
refused); ``core.sshCommand`` and credential helpers are taken from the user's global
or system configuration only, never from the repository's, and the repository's
``uploadpack``/``receivepack`` settings are replaced by git's own programs. For a remote
on a local disk, its hooks do not run either. Incoming objects are checked by git
(``transfer.fsckObjects``).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidArgumentError, VersioningError

if TYPE_CHECKING:
    from ..versioning import GitStore

__all__ = ["Pushed", "Target", "fetch", "push", "resolve_target"]

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
_SCHEMES = ("file://", "git://", "ssh://", "http://", "https://")
_SCP = re.compile(r"^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9._-]+:(?!//)")
_RETRYABLE = ("fetch first", "non-fast-forward", "stale info", "failed to lock", "cannot lock ref",
              "failed to update ref", "incorrect old value")
#: A fetch's lock file older than this, found while the sync lock is held, was left by a kill.
_STALE_LOCK_SECONDS = 5.0


@dataclass(frozen=True)
class Target:
    """Where a root syncs: the remote's name and URL, and the branch on it."""

    remote: str
    url: str
    branch: str

    @property
    def tracking(self) -> str:
        """The remote-tracking ref a fetch updates."""
        return f"refs/remotes/{self.remote}/{self.branch}"

    @property
    def local(self) -> bool:
        """True when the remote is a folder on this machine (file:// or a path)."""
        return self.url.startswith("file://") or not (self.url.startswith(_SCHEMES) or _SCP.match(self.url))


@dataclass(frozen=True)
class Pushed:
    """What a push did: accepted, or rejected because the remote moved (retry after a merge)."""

    ok: bool
    rejected: bool
    message: str


def check_name(value: object, what: str) -> str:
    pattern = _NAME if what == "remote" else _BRANCH
    if not isinstance(value, str) or not pattern.match(value) or ".." in value or value.endswith((".lock", "/", ".")):
        raise InvalidArgumentError(f"{what} name {value!r} is not accepted; use letters, digits and . _ - "
                                   f"(e.g. {'origin' if what == 'remote' else 'main'})")
    return value


def check_url(url: str, remote: str) -> str:
    """Refuse remote helpers (``ext::``, ``fd::``, ``x::y``) and anything that reads as an option."""
    if not url or url.startswith("-") or "::" in url or any(ord(c) < 32 for c in url):
        raise VersioningError(f"remote {remote!r} has a URL contextfs does not use ({url[:60]!r}); "
                              "point it at file://, git://, ssh://, http(s):// or user@host:path")
    return url


def transport_config(git: GitStore, target: Target) -> tuple[str, ...]:
    """The ``-c`` options that let this one fetch or push reach ``target`` and nothing else."""
    cfg = ["-c", "protocol.allow=never"]
    for proto in ("file", "git", "ssh", "http", "https"):
        cfg += ["-c", f"protocol.{proto}.allow=always"]
    ssh = (git.cmd.config_values("core.sshCommand", scope="global")
           or git.cmd.config_values("core.sshCommand", scope="system") or ["ssh"])
    cfg += ["-c", f"core.sshCommand={ssh[-1]}", "-c", "credential.helper="]
    for scope in ("system", "global"):
        for helper in git.cmd.config_values("credential.helper", scope=scope):
            cfg += ["-c", f"credential.helper={helper}"]
    cfg += ["-c", "transfer.fsckObjects=true", "-c", "fetch.recurseSubmodules=false"]
    return tuple(cfg)


def _programs(target: Target, *, push: bool = False) -> str:
    """The remote-side program as a command-line option: it beats the repository's
    ``remote.<name>.uploadpack``/``receivepack`` (git takes the first of several values,
    so a ``-c`` could not). A remote on this disk runs receive-pack without its hooks."""
    if push:
        return "--receive-pack=" + ("git -c core.hooksPath=/dev/null receive-pack" if target.local
                                    else "git-receive-pack")
    return "--upload-pack=git-upload-pack"


def _remote_head(git: GitStore, target: Target) -> str | None:
    """The branch the remote's HEAD names, also for an empty remote (learned as a clone does)."""
    cfg = transport_config(git, target)
    proc = git.cmd.attempt("ls-remote", "--symref", _programs(target), "--", target.url, "HEAD", config=cfg)
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
            return line[len("ref: refs/heads/"):-len("\tHEAD")]
    if proc.returncode != 0:
        return None
    # An empty remote lists no refs; a clone still learns its unborn HEAD (protocol v2).
    scratch = Path(tempfile.mkdtemp(prefix="contextfs-head-"))
    try:
        done = git.cmd.attempt("clone", "--bare", "--quiet", "--no-tags", _programs(target), "--", target.url,
                               str(scratch / "r"), config=cfg)
        head = (scratch / "r" / "HEAD").read_text("utf-8").strip() if done.returncode == 0 else ""
    except OSError:
        head = ""
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return head[len("ref: refs/heads/"):] if head.startswith("ref: refs/heads/") else None


def resolve_target(git: GitStore, remote: str | None = None, branch: str | None = None, *,
                   remember: bool = True) -> Target:
    """The remote and branch to sync with (see the module docstring)."""
    ref = git.refs.branch()
    if ref is None or not ref.startswith("refs/heads/"):
        raise VersioningError(f"HEAD in {git.workdir} is not on a branch; check out a branch before syncing")
    local = ref[len("refs/heads/"):]
    upstream_remote = (git.cmd.config_values(f"branch.{local}.remote") or [None])[-1]
    if remote is None:
        remote = upstream_remote
        if remote is None:
            names = sorted({key.split(".")[1] for key in _remote_keys(git)})
            if len(names) != 1:
                raise VersioningError(
                    "this repository has " + ("no remote" if not names else f"{len(names)} remotes ({', '.join(names)})")
                    + "; add one with `git remote add origin URL`, or pick one with --remote NAME")
            remote = names[0]
    check_name(remote, "remote")
    urls = git.cmd.config_values(f"remote.{remote}.url")
    if not urls:
        raise VersioningError(f"there is no remote named {remote!r}; add it with `git remote add {remote} URL`")
    proc = git.cmd.attempt("ls-remote", "--get-url", remote)
    url = check_url(proc.stdout.decode("utf-8", "replace").strip() or urls[-1], remote)
    explicit = branch is not None
    if branch is None and upstream_remote == remote:
        merge = (git.cmd.config_values(f"branch.{local}.merge") or [""])[-1]
        branch = merge[len("refs/heads/"):] if merge.startswith("refs/heads/") else None
    target = Target(remote, url, check_name(branch, "branch") if branch else local)
    if branch is None:
        branch = _remote_head(git, target) or local
        target = Target(remote, url, check_name(branch, "branch"))
        if remember and not explicit and not git.prefix and upstream_remote is None:
            # As `git push -u` would: later syncs (and the person's own git) use the same pair.
            git.git("config", f"branch.{local}.remote", remote)
            git.git("config", f"branch.{local}.merge", f"refs/heads/{branch}")
    return target


def _remote_keys(git: GitStore) -> list[str]:
    proc = git.cmd.attempt("config", "--name-only", "--get-regexp", r"^remote\..*\.url$")
    return [k for k in proc.stdout.decode("utf-8", "replace").splitlines() if k.count(".") >= 2]


def _clear_stale_lock(git: GitStore, target: Target) -> None:
    lock = git.common_dir / (target.tracking + ".lock")
    try:
        age = time.time() - os.stat(lock).st_mtime
    except OSError:
        return
    if age > _STALE_LOCK_SECONDS:
        log.warning("removing %s, left by a fetch that was killed", lock)
        lock.unlink(missing_ok=True)


def fetch(git: GitStore, target: Target) -> str | None:
    """Fetch the branch into its remote-tracking ref; its commit, or None when the remote lacks it."""
    _clear_stale_lock(git, target)
    proc = git.cmd.attempt("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc",
                           "--no-recurse-submodules", _programs(target), "--", target.remote,
                           f"+refs/heads/{target.branch}:{target.tracking}", config=transport_config(git, target))
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        if "couldn't find remote ref" in err:
            return None
        raise VersioningError(f"git fetch from {target.remote} ({target.url}) failed: {err[:300]}; "
                              "check that the remote is reachable and the branch name is right")
    out = git.cmd.attempt("rev-parse", "--verify", "--quiet", target.tracking + "^{commit}")
    sha = out.stdout.decode().strip()
    return sha if out.returncode == 0 and sha else None


def push(git: GitStore, target: Target, sha: str) -> Pushed:
    """Push ``sha`` to the branch; a rejection because the remote moved is not an error."""
    proc = git.cmd.attempt("push", "--porcelain", "--no-verify", _programs(target, push=True), "--", target.remote,
                           f"{sha}:refs/heads/{target.branch}", config=transport_config(git, target))
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 0:
        return Pushed(True, False, "")
    if any(reason in out for reason in _RETRYABLE):
        return Pushed(False, True, out.strip()[:300])
    raise VersioningError(f"git push to {target.remote} ({target.url}) failed: {out.strip()[:300]}; "
                          "check that the remote is reachable and writable")
