"""Reading Semgrep's and secretlint's rule tests for the secret benchmark
(``secret_corpora_annotated``).

The trees below are written the ways those suites are: a Semgrep rule with a test file of
the same name annotated ``# ruleid:`` / ``// ruleid:`` / ``# ok:``, and secretlint snapshot
folders with the scanned text and the messages a rule must report. Every value is made up.
"""

from __future__ import annotations

import json
from pathlib import Path

from secret_corpora_annotated import secretlint_cases, semgrep_cases

RULES = """rules:
- id: detected-acme-token
  patterns:
  - pattern-regex: (?<TOKEN>acme_[A-Za-z0-9]{20})
  - pattern-not-regex: .*(?i)example.*
  languages: [regex]
- id: detected-acme-account-id
  pattern-regex: acct-[0-9]{8}
  languages: [regex]
- id: detected-generic-secret
  pattern-regex: '(?i)secret[:= ]+(?P<SECRET>[0-9a-zA-Z]{16,})'
  languages: [regex]
- id: detected-acme-private-key
  patterns:
  - pattern: '-----BEGIN ACME KEY----- $KEY'
  languages: [generic]
"""

TEST_FILE = """# ruleid: detected-acme-token
ACME_TOKEN=acme_Q7bFGgbEMoZtRHuA4QHk

# ok: detected-acme-token
ACME_TOKEN=acme_EXAMPLEEXAMPLEEXAMPL

// ruleid: detected-acme-account-id
account = acct-20250101
# ruleid: detected-generic-secret
# todoruleid: detected-acme-token
secret: x9Fq2LmZ7tRb4VnKc8Hd
# ruleid: detected-acme-private-key
-----BEGIN ACME KEY-----
"""


def _semgrep(tmp_path: Path) -> Path:
    root = tmp_path / "generic" / "secrets" / "security"
    root.mkdir(parents=True)
    (root / "detected-acme.yaml").write_text(RULES, "utf-8")
    (root / "detected-acme.txt").write_text(TEST_FILE, "utf-8")
    # A file with no rule of its name is not a test.
    (root / "notes.txt").write_text("# ruleid: detected-acme-token\nacme_Q7bFGgbEMoZtRHuA4QHk\n")
    return tmp_path


def test_semgrep_positives_are_the_lines_their_annotations_mark(tmp_path: Path) -> None:
    cases, left_out = semgrep_cases(_semgrep(tmp_path))
    got = [(c.family, c.rule, c.text, c.secrets, c.credential) for c in cases]
    assert got == [
        (
            "acme-token",
            "detected-acme-token",
            "ACME_TOKEN=acme_Q7bFGgbEMoZtRHuA4QHk",
            ("acme_Q7bFGgbEMoZtRHuA4QHk",),
            True,
        ),
        # an account id is not a credential
        (
            "acme-account-id",
            "detected-acme-account-id",
            "account = acct-20250101",
            ("acct-20250101",),
            False,
        ),
        # stacked annotations mark the same line; "generic-" rules are the generic family
        (
            "generic",
            "detected-generic-secret",
            "secret: x9Fq2LmZ7tRb4VnKc8Hd",
            ("x9Fq2LmZ7tRb4VnKc8Hd",),
            True,
        ),
    ]
    # The todoruleid line holds no value its rule's regex captures, and the private key rule
    # is written as a Semgrep pattern: both are left out and counted.
    assert left_out == 2
    assert semgrep_cases(tmp_path) == semgrep_cases(tmp_path / "generic" / "secrets" / "security")


def _snapshot(root: Path, rule: str, name: str, source: str | None, messages: list[dict]) -> None:
    folder = root / "packages" / "@secretlint" / f"secretlint-rule-{rule}" / "test" / "snapshots"
    (folder / name).mkdir(parents=True)
    snapshot: dict[str, object] = {"filePath": f"[SNAPSHOT]/{name}/input.txt", "messages": messages}
    if source is not None:
        snapshot["sourceContent"] = source
    (folder / name / "output.json").write_text(json.dumps(snapshot), "utf-8")


def _message(message_id: str, line: int, last: int, **data: str) -> dict[str, object]:
    return {
        "messageId": message_id,
        "loc": {"start": {"line": line, "column": 0}, "end": {"line": last, "column": 3}},
        "data": data,
    }


def test_secretlint_messages_are_read_with_their_lines_and_values(tmp_path: Path) -> None:
    key = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSj\nAgEAAoIBAQDndJt7NaG8T64"
    pem = f"-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----"
    _snapshot(
        tmp_path,
        "acme",
        "ng.token",
        "intro\nACME_TOKEN=acme_Q7bFGgbEMoZtRHuA4QHk\nACME_ID=acct-20250101\n",
        [
            _message("ACME_TOKEN", 2, 2, TOKEN="acme_Q7bFGgbEMoZtRHuA4QHk"),
            _message("AcmeAccountId", 3, 3, ID="acct-20250101"),
            # a service account *token* is a credential, whatever "account" says
            _message("ACME_SERVICE_ACCOUNT_TOKEN", 2, 2, TOKEN="acme_Q7bFGgbEMoZtRHuA4QHk"),
            # a value the lines do not hold: left out
            _message("ACME_TOKEN", 1, 1, TOKEN="acme_Q7bFGgbEMoZtRHuA4QHk"),
        ],
    )
    _snapshot(tmp_path, "privatekey", "rsa", pem + "\n", [_message("PrivateKey", 1, 4, KEY=pem)])
    # a binary input has no text to read
    _snapshot(tmp_path, "acme", "ng.p12", None, [_message("PrivateKeyP12", 1, 9, FILE="a.p12")])
    # rules that report what their configuration names are not credential formats
    _snapshot(
        tmp_path,
        "pattern",
        "ng.basic",
        "password = hunter2hunter2\n",
        [_message("PATTERN", 1, 1, CREDENTIAL="password = hunter2hunter2")],
    )
    cases, left_out = secretlint_cases(tmp_path)
    got = [(c.family, c.rule, c.text, c.secrets, c.credential) for c in cases]
    token = ("acme_Q7bFGgbEMoZtRHuA4QHk",)
    line = "ACME_TOKEN=acme_Q7bFGgbEMoZtRHuA4QHk"
    assert got == [
        ("acme", "ACME_TOKEN", line, token, True),
        ("acme", "AcmeAccountId", "ACME_ID=acct-20250101", ("acct-20250101",), False),
        ("acme", "ACME_SERVICE_ACCOUNT_TOKEN", line, token, True),
        ("pattern", "PATTERN", "password = hunter2hunter2", ("password = hunter2hunter2",), False),
        # the key block as written; its value is the key material, without the PEM armour
        ("privatekey", "PrivateKey", pem, (key,), True),
    ]
    assert left_out == 2
    assert secretlint_cases(tmp_path) == secretlint_cases(tmp_path / "packages" / "@secretlint")
