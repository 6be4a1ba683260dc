"""A public corpus for the secret benchmark, measured with KICS's as the seventh: the test
inputs of ripsecrets.

ripsecrets (sirwart/ripsecrets, MIT) is a pre-commit scanner with its own list of formats
(``predefined_secret_regexes`` in ``src/lib.rs``, for publicly documented formats) and a
rule for random strings assigned to a credential-like name (``RANDOM_STRING_REGEX`` in
``src/matcher/mod.rs``). Its test ``no_false_negatives`` asserts that every line of the
files of ``test/one_per_line/`` (one file per vendor or kind: ``stripe``, ``gcp``,
``random``) is one finding, and that every file of ``test/one_per_file/`` is one finding.
Neither its formats nor its inputs come from gitleaks', the ancestor of the catalogue the
scanner runs. The benchmark reads a checkout from the path it is given; nothing is copied
here. The commit read is ``416e9d04`` (August 2025).

* a **positive** is a line of a file of ``one_per_line`` (its text that line, as written),
  or a file of ``one_per_file`` (its text the whole file);
* its **secret** is what ripsecrets reports there, read from the checkout's own regexes as
  ripsecrets reads a match: the first group of a pattern that has one (the password of a
  URL, the value after a name), else the whole match (for a private key, its armour
  removed); a positive none of them matches, or whose value is shorter than 8 characters,
  is left out and counted;
* its **family** is its file's name (``aws_json`` is ``aws``), ``generic`` for ``random``
  and ``url`` (values of no vendor: random strings under a name, passwords in URLs); the
  credential flag is read from that name as for the other annotated corpora
  (:func:`secret_corpora_annotated.credential_name`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from secret_corpora_annotated import AnnotatedCase, credential_name, material

__all__ = ["ripsecrets_cases", "ripsecrets_regexes"]

#: Rust comments, and string literals: raw (``r"..."``, ``r#"..."#``) and plain (``"..."``).
_LITERAL = re.compile(r'//[^\n]*|r(#*)"(.*?)"\1|"((?:[^"\\\n]|\\.)*)"', re.DOTALL)
_GENERIC = frozenset({"random", "url"})


def _literals(source: str) -> list[str]:
    out = []
    for m in _LITERAL.finditer(source):
        if m.group(2) is not None:
            out.append(m.group(2))
        elif m.group(3) is not None:
            out.append(str(ast.literal_eval(f'"{m.group(3)}"')))
    return out


def ripsecrets_regexes(folder: Path) -> list[str]:
    """The patterns of ``predefined_secret_regexes`` in ``folder`` (a checkout), in order,
    ``matcher::RANDOM_STRING_REGEX`` replaced by its value."""
    lib = (folder / "src" / "lib.rs").read_text("utf-8")
    body = re.search(r"fn predefined_secret_regexes\(\)[^{]*\{(.*?)\n\}", lib, re.DOTALL)
    matcher = (folder / "src" / "matcher" / "mod.rs").read_text("utf-8")
    random = re.search(r"RANDOM_STRING_REGEX: &str = (r#*\".*?\"#*);", matcher, re.DOTALL)
    if body is None or random is None:
        return []
    return _literals(body.group(1).replace("matcher::RANDOM_STRING_REGEX", random.group(1)))


def _reported(regexes: list[re.Pattern[str]], text: str) -> str | None:
    """What ripsecrets reports first in ``text``: of the leftmost match of its patterns
    (the first pattern, at a tie, as in its alternation), the first group that took part,
    else the whole match."""
    matches = [m for m in (r.search(text) for r in regexes) if m]
    if not matches:
        return None
    first = min(matches, key=lambda m: m.start())
    groups = [g for g in first.groups() if g is not None]
    # A key's pattern stops at its closing armour's ``-----END``, which is no key material.
    return re.sub(r"\s*-{5}END$", "", groups[0] if groups else first.group(0))


def ripsecrets_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """The positives of ripsecrets' tests under ``folder`` (a checkout), and how many were
    left out as said above."""
    folder = Path(folder)
    regexes = []
    for source in ripsecrets_regexes(folder):
        try:
            regexes.append(re.compile(source))
        except re.error:
            continue
    inputs: list[tuple[str, str, str]] = []  # (file name, path, text)
    for path in sorted((folder / "test" / "one_per_line").glob("*")):
        for line in path.read_text("utf-8").replace("\r\n", "\n").split("\n"):
            if line.strip():
                inputs.append((path.name, f"one_per_line/{path.name}", line))
    for path in sorted((folder / "test" / "one_per_file").glob("*")):
        inputs.append((path.name, f"one_per_file/{path.name}", path.read_text("utf-8")))
    cases: list[AnnotatedCase] = []
    left_out = 0
    for name, path_name, text in inputs:
        value = _reported(regexes, text)
        secrets = material([value]) if value else ()
        if not secrets:
            left_out += 1
            continue
        family = "generic" if name in _GENERIC else name.removesuffix("_json").replace("_", "-")
        cases.append(
            AnnotatedCase(
                "ripsecrets", family, name, path_name, text, secrets, credential_name(family)
            )
        )
    return cases, left_out
