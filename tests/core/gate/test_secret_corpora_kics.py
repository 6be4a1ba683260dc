"""Reading the tests of KICS's secrets query for the secret benchmark (``secret_corpora_kics``).

The tree below is written the way KICS's query folder is (``regex_rules.json``, test inputs
and ``positive_expected_result.json`` naming a rule, a file and a line for each finding);
every value is made up.
"""

from __future__ import annotations

import json
from pathlib import Path

from secret_corpora_kics import QUERY, kics_cases

RULES = {
    "rules": [
        {
            "name": "Generic Password",
            "regex": "(?i)['\"]?password['\"]?\\s*[:=]\\s*['\"]?([A-Za-z0-9/~^_!@&%()=?*+-. ]{4,})['\"]?",
        },
        {"name": "Acme Key", "regex": "['\"]?acme_[0-9a-z]{20}['\"]?"},
        {
            "name": "Acme Client ID",
            "regex": "(?i)['\"]?client(?i)_?id\\s*=\\s*['\"]?([[0-9a-z]{12,})",
        },
        {
            "name": "Asymmetric private key",
            "regex": "-----BEGIN ((EC|RSA) )?PRIVATE KEY-----\\s*(([A-Za-z0-9+\\/=\\n\\r]+\\s*)+)"
            "-----END ((EC|RSA) )?PRIVATE KEY-----",
            "multiline": {"detectLineGroup": 3},
        },
        {"name": "Google OAuth", "regex": "[0-9]+-[0-9a-z]{32}\\.apps\\.googleusercontent\\.com"},
    ]
}
KEY_BODY = "MIIEpQIBAAKCAQEAq8w7e6r5t4y3u2i1o0pzZk9Lm3Nb7Vc5Xx1Qw2Er4Ty6Ui8Op0As"
MAIN_TF = f"""\
resource "acme_service" "main" {{
  password = "q8W7e6R5t4Y3"
  token    = "acme_q8w7e6r5t4y3u2i1o0pz"
  admin_password = "root"
  client_id = "x7k2m9q4w8e3r6t1"
  body = <<EOT
-----BEGIN RSA PRIVATE KEY-----
{KEY_BODY}
{KEY_BODY[::-1]}
-----END RSA PRIVATE KEY-----
EOT
  oauth = "4839201746-q8w7e6r5t4y3u2i1o0pzq8w7e6r5t4y3.apps.googleusercontent.com"
}}
"""
EXPECTED = [
    {"queryName": "Passwords And Secrets - Generic Password", "line": 2, "fileName": "main.tf"},
    {"queryName": "Passwords And Secrets - Acme Key", "line": 3, "fileName": "main.tf"},
    # Too short to judge, a line no match of its rule reports, a missing file, an unknown rule.
    {"queryName": "Passwords And Secrets - Generic Password", "line": 4, "fileName": "main.tf"},
    {"queryName": "Passwords And Secrets - Acme Key", "line": 2, "fileName": "main.tf"},
    {"queryName": "Passwords And Secrets - Acme Key", "line": 1, "fileName": "gone.tf"},
    {"queryName": "Passwords And Secrets - Nobody's Rule", "line": 2, "fileName": "main.tf"},
    {"queryName": "Passwords And Secrets - Acme Client ID", "line": 5, "fileName": "main.tf"},
    {
        "queryName": "Passwords And Secrets - Asymmetric private key",
        "line": 8,
        "fileName": "main.tf",
    },
    {"queryName": "Passwords And Secrets - Google OAuth", "line": 12, "fileName": "main.tf"},
]


def test_positives_and_what_is_left_out(tmp_path: Path) -> None:
    folder = tmp_path / QUERY
    (folder / "test").mkdir(parents=True)
    (folder / "regex_rules.json").write_text(json.dumps(RULES), "utf-8")
    (folder / "test" / "positive_expected_result.json").write_text(json.dumps(EXPECTED), "utf-8")
    (folder / "test" / "main.tf").write_text(MAIN_TF, "utf-8")

    cases, left_out = kics_cases(tmp_path)

    password, key, client, private, oauth = cases
    # A generic rule's value is its group after the name, as written on its line.
    assert (password.source, password.family, password.rule) == (
        "kics",
        "generic",
        "Generic Password",
    )
    assert (password.path, password.text) == ("main.tf", '  password = "q8W7e6R5t4Y3"')
    assert password.secrets == ("q8W7e6R5t4Y3",) and password.credential
    # A rule with no group: the whole match, its quotes removed; the family is the rule's name.
    assert (key.family, key.secrets) == ("acme-key", ("acme_q8w7e6r5t4y3u2i1o0pz",))
    # Go's mid-pattern flag and a "[" in a set read as Go reads them; "id" is no credential.
    assert (client.family, client.secrets) == ("acme-client-id", ("x7k2m9q4w8e3r6t1",))
    assert not client.credential
    # A rule over lines: the lines of its match (the key with its armour), the reported group.
    assert private.text.splitlines() == MAIN_TF.splitlines()[6:10]
    assert private.secrets == (f"{KEY_BODY}\n{KEY_BODY[::-1]}",)
    # Google's OAuth client id is no credential, whatever its rule is named.
    assert oauth.family == "google-oauth" and not oauth.credential
    assert left_out == 4
    # The query's folder itself can be given too.
    assert kics_cases(folder) == (cases, left_out)
