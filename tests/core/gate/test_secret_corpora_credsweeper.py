"""Reading CredSweeper's test samples for the secret benchmark (``secret_corpora_credsweeper``).

The tree below is written the way a checkout of Samsung/CredSweeper is (samples under
``tests/samples/``, the default run's findings in ``tests/data/output.json``, the rules in
``credsweeper/rules/config.yaml``); every value is made up.
"""

from __future__ import annotations

import json
from pathlib import Path

from secret_corpora_credsweeper import credsweeper_cases, credsweeper_negatives, rule_family

TOKEN = "acme_Zk29fLq8Xv03NmW7pRt5Yh2a"
KEY_ID = "AKIAZK29FLQ8XV03NMW7"
SECRET = "Zk29fLq8Xv03NmW7pRt5Yh2aQe41Lm0o9UvWx3Yb"

RULES = """
- name: Acme Token
  severity: high
  type: pattern
- name: AWS Multi
  severity: high
  type: multi
- name: Password
  severity: high
  type: keyword
- name: Salt
  severity: low
  type: keyword
- name: UUID
  severity: info
  type: pattern
- name: Acme Client ID
  severity: medium
  type: pattern
"""


def _finding(rule: str, path: str, *lines: tuple[int, str, str]) -> dict:
    return {
        "rule": rule,
        "line_data_list": [
            {"path": f"./{path}", "line_num": n, "line": line, "value": value}
            for n, line, value in lines
        ],
    }


def _checkout(root: Path) -> Path:
    samples = root / "tests" / "samples"
    samples.mkdir(parents=True)
    (root / "tests" / "data").mkdir()
    (root / "credsweeper" / "rules").mkdir(parents=True)
    (root / "credsweeper" / "rules" / "config.yaml").write_text(RULES, "utf-8")
    (samples / "acme").write_text(f"# acme\n{TOKEN} # a token\n", "utf-8")
    (samples / "aws.md").write_text(f"id: {KEY_ID}\nsecret: {SECRET}\n", "utf-8")
    (samples / "config.py").write_text('password = "Tr0ub4dor-x9Q"\nsalt = "f00dbabe12345"\n')
    (samples / "ids").write_text("3f0c9a1e-5b7d-4c44-8a1e-0c9a1e5b7d2c\nACME-CLIENT-1234567\n")
    (samples / "fix.patch").write_text(f"@@ -1 +1 @@\n+token = {TOKEN}x\n", "utf-8")
    (samples / "blob.bin").write_bytes(b"\0\1\2" + TOKEN.encode())
    findings = [
        _finding("Acme Token", "tests/samples/acme", (2, f"{TOKEN} # a token", TOKEN)),
        _finding(
            "AWS Multi",
            "tests/samples/aws.md",
            (1, f"id: {KEY_ID}", KEY_ID),
            (2, f"secret: {SECRET}", SECRET),
        ),
        _finding(
            "Password",
            "tests/samples/config.py",
            (1, 'password = "Tr0ub4dor-x9Q"', "Tr0ub4dor-x9Q"),
        ),
        _finding("Salt", "tests/samples/config.py", (2, 'salt = "f00dbabe12345"', "f00dbabe12345")),
        _finding("UUID", "tests/samples/ids", (1, "", "3f0c9a1e-5b7d-4c44-8a1e-0c9a1e5b7d2c")),
        _finding("Acme Client ID", "tests/samples/ids", (2, "", "ACME-CLIENT-1234567")),
        # a patch: line 5 of the new file, the added line as CredSweeper read it
        _finding("Acme Token", "tests/samples/fix.patch", (5, f"token = {TOKEN}", TOKEN)),
        _finding("Acme Token", "tests/samples/blob.bin", (1, TOKEN, TOKEN)),  # not text
        _finding("Acme Token", "tests/samples/acme", (1, "# acme", TOKEN)),  # value not there
    ]
    (root / "tests" / "data" / "output.json").write_text(json.dumps(findings), "utf-8")
    return root


def test_findings_their_texts_secrets_and_what_is_left_out(tmp_path: Path) -> None:
    cases, left_out = credsweeper_cases(_checkout(tmp_path / "CredSweeper"))
    by_text = {c.text: c for c in cases}
    assert left_out == 2  # the binary sample; the finding whose value is in no line it names

    bare = by_text[f"{TOKEN} # a token"]
    assert (bare.family, bare.secrets, bare.credential) == ("Acme Token", (TOKEN,), True)
    assert bare.path == "tests/samples/acme"

    pair = by_text[f"id: {KEY_ID}\nsecret: {SECRET}"]  # both lines, one text
    assert pair.secrets == (KEY_ID, SECRET) and pair.family == "AWS Multi"

    password = by_text['password = "Tr0ub4dor-x9Q"']
    assert (password.family, password.credential) == ("generic", True)

    assert by_text[f"token = {TOKEN}"].credential  # the patch's line, as read

    not_credentials = {c.rule for c in cases if not c.credential}
    assert not_credentials == {"Salt", "UUID", "Acme Client ID"}


def test_rules_of_no_vendor_count_as_generic() -> None:
    for rule in ("Password", "Token", "API", "DOC_CREDENTIALS", "ID_PASSWD_PAIR", "CMD Token"):
        assert rule_family(rule) == "generic", rule
    for rule in ("CURL User Password", "SQL Password", "URL Credentials", "Bearer Authorization"):
        assert rule_family(rule) == "generic", rule
    for rule in ("Slack Token", "Gitlab Prefix Token", "AWS Multi", "PEM Private Key"):
        assert rule_family(rule) == rule


def test_negatives_are_the_text_samples_nothing_is_reported_in(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "CredSweeper")
    (root / "tests" / "samples" / "prose_n").write_text("No credential here.\n", "utf-8")
    assert credsweeper_negatives(root) == [("No credential here.\n", "prose_n")]
