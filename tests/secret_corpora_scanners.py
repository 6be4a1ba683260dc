"""A fifth public corpus for the secret benchmark: two more scanners' annotated tests.

* **Trivy's secret scanner** (aquasecurity/trivy, Apache-2.0), ``pkg/fanal/secret``: the
  files of ``testdata/`` and, in ``scanner_test.go``, the table of ``TestSecretScanner``,
  which names for each input file the findings the scanner must report: the rule
  (``RuleID``), the lines (``StartLine``, ``EndLine``), the byte ``Offset`` of the secret
  and the text reported with the secret masked (``Match``, one ``*`` per byte). Read by
  :func:`trivy_cases`. Trivy's built-in rules derive from gitleaks', the ancestor of the
  catalogue the scanner runs; its test files are its own.
* **Whispers** (Skyscanner/whispers, Apache-2.0), ``tests/fixtures``: configuration files,
  scripts and code, split into sections by a line saying ``Compliant`` or
  ``Noncompliant`` (a comment, a key, an INI section, a banner). Its unit tests
  (``tests/unit/test_secrets.py``) name the fixtures with positives and assert that every
  value found holds the word ``hardcoded`` or is base64 of it (``test_detection_by_value``),
  or name the keys to be found (``test_detection_by_key``). Read by
  :func:`whispers_cases`.

Neither repository is copied here; the benchmark reads checkouts from paths it is given.
What is kept, and what is left out (counted, never guessed):

* Trivy: each finding of the table whose input is a file; the tests of chunked streaming
  build their inputs in Go and are not read. A finding that several entries repeat (one
  input scanned under several configurations) is one case. Its **text** is the lines the
  finding names, as written, and, when they are the body of a PEM block, the block's
  armour lines around them (a key is written with them). Its **secret** is the bytes under
  the run of ``*`` that starts at ``Offset``, the unmasked parts of ``Match`` agreeing with
  the file (quotes the mask covers at both ends removed). The table is Go: composite
  literals, names bound to them, string literals, ``+``, ``filepath.Join``,
  ``strings.Repeat`` and calls of function literals bound in the test are evaluated; a
  finding whose rule, lines, ``Match`` or ``Offset`` cannot be read that way, or whose mask
  does not agree with its file, is left out. Rules a test's configuration defines
  (``rule1``) are not **credential** rules (they report what their configuration names, as
  secretlint's ``pattern``); built-in ones are decided by name as in
  :mod:`secret_corpora_annotated`.
* Whispers: in the fixtures ``test_detection_by_value`` expects findings in, each line of a
  ``Noncompliant`` section (a file with no section is all one) holding a value that passes
  that test's check (names before ``:``/``=`` and XML tag names are not values; numbers,
  which the check skips, are not read); in those of ``test_detection_by_key``, the line of
  each expected key in such a section. The **text** is that line with the lines of the same
  command (``\\`` continuations) or XML element; the **secrets** the values that pass the
  check, or what follows the key. An expected key not found, or whose value is shorter than
  8 characters, is left out. Whispers names no vendor: every case is of the generic family.
  Fixtures whose positives ``test_detection_by_rule`` attributes to a rule that finds no
  credential (comments, paths, card numbers) are not **credential**.

Both share the placeholder rule of :mod:`secret_corpora` (the caller drops a case whose
secrets are all evident placeholders).
"""

from __future__ import annotations

import ast
import base64
import re
from pathlib import Path

from secret_corpora import go_string, go_tokens
from secret_corpora_annotated import AnnotatedCase, credential_name, material

__all__ = ["trivy_cases"]

# -- Trivy -----------------------------------------------------------------------------------


class _Unknown:
    """A value the evaluator does not compute (a constant of another package, a call of an
    unknown function): fields holding it are not read."""


UNKNOWN = _Unknown()


class _Closure:
    def __init__(self, params: list[str], body: int) -> None:
        self.params, self.body = params, body  # body: the token after the function's "{"


