"""Running git as a subprocess without letting the repository run programs.

contextfs calls git for a few steps off the write path (``status``, ``log``, ``diff-tree``,
rebuilding a torn index in recovery). A repository's configuration can make those steps run programs: hooks,
``core.fsmonitor``, pagers, external diff drivers, and ``filter.<name>.clean`` drivers
assigned through ``.gitattributes``. Every call here gets ``-c`` overrides that switch
all of them off — for filters, one override per driver name configured at any level,
read once per repository — and an environment reduced to what git needs, so variables
such as ``GIT_CONFIG_PARAMETERS`` or ``GIT_EXTERNAL_DIFF`` from the caller cannot add
them back. LLM text never reaches git as an option: revisions are validated by
:func:`check_rev` (a name git's ref rules allow, never starting with ``-``) and paths
always follow ``--``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ..errors import NotFoundError, VersioningError
from ..fixes import Fix

__all__ = ["GitCommand", "check_rev"]

# A revision is a name (HEAD, a commit id, a branch, a tag, a remote branch such as
# origin/main) followed by ~N / ^N steps back. Names follow git's check-ref-format rules
# (no space, control character, ~ ^ : ? * [ \ or "..", no "@{", no part starting with
# "." or ending in ".lock"), which also keeps a name from reading as an option or a path.
_REV = re.compile(r"(?P<name>[^\x00-\x20\x7f~^:?*\[\\]{1,255}?)(?P<steps>(?:[~^][0-9]{0,4})*)")
_SAFE_CONFIG = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.external=",
    "-c",
    "log.showSignature=false",
    "-c",
    "protocol.allow=never",
    "-c",
    "core.sshCommand=false",
    "-c",
    "diff.ignoreSubmodules=all",
    "-c",
    "status.submoduleSummary=false",
)
#: Environment variables passed through to git; everything else (GIT_* included) is dropped.
_KEEP_ENV = (
    "PATH",
    "HOME",
    "TMPDIR",
    "SYSTEMROOT",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_SYSTEM",
    "XDG_CONFIG_HOME",
    # what ssh and https transports need to reach a remote (contextfs sync)
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "USER",
    "LOGNAME",
    "http_proxy",
    "https_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "no_proxy",
    "NO_PROXY",
)


def check_rev(rev: object) -> str:
    """Accept a commit id, HEAD, a branch, tag or remote branch name, each with ~N/^N steps.

    What the name points at is looked up in-process (:meth:`GitStore.resolve`); this only
    decides that the text is a revision and nothing else (an option, a range, a path).
    """
    text = rev if isinstance(rev, str) else ""
    match = _REV.fullmatch(text)
    name = match.group("name") if match else ""
    parts = name.split("/")
    if (
        match is None
        or name.startswith("-")
        or ".." in name
        or "@{" in name
        or name == "@"
        or not name.isprintable()
        or name.endswith((".", "/"))
        or any(not p or p.startswith(".") or p.endswith(".lock") for p in parts)
    ):
        shown = repr(rev) if not isinstance(rev, str) or len(rev) <= 80 else repr(rev[:77]) + "..."
        raise NotFoundError(
            f"revision {shown} is not accepted (a commit id, HEAD~N, a branch or a tag such as "
            "main or origin/main)",
            path=None,
            fix=Fix("history"),
        )
    return text


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
            "GIT_ATTR_NOSYSTEM": "1",
        }
    )
    return env


class GitCommand:
    """git subprocesses for one work tree, with risky configuration disabled."""

    def __init__(self, workdir: Path, git_dir: Path) -> None:
        self.workdir = workdir
        self.git_dir = git_dir
        self._overrides: tuple[str, ...] | None = None

    def overrides(self) -> tuple[str, ...]:
        """The ``-c`` options of every call: the fixed set plus one per filter driver."""
        if self._overrides is None:
            names: set[str] = set()
            proc = self._spawn(
                ["config", "--null", "--name-only", "--get-regexp", r"^filter\."], fixed_only=True
            )
            if proc.returncode == 0:
                for key in proc.stdout.decode("utf-8", "replace").split("\0"):
                    parts = key.split(".")
                    if len(parts) >= 3 and parts[0] == "filter":
                        names.add(".".join(parts[1:-1]))
            extra: list[str] = []
            for name in sorted(names):
                for what, value in (
                    ("clean", ""),
                    ("smudge", ""),
                    ("process", ""),
                    ("required", "false"),
                ):
                    extra += ["-c", f"filter.{name}.{what}={value}"]
            self._overrides = _SAFE_CONFIG + tuple(extra)
        return self._overrides

    def _spawn(
        self,
        args: list[str],
        *,
        input: bytes | None = None,
        fixed_only: bool = False,
        config_extra: tuple[str, ...] = (),
    ) -> subprocess.CompletedProcess[bytes]:
        # Later -c options win: ``config_extra`` may only re-allow what a transport needs.
        config = (_SAFE_CONFIG if fixed_only else self.overrides()) + config_extra
        try:
            return subprocess.run(
                [
                    "git",
                    "--git-dir",
                    str(self.git_dir),
                    "--work-tree",
                    str(self.workdir),
                    *config,
                    *args,
                ],
                cwd=self.workdir,
                input=input,
                capture_output=True,
                env=_env(),
                check=False,
            )
        except FileNotFoundError:
            raise VersioningError("git is not installed; install git 2.28 or newer") from None
        except OSError as exc:
            raise VersioningError(
                f"cannot run git ({exc.strerror}); check that git is installed"
            ) from None

    def attempt(
        self, *args: str, config: tuple[str, ...] = ()
    ) -> subprocess.CompletedProcess[bytes]:
        """Run git and hand back the finished process, whatever its exit status.

        ``config`` adds ``-c`` options after the safe set (a transport's protocols).
        """
        return self._spawn(list(args), config_extra=config)

    def config_values(self, key: str, *, scope: str | None = None) -> list[str]:
        """Every value of a config key (``scope``: 'global', 'system' or 'local'); [] when unset."""
        where = [f"--{scope}"] if scope else []
        proc = self._spawn(["config", *where, "--null", "--get-all", key], fixed_only=True)
        if proc.returncode != 0:
            return []
        return [v for v in proc.stdout.decode("utf-8", "replace").split("\0") if v]

    def run(self, *args: str, input: bytes | None = None) -> str:
        """Run git and return its stdout as text; a failure is a VersioningError."""
        proc = self._spawn(list(args), input=input)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()[:300]
            if "index.lock" in err:
                raise VersioningError(
                    f"git {args[0]} failed: another git process holds the index ({self.git_dir}/index.lock exists); "
                    "retry when it has finished, or delete the lock if no git is running"
                )
            raise VersioningError(f"git {args[0]} failed: {err}; check the repository state")
        return proc.stdout.decode("utf-8", "surrogateescape")
