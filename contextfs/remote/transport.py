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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidArgumentError, VersioningError

if TYPE_CHECKING:
    from ..versioning import GitStore

__all__ = ["Pushed", "Target", "fetch", "push", "quoted", "resolve_target", "without_credentials"]

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
_BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}\Z")
_SCHEMES = ("file://", "git://", "ssh://", "http://", "https://")
_SCP = re.compile(r"^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9._-]+:(?!//)")
_RETRYABLE = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "failed to lock",
    "cannot lock ref",
    "failed to update ref",
    "incorrect old value",
)
#: A fetch's lock file older than this, found while the sync lock is held, was left by a kill.
_STALE_LOCK_SECONDS = 5.0
# The user information of a URL (`https://user:token@host/...`): up to the last `@` before
# the path, as RFC 3986 and git itself read the authority. A scheme is short; bounding it
# keeps the search linear on any text (`a.a.a.a...` would otherwise cost its length squared).
_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,31}://)[^/?#\s'\"]*@")


def without_credentials(text: str) -> str:
    """``text`` with the user name and password of every URL in it left out, as git's own
    messages show a remote: a token people put in a remote's URL (`https://x:ghp_...@host`)
    never reaches a message, a result or a terminal's scrollback through contextfs."""
    return _USERINFO.sub(r"\1", text)


def quoted(output: str) -> str:
    """git's output as an error quotes it: credentials left out first, then cut to 300
    characters (cut first, a URL could lose its ``@`` and keep its password)."""
    return without_credentials(output.strip())[:300]


@dataclass(frozen=True)
class Target:
    """Where a root syncs: the remote's name and URL, and the branch on it."""

    remote: str
    #: What git is given; it may hold credentials, so messages use :attr:`shown`.
    url: str = field(repr=False)
    branch: str
    #: The ``-c`` options of every transport call (:func:`transport_config`).
    config: tuple[str, ...] = field(default=(), repr=False)

    @property
    def shown(self) -> str:
        """The URL as messages and results show it, without user name and password."""
        return without_credentials(self.url)

    @property
    def tracking(self) -> str:
        """The remote-tracking ref a fetch updates."""
        return f"refs/remotes/{self.remote}/{self.branch}"

    @property
    def local(self) -> bool:
        """True when the remote is a folder on this machine (file:// or a path)."""
        return self.url.startswith("file://") or not (
            self.url.startswith(_SCHEMES) or _SCP.match(self.url)
        )


@dataclass(frozen=True)
class Pushed:
    """What a push did: accepted, or rejected because the remote moved (retry after a merge)."""

    ok: bool
    rejected: bool
    message: str


def check_name(value: object, what: str) -> str:
    pattern = _NAME if what == "remote" else _BRANCH
    if (
        not isinstance(value, str)
        or not pattern.match(value)
        or ".." in value
        or value.endswith((".lock", "/", "."))
    ):
        raise InvalidArgumentError(
            f"{what} name {value!r} is not accepted; use letters, digits and . _ - "
            f"(e.g. {'origin' if what == 'remote' else 'main'})"
        )
    return value


def check_url(url: str, remote: str) -> str:
    """Refuse remote helpers (``ext::``, ``fd::``, ``x::y``) and anything that reads as an option."""
    if not url or url.startswith("-") or "::" in url or any(ord(c) < 32 for c in url):
        raise VersioningError(
            f"remote {remote!r} has a URL contextfs does not use "
            f"({without_credentials(url)[:60]!r}); "
            "point it at file://, git://, ssh://, http(s):// or user@host:path"
        )
    return url


class GitConfig:
    """Every config value git sees for the repository, with its scope, read in one call."""

    def __init__(self, git: GitStore) -> None:
        proc = git.cmd.attempt("config", "--list", "--show-scope", "-z")
        self.values: dict[str, list[tuple[str, str]]] = {}
        parts = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        for scope, entry in zip(parts[::2], parts[1::2], strict=False):
            key, _, value = entry.partition("\n")
            self.values.setdefault(key.lower(), []).append((scope, value))

    def get(
        self,
        key: str,
        *,
        scopes: tuple[str, ...] = ("system", "global", "local", "worktree", "command"),
    ) -> list[str]:
        """The values of ``key`` set at these scopes, in the order git reads them."""
        return [value for scope, value in self.values.get(key.lower(), []) if scope in scopes]

    def keys(self, prefix: str) -> list[str]:
        return [key for key in self.values if key.startswith(prefix.lower())]


_USER = ("system", "global")
#: Settings that run a program and take the first of several values, so a repository's own
#: value cannot be overridden from the command line: a repository that sets one is refused.
_FIRST_WINS = ("core.gitproxy",)


def transport_config(config: GitConfig) -> tuple[str, ...]:
    """The ``-c`` options that let one fetch or push reach a remote and run nothing else."""
    for key in _FIRST_WINS:
        if any(scope not in _USER for scope, _ in config.values.get(key, [])):
            raise VersioningError(
                f"the repository's own config sets {key}, which runs a program; contextfs never "
                f"runs programs a repository configures: remove it with git config --unset-all {key}"
            )
    cfg = ["-c", "protocol.allow=never"]
    for proto in ("file", "git", "ssh", "http", "https"):
        cfg += ["-c", f"protocol.{proto}.allow=always"]
    for key, fallback in (("core.sshCommand", "ssh"), ("core.askPass", "")):
        mine = config.get(key, scopes=_USER)
        cfg += ["-c", f"{key}={mine[-1] if mine else fallback}"]
    # Credential helpers form a list an empty value resets; then only the user's own come back.
    for key in sorted(
        {k for k in config.keys("credential.") if k.endswith(".helper")} | {"credential.helper"}
    ):
        cfg += ["-c", f"{key}="]
        for helper in config.get(key, scopes=_USER):
            cfg += ["-c", f"{key}={helper}"]
    cfg += ["-c", "transfer.fsckObjects=true", "-c", "fetch.recurseSubmodules=false"]
    return tuple(cfg)


