"""Public credential corpora for the secret scanner's benchmark and tests.

Two rule catalogues publish, for each rule, example strings written the way the credential
appears in real files (one YAML file per vendor or family, ``rules: [{id, pattern,
examples}]``):

* **Nosey Parker** (Praetorian, Apache-2.0): ``crates/noseyparker/data/default/builtin/rules``
  of github.com/praetorian-inc/noseyparker;
* **Kingfisher's own YAML rules** (MongoDB, Apache-2.0): ``data/rules`` of
  github.com/mongodb/kingfisher, from before the SDK bundled the Betterleaks catalogue (the
  rules the scanner runs are that catalogue, so these examples were written for other rules).

A third corpus is made of tests rather than rules:

* **TruffleHog's detector tests** (Truffle Security, AGPL-3.0): the ``*_test.go`` files of
  ``pkg/detectors/<detector>/`` in github.com/trufflesecurity/trufflehog, read here (never
  copied into this repository) by :func:`detector_cases`. Each pattern test is a table of
  ``{name, input, want}`` entries: the input is text as a credential appears in a file
  (configuration lines, code, JSON, Jenkins XML), ``want`` the secrets the detector must
  report. Only the Go that spells strings is evaluated (literals, names bound to them, ``+``
  and ``fmt.Sprintf`` with ``%s``/``%v``/``%d``/``%q``); an entry built any other way is left
  out and counted, never guessed.

None was used to tune the scanner. ``tests/data/secret_corpus/`` holds a small sample of
the first (with its licence); the benchmark reads whole folders from paths given by
``CONTEXTFS_NOSEYPARKER_RULES`` and ``CONTEXTFS_KINGFISHER_RULES`` (or options).

What counts where:

* **as written**: each example string as a note of its own;
* **values**: the secret a rule's own pattern captures in its examples, minus *evident
  placeholders* (:func:`evident_placeholder`, decided here, independently of the scanner);
* **assigned**: those values under a credential-like name in the ways configuration and
  shell carry them (:data:`ASSIGNED`): INI, JSON, YAML, ``export X_TOKEN=``, ``.env``,
  ``Authorization: Bearer``, ``curl -u`` and source code, each inside a markdown note.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = [
    "ASSIGNED",
    "NOT_CREDENTIAL",
    "DetectorCase",
    "GoFile",
    "Unresolved",
    "Example",
    "assigned_notes",
    "compile_rule_pattern",
    "detector_cases",
    "expr_at",
    "entropy",
    "evident_placeholder",
    "go_string",
    "go_tokens",
    "rule_examples",
    "values_of",
]

SAMPLE = Path(__file__).resolve().parent / "data" / "secret_corpus"


@dataclass(frozen=True)
class Example:
    family: str  # the rule file's name: a vendor ("github") or a kind ("generic", "pem")
    rule: str
    text: str
    pattern: str
    credential: bool  # the rule finds a credential, not an identifier, a hash or a host name


# Rules whose match is not a credential on its own: ids, host names, accounts, hashes.
NOT_CREDENTIAL = re.compile(
    r"\b(?:id|ids|identifier|domain|url|uri|host(?:name)?|user(?:name)?|login|account|e-?mail"
    r"|org(?:ani[sz]ation)?|region|endpoint|tenant|instance|hash|project|app|application|public)\b",
    re.IGNORECASE,
)


def _is_credential(rule: dict[str, object]) -> bool:
    categories = rule.get("categories") or []
    listed = set(map(str, categories)) if isinstance(categories, list) else set()
    if listed and ("secret" not in listed or {"identifier", "hashed"} & listed):
        return False
    if rule.get("visible") is False:
        return False
    return not NOT_CREDENTIAL.search(str(rule.get("name", "")))


def rule_examples(folder: Path) -> list[Example]:
    """Every example of every rule in the ``*.yml`` files of ``folder``."""
    out = []
    for path in sorted(Path(folder).glob("*.yml")):
        data = yaml.safe_load(path.read_text("utf-8")) or {}
        for rule in data.get("rules") or []:
            credential = _is_credential(rule)
            for text in rule.get("examples") or []:
                if isinstance(text, str) and text.strip():
                    out.append(
                        Example(
                            path.stem,
                            str(rule.get("id", "")),
                            text,
                            str(rule.get("pattern", "")),
                            credential,
                        )
                    )
    return out


def compile_rule_pattern(pattern: str) -> re.Pattern[str] | None:
    # The catalogues use Rust regex syntax; the common subset compiles in Python.
    source = pattern.replace("\\z", "\\Z").replace("(?-u:", "(?:").replace("(?xi)", "(?ix)")
    try:
        return re.compile(source)
    except (re.error, OverflowError):
        return None


def entropy(value: str) -> float:
    return -sum(
        value.count(c) / len(value) * math.log2(value.count(c) / len(value)) for c in set(value)
    )


def values_of(example: Example) -> list[str]:
    """What the rule's pattern captures in the example: of its groups, the most random one
    (a rule may also capture a user, an account or a host name), else the whole match.
    Values holding quotes or backslashes are left out: no quoted syntax can carry them as
    they are."""
    regex = compile_rule_pattern(example.pattern)
    if regex is None:
        return []
    out = []
    for match in regex.finditer(example.text):
        groups = [g for g in match.groups() if g] or [match.group(0)]
        value = max(groups, key=entropy)
        if len(value) >= 8 and not set(value) & set("'\"\\`"):
            out.append(value)
    return out


_SEQUENCE = "0123456789abcdefghijklmnopqrstuvwxyz"
_STAND_INS = (
    "example",
    "xxxx",
    "fake",
    "dummy",
    "your",
    "placeholder",
    "redacted",
    "sample",
    "<",
    "...",
)


def evident_placeholder(value: str) -> bool:
    """A value nobody would take for a live credential: it says so (``EXAMPLE``, ``xxxx``,
    ``your``), repeats one character five times, counts up (``123456``, ``abcdef``), or
    uses fewer than six distinct characters."""
    folded = value.lower()
    if any(word in folded for word in _STAND_INS):
        return True
    if re.search(r"(.)\1{4,}", value):
        return True
    if any(_SEQUENCE[i : i + 6] in folded for i in range(len(_SEQUENCE) - 5)):
        return True
    return len(set(value)) < 6


#: (name, markdown note) templates; ``{i}``/``{I}`` is the family, ``{s}`` the secret.
ASSIGNED: tuple[tuple[str, str], ...] = (
    ("ini quoted", '## Setup\n\n```ini\n[service]\n{i}Token = "{s}"\n```\n'),
    ("ini unquoted", "## Setup\n\n```ini\n{i}Token={s}\n```\n"),
    ("json", 'Config:\n\n```json\n{{\n    "{i}_token": "{s}"\n}}\n```\n'),
    ("yaml", "```yaml\n{i}:\n  {i}_token: {s}\n```\n"),
    ("yaml quoted", "```yaml\n{i}_token: '{s}'\n```\n"),
    ("frontmatter", "---\ntitle: {i} setup\n{i}_token: {s}\n---\n\nSee the runbook.\n"),
    ("export", "Run this first:\n\n```bash\nexport {I}_TOKEN={s}\n```\n"),
    ("export in prose", "Before deploying, export {I}_TOKEN={s} in the shell.\n"),
    (".env line", "Add to `.env`:\n\n{I}_API_KEY={s}\n"),
    ("bearer header", "```http\nGET /v1/items HTTP/1.1\nAuthorization: Bearer {s}\n```\n"),
    (
        "curl bearer",
        '```bash\ncurl -H "Authorization: Bearer {s}" https://api.{i}.example/v1/me\n```\n',
    ),
    ("curl -u", "```bash\ncurl -u deploy:{s} https://api.{i}.example/v1/me\n```\n"),
    ("python", '```python\n{i}_api_key = "{s}"\n```\n'),
    ("go", '```go\n{i}Token := "{s}"\n```\n'),
)


def glued(cases: Iterable[tuple[str, str, Iterable[str]]]) -> set[tuple[str, str]]:
    """The (family, text) of cases whose realistic secrets are all written glued to other
    text: a letter or digit right before or after each, wherever it occurs (three copies
    back to back, `extra` appended), which a scanner's own tests use to try its boundaries
    but no configuration file holds. A secret not written literally (parts joined) counts
    as standing apart, so its case is kept."""
    out = set()
    for family, text, secrets in cases:
        realistic = [s for s in secrets if not evident_placeholder(s)]
        if realistic and not any(
            s not in text or re.search(rf"(?<![A-Za-z0-9]){re.escape(s)}(?![A-Za-z0-9])", text)
            for s in realistic
        ):
            out.add((family, text))
    return out


def assigned_notes(family: str, value: str) -> list[tuple[str, str]]:
    ident = re.sub(r"[^A-Za-z0-9]", "_", family).strip("_").lower() or "svc"
    return [
        (name, template.format(i=ident, I=ident.upper(), s=value)) for name, template in ASSIGNED
    ]


# -- TruffleHog's detector tests ---------------------------------------------------------------

#: Go tokens the test tables are made of: comments, raw and interpreted strings, runes,
#: (dotted) names, numbers, and single punctuation characters.
_GO_TOKEN = re.compile(
    r"(?P<skip>//[^\n]*|/\*.*?\*/|\s+)"
    r"|(?P<raw>`[^`]*`)"
    r'|(?P<str>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<rune>'(?:[^'\\\n]|\\.)+')"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)"
    r"|(?P<num>[0-9][0-9_.xXa-fA-F]*)"
    r"|(?P<op>:=|.)",
    re.DOTALL,
)
_VERB = re.compile(r"%[sdvq%]")


class Unresolved(Exception):
    """The expression is not made of string literals, names bound to them, ``+`` and
    ``fmt.Sprintf`` with plain verbs: the case is left out rather than guessed."""


def go_tokens(source: str) -> list[tuple[str, str]]:
    out = []
    for match in _GO_TOKEN.finditer(source):
        kind = match.lastgroup or "op"
        if kind != "skip":
            out.append((kind, match.group(0)))
    return out


def go_string(kind: str, text: str) -> str:
    if kind == "raw":
        return text[1:-1].replace("\r", "")  # Go drops carriage returns from raw strings
    # Go's escapes in interpreted strings are a subset of Python's.
    return str(ast.literal_eval(text))


class GoFile:
    """String values of one Go file: its ``name = expr`` / ``name := expr`` bindings (a
    name bound to two different expressions is ambiguous and stays unresolved)."""

    def __init__(self, source: str) -> None:
        self.tokens = go_tokens(source)
        self.bindings: dict[str, int | None] = {}
        for i in range(len(self.tokens) - 1):
            kind, text = self.tokens[i]
            if kind == "name" and self.tokens[i + 1][1] in ("=", ":="):
                if i and self.tokens[i - 1][1] == ",":
                    continue  # multiple assignment: a, b := f()
                start = i + 2
                known = self.bindings.get(text, start)
                same = known is not None and self._span(known) == self._span(start)
                self.bindings[text] = start if same else None

    def _span(self, start: int) -> tuple[tuple[str, str], ...]:
        return tuple(self.tokens[start : start + 12])

    def expr(self, i: int, depth: int = 0) -> tuple[str, int]:
        """The string value of the expression at token ``i``, and the token after it."""
        value, i = self._term(i, depth)
        while i < len(self.tokens) and self.tokens[i][1] == "+":
            more, i = self._term(i + 1, depth)
            value += more
        return value, i

    def _term(self, i: int, depth: int) -> tuple[str, int]:
        if depth > 20 or i >= len(self.tokens):
            raise Unresolved
        kind, text = self.tokens[i]
        if kind in ("raw", "str"):
            return go_string(kind, text), i + 1
        if kind == "name" and text == "fmt.Sprintf" and self.tokens[i + 1][1] == "(":
            args, i = self._args(i + 2, depth)
            return _sprintf(args), i
        if kind == "name" and self.tokens[i + 1][1] not in ("(", "{", "["):
            start = self.bindings.get(text)
            if start is None:
                raise Unresolved
            return self.expr(start, depth + 1)[0], i + 1
        if text == "(":
            value, i = self.expr(i + 1, depth)
            if self.tokens[i][1] != ")":
                raise Unresolved
            return value, i + 1
        raise Unresolved

    def _args(self, i: int, depth: int) -> tuple[list[str], int]:
        args = []
        while True:
            value, i = self.expr(i, depth)
            args.append(value)
            if self.tokens[i][1] == ")":
                return args, i + 1
            if self.tokens[i][1] != ",":
                raise Unresolved
            i += 1
            if self.tokens[i][1] == ")":  # trailing comma
                return args, i + 1

    def strings(self, i: int) -> tuple[list[str], int]:
        """A ``[]string{...}`` literal, ``nil``, or one string expression."""
        if self.tokens[i][1] == "nil":
            return [], i + 1
        if [t for _, t in self.tokens[i : i + 4]] == ["[", "]", "string", "{"]:
            i += 4
            out = []
            while self.tokens[i][1] != "}":
                value, i = self.expr(i)
                out.append(value)
                if self.tokens[i][1] == ",":
                    i += 1
                elif self.tokens[i][1] != "}":
                    raise Unresolved
            return out, i + 1
        value, i = self.expr(i)
        return [value], i

    def table_entries(
        self, read: dict[str, Callable[[GoFile, int], object]]
    ) -> list[dict[str, object]]:
        """The fields ``read`` names in each composite literal (``{...}``) of the file that has
        any, one dict per literal: a field's value is what its function reads at the token
        after ``name:``, or :class:`Unresolved` when it cannot be read."""
        entries: dict[int, dict[str, object]] = {}
        stack: list[int] = []
        for i in range(len(self.tokens) - 1):
            kind, text = self.tokens[i]
            if text == "{":
                stack.append(i)
            elif text == "}" and stack:
                stack.pop()
            elif kind == "name" and text in read and self.tokens[i + 1][1] == ":" and stack:
                try:
                    value = read[text](self, i + 2)
                except (Unresolved, IndexError, ValueError, SyntaxError):
                    value = Unresolved
                entries.setdefault(stack[-1], {})[text] = value
        return list(entries.values())


def expr_at(go: GoFile, i: int) -> str:
    """The string expression at token ``i``."""
    return go.expr(i)[0]


def strings_at(go: GoFile, i: int) -> list[str]:
    """The ``[]string{...}`` literal (or one string, or ``nil``) at token ``i``."""
    return go.strings(i)[0]


def _sprintf(args: list[str]) -> str:
    if not args:
        raise Unresolved
    rest = iter(args[1:])

    def verb(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return "%"
        value = next(rest, None)
        if value is None:
            raise Unresolved
        return json.dumps(value) if match.group(0) == "%q" else value

    out = _VERB.sub(verb, args[0])
    if "%" in _VERB.sub("", args[0]).replace("%%", ""):
        raise Unresolved  # a verb with flags or width: not reproduced
    return out


@dataclass(frozen=True)
class DetectorCase:
    family: str  # the detector's folder under pkg/detectors ("github" for github/v2)
    path: str
    name: str
    text: str  # the test's input, as the test writes it
    secrets: tuple[str, ...]  # what the test expects the detector to report


def detector_cases(folder: Path) -> tuple[list[DetectorCase], int]:
    """The positive cases of TruffleHog's detector tests under ``folder`` (the repository or
    its ``pkg/detectors``): every table entry with an ``input`` and a non-empty ``want`` of
    strings, both resolved from the file's literals; and how many entries with a ``want``
    could not be resolved (left out)."""
    folder = Path(folder)
    root = folder / "pkg" / "detectors" if (folder / "pkg" / "detectors").is_dir() else folder
    cases: list[DetectorCase] = []
    unresolved = 0
    for path in sorted(root.rglob("*_test.go")):
        if path.name.endswith("_integration_test.go") or path.parent == root:
            continue
        go = GoFile(path.read_text("utf-8", errors="replace"))
        family = path.relative_to(root).parts[0]
        fields = go.table_entries({"name": expr_at, "input": expr_at, "want": strings_at})
        for entry in fields:
            text, want = entry.get("input"), entry.get("want")
            if "want" not in entry or "input" not in entry:
                continue
            if text is Unresolved or want is Unresolved:
                unresolved += 1
                continue
            if isinstance(text, str) and isinstance(want, list) and want:
                name = entry.get("name")
                cases.append(
                    DetectorCase(
                        family,
                        path.relative_to(root).as_posix(),
                        name if isinstance(name, str) else "",
                        text,
                        tuple(map(str, want)),
                    )
                )
    return cases, unresolved
