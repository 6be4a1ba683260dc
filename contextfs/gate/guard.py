"""The write gate's content checks: what may be committed, and how far to trust it.

Every write through :class:`~contextfs.manager.ContextManager` — from the Python API, the
CLI, the LangChain and MCP tools, the memory tool, the LangGraph store, topics and memory
tiers alike — passes :meth:`WriteGuard.check` before a byte reaches the disk:

* **secrets** (:mod:`contextfs.gate.secrets`): text holding a credential is refused under the
  ``[secrets]`` policy (default ``refuse``), for every actor, with a message that names
  the kind and line but never the secret. An agent cannot allow-list its own write with
  the inline marker; a person can, or can list the fingerprint in ``config.toml``;
* **instructions planted as memory** (:mod:`contextfs.gate.poisoning`): for agent actors,
  text that reads as an order to the agent is tagged ``trust: untrusted`` in the
  frontmatter (policy ``tag``, the default), refused (``refuse``) or hidden
  (``quarantine``), set by ``[memory] poisoning``. A caller can lower trust, never raise
  it above what the guard decided. Files that cannot carry frontmatter (``.txt``,
  ``.json``) have nowhere to record the mark, so flagged agent text there is refused;
* **library-owned logs**: ``*.jsonl`` files (conversation logs, topic exchanges) are
  written by the layers that own them (inside :meth:`ContextManager.library_write`);
  a generic write of one by an agent is refused, so no tool call can forge a logged
  ``system`` message.

The gate judges the text a file will hold after the change (an append or a partial edit
is judged with what is already there), and the file's name with it: a name holding a
secret is refused before anything else looks at it (so no later message repeats it), and
a name that reads as an instruction counts like such text. A JSON Lines log is the one
exception: its records stand alone, so an append to it is judged on the records it adds.

:meth:`WriteGuard.check_history` is the same secret scan over everything else a commit
carries (tree entry names, the message with its trailers, the author); the commit gate
(:mod:`contextfs.gate.history`) calls it for every commit.

Edits people make in an editor are not agent writes: sync scans them (content and name)
for secrets only, and holds back (uncommitted, reported) a file that holds one.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ContentError, PoisoningError
from . import poisoning, secrets

__all__ = ["TRUST_ORDER", "Decision", "WriteGuard", "is_agent", "is_library_log"]

log = logging.getLogger(__name__)

#: Trust levels from most to least visible; a write can only move down this list.
TRUST_ORDER = poisoning.TRUST_LEVELS


def is_agent(actor: str) -> bool:
    return actor == "agent" or actor.startswith("agent:")


def is_library_log(rel: str) -> bool:
    """JSON Lines logs are written by the layer that owns them, never by a generic write."""
    return rel.lower().endswith(".jsonl")


def _lowest(*levels: str | None) -> str:
    ranked = [TRUST_ORDER.index(level) for level in levels if level in TRUST_ORDER]
    return TRUST_ORDER[max(ranked)] if ranked else "trusted"


@dataclass(frozen=True)
class Decision:
    """What the gate decided for one write: the trust level to record and why."""

    trust: str = "trusted"
    reasons: tuple[str, ...] = ()


class WriteGuard:
    """The content checks of one root, configured from its ``config.toml``."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.secrets = secrets.SecretPolicy.from_config(config)
        self.poisoning = poisoning.policy_from_config(config)

    # ------------------------------------------------------------ secrets
    def check_secrets(
        self, rel: str, text: str, *, actor: str, lines: tuple[int, int] = (1, 1)
    ) -> None:
        """Refuse ``text`` when it holds a secret (ContentError that never echoes it).

        ``lines`` is (line of ``text`` where the caller's body starts, the caller's own number
        for that line): a finding is reported on the caller's line, or in the frontmatter.
        """
        policy = self.secrets
        if is_agent(actor) and policy.inline_allowlist:
            # The marker is for a person who knows the value is harmless; an agent that
            # read a refusal could otherwise add it to its own next write.
            policy = replace(policy, inline_allowlist=False)
        secrets.check(text, path=rel, policy=policy, body_line=lines[0], written_line=lines[1])

    def _refuse(self, what: str, text: str, fix: str) -> None:
        found = self._strict_findings(text)
        if found:
            # kinds and fingerprints only: a line number would point into a name or a message
            listed = secrets.listing(found, lambda f: f"{f.kind} (fingerprint {f.fingerprint})")
            raise ContentError(
                f"refused: {what} in this change holds a secret: {listed}. Nothing was written or committed; "
                f"{fix} (store a reference to where the secret is kept instead), or, if it is not a secret, "
                "add its fingerprint to allow in the [secrets] table of .contextfs/config.toml"
            )

    def knowing(self, names: Iterable[str]) -> WriteGuard:
        """This gate, with the secrets ``names`` hold let through: names already in history.

        The commit gate passes the paths HEAD holds that a change moves or deletes, so a file
        committed under a secret-bearing name (by plain git, or before the secret's format
        was known) can still be moved away or deleted: its name is in history already, and
        the commit that removes it, its message naming the old path, adds nothing new.
        """
        known = {f.fingerprint for f in self._strict_findings("\n".join(names))}
        if not known:
            return self
        wider = copy.copy(self)
        wider.secrets = replace(self.secrets, allow=self.secrets.allow | known)
        return wider

    def check_history(
        self, *, names: Iterable[str] = (), message: str = "", author: str = ""
    ) -> None:
        """Refuse a commit whose names, message (subject, body, trailers) or author hold a secret.

        The message says which part and what kind, with fingerprints, and never repeats
        the name or the value.
        """
        self.check_names(names)
        self._refuse(
            "the commit message (its subject, transaction message, session, turn, machine name "
            "or trailers)",
            message,
            "use a message, session id, turn and machine name (git config contextfs.machine) "
            "that do not hold it",
        )
        self._refuse("the author name", author, "use an actor name that does not hold it")

    def check_names(self, names: Iterable[str], *, what: str = "a file or folder name") -> None:
        """Refuse names (paths; a store's keys and namespace labels) that hold a secret."""
        self._refuse(what, "\n".join(names), "pick a name that does not hold it")

    def name_findings(self, names: Iterable[str]) -> list[secrets.SecretFinding]:
        """What :meth:`check_names` refuses names for (the inline marker never applies to a name)."""
        return self._strict_findings("\n".join(names))

    def _strict_findings(self, text: str) -> list[secrets.SecretFinding]:
        # Names and messages carry no comments, so the inline marker never applies to them.
        return replace(self.secrets, inline_allowlist=False).findings(text) if text else []

    def check_outside(self, rel: str, data: bytes, *, actor: str) -> None:
        """Refuse a version a person saved outside contextfs (``actor``: who it is attributed to)
        whose name or bytes hold a secret: the one check before such a version is committed.

        Sync, the adoption of a folder, the outside versions a change commits first and the
        ones an undone change commits all call it; a refused version is held back, never
        committed. The name goes first, so no later message repeats a secret-bearing path.
        """
        self.check_names([rel])
        self.check_secrets(rel, data.decode("utf-8", "replace"), actor=actor)

    # ------------------------------------------------------------ the whole gate
    def check(
        self,
        rel: str,
        text: str,
        *,
        actor: str,
        markdown: bool,
        library: bool,
        requested_trust: str | None = None,
        scan: str | None = None,
        lines: tuple[int, int] = (1, 1),
    ) -> Decision:
        """Check one write of ``text`` to ``rel`` by ``actor``; the trust level to record.

        ``text`` is what the file will hold. ``scan`` is the part of it that is new: a
        JSON Lines log, whose records stand alone, is judged on that part only; every
        other file on the whole text. ``library`` is True inside
        :meth:`ContextManager.library_write`. ``lines`` maps the text's lines to the
        caller's, see :meth:`check_secrets`.
        """
        if is_library_log(rel) and is_agent(actor) and not library:
            raise ContentError(
                f"{rel} is a log kept by contextfs (conversation messages, topic exchanges); "
                "it is written through its own operations (log a message, record an exchange), "
                "not as a file; write notes to a .md file instead"
            )
        self.check_names([rel])
        judged = scan if scan is not None and is_library_log(rel) else text
        self.check_secrets(rel, judged, actor=actor, lines=lines if judged is text else (1, 1))
        if not is_agent(actor) or is_library_log(rel):
            # People are trusted; a library log marks the trust of each line itself.
            return Decision(trust=_lowest(requested_trust))
        verdict = poisoning.assess_file(judged, rel)
        if not verdict.suspicious:
            return Decision(trust=_lowest(requested_trust))
        if not markdown:
            raise PoisoningError(
                f"{rel}: its text or its name reads as an instruction to the agent ({', '.join(verdict.reasons)}), "
                "and a file without frontmatter cannot be marked untrusted; store it in a .md file under a name "
                "that says what it holds, or quote it as a fact (e.g. 'the user said: ...')"
            )
        trust = poisoning.apply_policy(verdict, self.poisoning, what=rel, marked=requested_trust)
        return Decision(trust=_lowest(trust, requested_trust), reasons=verdict.reasons)