def _closing(tokens: list[tuple[str, str]], i: int) -> int:
    """The index after the bracket that closes the one at ``i``."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}.get(tokens[j][1], 0)
        if depth == 0:
            return j + 1
    return len(tokens)


class _GoTable:
    """The values of one Go function body: composite literals, strings, integers, and the
    names its top-level ``name := expr`` statements bind (evaluated when first used)."""

    def __init__(self, tokens: list[tuple[str, str]], start: int, end: int) -> None:
        self.t = tokens
        self.bound: dict[str, int] = {}
        self.values: dict[str, object] = {}
        depth = 0
        for i in range(start, end):
            text = self.t[i][1]
            depth += {"{": 1, "(": 1, "}": -1, ")": -1}.get(text, 0)
            binds = self.t[i][0] == "name" and self.t[i + 1][1] == ":="
            if depth == 0 and binds and self.t[i - 1][1] != ",":  # not `_, tt := range`
                self.bound[text] = i + 2

    def closing(self, i: int) -> int:
        return _closing(self.t, i)

    def name(self, name: str, scope: dict[str, object]) -> object:
        if name in scope:
            return scope[name]
        if name not in self.values:
            self.values[name] = UNKNOWN  # a name bound to itself stays unknown
            self.values[name] = (
                self.expr(self.bound[name], scope={})[0] if name in self.bound else UNKNOWN
            )
        return self.values[name]

    def expr(self, i: int, scope: dict[str, object]) -> tuple[object, int]:
        value, i = self._term(i, scope)
        while i < len(self.t) and self.t[i][1] == "+":
            more, i = self._term(i + 1, scope)
            both = isinstance(value, str) and isinstance(more, str)
            value = value + more if both else UNKNOWN  # type: ignore[operator]
        return value, i

    def _term(self, i: int, scope: dict[str, object]) -> tuple[object, int]:
        kind, text = self.t[i]
        after = self.t[i + 1][1] if i + 1 < len(self.t) else ""
        if kind in ("raw", "str"):
            try:
                return go_string(kind, text), i + 1
            except (ValueError, SyntaxError):  # an escape Python reads otherwise
                return UNKNOWN, i + 1
        if kind == "num":
            return (int(text) if text.isdigit() else UNKNOWN), i + 1
        if text == "{":
            return self._composite(i, scope)
        if text == "[":  # a slice type, []T{...} or []struct{...}{...}
            j = self.closing(i)
            while self.t[j][1] != "{":
                j += 1
            if self.t[j - 1][1] == "struct":
                j = self.closing(j)
            return self._composite(j, scope)
        if text == "func":
            return self._closure(i)
        if kind == "name" and after == "{":
            return self._composite(i + 1, scope)
        if kind == "name" and after == "(":
            return self._call(text, i + 1, scope)
        if kind == "name":
            known = {"true": True, "false": False, "nil": None}
            return (known[text] if text in known else self.name(text, scope)), i + 1
        return UNKNOWN, i + 1

    def _composite(self, i: int, scope: dict[str, object]) -> tuple[object, int]:
        """``{key: value, ...}`` as a dict, ``{value, ...}`` as a list."""
        fields: dict[str, object] = {}
        items: list[object] = []
        start, i = i, i + 1
        while self.t[i][1] != "}":
            if self.t[i][0] == "name" and self.t[i + 1][1] == ":":
                fields[self.t[i][1]], i = self.expr(i + 2, scope)
            else:
                value, i = self.expr(i, scope)
                items.append(value)
            if self.t[i][1] == ",":
                i += 1
            elif self.t[i][1] != "}":  # an expression not evaluated: the literal is unknown
                return UNKNOWN, self.closing(start)
        return (fields if fields or not items else items), i + 1

    def _args(self, i: int, scope: dict[str, object]) -> tuple[list[object], int]:
        args: list[object] = []
        start, i = i, i + 1
        while self.t[i][1] != ")":
            value, i = self.expr(i, scope)
            args.append(value)
            if self.t[i][1] == ",":
                i += 1
            elif self.t[i][1] != ")":
                return [UNKNOWN], self.closing(start)
        return args, i + 1

    def _call(self, name: str, i: int, scope: dict[str, object]) -> tuple[object, int]:
        args, end = self._args(i, scope)
        if name == "filepath.Join" and all(isinstance(a, str) for a in args):
            return "/".join(map(str, args)), end
        if name == "strings.Repeat" and len(args) == 2:
            text, count = args
            if isinstance(text, str) and isinstance(count, int) and 0 <= count <= 1 << 20:
                return text * count, end
        closure = self.name(name, scope)
        if isinstance(closure, _Closure) and len(args) == len(closure.params):
            return self._run(closure, dict(zip(closure.params, args, strict=True))), end
        return UNKNOWN, end

    def _closure(self, i: int) -> tuple[object, int]:
        """``func(a, b string, n int) T { ... }``: each parameter's name is the first word
        of its part; ``a, b string`` gives ``a`` and ``b``."""
        end = self.closing(i + 1)
        parts: list[list[str]] = [[]]
        for _, text in self.t[i + 2 : end - 1]:
            if text == ",":
                parts.append([])
            else:
                parts[-1].append(text)
        params = [p[0] for p in parts if p]
        body = end
        while self.t[body][1] != "{":
            body += 1
        return _Closure(params, body + 1), self.closing(body)

    def _run(self, closure: _Closure, scope: dict[str, object]) -> object:
        """A function literal's ``name := expr`` statements, then its ``return expr``."""
        i = closure.body
        while i < len(self.t) and self.t[i][1] != "}":
            if self.t[i][1] == "return":
                return self.expr(i + 1, scope)[0]
            if self.t[i][0] == "name" and self.t[i + 1][1] == ":=":
                scope[self.t[i][1]], i = self.expr(i + 2, scope)
            else:
                return UNKNOWN
        return UNKNOWN


