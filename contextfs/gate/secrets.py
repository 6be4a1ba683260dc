"""Secret scanning: credentials never reach the store's files or its git history.

A commit is forever (deleting the file and purging the trash leaves every old version in
history), so the store's write gate scans text *before* anything is written or committed:

* :func:`scan` lists the secrets in a text as :class:`SecretFinding` values: the kind,
  the line, and a fingerprint (a salted hash) that allow-lists one value without storing
  it. A finding never carries the secret or any part of it;
* :func:`check` raises :class:`~contextfs.errors.ContentError` when a policy refuses the
  text; the message names kinds, lines and fingerprints, and ends with the fix;
* :class:`SecretPolicy` is the ``[secrets]`` table of ``.contextfs/config.toml``::

      [secrets]
      policy = "refuse"                 # or "allow": do not scan at all
      allow = ["3f0c9a1e5b7d2c44"]      # fingerprints from a refusal message
      inline_allowlist = true           # honour `pragma: allowlist secret` comments

Detection has three sources, one pipeline (:mod:`contextfs.gate.secrets_detectors`, imported on
the first scan only): a maintained vendor rule set (Kingfisher's bundled catalogue,
:mod:`contextfs.gate.secrets_rules`), detect-secrets' plugins and keyword detector (read with the
document's structure, :mod:`contextfs.gate.secrets_syntax`) with the token formats they lack
(:mod:`contextfs.gate.secrets_formats`), and values assigned to
credential-like names (:mod:`contextfs.gate.secrets_assigned`) judged by their shape
(:mod:`contextfs.gate.secrets_values`). Every
candidate passes the same judgments: placeholders and documented example keys, filler, and
private key blocks without a body are not secrets.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import logging
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..errors import ConfigError, ContentError, ContextFSError, InvalidArgumentError
from .secrets_escapes import decoded_readings

__all__ = [
    "ALLOWLIST_MARKER",
    "DEFAULT_POLICY",
    "KINDS",
    "POLICIES",
    "SecretFinding",
    "SecretPolicy",
    "check",
    "describe",
    "fingerprint",
    "listing",
    "scan",
]

#: detect-secrets' inline marker: a line ending in a comment holding it is not scanned
#: (``<!-- pragma: allowlist secret -->`` in markdown, ``# pragma: allowlist secret`` in
#: code); ``pragma: allowlist nextline secret`` alone on a line covers the next line.
ALLOWLIST_MARKER = "pragma: allowlist secret"
#: ``refuse`` stops a write that holds a secret; ``allow`` turns scanning off.
POLICIES = ("refuse", "allow")
#: Every kind the named detectors report; findings of the vendor rule set are named
#: ``rule <id>`` after the rule (``rule stripe-access-token``).
KINDS = (
    "AWS access key",
    "Anthropic API key",
    "Artifactory credential",
    "Atlassian Data Center token",
    "Atlassian access token",
    "Azure Container Registry password",
    "Azure DevOps token",
    "Azure SAS token",
    "Azure storage key",
    "Azure workflow trigger URL",
    "Braintree access token",
    "Cloudant credential",
    "Discord bot token",
    "Discord webhook",
    "Docker registry credential",
    "Doppler token",
    "GitHub token",
    "GitLab token",
    "Google API key",
    "Google OAuth client secret",
    "Google OAuth token",
    "Hugging Face token",
    "IBM COS HMAC credential",
    "IBM Cloud IAM key",
    "JSON web token",
    "LaunchDarkly key",
    "Mailchimp API key",
    "Mailgun key",
    "Mapbox secret token",
    "MaxMind license key",
    "Meta access token",
    "Microsoft Teams webhook",
    "New Relic key",
    "NuGet API key",
    "OAuth refresh token",
    "OpenAI API key",
    "Postmark token",
    "PyPI token",
    "RapidAPI key",
    "Salesforce access token",
    "SendGrid API key",
    "Slack token",
    "SoftLayer credential",
    "SonarQube token",
    "Sourcegraph token",
    "Square OAuth secret",
    "Square access token",
    "Stripe key",
    "Stripe webhook secret",
    "Tableau token",
    "Telegram bot token",
    "Twilio API key",
    "Twitch stream key",
    "Vault token",
    "Vault unseal key",
    "WordPress key or salt",
    "npm token",
    "password in URL",
    "password or secret assignment",
    "private key",
    "token with a vendor prefix",
)

_CONFIG_KEYS = ("policy", "allow", "inline_allowlist")
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_SALT = b"contextfs secret fingerprint v1\0"
_MAX_LISTED = 8


def fingerprint(secret: str) -> str:
    """The allow-list fingerprint of a secret value: 16 hex digits of a salted SHA-256.

    Salted so it is not the plain hash any other tool would publish for the same value;
    truncated because it only has to tell a handful of allowed values apart.
    """
    if not isinstance(secret, str):
        raise InvalidArgumentError(
            f"fingerprint() takes the secret as a string, not {type(secret).__name__}; pass text"
        )
    # surrogatepass: text from JSON tool calls may hold lone surrogates, and hashing must not fail on them.
    return hashlib.sha256(_SALT + secret.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class SecretFinding:
    """One secret found in a text: what it is and where, never the value itself."""

    kind: str
    line: int
    fingerprint: str

    def __str__(self) -> str:
        where = f"on line {self.line}" if self.line > 0 else "in the frontmatter"
        return f"{self.kind} {where} (fingerprint {self.fingerprint})"


def _clip(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:20] + "...'"


def _check_fingerprints(values: Iterable[object], where: str) -> frozenset[str]:
    out = set()
    for number, value in enumerate(values, start=1):
        # The value is never echoed: a secret pasted here by mistake must not reach a log.
        if not isinstance(value, str) or not _FINGERPRINT.fullmatch(value.strip().lower()):
            raise ConfigError(
                f"{where} item {number} is not a fingerprint; use the 16 hex digits a refusal "
                "message gives after 'fingerprint', never the secret itself"
            )
        out.add(value.strip().lower())
    return frozenset(out)


@dataclass(frozen=True)
class SecretPolicy:
    """What the write gate does with secrets; build it from config with :meth:`from_config`."""

    policy: str = "refuse"
    allow: frozenset[str] = field(default_factory=frozenset)
    inline_allowlist: bool = True

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ConfigError(
                f"secret policy {_clip(self.policy)} is unknown; use one of {', '.join(POLICIES)}"
            )
        if isinstance(self.allow, (str, bytes)) or not isinstance(self.allow, Iterable):
            raise ConfigError(
                "secret allow-list must be a list of fingerprints; pass e.g. ['3f0c9a1e5b7d2c44']"
            )
        object.__setattr__(self, "allow", _check_fingerprints(self.allow, "secret allow-list"))
        if not isinstance(self.inline_allowlist, bool):
            raise ConfigError("inline_allowlist must be true or false")

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> SecretPolicy:
        """The policy in the ``[secrets]`` table of a parsed config.toml (defaults without one)."""
        if not isinstance(config, Mapping):
            raise ConfigError(
                "config must be a mapping (the parsed .contextfs/config.toml); pass a dict"
            )
        section = config.get("secrets", {})
        if not isinstance(section, Mapping):
            raise ConfigError(
                "[secrets] in .contextfs/config.toml must be a table; write it as a [secrets] section"
            )
        unknown = sorted(str(key) for key in section if key not in _CONFIG_KEYS)
        if unknown:
            raise ConfigError(
                f"[secrets] {', '.join(_clip(k) for k in unknown)} in .contextfs/config.toml "
                f"{'is' if len(unknown) == 1 else 'are'} not a known key; the keys are {', '.join(_CONFIG_KEYS)}"
            )
        policy = section.get("policy", "refuse")
        if policy not in POLICIES:
            raise ConfigError(
                f"[secrets] policy = {_clip(policy)} in .contextfs/config.toml is unknown; "
                f"use one of {', '.join(repr(p) for p in POLICIES)}"
            )
        allow = section.get("allow", [])
        if not isinstance(allow, list):
            raise ConfigError(
                "[secrets] allow in .contextfs/config.toml must be a list of fingerprints; "
                'write it as allow = ["3f0c9a1e5b7d2c44"]'
            )
        inline = section.get("inline_allowlist", True)
        if not isinstance(inline, bool):
            raise ConfigError(
                "[secrets] inline_allowlist in .contextfs/config.toml must be true or false"
            )
        return cls(
            policy, _check_fingerprints(allow, "[secrets] allow in .contextfs/config.toml"), inline
        )

    def findings(self, text: str, *, path: str | None = None) -> list[SecretFinding]:
        """The secrets this policy refuses in ``text`` (none under ``allow``)."""
        if self.policy == "allow":
            _check_arguments(text, path)
            return []
        return scan(text, path=path, allow=self.allow, inline_allowlist=self.inline_allowlist)


DEFAULT_POLICY = SecretPolicy()

_load_lock = threading.Lock()
_loaded: ModuleType | None = None


def _detectors() -> ModuleType:
    """Import the detect-secrets adapter once, on first use."""
    global _loaded
    if _loaded is not None:
        return _loaded
    with _load_lock:
        if _loaded is None:
            before = warnings.showwarning
            try:
                module = importlib.import_module("contextfs.gate.secrets_detectors")
            except ImportError as exc:
                raise ContentError(
                    f"the secret scanner cannot load {exc.name or exc}; install its dependencies with: "
                    "pip install 'detect-secrets>=1.5,<1.6' 'kingfisher-secret-scanner>=1.5,<1.6'"
                ) from None
            finally:
                # detect-secrets' logger module calls logging.captureWarnings(True) on import;
                # a library must not reroute its host's warnings, so undo exactly that.
                if warnings.showwarning is not before:
                    logging.captureWarnings(False)
            _loaded = module
    return _loaded


def _check_arguments(text: object, path: object) -> None:
    if not isinstance(text, str):
        raise InvalidArgumentError(
            f"the secret scanner takes text, not {type(text).__name__}; decode bytes first"
        )
    if path is not None and not isinstance(path, str):
        raise InvalidArgumentError(f"path must be a string or None, not {type(path).__name__}")


def _merge(candidates: list[Any]) -> list[tuple[str, int, str]]:
    """One finding per secret per line: a format beats a guess, a named kind beats a rule
    id of the vendor rule set, and a value that contains another value found on the same
    line (``npm_x # comment`` around ``npm_x``), or is contained in it, is that one."""
    kept: dict[int, list[tuple[str, str]]] = {}
    for cand in sorted(candidates, key=lambda c: (c.line, c.guess, c.rule_set, len(c.value))):
        on_line = kept.setdefault(cand.line, [])
        if not any(value in cand.value or cand.value in value for _, value in on_line):
            on_line.append((cand.kind, cand.value))
    return [(kind, line, value) for line, pairs in sorted(kept.items()) for kind, value in pairs]


#: Texts up to this long that hold no secret are remembered as such: a commit scans its paths
#: (once by the write gate, once by the commit gate) and its author every time. A text with a
#: finding is never kept (nor its secret), and is scanned again each time.
_SHORT = 1024
_CLEAN: dict[tuple[Callable[..., list[Any]], str, str | None, bool], None] = {}


def _candidates(text: str, path: str | None, inline_allowlist: bool) -> list[tuple[str, int, str]]:
    find = _detectors().find
    key = (find, text, path, inline_allowlist)  # another scanner's verdict is its own
    if key in _CLEAN:
        return []
    candidates = find(text, path, inline_allowlist=inline_allowlist)
    # A credential inside escaped text is found in a decoded reading, on its own line. One
    # the text as written shows too (a key block in a JSON string) is the same secret: it
    # takes the value as written, so the merge keeps one finding of the kind it prefers.
    written = list(candidates)
    for reading, decode in decoded_readings(text):
        seen = [(c, decode(c.value)) for c in written]
        for found in find(reading, path, inline_allowlist=inline_allowlist):
            same = next(
                (
                    c.value
                    for c, value in seen
                    if c.line == found.line and (found.value in value or value in found.value)
                ),
                None,
            )
            candidates.append(found if same is None else dataclasses.replace(found, value=same))
    merged = _merge(candidates)
    if not merged and len(text) <= _SHORT:
        if len(_CLEAN) >= 256:
            _CLEAN.clear()
        _CLEAN[key] = None
    return merged


def scan(
    text: str,
    *,
    path: str | None = None,
    allow: Iterable[str] = (),
    inline_allowlist: bool = True,
) -> list[SecretFinding]:
    """The secrets in ``text``, in line order; fingerprints in ``allow`` are left out.

    ``path`` (the store-relative name) picks the syntax for the keyword detector: markdown
    structure for ``.md`` (frontmatter and config fences take ``key: value``), the file's
    own syntax for ``.yaml``, ``.env``, ``.py`` and so on.
    """
    _check_arguments(text, path)
    allowed = _check_fingerprints(allow, "allow")
    if not text:
        return []
    try:
        merged = _candidates(text, path, bool(inline_allowlist))
    except ContextFSError:
        raise
    except Exception as exc:  # fail closed: text that cannot be scanned is not stored
        raise ContentError(
            f"{path or 'the text'} could not be scanned for secrets (the scanner raised "
            f"{type(exc).__name__}); it was not stored: split it into smaller files and retry"
        ) from None
    findings = []
    for kind, line, value in merged:
        mark = fingerprint(value)
        if mark not in allowed:
            findings.append(SecretFinding(kind, line, mark))
    return findings


def describe(findings: Iterable[SecretFinding], *, path: str | None = None) -> str:
    """What was found, for a message or a report: kinds, lines and fingerprints only."""
    items = list(findings)
    where = path or "the text"
    noun = "a secret" if len(items) == 1 else f"{len(items)} secrets"
    return f"{where} holds {noun}: {listing(items)}"


def listing(findings: Sequence[SecretFinding], show: Callable[[SecretFinding], str] = str) -> str:
    """The first findings, each as ``show`` gives it, and how many more there are: every
    message that names what was found lists them this way."""
    listed = "; ".join(show(f) for f in findings[:_MAX_LISTED])
    more = f"; and {len(findings) - _MAX_LISTED} more" if len(findings) > _MAX_LISTED else ""
    return listed + more


def check(
    text: str,
    *,
    path: str | None = None,
    policy: SecretPolicy | None = None,
    body_line: int = 1,
    written_line: int = 1,
) -> None:
    """Raise ContentError when ``policy`` (default: refuse) refuses a secret in ``text``.

    Line ``body_line`` of ``text`` is line ``written_line`` of what the caller wrote (a
    write's text gets frontmatter above it): findings are reported on the caller's lines,
    and one above ``body_line`` as in the frontmatter.
    """
    policy = DEFAULT_POLICY if policy is None else policy
    if not isinstance(policy, SecretPolicy):
        raise InvalidArgumentError(f"policy must be a SecretPolicy, not {type(policy).__name__}")
    found = [
        SecretFinding(
            f.kind, f.line - body_line + written_line if f.line >= body_line else 0, f.fingerprint
        )
        for f in policy.findings(text, path=path)
    ]
    if not found:
        return
    marker = (
        f", or end its line with the comment <!-- {ALLOWLIST_MARKER} --> (# {ALLOWLIST_MARKER} in code)"
        if policy.inline_allowlist
        else ""
    )
    raise ContentError(
        f"refused: {describe(found, path=path)}. Remove each one and store a reference to where "
        "it is kept instead (e.g. 'deploy key: in the team vault under prod/deploy'); if a "
        "finding is not a secret, add its fingerprint to allow in the [secrets] table of "
        f".contextfs/config.toml{marker}"
    )
