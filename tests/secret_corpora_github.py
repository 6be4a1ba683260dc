"""A public corpus for the secret benchmark, the eleventh: GitHub's custom secret patterns.

``advanced-security/secret-scanning-custom-patterns`` (MIT) is the collection of custom
patterns GitHub's field engineers publish for GitHub secret scanning, for the credentials
its partner program does not cover: database and framework passwords, connection strings,
private keys, and about thirty vendors (Sentry, Okta, Datadog, Grafana, BrowserStack,
Vercel, Flickr, ...). Each folder holds a ``patterns.yml`` and the files its patterns are
tested on. A pattern (``type``, ``name``, a ``regex`` of ``start``/``pattern``/``end``)
carries its own positives, which its test harness checks:

* ``test``: one input (``data``), or a list of them, with the span of the secret
  (``start_offset``, ``end_offset``) the pattern must report;
* ``expected``: findings the pattern must report in the folder's test files, each a file
  (``name``) and a span in its bytes.

Its patterns and test files were written by GitHub, for GitHub's scanner; neither the
scanner's catalogue nor its hand-written formats descend from them. The benchmark reads a
checkout from the path it is given; nothing is copied here. The commit read is
``9b84660`` (September 2025).

What is kept, and what is left out (counted, never guessed):

* a **positive** is a test input or an expected finding; its **text** is the input as
  written, or the lines of the test file that hold the span, as written; its **secret** is
  the span (the whole input where a test names none; a key block's armour is written with
  PEM's five dashes, so that its body is what is judged). A positive whose span is outside its
  text, whose file is missing, or whose secret is shorter than 8 characters is left out;
* its **family** is the pattern's ``type``, ``generic`` for the patterns that find a value
  by the name it is assigned to or by its shape rather than by a vendor's format (the
  folders ``common``, ``generic``, ``configs`` and ``hardcoded_uri_passwords``);
* **credential** is false for what is no credential: personal data (the ``pii`` folder),
  host names, addresses, e-mail addresses, UUIDs, an action reference, a public key, and
  the encrypted entries of a password store (a ciphertext, counted apart by the other
  corpora too); else it is read from the type as for the other corpora
  (:func:`secret_corpora_annotated.credential_name`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from secret_corpora_annotated import AnnotatedCase, credential_name, material

__all__ = ["github_pattern_cases"]

_GENERIC_FOLDERS = frozenset({"common", "generic", "configs"})
_GENERIC_TYPES = frozenset({"hardcoded_uri_passwords"})
_NO_CREDENTIAL_FOLDERS = frozenset({"pii"})
_NO_CREDENTIAL = frozenset(
    {
        "any_ipv4_addresses",
        "arc",
        "azure_sql_connection_string",  # a server's host name
        "ghcr_typos",
        "github_actions_sha_checker",
        "hardcoded_internal_emails",
        "hardcoded_internal_urls",
        "ssh_public_key",
        "uuids",
    }
)


#: A key block's armour, however many dashes a test input gives it (``--BEGIN PRIVATE KEY--``),
#: written as PEM writes it, so that the benchmark judges the block's body alone.
_ARMOUR = re.compile(r"-+((?:BEGIN|END) [A-Z0-9 ]+?)-+")


def _entries(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict)]


def _span(entry: dict[str, Any], size: int) -> tuple[int, int] | None:
    start, end = entry.get("start_offset"), entry.get("end_offset")
    if start is None and end is None:
        return 0, size
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= size:
        return start, end
    return None


def _test_case(entry: dict[str, Any]) -> tuple[str, str] | None:
    """(text, secret) of a ``test`` input: offsets count characters of ``data``."""
    data = entry.get("data")
    if not isinstance(data, str):
        return None
    span = _span(entry, len(data))
    return (data.rstrip("\n"), data[span[0] : span[1]].strip()) if span else None


def _expected_case(folder: Path, entry: dict[str, Any]) -> tuple[str, str] | None:
    """(text, secret) of an ``expected`` finding: offsets count bytes of the file (its
    test files hold non-ASCII text), the text is the lines that hold the span."""
    path = folder / str(entry.get("name", ""))
    if not path.is_file():
        return None
    raw = path.read_bytes()
    span = _span(entry, len(raw))
    if span is None or span == (0, len(raw)):
        return None
    first = raw.rfind(b"\n", 0, span[0]) + 1
    last = raw.find(b"\n", span[1])
    lines = raw[first : len(raw) if last < 0 else last]
    text = lines.decode("utf-8", errors="replace").replace("\r\n", "\n")
    return text, raw[span[0] : span[1]].decode("utf-8", errors="replace").strip()


def github_pattern_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """The positives of every pattern under ``folder`` (a checkout), and how many were left
    out as said above."""
    folder = Path(folder)
    cases: list[AnnotatedCase] = []
    left_out = 0
    for listing in sorted(folder.rglob("patterns.yml")):
        here = listing.parent
        top = here.relative_to(folder).parts[0] if here != folder else ""
        document = yaml.safe_load(listing.read_text("utf-8")) or {}
        for pattern in _entries(document.get("patterns") if isinstance(document, dict) else None):
            kind = str(pattern.get("type") or pattern.get("name") or "")
            family = "generic" if top in _GENERIC_FOLDERS or kind in _GENERIC_TYPES else kind
            credential = (
                top not in _NO_CREDENTIAL_FOLDERS
                and kind not in _NO_CREDENTIAL
                and credential_name(kind)
            )
            found = [
                (listing.name, _test_case(entry)) for entry in _entries(pattern.get("test"))
            ] + [
                (str(entry.get("name", "")), _expected_case(here, entry))
                for entry in _entries(pattern.get("expected"))
            ]
            for name, case in found:
                secrets = material([_ARMOUR.sub(r"-----\1-----", case[1])]) if case else ()
                if case is None or not secrets:
                    left_out += 1
                    continue
                path = (here / name).relative_to(folder).as_posix()
                cases.append(
                    AnnotatedCase("github", family, kind, path, case[0], secrets, credential)
                )
    return cases, left_out