def _function(tokens: list[tuple[str, str]], name: str) -> tuple[int, int] | None:
    """The tokens of the body of the Go function ``name``."""
    for i in range(len(tokens) - 2):
        if tokens[i][1] == "func" and tokens[i + 1][1] == name and tokens[i + 2][1] == "(":
            j = i + 3
            while j < len(tokens) and tokens[j][1] != "{":
                j += 1
            return j + 1, _closing(tokens, j) - 1
    return None


def _masked_value(content: bytes, match: str, offset: int) -> bytes | None:
    """The bytes of ``content`` that ``match`` masks with the run of ``*`` starting at
    ``offset``, the unmasked text around it agreeing with the content (a byte of ``match``
    stands for a byte of the content, so run ``k`` starting at ``offset`` places the
    whole of ``match`` at ``offset`` minus the run's start)."""
    mask = match.encode("utf-8")
    runs = list(re.finditer(rb"\*+", mask))
    pattern, at = b"", 0
    for run in runs:
        pattern += re.escape(mask[at : run.start()]) + b"(" + b"." * len(run.group(0)) + b")"
        at = run.end()
    regex = re.compile(pattern + re.escape(mask[at:]), re.DOTALL)
    for k, run in enumerate(runs):
        start = offset - run.start()
        found = regex.match(content, start) if start >= 0 else None
        if found and found.start(k + 1) == offset:
            return found.group(k + 1)
    return None


