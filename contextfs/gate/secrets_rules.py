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
  process that cannot use it compiles the rules again, about 3 s, once).

``tests/core/gate/test_secrets_rules.py`` pins this surface. The rules decide *formats*; whether a
matched value is a placeholder or a documented example is decided by
:mod:`contextfs.gate.secrets_values`, the same way for every detector.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["GUESSING_RULES", "is_guess", "kind_of", "load", "matches"]

#: Rules that infer a credential from its surroundings (a generic name, a URI's userinfo, a
#: curl flag) rather than from a vendor's format: they get the same context filters as the
#: scanner's own guessing detectors.
GUESSING_RULES = ("generic", "curl-auth", "credential-uri", "password", "basic-auth")
_PREFIXES = ("betterleaks.", "veles.secrets/", "kingfisher.")

_lock = threading.Lock()
_scanner: Any = None


def load() -> Any:
    """The compiled scanner, built once per process (the import is ~30 ms, the rules
    ~0.3 s from the SDK's cache)."""
    global _scanner
    if _scanner is None:
        with _lock:
            if _scanner is None:
                import kingfisher_sdk  # deferred: paid by the first scan, never by an import

                _scanner = kingfisher_sdk.Scanner(kingfisher_sdk.Rules())
    return _scanner


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
    for finding in sorted(found, key=lambda f: int(f.location["line"])):
        rule_id = finding.rule_id
        yield kind_of(rule_id), int(finding.location["line"]), finding.secret, is_guess(rule_id)
