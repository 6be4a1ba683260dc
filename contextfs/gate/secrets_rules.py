"""The maintained vendor rule set behind the secret scanner: Kingfisher's bundled rules.

Credential formats change every month (new vendors, new prefixes), so the scanner does not
keep its own list of them: it runs the rule catalogue that ships with Kingfisher
(``kingfisher-secret-scanner``, MongoDB's Rust scanner), the Betterleaks rules plus Google's
Veles detectors, several hundred vendor formats in all, compiled into one Vectorscan
database and matched in a single pass (about 0.03 ms for a 7 KB note).

What is used, and why only that:

* ``Rules()`` and ``Scanner(rules).scan(bytes)`` with the bundled catalogue at its default
  confidence; scanning is offline by the SDK's contract (validation and revocation, which
  do call vendors, are separate classes this module never touches);
* each finding's ``visible``, ``rule_id``, ``secret`` and ``location["line"]`` (1-based).
  Invisible findings are helpers of multi-part rules (an id that only matters next to its
  secret) and are not credentials on their own;
* the compiled database is cached by the SDK in the user's cache folder (best effort; a
  process that cannot use it compiles the rules again, about 3 s, once);
* ``Rules.detail(rule_id)`` (a rule's own definition, offline) and custom rules loaded from
  a file: Kingfisher reports some credentials only next to a companion it needs to *validate*
  them (an Azure AD client secret beside its tenant and client ids, a PlanetScale token
  beside its id, a Supabase secret key beside its project URL). A secret alone is still a
  secret to keep out of history, so every visible rule that waits for a companion also runs
  alone, from its own pattern, as a custom rule of a second, small scanner
  (:func:`standalone_scanner`; about 0.05 s to read, compiled once and cached like the rest).

``tests/core/gate/test_secrets_rules.py`` pins this surface. The rules decide *formats*; whether a
matched value is a placeholder or a documented example is decided by
:mod:`contextfs.gate.secrets_values`, the same way for every detector.
"""

from __future__ import annotations

import random
import string
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .secrets_values import credential_like

__all__ = [
    "GUESSING_RULES",
    "NAMED_ELSEWHERE",
    "is_guess",
    "kind_of",
    "load",
    "matches",
    "standalone_rules",
    "standalone_scanner",
]

#: Rules that infer a credential from its surroundings (a generic name, a URI's userinfo, a
#: curl flag) rather than from a vendor's format: they get the same context filters as the
#: scanner's own guessing detectors.
GUESSING_RULES = ("generic", "curl-auth", "credential-uri", "password", "basic-auth")
_PREFIXES = ("betterleaks.", "veles.secrets/", "kingfisher.", "custom.")

_lock = threading.Lock()
_scanner: Any = None
_standalone: Any = None


def load() -> Any:
    """The compiled scanner, built once per process (the import is ~30 ms, the rules
    ~0.3 s from the SDK's cache)."""
    global _scanner, _standalone
    if _scanner is None:
        with _lock:
            if _scanner is None:
                import kingfisher_sdk  # deferred: paid by the first scan, never by an import

                scanner = kingfisher_sdk.Scanner(kingfisher_sdk.Rules())
                _standalone = standalone_scanner(scanner.rules)
                _scanner = scanner
    return _scanner


#: Rules whose credential a named kind finds alone already, in a stricter shape: Tableau's
#: rule takes any 32 letters and digits after `==:` (a salt and a hex digest too), the
#: "Tableau token" kind wants the secret half in both cases, as Tableau issues it.
NAMED_ELSEWHERE = {"betterleaks.tableau-personal-access-token.1": "Tableau token"}


def standalone_rules(rules: Any) -> list[dict[str, Any]]:
    """Custom rules, one per visible rule of ``rules`` that reports a credential only next
    to a companion match: its own name, pattern and entropy floor, no companion, an id
    ``custom.<rule>`` (so its findings name the same kind as the rule's would), the
    default confidence. Rules of :data:`NAMED_ELSEWHERE` are left to their named kind."""
    out = []
    for meta in rules.metadata():
        if not meta["visible"] or meta["id"] in NAMED_ELSEWHERE:
            continue
        detail = rules.detail(meta["id"])
        if all(dep.get("optional") for dep in detail["depends_on_rule"] or ()):
            continue
        out.append(
            {
                "name": detail["name"],
                "id": "custom." + kind_of(meta["id"]).removeprefix("rule "),
                "pattern": detail["pattern"],
                "min_entropy": detail["min_entropy"],
            }
        )
    return out


#: The names vendor rules anchor on when they anchor on no vendor's name.
_GENERIC_NAMES = ("secret", "key", "app_secret")


def _generic_probe() -> bytes:
    """Random values of 16 to 100 letters and digits, bare and base64-padded, assigned to
    :data:`_GENERIC_NAMES`: the same text in every process."""
    rng = random.Random(0)
    lines = []
    for name in _GENERIC_NAMES:
        for n in range(16, 101):
            value = "".join(rng.choices(string.ascii_letters + string.digits, k=n))
            lines += [f'{name} = "{value}"\n', f'{name} = "{value}=="\n']
    return "".join(lines).encode()


def _compiled(entries: list[dict[str, Any]]) -> Any:
    import kingfisher_sdk  # deferred, as in load(): the rule set costs ~30 ms to import
    import yaml  # deferred with it: only the first scan of a process writes a rules file

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "standalone.yml"
        path.write_text(yaml.safe_dump({"rules": entries}))  # ASCII: PyYAML escapes the rest
        return kingfisher_sdk.Scanner(kingfisher_sdk.Rules([path], builtins=False))


def standalone_scanner(rules: Any) -> Any:
    """The second scanner, of :func:`standalone_rules` (None when there is none). A rule
    that, alone, finds a random value under a name of no vendor (Alibaba's
    `(alibaba|secret|key) = 30 letters`) is a generic rule whose companion was its only
    vendor evidence; the value rule does its work and judges the name too (`key_sha256:
    <hex>` holds a hash), so it is left out."""
    entries = standalone_rules(rules)
    if entries:
        generic = {f.rule_id for f in _compiled(entries).scan(_generic_probe())}
        entries = [e for e in entries if e["id"] not in generic]
    return _compiled(entries) if entries else None


def kind_of(rule_id: str) -> str:
    """The kind a finding names: the rule's id without its catalogue prefix."""
    for prefix in _PREFIXES:
        if rule_id.startswith(prefix):
            return "rule " + rule_id[len(prefix) :]
    return "rule " + rule_id


def is_guess(rule_id: str) -> bool:
    return any(word in rule_id for word in GUESSING_RULES)


def matches(text: str) -> Iterator[tuple[str, int, str, bool]]:
    """(kind, 1-based line, value, guess) for every visible finding of the rule set, in the
    order of their lines (the rule set reports them in an order of its own)."""
    data = text.encode("utf-8", "surrogatepass")
    found = [f for f in load().scan(data) if f.visible and f.secret]
    if _standalone is not None:
        # Without the companion its rule validates with, a value must read as a credential
        # by itself: the loosest of these rules (a `secret` name and 30 letters) otherwise
        # take a class name such as `RuleAwsSandboxConfigSecretAccessKey` for one.
        found += [
            f
            for f in _standalone.scan(data)
            if f.visible and f.secret and credential_like(f.secret)
        ]
    for finding in sorted(found, key=lambda f: int(f.location["line"])):
        rule_id = finding.rule_id
        yield kind_of(rule_id), int(finding.location["line"]), finding.secret, is_guess(rule_id)