def _programs(target: Target, *, push: bool = False) -> str:
    """The remote-side program as a command-line option: it beats the repository's
    ``remote.<name>.uploadpack``/``receivepack`` (git takes the first of several values,
    so a ``-c`` could not). A remote on this disk runs receive-pack without its hooks."""
    if push:
        return "--receive-pack=" + (
            "git -c core.hooksPath=/dev/null receive-pack" if target.local else "git-receive-pack"
        )
    return "--upload-pack=git-upload-pack"


def _remote_head(git: GitStore, target: Target, cfg: tuple[str, ...]) -> str | None:
    """The branch the remote's HEAD names, also for an empty remote (learned as a clone does)."""
    proc = git.cmd.attempt(
        "ls-remote", "--symref", _programs(target), "--", target.url, "HEAD", config=cfg
    )
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
            return line[len("ref: refs/heads/") : -len("\tHEAD")]
    if proc.returncode != 0:
        return None
    # An empty remote lists no refs; a clone still learns its unborn HEAD (protocol v2).
    scratch = Path(tempfile.mkdtemp(prefix="contextfs-head-"))
    try:
        done = git.cmd.attempt(
            "clone",
            "--bare",
            "--quiet",
            "--no-tags",
            _programs(target),
            "--",
            target.url,
            str(scratch / "r"),
            config=cfg,
        )
        head = (scratch / "r" / "HEAD").read_text("utf-8").strip() if done.returncode == 0 else ""
    except OSError:
        head = ""
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return head[len("ref: refs/heads/") :] if head.startswith("ref: refs/heads/") else None


def resolve_target(
    git: GitStore, remote: str | None = None, branch: str | None = None, *, remember: bool = True
) -> Target:
    """The remote and branch to sync with (see the module docstring)."""
    ref = git.refs.branch()
    if ref is None or not ref.startswith("refs/heads/"):
        raise VersioningError(
            f"HEAD in {git.workdir} is not on a branch; check out a branch before syncing"
        )
    local = ref[len("refs/heads/") :]
    config = GitConfig(git)
    found = config.get(f"branch.{local}.remote")
    upstream_remote = found[-1] if found else None
    if remote is None:
        remote = upstream_remote
        if remote is None:
            names = sorted(
                {key.split(".")[1] for key in config.keys("remote.") if key.endswith(".url")}
            )
            if len(names) != 1:
                raise VersioningError(
                    "this repository has "
                    + ("no remote" if not names else f"{len(names)} remotes ({', '.join(names)})")
                    + "; add one with `git remote add origin URL`, or pick one with --remote NAME"
                )
            remote = names[0]
    check_name(remote, "remote")
    urls = config.get(f"remote.{remote}.url")
    if not urls:
        raise VersioningError(
            f"there is no remote named {remote!r}; add it with `git remote add {remote} URL`"
        )
    url = urls[-1]
    if config.keys("url."):  # insteadOf rewrites: ask git for the URL it will really use
        url = (
            git.cmd.attempt("ls-remote", "--get-url", remote)
            .stdout.decode("utf-8", "replace")
            .strip()
            or url
        )
    for candidate in (url, *config.get(f"remote.{remote}.pushurl")):
        check_url(candidate, remote)
    cfg = transport_config(config)
    explicit = branch is not None
    if branch is None and upstream_remote == remote:
        merge = (config.get(f"branch.{local}.merge") or [""])[-1]
        branch = merge[len("refs/heads/") :] if merge.startswith("refs/heads/") else None
    target = Target(remote, url, check_name(branch, "branch") if branch else local, cfg)
    if branch is None:
        branch = _remote_head(git, target, cfg) or local
        target = Target(remote, url, check_name(branch, "branch"), cfg)
        if remember and not explicit and not git.prefix and upstream_remote is None:
            # As `git push -u` would: later syncs (and the person's own git) use the same pair.
            git.git("config", f"branch.{local}.remote", remote)
            git.git("config", f"branch.{local}.merge", f"refs/heads/{branch}")
    return target


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
    proc = git.cmd.attempt(
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--no-auto-gc",
        "--no-recurse-submodules",
        _programs(target),
        "--",
        target.remote,
        f"+refs/heads/{target.branch}:{target.tracking}",
        config=target.config,
    )
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        if "couldn't find remote ref" in err:
            return None
        raise VersioningError(
            f"git fetch from {target.remote} ({target.shown}) failed: {quoted(err)}; "
            "check that the remote is reachable and the branch name is right"
        )
    try:
        sha = (git.common_dir / target.tracking).read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        sha = ""
    if not re.fullmatch(r"[0-9a-f]{40}", sha):  # a packed ref: ask git
        out = git.cmd.attempt("rev-parse", "--verify", "--quiet", target.tracking + "^{commit}")
        sha = out.stdout.decode().strip() if out.returncode == 0 else ""
    return sha or None


def push(git: GitStore, target: Target, sha: str) -> Pushed:
    """Push ``sha`` to the branch; a rejection because the remote moved is not an error."""
    proc = git.cmd.attempt(
        "push",
        "--porcelain",
        "--no-verify",
        _programs(target, push=True),
        "--",
        target.remote,
        f"{sha}:refs/heads/{target.branch}",
        config=target.config,
    )
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 0:
        return Pushed(True, False, "")
    if any(reason in out for reason in _RETRYABLE):
        return Pushed(False, True, quoted(out))
    raise VersioningError(
        f"git push to {target.remote} ({target.shown}) failed: {quoted(out)}; "
        "check that the remote is reachable and writable"
    )
