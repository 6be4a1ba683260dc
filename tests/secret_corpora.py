"""Public credential corpora for the secret scanner's benchmark and tests.

Two rule catalogues publish, for each rule, example strings written the way the credential
appears in real files (one YAML file per vendor or family, ``rules: [{id, pattern,
examples}]``):

* **Nosey Parker** (Praetorian, Apache-2.0): ``crates/noseyparker/data/default/builtin/rules``
  of github.com/praetorian-inc/noseyparker;
* **Kingfisher's own YAML rules** (MongoDB, Apache-2.0): ``data/rules`` of
  github.com/mongodb/kingfisher, from before the SDK bundled the Betterleaks catalogue (the
  rules the scanner runs are that catalogue, so these examples were written for other rules).

Neither was used to tune the scanner. ``tests/data/secret_corpus/`` holds a small sample of
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

import math
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = [
    "ASSIGNED",
    "Example",
    "assigned_notes",
    "evident_placeholder",
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
_NOT_CREDENTIAL = re.compile(
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
    return not _NOT_CREDENTIAL.search(str(rule.get("name", "")))


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


def _compile(pattern: str) -> re.Pattern[str] | None:
    # The catalogues use Rust regex syntax; the common subset compiles in Python.
    source = pattern.replace("\\z", "\\Z").replace("(?-u:", "(?:").replace("(?xi)", "(?ix)")
    try:
        return re.compile(source)
    except (re.error, OverflowError):
        return None


def _entropy(value: str) -> float:
    return -sum(
        value.count(c) / len(value) * math.log2(value.count(c) / len(value)) for c in set(value)
    )


def values_of(example: Example) -> list[str]:
    """What the rule's pattern captures in the example: of its groups, the most random one
    (a rule may also capture a user, an account or a host name), else the whole match.
    Values holding quotes or backslashes are left out: no quoted syntax can carry them as
    they are."""
    regex = _compile(example.pattern)
    if regex is None:
        return []
    out = []
    for match in regex.finditer(example.text):
        groups = [g for g in match.groups() if g] or [match.group(0)]
        value = max(groups, key=_entropy)
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


def assigned_notes(family: str, value: str) -> list[tuple[str, str]]:
    ident = re.sub(r"[^A-Za-z0-9]", "_", family).strip("_").lower() or "svc"
    return [
        (name, template.format(i=ident, I=ident.upper(), s=value)) for name, template in ASSIGNED
    ]
