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

Edits people make in an editor are not agent writes: sync scans them for secrets only,
and holds back (uncommitted, reported) a file that holds one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
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
    def check_secrets(self, rel: str, text: str, *, actor: str, lines: tuple[int, int] = (1, 1)) -> None:
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

    # ------------------------------------------------------------ the whole gate
    def check(self, rel: str, text: str, *, actor: str, markdown: bool, library: bool,
              requested_trust: str | None = None, scan: str | None = None,
              lines: tuple[int, int] = (1, 1)) -> Decision:
        """Check one write of ``text`` to ``rel`` by ``actor``; the trust level to record.

        ``scan`` is the part of ``text`` that is new (an append to a committed file needs
        only its new part scanned for secrets); None scans all of it. ``library`` is True
        inside :meth:`ContextManager.library_write`. ``lines`` maps the text's lines to the
        caller's, see :meth:`check_secrets`.
        """
        if is_library_log(rel) and is_agent(actor) and not library:
            raise ContentError(
                f"{rel} is a log kept by contextfs (conversation messages, topic exchanges); "
                "it is written through its own operations (log a message, record an exchange), "
                "not as a file; write notes to a .md file instead"
            )
        self.check_secrets(rel, text if scan is None else scan, actor=actor, lines=lines if scan is None else (1, 1))
        if not is_agent(actor) or is_library_log(rel):
            # People are trusted; a library log marks the trust of each line itself.
            return Decision(trust=_lowest(requested_trust))
        verdict = poisoning.assess(text if scan is None else scan)
        if not verdict.suspicious:
            return Decision(trust=_lowest(requested_trust))
        if not markdown:
            raise PoisoningError(
                f"{rel} would hold text that reads as an instruction to the agent ({', '.join(verdict.reasons)}), "
                "and a file without frontmatter cannot be marked untrusted; store it in a .md file, "
                "or quote it as a fact (e.g. 'the user said: ...')"
            )
        trust = poisoning.apply_policy(verdict, self.poisoning, what=rel, marked=requested_trust)
        return Decision(trust=_lowest(trust, requested_trust), reasons=verdict.reasons)
