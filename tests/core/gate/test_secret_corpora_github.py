"""Reading GitHub's custom secret patterns for the secret benchmark (``secret_corpora_github``).

The tree below is written the way that collection is (a folder per topic, its
``patterns.yml`` giving each pattern's test inputs and expected findings in the folder's
files, by byte offsets); every value is made up.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from secret_corpora_github import github_pattern_cases

TOKEN = "acme_Q8w7E6r5T4y3U2i1O0pZ"
#: A byte before the secret that is two characters in UTF-8: offsets count bytes.
ACME_TXT = f"# clé\nACME_TOKEN={TOKEN}\nother = 1\n"
VENDORS = {
    "name": "Vendors",
    "patterns": [
        {
            "name": "Acme token",
            "type": "acme_token",
            "regex": {"pattern": "acme_[A-Za-z0-9]{20}"},
            "test": {"data": f"token: {TOKEN}\n", "start_offset": 7, "end_offset": 7 + len(TOKEN)},
            "expected": [
                {
                    "name": "acme.txt",
                    "start_offset": ACME_TXT.encode().index(TOKEN.encode()),
                    "end_offset": ACME_TXT.encode().index(TOKEN.encode()) + len(TOKEN),
                },
                # A missing file, a span past the end, a secret too short to judge.
                {"name": "gone.txt", "start_offset": 0, "end_offset": 4},
                {"name": "acme.txt", "start_offset": 10, "end_offset": 999},
                {"name": "acme.txt", "start_offset": 0, "end_offset": 5},
            ],
        },
        {
            "name": "Acme host",
            "type": "azure_sql_connection_string",
            "test": [{"data": "db.acme-sql.example.net"}],
        },
        {
            "name": "SSH private key",
            "type": "ssh_private_keys",
            "test": {"data": "--BEGIN OPENSSH PRIVATE KEY--AAAA--END OPENSSH PRIVATE KEY--\n"},
        },
    ],
}
GENERIC = {
    "patterns": [
        {
            "name": "Generic passwords",
            "type": "generic_passwords",
            "test": {"data": 'password="Zq8Wm3Kd9Vx2"', "start_offset": 10, "end_offset": 22},
        }
    ]
}
PII = {"patterns": [{"type": "credit_cards", "test": {"data": "4012888888881881\n"}}]}


def test_positives_and_what_is_left_out(tmp_path: Path) -> None:
    for folder, document in (("vendors", VENDORS), ("generic", GENERIC), ("pii", PII)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "patterns.yml").write_text(yaml.safe_dump(document), "utf-8")
    (tmp_path / "vendors" / "acme.txt").write_text(ACME_TXT, "utf-8")

    cases, left_out = github_pattern_cases(tmp_path)

    password, card, test, expected, host = cases
    # A test input as written, its secret the span it names.
    assert (test.source, test.family, test.rule, test.path) == (
        "github",
        "acme_token",
        "acme_token",
        "vendors/patterns.yml",
    )
    assert (test.text, test.secrets, test.credential) == (f"token: {TOKEN}", (TOKEN,), True)
    # An expected finding: the line of its file that holds the span, counted in bytes.
    assert (expected.path, expected.text, expected.secrets) == (
        "vendors/acme.txt",
        f"ACME_TOKEN={TOKEN}",
        (TOKEN,),
    )
    # A pattern that finds a value by its name or shape is of the generic family.
    assert (password.family, password.secrets, password.credential) == (
        "generic",
        ("Zq8Wm3Kd9Vx2",),
        True,
    )
    # Without offsets the whole input is the secret; personal data and a host name are not
    # credentials.
    assert card.secrets == ("4012888888881881",) and not card.credential
    assert host.family == "azure_sql_connection_string" and not host.credential
    # Left out: the three findings above, and the key block whose body ("AAAA") is too short
    # to judge once its armour is read as PEM's.
    assert left_out == 4