def trivy_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """The findings of Trivy's ``TestSecretScanner`` under ``folder`` (a checkout of trivy
    or its ``pkg/fanal/secret`` folder), and how many were left out (not readable from the
    test's Go, or not aligned with their file)."""
    folder = Path(folder)
    nested = folder / "pkg" / "fanal" / "secret"
    root = nested if nested.is_dir() else folder
    builtin = set(re.findall(r'\bID:\s*"([^"]+)"', (root / "builtin-rules.go").read_text("utf-8")))
    tokens = go_tokens((root / "scanner_test.go").read_text("utf-8", errors="replace"))
    body = _function(tokens, "TestSecretScanner")
    if body is None:
        return [], 0
    try:
        entries = _GoTable(tokens, *body).name("tests", {})
    except (IndexError, RecursionError):  # Go cut short or nested beyond reading
        entries = UNKNOWN
    found: dict[tuple[str, ...], AnnotatedCase | None] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("inputFilePath"), str):
            continue
        want = entry.get("want")
        findings = want.get("Findings") if isinstance(want, dict) else None
        path = str(entry["inputFilePath"])
        for finding in findings if isinstance(findings, list) else []:
            f = finding if isinstance(finding, dict) else {}
            key = (path, *(str(f.get(k)) for k in ("RuleID", "StartLine", "EndLine", "Offset")))
            if key not in found:
                found[key] = _trivy_case(root, path, f, f.get("RuleID") in builtin)
    cases = [c for c in found.values() if c is not None]
    return cases, len(found) - len(cases)


#: A PEM block's armour: a line that ends with its header, a line that starts with its footer.
_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]+-----\s*$")
_END = re.compile(r"^\s*-----END [A-Z0-9 ]+-----")


def _trivy_case(
    root: Path, path: str, finding: dict[str, object], builtin: bool
) -> AnnotatedCase | None:
    rule, first, last = finding.get("RuleID"), finding.get("StartLine"), finding.get("EndLine")
    match, offset = finding.get("Match"), finding.get("Offset", 0)
    if not (
        isinstance(rule, str)
        and isinstance(first, int)
        and isinstance(last, int)
        and isinstance(match, str)
        and isinstance(offset, int)
    ):
        return None
    file = (root / path).resolve()
    if not file.is_file() or not file.is_relative_to(root.resolve()):
        return None
    content = file.read_bytes().replace(b"\r", b"")  # as the test reads it
    value = _masked_value(content, match, offset)
    lines = content.decode("utf-8", errors="replace").split("\n")
    if first >= 2 and _BEGIN.search(lines[first - 2]):
        first -= 1
    if last < len(lines) and _END.match(lines[last]):
        last += 1
    text = "\n".join(lines[first - 1 : last])
    secret = value.decode("utf-8", errors="replace") if value else ""
    if len(secret) > 2 and secret[0] == secret[-1] and secret[0] in "\"'`":
        secret = secret[1:-1]
    secrets = material([secret] if secret and secret in text else [])
    if not secrets:
        return None
    return AnnotatedCase(
        "trivy", rule, rule, path, text, secrets, builtin and credential_name(rule)
    )


# -- Whispers --------------------------------------------------------------------------------

#: A line that opens a section of positives or of negatives (``# Noncompliant``,
#: ``<!-- Compliant -->``, ``[noncompliant]``, ``noncompliant:``, ``---- NONCOMPLIANT``).
_SECTION = re.compile(r"(non-?)?compliant", re.I)
#: What is not a value: the name and brackets of an XML tag (its attributes' values stay);
#: a quoted name before ``:`` or ``=`` and a value (``"pwd": "..."``; not ``== "x1":``, which
#: ends a Python condition); an unquoted one (``pwd:``, ``user=``, ``password="..."``); a
#: quoted one followed by its value (``"DB_PASSWORD=x1"``; not base64's ``"...Ao="``).
_TAG = re.compile(r"</?[\w.:-]+|/?>")
_NOT_VALUE = re.compile(
    rf"{_TAG.pattern}|[\"'][\w.-]+[\"']\s*[:=](?=\s*\S)"
    r"|(?<![\"'\w.-])[\w.-]+\s*[:=]|(?<=[\"'])[\w.-]+\s*[:=](?=\w)"
)
_SEPARATORS = re.compile(r"[\s\"'`<>,;:()\[\]{}@|]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{8,}={0,2}")
#: Whispers' rules that find no credential: comments, CORS settings, card numbers,
#: dangerous calls, paths, sensitive file names.
_NOT_CREDENTIAL_RULES = frozenset(
    {"comments", "cors", "creditcards", "dangerous-functions", "path", "sensitive-files"}
)


