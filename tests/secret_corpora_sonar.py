"""A sixth public corpus for the secret benchmark: the examples of Sonar's secrets rules.

SonarSource/sonar-text (LGPL-3.0) described each credential format it detects in a YAML file
per vendor (``sonar-text-plugin/src/main/resources/org/sonar/plugins/secrets/configuration``),
and every rule carries examples written as the format appears in files: a ``text``, whether
it ``containsSecret``, and for a positive the ``match`` the rule must report. Sonar wrote
its own rules (they do not derive from gitleaks', the ancestor of the catalogue the scanner
runs), and moved them out of the public repository in November 2024; the last commit that
holds them all (``da21f3d7``, 86 vendor files) is the one to read. The benchmark reads a
checkout (or an export of that folder) from the path it is given; nothing is copied here.

* a **positive** is an example with ``containsSecret: true``; its secret is its ``match``
  (a match not in the text is left out and counted); its family is the rule's id
  (``mailgun-primary-key``), its credential flag read from that id as for the other
  annotated corpora (:func:`secret_corpora_annotated.credential_name`);
* a **negative** is an example with ``containsSecret: false`` that names no file (Sonar's
  ``fileName`` examples are the same secret in a file type its policy skips, such as
  documentation: contextfs keeps notes, so those are not negatives here) and holds none of
  its rule's positive matches: a value the rule must not take for its vendor's credential.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from secret_corpora_annotated import AnnotatedCase, credential_name, material

__all__ = ["SonarNegative", "sonar_cases"]

#: Where the rules live in a checkout of the repository.
RULES = Path("sonar-text-plugin/src/main/resources/org/sonar/plugins/secrets/configuration")


@dataclass(frozen=True)
class SonarNegative:
    family: str
    path: str
    text: str


def _rules(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """(file, rule) for every rule under ``folder`` (a checkout, or the rules folder)."""
    folder = Path(folder)
    root = folder / RULES if (folder / RULES).is_dir() else folder
    out = []
    for path in sorted(root.glob("*.yaml")):
        document = yaml.safe_load(path.read_text("utf-8")) or {}
        provider = document.get("provider") if isinstance(document, dict) else None
        for rule in (provider or {}).get("rules") or []:
            if isinstance(rule, dict):
                out.append((path.name, rule))
    return out


def sonar_cases(folder: Path) -> tuple[list[AnnotatedCase], int, list[SonarNegative]]:
    """The positives of Sonar's rule examples, how many were left out (a match that is not
    in its text), and the negatives as defined above."""
    cases: list[AnnotatedCase] = []
    negatives: list[SonarNegative] = []
    left_out = 0
    for path, rule in _rules(folder):
        family = str(rule.get("id", ""))
        examples = [e for e in rule.get("examples") or [] if isinstance(e, dict)]
        matches = [str(e["match"]) for e in examples if e.get("containsSecret") and e.get("match")]
        for example in examples:
            text = str(example.get("text") or "")
            if not example.get("containsSecret"):
                if "fileName" not in example and not any(m in text for m in matches):
                    negatives.append(SonarNegative(family, path, text))
                continue
            found = material([m for m in [str(example.get("match") or "")] if m and m in text])
            if not found:
                left_out += 1
                continue
            cases.append(
                AnnotatedCase("sonar", family, family, path, text, found, credential_name(family))
            )
    return cases, left_out, negatives
