"""Reading Leaky Repo for the secret benchmark (``secret_corpora_leaky``).

The tree below is written the way a checkout of Plazmaz/leaky-repo is (the files at their
paths, the counts in ``.leaky-meta/secrets.csv``); every value is made up.
"""

from __future__ import annotations

from pathlib import Path

from secret_corpora_leaky import CREDENTIALS, HASHES, leaky_files

LISTING = """\
#########################
# name,num_risk,num_informative
.netrc,2,0

# a comment between entries
.ssh/id_rsa.pub,0,1
etc/shadow,1,0
.mozilla/firefox/logins.json,2,4
web/binary.db,1,0
missing.cfg,1,0
not,a,row,here
"""


def _checkout(root: Path) -> Path:
    (root / ".leaky-meta").mkdir(parents=True)
    (root / ".leaky-meta" / "secrets.csv").write_text(LISTING, "utf-8")
    files = {
        ".netrc": "machine x login deploy password Zk29fLq8Xv03\n",
        ".ssh/id_rsa.pub": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA deploy@host\n",
        "etc/shadow": "root:$6$Lm0o9UvW$Zk29fLq8Xv03NmW7pRt5Yh2a:17431:0:99999:7:::\n",
        ".mozilla/firefox/logins.json": '{"encryptedPassword": "MDoEEPgAAAAAAAAA"}\n',
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")
    (root / "web").mkdir()
    (root / "web" / "binary.db").write_bytes(b"\xff\xfe\x00password")
    return root


def test_each_file_with_a_risk_line_is_a_positive_in_the_listings_order(tmp_path: Path) -> None:
    files, unreadable = leaky_files(_checkout(tmp_path))
    assert [(f.path, f.risks) for f in files] == [
        (".netrc", 2),
        ("etc/shadow", 1),
        (".mozilla/firefox/logins.json", 2),
    ]
    # a file that is not UTF-8 text, and one the listing names but the checkout lacks
    assert unreadable == 2
    assert files[0].text == "machine x login deploy password Zk29fLq8Xv03\n"


def test_hashes_and_ciphertexts_are_told_from_credentials(tmp_path: Path) -> None:
    files, _ = leaky_files(_checkout(tmp_path))
    assert {f.path: f.kind for f in files} == {
        ".netrc": CREDENTIALS,
        "etc/shadow": HASHES,
        ".mozilla/firefox/logins.json": HASHES,
    }
