"""Reading the examples of Sonar's secrets rules for the secret benchmark
(``secret_corpora_sonar``).

The tree below is written the way sonar-text's rule files are (one YAML file per vendor,
rules with ``examples`` of ``text``, ``containsSecret`` and ``match``); every value is made up.
"""

from __future__ import annotations

from pathlib import Path

from secret_corpora_sonar import RULES, sonar_cases

ACME = """\
provider:
  metadata:
    name: Acme
  rules:
    - id: acme-api-key
      metadata:
        name: Acme API keys should not be disclosed
      detection:
        matching:
          pattern: "\\\\b(acme_[a-z0-9]{20})\\\\b"
      examples:
        - text: |
            export ACME_KEY=acme_q8w7e6r5t4y3u2i1o0pz
          containsSecret: true
          match: acme_q8w7e6r5t4y3u2i1o0pz
        - text: |
            export ACME_KEY=acme_q8w7e6r5t4y3u2i1o0pz
          fileName: README.md
          containsSecret: false
        - text: |
            export ACME_KEY=$ACME_KEY
          containsSecret: false
        - text: |
            acme: a value the example does not hold
          containsSecret: true
          match: acme_zzzzzzzzzzzzzzzzzzzz
    - id: acme-account-id
      examples:
        - text: |
            account = 4839201746
          containsSecret: true
          match: "4839201746"
"""


def test_positives_negatives_and_what_is_left_out(tmp_path: Path) -> None:
    folder = tmp_path / RULES
    folder.mkdir(parents=True)
    (folder / "acme.yaml").write_text(ACME, "utf-8")
    (folder / "empty.yaml").write_text("", "utf-8")
    (folder / "notes.txt").write_text("not a rule file", "utf-8")

    cases, left_out, negatives = sonar_cases(tmp_path)

    key, account = cases
    assert (key.source, key.family, key.path) == ("sonar", "acme-api-key", "acme.yaml")
    assert key.text == "export ACME_KEY=acme_q8w7e6r5t4y3u2i1o0pz\n"
    assert key.secrets == ("acme_q8w7e6r5t4y3u2i1o0pz",)
    assert key.credential
    # An id is no credential, by the rule's name, as for the other annotated corpora.
    assert account.family == "acme-account-id" and not account.credential
    # The example whose match is not in its text is counted, not guessed.
    assert left_out == 1
    # The same key in a documentation file is Sonar's file policy, not a negative; a
    # reference to a variable is.
    assert [(n.family, n.text) for n in negatives] == [
        ("acme-api-key", "export ACME_KEY=$ACME_KEY\n")
    ]
    # The rules folder itself can be given too.
    assert sonar_cases(folder)[0] == cases
