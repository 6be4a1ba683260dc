"""A public corpus for the secret benchmark, measured as the eighth: the detector tests of
Veles, the secret scanner of OSV-SCALIBR.

Veles (google/osv-scalibr, Apache-2.0, ``veles/secrets/<kind>/``) has one detector per
credential kind (``anthropicapikey``, ``gcpsak``, ``slacktoken``, ``urlcreds``), each with a
Go test table whose entries give an ``input`` and the secrets the detector must report from
it (``want: []veles.Secret{slacktoken.SlackAppLevelToken{Token: testToken}}``). Its
detectors and inputs are written for Veles; neither comes from gitleaks' rules, the
ancestor of the catalogue the scanner runs, nor from the other corpora. The benchmark reads
a checkout from the path it is given; nothing is copied here.

* a **positive** is a table entry with an ``input`` and a non-empty ``want``, both built
  from the file's string literals, the names bound to them, ``+`` and ``fmt.Sprintf`` (read
  by the Go reader of TruffleHog's corpus, :class:`secret_corpora.GoFile`); an entry whose
  input or secrets are built otherwise is left out and counted;
* its **secrets** are the string fields of the structs ``want`` lists that hold a
  credential and occur in the input, those of 8 characters or more. A field holds a
  credential by its name: ``Key``, ``Token``, ``Secret``, ``Pat``, ``Value``, ``Refresh``,
  ``PrivateKey``, ``ClientSecret``, ``Signature``, ``Content`` (a key set) do; ids, user
  names, URLs, hosts, project references and public keys (``AccessID``, ``ClientID``,
  ``Username``, ``FullURL``, ``ProjectRef``, ``PublicB64``) are what a credential comes
  with, not the credential. A field the input does not hold (a value the detector derives)
  is no secret written there. An entry with no secret is left out and counted;
* its **family** is the detector's folder (``github`` for ``github/pat_classic``); every
  folder holds a credential kind, so the credential flag is read from nothing else.
  Validator tests (``*_validator_test.go``) check a detector's answer against a service and
  hold no table of inputs; they are not read.
"""

from __future__ import annotations

import re
from pathlib import Path

from secret_corpora import GoFile, Unresolved, expr_at
from secret_corpora_annotated import AnnotatedCase, material

__all__ = ["secret_field", "veles_cases"]

_SECRET_FIELD = re.compile(r"key|token|secret|pat|value|refresh|private|signature|content", re.I)
_OTHER_FIELD = re.compile(r"id$|url$|uri$|ref$|^public|user|name|domain|account", re.I)


def secret_field(name: str) -> bool:
    """Whether a field of a Veles secret holds the credential (not its id, user or host)."""
    return bool(_SECRET_FIELD.search(name)) and not _OTHER_FIELD.search(name)


def _want_strings(go: GoFile, i: int) -> tuple[list[str], int]:
    """The string fields (``Name: expr``) that hold a credential (:func:`secret_field`)
    inside the composite literal that starts at token ``i`` (``[]veles.Secret{...}``), and
    the token after it; ``nil`` is no secret."""
    tokens = go.tokens
    if tokens[i][1] == "nil":
        return [], i + 1
    while i < len(tokens) and tokens[i][1] != "{":
        i += 1
    depth, out = 0, []
    while i < len(tokens):
        kind, text = tokens[i]
        if text == "{":
            depth += 1
        elif text == "}":
            depth -= 1
            if depth == 0:
                return out, i + 1
        elif kind == "name" and tokens[i + 1][1] == ":" and depth >= 2:
            try:
                value, after = go.expr(i + 2)
            except (Unresolved, IndexError, ValueError, SyntaxError):
                pass  # a number, a struct or a call: no string to compare
            else:
                if secret_field(text):
                    out.append(value)
                i = after
                continue
        i += 1
    raise Unresolved


def _wanted(go: GoFile, i: int) -> list[str]:
    return _want_strings(go, i)[0]


def veles_cases(folder: Path) -> tuple[list[AnnotatedCase], int]:
    """The positive entries of Veles' detector tests under ``folder`` (a checkout of
    osv-scalibr or its ``veles/secrets`` folder), and how many entries with a ``want`` were
    left out (not built from literals, or no secret of theirs written in the input)."""
    folder = Path(folder)
    nested = folder / "veles" / "secrets"
    root = nested if nested.is_dir() else folder
    cases: list[AnnotatedCase] = []
    left_out = 0
    for path in sorted(root.rglob("*_test.go")):
        if path.name.endswith("_validator_test.go") or path.parent == root:
            continue
        family = path.relative_to(root).parts[0]
        if family == "common":
            continue  # helpers shared by the detectors, no kind of its own
        go = GoFile(path.read_text("utf-8", errors="replace"))
        entries = go.table_entries({"input": expr_at, "want": _wanted})
        for entry in entries:
            if "input" not in entry or "want" not in entry or entry["want"] == []:
                continue
            text, want = entry["input"], entry["want"]
            if not isinstance(text, str) or not isinstance(want, list):
                left_out += 1
                continue
            secrets = material([s for s in want if isinstance(s, str) and s in text])
            if not secrets:
                left_out += 1
                continue
            cases.append(
                AnnotatedCase(
                    source="veles",
                    family=family,
                    rule=path.stem.removesuffix("_test"),
                    path=path.relative_to(root).as_posix(),
                    text=text,
                    secrets=secrets,
                    credential=True,
                )
            )
    return cases, left_out
