"""A public corpus for the secret benchmark, the tenth: Leaky Repo, whole files as they leak.

Leaky Repo (Plazmaz/leaky-repo, MIT) is a repository made as a benchmark for secret
scanners: about fifty files of the kinds that leak from real projects (``.netrc``,
``.pgpass``, ``.docker/config.json``, ``.s3cfg``, ``wp-config.php``, Django's
``settings.py``, FileZilla's ``recentservers.xml``, SFTP configurations of editors, shell
profiles), each written in its tool's own format, with made-up values.
``.leaky-meta/secrets.csv`` counts, per file, the lines that hold a risk (a credential) and
those that only inform (a host, a user name). Its values were written by hand, not by any
scanner's rule set, and it names no vendor format: it measures the usual contexts of
configuration files, not formats.

The benchmark reads a checkout from the path it is given; nothing is copied here. The
commit read is ``2e95135``. The unit is the file, as a write is the gate's unit: a
**positive** is a file with at least one risk line, and it is found when writing it is
refused. Two readings are measured: the file under its own name (its extension chooses the
syntax, as for any file in a context root) and its text pasted into a markdown note.

Files are split by what their risks are:

* **credentials**: passwords, keys and tokens as the tool stores them, plain or
  base64-encoded (FileZilla's ``<Pass encoding="base64">``);
* **hashes and ciphertexts**: files whose risk is a crypt-format password hash
  (``$2y$...``, ``$6$...``, ``$apr1$...``: ``/etc/shadow``, ``.htpasswd``, a SQL dump of
  users) or a value encrypted with a key kept elsewhere (Firefox's ``encryptedPassword``).
  The other corpora count neither as a credential; they are reported apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CREDENTIALS", "HASHES", "LeakyFile", "leaky_files"]

_HASH_OR_CIPHERTEXT = re.compile(r"\$(?:1|2[abxy]|5|6|apr1)\$|\"encrypted(?:Username|Password)\"")
CREDENTIALS = "credentials"
HASHES = "hashes and ciphertexts"


@dataclass(frozen=True)
class LeakyFile:
    path: str  # as in the checkout, relative to it
    text: str
    risks: int  # lines holding a risk, as secrets.csv counts them
    kind: str  # CREDENTIALS or HASHES


def leaky_files(folder: Path) -> tuple[list[LeakyFile], int]:
    """The files of ``folder`` (a checkout) with a risk line, in the order ``secrets.csv``
    lists them, and how many listed files could not be read as UTF-8 text."""
    files: list[LeakyFile] = []
    unreadable = 0
    listing = (folder / ".leaky-meta" / "secrets.csv").read_text("utf-8")
    for line in listing.splitlines():
        fields = line.strip().split(",")
        if line.startswith("#") or len(fields) != 3 or not fields[1].isdigit():
            continue
        name, risks = fields[0], int(fields[1])
        if not risks:
            continue
        try:
            text = (folder / name).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            unreadable += 1
            continue
        kind = HASHES if _HASH_OR_CIPHERTEXT.search(text) else CREDENTIALS
        files.append(LeakyFile(name, text, risks, kind))
    return files, unreadable
