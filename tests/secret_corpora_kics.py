"""A seventh public corpus for the secret benchmark: the tests of KICS's secrets query.

KICS (Checkmarx/kics, Apache-2.0), a scanner of infrastructure as code, finds credentials
with one query, ``assets/queries/common/passwords_and_secrets``: ``regex_rules.json`` holds
its rules (a name, a Go regex, for a rule that spans lines the group whose line it reports,
``multiline.detectLineGroup``), and ``test/`` holds Terraform, YAML, JSON and Dockerfile
inputs, with ``positive_expected_result.json`` naming every finding the query must report:
the rule (``queryName``, "Passwords And Secrets - <rule>"), the file and the line. Its
rules descend from the regular expressions of TruffleHog's first versions (the AWS key
prefixes as gitleaks spelled them), not from the gitleaks rules the scanner's catalogue
descends from; its test files are Checkmarx's own. The benchmark reads a checkout (or an
export of that folder) from the path it is given; nothing is copied here. The commit read
is ``4186346b`` (May 2024), the last to change the folder before the DataDog/kics fork,
which holds it unchanged.

* a **positive** is an entry of ``positive_expected_result.json``; its **text** is the
  line it names, as written, or, for a rule that spans lines, the lines of the match of
  the rule whose reported group begins on that line (a key block with its armour lines);
* its **secret** is what the rule's regex captures there: for a rule that spans lines,
  its reported group; else the most random group of 8 characters or more, or the whole
  match (quotes at its ends removed); a value shorter than 8 characters, and an entry whose
  file, line or rule is missing or that no match of its rule reports, is left out and
  counted;
* its **family** is the rule's name (``slack-webhook``), ``generic`` for the rules named
  "Generic ..."; the credential flag is read from the name as for the other annotated
  corpora (:func:`secret_corpora_annotated.credential_name`), and is false for the two
  rules whose match is no credential: "Google OAuth" (an OAuth client id,
  ``<number>-<32>.apps.googleusercontent.com``) and "CloudFormation Secret Template" (the
  field names of a secret CloudFormation generates).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from secret_corpora import entropy
from secret_corpora_annotated import AnnotatedCase, credential_name, material

__all__ = ["QUERY", "kics_cases"]

#: Where the query lives in a checkout of the repository.
QUERY = Path("assets/queries/common/passwords_and_secrets")
_PREFIX = "Passwords And Secrets - "
_NO_CREDENTIAL = frozenset({"Google OAuth", "CloudFormation Secret Template"})
_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)\)")
#: Nested repetitions Go's engine runs in linear time and Python's backtracking in
#: exponential time, and the same languages (group numbers kept) written so it does not:
#: ``([C]+\s*)+`` is ``([C](?:[C]|\s)*)``, ``((.*)\s*)*`` matches anything.
_NESTED = (
    (re.compile(r"\((\[[^\]]*\])\+\\s\*\)\+"), r"(\1(?:\1|\\s)*)"),
    (re.compile(r"\(\(\.\*\)\\s\*\)\*"), r"(()[\\s\\S]*)"),
)


def _compile(source: str) -> re.Pattern[str] | None:
    """A Go (RE2) regex in Python: a flag group such as ``(?i)`` may stand mid-pattern in Go
    and must lead in Python (which widens it to the whole, acceptable for reading a value),
    a ``-`` after ``\\d`` or ``\\w`` and a ``[`` in a set are literals, and the nested
    repetitions of :data:`_NESTED` are rewritten."""
    flags = "".join(sorted(set("".join(_INLINE_FLAGS.findall(source))) - {"U"}))
    body = re.sub(r"(\\[dwsDWS])-", r"\1\\-", _INLINE_FLAGS.sub("", source))
    body = body.replace("[[", "[\\[")
    for nested, equal in _NESTED:
        body = nested.sub(equal, body)
    try:
        return re.compile(f"(?{flags}){body}" if flags else body)
    except re.error:
        return None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _value(match: re.Match[str], group: int | None) -> str:
    """The reported group of a rule that spans lines; else the most random group of 8
    characters or more, else the last group the match ends with (the value after a name,
    however short), else the whole match; quotes at its ends removed."""
    if group is not None:
        return match.group(group) or ""
    whole = match.group(0).rstrip().rstrip("'\"")
    spans = [match.span(i) for i in range(1, match.re.groups + 1) if match.group(i)]
    long = [match.string[s:e] for s, e in spans if e - s >= 8]
    ends = [match.string[s:e] for s, e in spans if e - match.start() == len(whole)]
    value = max(long, key=entropy) if long else ends[-1] if ends else whole
    return value.strip().strip("'\"").strip()


def _case(rule: dict[str, Any], content: str, line: int) -> tuple[str, str] | None:
    """(text, secret) of the finding of ``rule`` reported on ``line`` of ``content``."""
    regex = _compile(str(rule.get("regex", "")))
    lines = content.split("\n")
    if regex is None or not 1 <= line <= len(lines):
        return None
    group = (rule.get("multiline") or {}).get("detectLineGroup")
    if not isinstance(group, int) or group > regex.groups:
        match = regex.search(lines[line - 1])
        return (lines[line - 1], _value(match, None)) if match else None
    for match in regex.finditer(content):
        if match.group(group) is not None and _line_of(content, match.start(group)) == line:
            first, last = _line_of(content, match.start()), _line_of(content, match.end() - 1)
            return "\n".join(lines[first - 1 : last]), _value(match, group)
    return None


def kics_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """The positives of KICS's secrets query under ``folder`` (a checkout, or the query's
    folder), and how many were left out as said above."""
    folder = Path(folder)
    root = folder / QUERY if (folder / QUERY).is_dir() else folder
    document = json.loads((root / "regex_rules.json").read_text("utf-8"))
    listed = document.get("rules") if isinstance(document, dict) else document
    rules = {str(r.get("name")): r for r in listed or [] if isinstance(r, dict)}
    expected = json.loads((root / "test" / "positive_expected_result.json").read_text("utf-8"))
    cases: list[AnnotatedCase] = []
    left_out = 0
    for entry in expected:
        name = str(entry.get("queryName", "")).removeprefix(_PREFIX)
        path = root / "test" / str(entry.get("fileName", ""))
        line = entry.get("line")
        found = None
        if name in rules and path.is_file() and isinstance(line, int):
            content = path.read_text("utf-8", errors="replace").replace("\r\n", "\n")
            found = _case(rules[name], content, line)
        secrets = material([found[1]]) if found else ()
        if found is None or not secrets:
            left_out += 1
            continue
        family = "generic" if name.startswith("Generic ") else re.sub(r"\W+", "-", name.lower())
        cases.append(
            AnnotatedCase(
                "kics",
                family,
                name,
                path.name,
                found[0],
                secrets,
                name not in _NO_CREDENTIAL and credential_name(family),
            )
        )
    return cases, left_out
