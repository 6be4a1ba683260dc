"""A fourth public corpus for the secret benchmark: the annotated tests of two other scanners.

Both are suites of scanners other than the one contextfs runs, written as credentials appear
in files, and each says where its positives are:

* **Semgrep's secrets rules** (semgrep/semgrep-rules, LGPL-2.1), ``generic/secrets/security``:
  a rule ``<name>.yaml`` and a test file of the same name whose lines after a
  ``ruleid: <rule>`` comment (``#``, ``//``, ``<!--``) are positives and after ``ok:``
  negatives (Semgrep's own test convention). Read by :func:`semgrep_cases`. The folder
  ``generic/secrets/gitleaks`` is left out: its tests are gitleaks' generated examples, and
  gitleaks' rules are the ancestor of the catalogue the scanner runs.
* **secretlint's rules** (secretlint/secretlint, MIT), ``packages/@secretlint/
  secretlint-rule-*/test/snapshots/*/output.json``: the text each snapshot scanned
  (``sourceContent``) and every message the rule must report, with its lines and the value
  it found (``data``). Read by :func:`secretlint_cases`.

Neither repository is copied here; the benchmark reads checkouts from paths it is given.
What is kept, and what is left out (counted, never guessed):

* a case's **text** is the lines the test marks, as written: the line after a Semgrep
  annotation (and the lines a rule's pattern runs over from it), the lines of a secretlint
  message;
* its **secrets** are what the test says was found, for the placeholder rule of
  :mod:`secret_corpora` (the caller drops a case whose secrets are all evident
  placeholders): secretlint's ``data`` value that occurs in the text; for Semgrep, which
  names no value, what the rule's ``pattern-regex`` or ``metavariable-regex`` captures in
  the text (the most random group, else the whole match, as
  :func:`secret_corpora.values_of` reads the other catalogues). A case with no such value (a binary file, a rule written only as a Semgrep
  pattern) is left out and counted;
* **credential** is false for rules that find ids, accounts, hashes, host names or paths
  rather than credentials (by the rule's name, with the words of
  :data:`secret_corpora.NOT_CREDENTIAL`, unless it names a token, key, secret or
  password), and for secretlint's rules that report what their configuration names or a
  file (``pattern``, ``filter-comments``, ``example``, ``no-dotenv``, ``no-homedir``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from secret_corpora import NOT_CREDENTIAL, compile_rule_pattern, entropy

__all__ = [
    "AnnotatedCase",
    "credential_name",
    "material",
    "secretlint_cases",
    "semgrep_cases",
]


@dataclass(frozen=True)
class AnnotatedCase:
    source: str  # "semgrep" or "secretlint"
    family: str  # the rule's name without its scanner's prefix ("aws-secret-access-key", "slack")
    rule: str  # the rule id (Semgrep) or message id (secretlint)
    path: str  # the test file, relative to the folder read
    text: str  # the lines the test marks, as written
    secrets: tuple[str, ...]
    credential: bool


_CREDENTIAL_WORD = re.compile(r"\b(?:token|key|secret|password|passwd|credential|pat)s?\b", re.I)


#: A PEM block's armour (``-----BEGIN EC PRIVATE KEY-----``) is not its secret, and its dashes
#: would read as filler to the placeholder rule: the key material between is what is judged.
_PEM_ARMOUR = re.compile(r"-----(?:BEGIN|END) [A-Z0-9 ]+-----")


def material(values: list[str]) -> tuple[str, ...]:
    """The values a case reports, PEM armour removed, those of 8 characters or more."""
    out = (_PEM_ARMOUR.sub("", v).strip() for v in values)
    return tuple(dict.fromkeys(v for v in out if len(v) >= 8))


def credential_name(name: str) -> bool:
    """A rule name says what it finds: ids, accounts, hosts, hashes are not credentials,
    unless the name also says token, key, secret or password (``service account token``)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    words = re.sub(r"[_\-.]+", " ", words)
    return not NOT_CREDENTIAL.search(words) or bool(_CREDENTIAL_WORD.search(words))


# -- Semgrep ---------------------------------------------------------------------------------

_ANNOTATION = re.compile(
    r"^\s*(?:#|//|<!--|/\*|--)\s*(todoruleid|ruleid|todook|ok)\s*:\s*([\w.,\s-]+?)\s*(?:-->|\*/)?\s*$"
)
#: Metavariables that hold the value a rule finds (others hold a name, a host, a key type).
_VALUE_VARIABLE = re.compile(r"\$(?:\.\.\.)?(?:SECRET|PASSWORD|KEY|TOKEN|VALUE|ITEM)$")
_INLINE_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")


def _python_regex(source: str) -> str:
    """Semgrep's regexes are PCRE: named groups are ``(?<n>...)`` and a flag group such as
    ``(?i)`` may stand mid-pattern; Python wants ``(?P<n>...)`` and flags at the start (which
    widens the pattern to the whole, acceptable for reading a value)."""
    source = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", source.strip())
    flags = "".join(sorted(set("".join(_INLINE_FLAGS.findall(source)))))
    source = _INLINE_FLAGS.sub("", source)
    return f"(?{flags}){source}" if flags else source


def _rule_regexes(node: Any) -> list[str]:
    """Every ``pattern-regex`` and ``metavariable-regex`` regex in a rule, at any depth
    (``pattern-not-regex`` excluded: it describes what is not a finding)."""
    out: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern-regex" and isinstance(value, str):
                out.append(_python_regex(value))
            elif key == "metavariable-regex" and isinstance(value, dict):
                if isinstance(value.get("regex"), str) and _VALUE_VARIABLE.match(
                    str(value.get("metavariable", ""))
                ):
                    out.append(_python_regex(value["regex"]))
            else:
                out += _rule_regexes(value)
    elif isinstance(node, list):
        for item in node:
            out += _rule_regexes(item)
    return out


