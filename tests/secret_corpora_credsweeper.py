"""A public corpus for the secret benchmark, measured as the ninth: the test samples of
CredSweeper, Samsung's credential scanner.

CredSweeper (Samsung/CredSweeper, MIT) keeps about 230 sample files under
``tests/samples/`` (bare tokens, source files, configuration, logs, patches, HTML, e-mail)
and, in ``tests/data/output.json``, every credential its default run must report in them:
the rule, and for each line the file, the line number, the line and the value found. Its
rules (``credsweeper/rules/config.yaml``) are its own, written with its own machine-learning
filter; they do not descend from gitleaks' rules, the ancestor of the catalogue the scanner
runs, nor from the other corpora. The benchmark reads a checkout from the path it is
given; nothing is copied here.

* a **positive** is a reported credential. Its **text** is the lines it names, as written
  in the sample (from the first to the last, so a private key block or an AWS key id with
  its secret on the next line is one text); where a sample's line does not hold the value
  (a patch, a file in UTF-16, a line inside an archive) the line as CredSweeper decoded it
  is taken, and a finding in a file that is not a sample of text (an archive, an office
  document, an image) is left out and counted;
* its **secrets** are the values reported, PEM armour removed, those of 8 characters or
  more (:func:`secret_corpora_annotated.material`);
* its **family** is the rule's name. Rules that find a value by the name it is assigned to
  or the syntax around it (the keyword rules ``Password``, ``Token``, ``Secret``, ...; the
  documentation rules ``DOC_*`` and ``*_PAIR``; command lines ``CMD *`` and ``CURL *``;
  ``SQL Password``, ``URL Credentials``, ``Basic``/``Bearer Authorization``) are of no vendor
  and are counted as ``generic``;
* its **negatives** (:func:`credsweeper_negatives`) are the samples of text in which the
  default run reports nothing: files written to hold no credential (``*_n``,
  ``password_FALSE``, encrypted values, keys in prose) and files of other formats. They are
  negatives by CredSweeper's judgment, machine-learning filter included, not by their
  authors' word alone;
* **credential** is false for what CredSweeper itself rates ``info`` (UUIDs, S3 bucket
  names, Firebase domains, one-time-password seeds, a Dropbox app secret), for the
  ``Nonce`` and ``Salt`` rules, and for rules that find ids (:func:`credential_name`:
  ``AWS Client ID``, ``Tencent WeChat API App ID``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from secret_corpora_annotated import AnnotatedCase, credential_name, material

__all__ = ["credsweeper_cases", "credsweeper_negatives", "rule_family"]

#: Rules of CredSweeper's that find no vendor's format.
_GENERIC = re.compile(
    r"^(?:API|Auth|Credential|Key|Password|Secret|Token|DOC_\w+|\w*_PAIR|IP_ID_PASSWORD_TRIPLE"
    r"|CMD .+|CURL .+|SQL Password|URL Credentials|(?:Basic|Bearer) Authorization)$"
)
_NOT_SECRET = frozenset({"Nonce", "Salt"})


def rule_family(rule: str) -> str:
    """The family a CredSweeper rule counts in: ``generic`` for a rule of no vendor."""
    return "generic" if _GENERIC.match(rule) else rule


def _severities(root: Path) -> dict[str, str]:
    config = root / "credsweeper" / "rules" / "config.yaml"
    if not config.is_file():
        return {}
    return {
        str(r.get("name")): str(r.get("severity"))
        for r in yaml.safe_load(config.read_text("utf-8")) or []
    }


def _sample_lines(path: Path) -> list[str] | None:
    """A sample's lines when it is text (no NUL byte in its first 8 KB), else ``None``."""
    if not path.is_file():
        return None
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n")


def credsweeper_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """The credentials CredSweeper's default run must report in its samples, under
    ``folder`` (a checkout of Samsung/CredSweeper), and how many were left out (a finding
    in a file that is not text, or whose value is in none of the lines it names)."""
    root = Path(folder)
    findings = json.loads((root / "tests" / "data" / "output.json").read_text("utf-8"))
    severity = _severities(root)
    cases: list[AnnotatedCase] = []
    left_out = 0
    for finding in findings:
        rule = str(finding.get("rule", ""))
        lines_of = finding.get("line_data_list") or []
        paths = {str(ld.get("path", "")) for ld in lines_of}
        lines = _sample_lines(root / next(iter(paths))) if len(paths) == 1 else None
        if lines is None:
            left_out += 1
            continue
        numbers = [ld.get("line_num") for ld in lines_of]
        values = [str(ld.get("value") or "") for ld in lines_of]
        first, last = min(numbers), max(numbers)
        text = "\n".join(lines[first - 1 : last])
        if not all(v in text for v in values):
            # a patch (the added line, numbered in the new file) or a file in another
            # encoding: the lines as CredSweeper read them
            text = "\n".join(str(ld.get("line") or "") for ld in lines_of)
        secrets = material([v for v in values if v in text])
        if not text.strip() or not secrets:
            left_out += 1
            continue
        credential = (
            severity.get(rule) != "info" and rule not in _NOT_SECRET and credential_name(rule)
        )
        cases.append(
            AnnotatedCase(
                source="credsweeper",
                family=rule_family(rule),
                rule=rule,
                path=next(iter(paths)).removeprefix("./"),
                text=text,
                secrets=secrets,
                credential=credential,
            )
        )
    return cases, left_out


def credsweeper_negatives(folder: Path) -> list[tuple[str, str]]:
    """(text, name) of every sample of text under ``folder`` (a checkout of
    Samsung/CredSweeper) in which its default run reports no credential."""
    root = Path(folder)
    findings = json.loads((root / "tests" / "data" / "output.json").read_text("utf-8"))
    reported = {
        str(ld.get("path", "")).removeprefix("./")
        for finding in findings
        for ld in finding.get("line_data_list") or []
    }
    out = []
    for path in sorted((root / "tests" / "samples").iterdir()):
        lines = _sample_lines(path)
        if lines is not None and path.relative_to(root).as_posix() not in reported:
            out.append(("\n".join(lines), path.name))
    return out