def _parametrized(tests: ast.Module, function: str) -> list[tuple[object, ...]]:
    """The cases of a test's ``@pytest.mark.parametrize(names, [...])``."""
    for node in ast.walk(tests):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and len(decorator.args) == 2:
                    try:
                        cases = ast.literal_eval(decorator.args[1])
                    except ValueError:
                        continue
                    return [c for c in cases if isinstance(c, tuple)]
    return []


def _marked(token: str) -> bool:
    """Whispers' own test of a reported value: it holds ``hardcoded``, or is base64 of it."""
    if "hardcoded" in token.lower():
        return True
    if not _BASE64.fullmatch(token) or len(token) % 4:
        return False
    return b"hardcoded" in base64.b64decode(token).lower()


def _extent(lines: list[str], j: int) -> str:
    """Line ``j`` with the lines of the same command (``\\`` continuations) or element."""
    first, last = j, j
    while first > 0 and lines[first - 1].rstrip().endswith("\\"):
        first -= 1
    tag = re.match(r"\s*<([\w.:-]+)[^<>/]*>", lines[j])
    while tag and f"</{tag.group(1)}>" not in lines[last] and last + 1 < len(lines):
        last += 1
    while lines[last].rstrip().endswith("\\") and last + 1 < len(lines):
        last += 1
    return "\n".join(lines[first : last + 1])


def whispers_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """The positives of Whispers' fixtures under ``folder`` (a checkout of whispers or its
    ``tests`` folder), and how many keys its tests expect that were not found (left out)."""
    folder = Path(folder)
    root = folder / "tests" if (folder / "tests" / "fixtures").is_dir() else folder
    tests = ast.parse((root / "unit" / "test_secrets.py").read_text("utf-8"))
    rules = {str(c[0]): str(c[2]) for c in _parametrized(tests, "test_detection_by_rule")}
    by_value = [str(c[0]) for c in _parametrized(tests, "test_detection_by_value") if c[1]]
    by_key = {
        str(c[0]): list(map(str, c[1])) for c in _parametrized(tests, "test_detection_by_key")
    }  # type: ignore[call-overload]
    cases: list[AnnotatedCase] = []
    left_out = 0
    for name in dict.fromkeys([*by_value, *by_key]):
        path = (root / "fixtures" / name).resolve()
        if not path.is_file() or not path.is_relative_to(root.resolve()):
            left_out += len(by_key.get(name, [])) or 1
            continue
        lines = path.read_text("utf-8", errors="replace").replace("\r\n", "\n").split("\n")
        credential = rules.get(name) not in _NOT_CREDENTIAL_RULES
        keys = set(by_key.get(name, []))
        positive = not any(_SECTION.search(line) for line in lines)  # no sections: all lines
        found: dict[str, list[str]] = {}
        for j, line in enumerate(lines):
            section = _SECTION.search(line)
            if section:  # a marker line may hold a value itself (``noncompliant1:<hash>``)
                positive = bool(section.group(1))
            if not positive:
                continue
            key = re.match(r"\s*[<\"']?([\w.-]+)[\"'>]?\s*[:=>]?", line)
            if key and key.group(1) in keys:
                keys.discard(key.group(1))
                text = _extent(lines, j)
                value = _TAG.sub(" ", text[key.end() :]).strip().rstrip(",")
                found[text] = [value.strip().strip("\"'").rstrip("\\").strip()]
            elif name in by_value:
                marked = [t for t in _SEPARATORS.split(_NOT_VALUE.sub(" ", line)) if _marked(t)]
                if marked:
                    found.setdefault(_extent(lines, j), []).extend(marked)
        left_out += len(keys)
        for text, values in found.items():
            secrets = material(values)
            if not secrets:
                left_out += 1
                continue
            cases.append(
                AnnotatedCase(
                    "whispers", "generic", rules.get(name, ""), name, text, secrets, credential
                )
            )
    return cases, left_out