def _regex_values(text: str, source: str) -> list[str]:
    """What a rule's regex captures in ``text``: per match, the most random group of 8
    characters or more (a rule may also capture a name or a prefix), else the whole match."""
    regex = compile_rule_pattern(source)
    out = []
    for match in regex.finditer(text) if regex else ():
        groups = [g for g in match.groups() if g and len(g) >= 8]
        out.append(max(groups, key=entropy) if groups else match.group(0))
    return out


def _marked(lines: list[str], i: int) -> int | None:
    """The line an annotation at ``i`` marks: the next one that is not an annotation."""
    for j in range(i + 1, len(lines)):
        if not _ANNOTATION.match(lines[j]):
            return j
    return None


def _case_text(lines: list[str], j: int, regexes: list[str]) -> str:
    """Line ``j``, and the lines after it that a match of the rule beginning on it runs over."""
    start = sum(len(line) + 1 for line in lines[:j])
    whole = "\n".join(lines)
    last = j
    for source in regexes:
        try:
            match = re.compile(source).search(whole, start)
        except re.error:
            continue
        if match and match.start() <= start + len(lines[j]) and match.end() > match.start():
            last = max(last, whole.count("\n", 0, match.end() - 1))
    return "\n".join(lines[j : last + 1])


def semgrep_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """The positives of Semgrep's secrets rule tests under ``folder`` (a checkout of
    semgrep-rules or its ``generic/secrets/security`` folder), and how many were left out
    for want of a value the rule's regexes capture."""
    folder = Path(folder)
    nested = folder / "generic" / "secrets" / "security"
    root = nested if nested.is_dir() else folder
    rules: dict[str, list[str]] = {}
    for path in sorted(root.glob("*.yaml")):
        for rule in (yaml.safe_load(path.read_text("utf-8")) or {}).get("rules") or []:
            rules[str(rule.get("id", ""))] = _rule_regexes(rule)
    stems = {p.stem for p in root.glob("*.yaml")}
    cases: list[AnnotatedCase] = []
    left_out = 0
    for path in sorted(root.iterdir()):
        if path.suffix == ".yaml" or path.stem not in stems or not path.is_file():
            continue
        lines = path.read_text("utf-8", errors="replace").replace("\r\n", "\n").split("\n")
        for i, line in enumerate(lines):
            annotation = _ANNOTATION.match(line)
            if not annotation or annotation.group(1) not in ("ruleid", "todoruleid"):
                continue
            j = _marked(lines, i)
            for rule_id in filter(None, (r.strip() for r in annotation.group(2).split(","))):
                regexes = rules.get(rule_id, [])
                text = "" if j is None else _case_text(lines, j, regexes)
                secrets = material([v for r in regexes for v in _regex_values(text, r)])
                if not text.strip() or not secrets:
                    left_out += 1
                    continue
                name = rule_id.removeprefix("detected-")
                cases.append(
                    AnnotatedCase(
                        "semgrep",
                        "generic" if name.startswith("generic-") else name,
                        rule_id,
                        path.relative_to(root).as_posix(),
                        text,
                        secrets,
                        credential_name(name),
                    )
                )
    return cases, left_out


# -- secretlint ------------------------------------------------------------------------------

#: Rules that report what their configuration names (``pattern``, and ``filter-comments``,
#: which tests comments with it), a demonstration rule, a file's name or a home folder.
_CONFIGURED = frozenset({"pattern", "filter-comments", "example", "no-dotenv", "no-homedir"})


def secretlint_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """Every message of secretlint's rule snapshots under ``folder`` (a checkout of
    secretlint or its ``packages/@secretlint`` folder), and how many were left out: a
    snapshot of a binary file (no text), or a message whose reported value is not in the
    lines it names."""
    folder = Path(folder)
    nested = folder / "packages" / "@secretlint"
    root = nested if nested.is_dir() else folder
    cases: list[AnnotatedCase] = []
    left_out = 0
    for path in sorted(root.glob("secretlint-rule-*/test/snapshots/*/output.json")):
        snapshot = json.loads(path.read_text("utf-8"))
        family = path.relative_to(root).parts[0].removeprefix("secretlint-rule-")
        source = snapshot.get("sourceContent")
        lines = source.replace("\r\n", "\n").split("\n") if isinstance(source, str) else None
        for message in snapshot.get("messages") or []:
            loc = message.get("loc") or {}
            first = (loc.get("start") or {}).get("line")
            last = (loc.get("end") or {}).get("line")
            if lines is None or not isinstance(first, int) or not isinstance(last, int):
                left_out += 1
                continue
            text = "\n".join(lines[first - 1 : last])
            data = message.get("data") if isinstance(message.get("data"), dict) else {}
            found = material(
                sorted(
                    (v for v in data.values() if isinstance(v, str) and v and v in text),
                    key=len,
                    reverse=True,
                )[:1]
            )
            if not found:
                left_out += 1
                continue
            rule = str(message.get("messageId", ""))
            cases.append(
                AnnotatedCase(
                    "secretlint",
                    family,
                    rule,
                    path.parent.relative_to(root).as_posix(),
                    text,
                    found,
                    family not in _CONFIGURED and credential_name(rule),
                )
            )
    return cases, left_out
