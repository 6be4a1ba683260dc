"""The secret scanner at its edges: exact boundaries, what a refusal shows, and the
judgments of :mod:`contextfs.gate.secrets_values` one by one.

Every value here is made up for the test; none is a real credential.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import random
import re
import string
import subprocess
import sys
import warnings

import pytest
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import (
    COMMON_C_DENYLIST_REGEX_TO_GROUP,
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    GOLANG_DENYLIST_REGEX_TO_GROUP,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
)

from contextfs.errors import ConfigError, ContentError, InvalidArgumentError
from contextfs.gate import secrets_rules
from contextfs.gate.secrets import (
    SecretFinding,
    SecretPolicy,
    _merge,
    check,
    describe,
    fingerprint,
    scan,
)
from contextfs.gate.secrets_assigned import assigned_values
from contextfs.gate.secrets_detectors import (
    _AWS_SECRET,
    Candidate,
    _filtered,
    _glued,
    _matches,
    _plugin,
    _reads_as_a_name,
)
from contextfs.gate.secrets_rules import is_guess, kind_of
from contextfs.gate.secrets_syntax import SyntaxMap
from contextfs.gate.secrets_text import ScannedText, in_data_uri
from contextfs.gate.secrets_values import credential_like

# -- what a refusal of the config shows ----------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("w" * 22, "'" + "w" * 22 + "'"),  # a repr of 24 characters is shown whole
        ("w" * 23, "'" + "w" * 19 + "...'"),  # one more and it is cut to 20 and an ellipsis
        ("w" * 60, "'" + "w" * 19 + "...'"),
    ],
)
def test_a_refused_config_value_is_shown_clipped(value: str, shown: str) -> None:
    """A secret pasted as a policy or a key name must not be echoed whole: a value's repr
    is shown up to 24 characters, a longer one as its first 20 and an ellipsis."""
    with pytest.raises(ConfigError) as caught:
        SecretPolicy(policy=value)
    assert f"secret policy {shown} is unknown" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        SecretPolicy.from_config({"secrets": {"policy": value}})
    assert f"policy = {shown} in" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        SecretPolicy.from_config({"secrets": {value: 1}})
    assert f"[secrets] {shown} in .contextfs/config.toml is not a known key" in str(caught.value)


# -- long lines -------------------------------------------------------------------------


def _npmrc_line(length: int) -> str:
    """An .npmrc auth line whose registry path is long, padded to ``length`` characters:
    the registry's ``//`` is far (900 characters) before its ``_authToken``."""
    head = "//" + "registry.example.org/" + "a" * 880 + "/:_authToken="
    token = "9f3c0e7a1b4d6f2a8c5e0b9d7f1a3c6e4b2d"  # 36 hex characters
    line = head + token + " "
    return line + "#" * (length - len(line))


def test_a_line_of_4096_characters_is_scanned_whole() -> None:
    """Detectors that backtrack see a line *longer* than 4096 characters as windows around
    their needles; a line of exactly 4096 is read whole, so an npm registry line whose
    ``//`` is far before the token is still an npm token."""
    line = _npmrc_line(4096)
    assert len(line) == 4096
    assert [f.kind for f in scan(line)] == ["npm token"]


# -- values and names -----------------------------------------------------------------


def test_a_password_needs_three_classes_of_characters() -> None:
    """Eight random characters of lower case and digits only are two classes: not a
    password built to a policy; lower, upper and a symbol are three."""
    assert not credential_like("q7x2k9z4")
    assert not credential_like("qxzkwpbv")
    assert credential_like("qXzKwP!#")
    assert credential_like("q7x2K9z4")


def test_assigned_values_fold_the_text_themselves() -> None:
    text = 'deploy_token = "Qm9x7Rt2LpZ8vW4k"\n'
    expected = [(text.index("Qm9"), "Qm9x7Rt2LpZ8vW4k")]
    assert list(assigned_values(text)) == expected
    assert list(assigned_values(text, text.lower())) == expected
    # a folded copy of another length is not trusted: the text is folded again
    assert list(assigned_values(text, "x")) == expected


# -- the keyword syntax of each line (secrets_syntax) ---------------------------------

_SYNTAX_LETTERS = {
    id(CONFIG_DENYLIST_REGEX_TO_GROUP): "C",
    id(QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP): "Q",
    id(GOLANG_DENYLIST_REGEX_TO_GROUP): "G",
    id(COMMON_C_DENYLIST_REGEX_TO_GROUP): "c",
}


def _syntax(text: str, path: str | None) -> str:
    """One letter per line: C config (``key: value``), Q quotes required, G Go, c C."""
    doc = ScannedText(text)
    syntaxes = SyntaxMap(text, doc.raw_lines, doc.starts, path)
    return "".join(_SYNTAX_LETTERS[id(syntaxes.of(i))] for i in range(len(doc.raw_lines)))


_FENCES = "\n".join(
    [
        "password: 'a'",  # prose: quotes required
        "DB_PASSWORD=x",  # a NAME=value line is config anywhere outside a fence
        "```yaml",  # the opening line is not inside its fence
        "password: b",
        "~~~",  # another character does not close a ``` fence
        "```python",  # nor does a fence line with an info string
        "```",
        "password: c",
        "````go",
        "```",  # nor a shorter run
        'token := "x"',
        "`````",  # a longer run closes
        "```",  # no language: judged line by line
        "DB_PASSWORD=y",
        "password: d",
        "```",
        "text ``` inline",  # not a fence line
        "~~~ini",
        "password: e",
        "~~~",
        "```rust",  # a language without its own syntax: quotes required
        "DB_PASSWORD=z",
        "```",
        "```YAML",  # languages are read case-insensitively
        "password: f",
        "```",
    ]
)


@pytest.mark.parametrize(
    ("text", "path", "letters"),
    [
        (_FENCES, "notes/n.md", "QCQCCCQQQGGQQCQQQQCQQQQQCQ"),
        ("```yaml\npassword: a\n```", "n.md", "QCQ"),  # a fence closed on the last line
        ("```yaml\npassword: a\n```\npassword: b\n", "n.md", "QCQQQ"),
        ("```yaml\n```\npassword: b\n", "n.md", "QQQQ"),  # an empty fence
        ("intro\n```yaml\npassword: a\npassword: b", "n.md", "QQCC"),  # unclosed: to the end
        ("```yaml\nDB=1\n```\n```go\nx\n```\n```ini\ny\n```\n", None, "QCQQGQQCQQ"),
    ],
)
def test_fences_give_their_lines_the_syntax_of_their_language(
    text: str, path: str | None, letters: str
) -> None:
    assert _syntax(text, path) == letters


@pytest.mark.parametrize(
    ("text", "letters"),
    [
        ("---\ntitle: x\npassword: a\n---\npassword: b\n", "CCCCQQ"),
        # the first line after the frontmatter may open a fence
        ("---\ntitle: x\n---\n```yaml\npassword: c\n```\npassword: d\n", "CCCQCQQQ"),
        # a fence line inside the frontmatter opens nothing
        ("---\ndescription: |\n  ```yaml\n---\npassword: 'x'\n", "CCCCQQ"),
        ("---\n---\npassword: x\n", "CCQQ"),  # an empty frontmatter
        ("---\ntitle: x\npassword: a", "CCC"),  # never closed: all of it
        ("---\ntitle: x\n```yaml\npassword: a", "CCCC"),
        ("---  \npassword: a\n...\nbody\n", "CCCQQ"),  # trailing blanks; `...` closes
        (" ---\npassword: a\n---\n", "QQQQ"),  # an indented first line opens none
        ("title\n---\npassword: a\n---\n", "QQQQQ"),  # nor a later one
    ],
)
def test_frontmatter_is_config_up_to_its_closing_line(text: str, letters: str) -> None:
    assert _syntax(text, "memory/note.md") == letters


@pytest.mark.parametrize(
    ("path", "letters"),
    [
        (None, "QC"),
        ("notes/n.md", "QC"),
        ("notes/n.txt", "QC"),
        ("deploy/values.yaml", "CC"),
        ("deploy/VALUES.YAML", "CC"),
        ("deploy/.env", "CC"),
        ("deploy/.env.production", "CC"),
        ("deploy/prod.env", "CC"),
        ("config.toml", "CC"),
        ("main.go", "GG"),
        ("main.c", "cc"),
        ("app.py", "QQ"),
        ("tool.rb", "QQ"),  # a file type without its own syntax: quotes required
    ],
)
def test_a_files_name_fixes_the_syntax_of_every_line(path: str | None, letters: str) -> None:
    assert _syntax("password: x\nDB_PASSWORD=x", path) == letters


# -- one text, searched once (secrets_text) -------------------------------------------


def test_scanned_text_splits_strips_and_folds() -> None:
    doc = ScannedText("Key one  \r\n\tTWO\n")
    assert doc.text == "Key one  \r\n\tTWO\n"
    assert doc.raw_lines == ["Key one  \r", "\tTWO", ""]
    assert [doc.line(i) for i in range(3)] == ["Key one", "\tTWO", ""]
    assert doc.all_lines() == ["Key one", "\tTWO", ""]
    assert doc.all_lines() is doc.all_lines()
    assert doc.starts == [0, 11, 16]
    assert doc.folded == "key one  \r\n\ttwo\n"
    # a character that lower-cases to two would shift every offset: folded keeps the length
    odd = ScannedText("\u0130 Key")
    assert len(odd.folded) == len(odd.text) and odd.folded.endswith(" key")


def test_hits_are_every_occurrence_by_line_and_offset() -> None:
    doc = ScannedText("aaa b\nKey aa\nnone\nxaa")
    assert doc.hits(("aa",), False) == {0: [0, 1], 1: [4], 3: [1]}
    # offsets come sorted whatever the order of the needles
    assert doc.hits(("b", "aaa"), False) == {0: [0, 4]}
    assert doc.hits(("key",), False) == {}
    assert doc.hits(("key",), True) == {1: [0]}
    assert doc.hits(("key",), True) is doc.hits(("key",), True)
    assert doc.hits(("zz",), False) == {}


def test_gated_lines_are_where_the_pattern_matches() -> None:
    doc = ScannedText("x KEY=1\nkey = 2\nnothing")
    assert doc.gated(re.compile(r"key\s*="), False) == {1: [0]}
    assert doc.gated(re.compile(r"key\s*="), True) == {0: [2], 1: [0]}
    assert doc.gated(re.compile("nothing"), False) == {2: [0]}
    assert doc.gated(re.compile("absent"), True) == {}


# -- the vendor rule set (secrets_rules) ----------------------------------------------


def test_a_rule_finding_is_named_after_its_rule() -> None:
    assert kind_of("betterleaks.stripe-access-token") == "rule stripe-access-token"
    assert kind_of("veles.secrets/gcp-key") == "rule gcp-key"
    assert kind_of("kingfisher.heroku.1") == "rule heroku.1"
    assert kind_of("custom.thing") == "rule thing"  # a rule run alone names the same kind
    assert kind_of("acme.thing") == "rule acme.thing"
    assert is_guess("kingfisher.generic.3") and is_guess("betterleaks.curl-auth-header")
    assert not is_guess("kingfisher.github.1")


_HEROKU = "HRKU-AAPtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA-2O76UMFxFkM-R5Kjp1"  # 7 + 58


def test_rule_matches_give_kind_line_value_and_guess() -> None:
    found = list(secrets_rules.matches(f"# notes\n\nplatform key {_HEROKU}\n"))
    assert found == [("rule herokuplatformkey", 3, _HEROKU, False)]


def test_a_component_of_a_composite_rule_is_not_a_rule_finding() -> None:
    """An AWS secret key without its key id is only a helper of the rule set's two-part
    AWS rule (the scanner's own AWS detector reports it); a secret after it still is a
    rule finding."""
    aws = "aws_secret_access_key = Zq8Rt2Lw9Xk4Vb7Nm1Pc6Jd3Hf5Gs0Ay2Ue8Io4T"
    assert [f.visible for f in secrets_rules.load().scan(aws.encode())] == [False]
    assert list(secrets_rules.matches(aws + "\n")) == []
    # helpers and secrets interleaved: every secret is still reported
    keys = [_HEROKU, _HEROKU.replace("Pt", "Qt"), _HEROKU.replace("Pt", "Rt")]
    text = "".join(f"{aws}\nplatform key {key}\n" for key in keys) + aws
    found = list(secrets_rules.matches(text))
    assert sorted((line, value) for _, line, value, _ in found) == [
        (2, keys[0]),
        (4, keys[1]),
        (6, keys[2]),
    ]
    assert [f.kind for f in scan(aws)] == ["AWS access key"]


def test_rule_matches_take_text_with_lone_surrogates() -> None:
    found = list(secrets_rules.matches(f"\ud800 odd\nplatform key {_HEROKU}\n"))
    assert [(line, value) for _, line, value, _ in found] == [(2, _HEROKU)]


def test_the_rule_set_is_built_once_and_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets_rules, "_scanner", None)
    first = secrets_rules.load()
    assert first is not None and secrets_rules.load() is first
    assert list(first.scan(_HEROKU.encode()))


# -- findings, fingerprints and refusals (secrets) ------------------------------------

_GITHUB = "ghp_" + "Zq8Rt2Lw9Xk4Vb7Nm1Pc6Jd3Hf5Gs0Ay2Ue8I"  # 4 + 36


def test_a_finding_names_its_line_or_the_frontmatter() -> None:
    assert str(SecretFinding("GitHub token", 1, "0" * 16)) == (
        f"GitHub token on line 1 (fingerprint {'0' * 16})"
    )
    assert str(SecretFinding("GitHub token", 0, "0" * 16)) == (
        f"GitHub token in the frontmatter (fingerprint {'0' * 16})"
    )


def test_fingerprints_are_stable_across_versions() -> None:
    """An allow-list written today must keep working: the salt and the length are fixed."""
    assert fingerprint("x") == "cb0cb6d36f81041a"
    assert (
        fingerprint("x\ud800")
        == hashlib.sha256(
            b"contextfs secret fingerprint v1\0x" + "\ud800".encode("utf-8", "surrogatepass")
        ).hexdigest()[:16]
    )


def test_describe_lists_eight_findings_and_counts_the_rest() -> None:
    one = SecretFinding("Stripe key", 3, "0123456789abcdef")
    assert describe([one]) == f"the text holds a secret: {one}"
    assert describe([one, one], path="a.md") == f"a.md holds 2 secrets: {one}; {one}"
    eight = [SecretFinding("Stripe key", n, "0123456789abcdef") for n in range(1, 9)]
    assert describe(eight).endswith(str(eight[-1]))
    assert describe([*eight, one]).endswith(f"{eight[-1]}; and 1 more")


def test_check_reports_findings_on_the_lines_the_caller_wrote() -> None:
    """Line ``body_line`` of the scanned text is line ``written_line`` of what the caller
    wrote; a finding above it is in the frontmatter the write added."""
    text = f"---\ntoken: {_GITHUB}\n---\nfirst\n{_GITHUB}x\n"
    with pytest.raises(ContentError) as caught:
        check(text, path="n.md", body_line=4, written_line=1)
    message = str(caught.value)
    assert "GitHub token in the frontmatter" in message and "GitHub token on line 2" in message
    with pytest.raises(ContentError, match="GitHub token on line 1 "):
        check(f"{_GITHUB}\n", body_line=1, written_line=1)
    with pytest.raises(ContentError, match="GitHub token on line 1 "):
        check(f"{_GITHUB}\n")
    with pytest.raises(ContentError, match="GitHub token on line 5 "):
        check(f"{_GITHUB}\n", body_line=1, written_line=5)
    # the first line of the body is the first line written; one above it is not
    with pytest.raises(ContentError, match="GitHub token on line 1 "):
        check(f"---\n---\n{_GITHUB}\n", body_line=3, written_line=1)
    with pytest.raises(ContentError, match="GitHub token in the frontmatter"):
        check(f"{_GITHUB}\nbody\n", body_line=2, written_line=1)


def test_a_refusal_without_the_inline_marker_ends_with_the_config_fix() -> None:
    with pytest.raises(ContentError) as caught:
        check(f"{_GITHUB}\n", policy=SecretPolicy(inline_allowlist=False))
    assert str(caught.value).endswith("in the [secrets] table of .contextfs/config.toml")
    with pytest.raises(ContentError) as caught:
        check(f"{_GITHUB}\n", policy=SecretPolicy.from_config({"secrets": {"policy": "refuse"}}))
    assert str(caught.value).endswith("(# pragma: allowlist secret in code)")


def test_a_policys_allow_list_is_kept_as_fingerprints_written_one_way() -> None:
    policy = SecretPolicy(allow=[" 0123456789ABCDEF ", "fedcba9876543210"])
    assert policy.allow == frozenset({"0123456789abcdef", "fedcba9876543210"})
    assert policy == SecretPolicy(allow=frozenset({"fedcba9876543210", "0123456789abcdef"}))


def test_a_policy_finds_what_scan_finds_less_what_it_allows() -> None:
    """``SecretPolicy.findings`` is the scan under the policy's allow-list and inline
    marker setting; the ``allow`` policy finds nothing but still refuses wrong arguments."""
    text = f"{_GITHUB}\n"
    (finding,) = SecretPolicy().findings(text)
    assert finding.kind == "GitHub token"
    assert SecretPolicy(allow=frozenset({finding.fingerprint})).findings(text) == []
    marked = f"{_GITHUB}  # pragma: allowlist secret\n"
    assert SecretPolicy().findings(marked) == []
    assert [f.kind for f in SecretPolicy(inline_allowlist=False).findings(marked)] == [
        "GitHub token"
    ]
    assert SecretPolicy("allow").findings(text) == []
    with pytest.raises(InvalidArgumentError, match="path must be a string or None, not int"):
        SecretPolicy("allow").findings(text, path=5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="takes text, not bytes"):
        SecretPolicy("allow").findings(b"x")  # type: ignore[arg-type]


def test_allow_lists_are_checked_wherever_they_come_from() -> None:
    """An allow-list passed to scan is checked like the config's, frozen or not."""
    (finding,) = scan(f"{_GITHUB}\n")
    for allow in ([finding.fingerprint.upper()], frozenset({f" {finding.fingerprint} "})):
        assert scan(f"{_GITHUB}\n", allow=allow) == []
    for allow in (["nope"], frozenset({"nope"})):
        with pytest.raises(ConfigError, match=r"^allow item 1 is not a fingerprint"):
            scan("text", allow=allow)
    with pytest.raises(ConfigError, match=r"^secret allow-list item 2 is not a fingerprint"):
        SecretPolicy(allow=["0123456789abcdef", "nope"])
    with pytest.raises(
        ConfigError, match=r"^\[secrets\] allow in \.contextfs/config\.toml item 1 is not"
    ):
        SecretPolicy.from_config({"secrets": {"allow": ["nope"]}})


def test_the_clean_text_cache_holds_texts_up_to_1024_characters_and_256_of_them(
    monkeypatch: pytest.MonkeyPatch, detector_calls: list[str]
) -> None:
    from contextfs.gate import secrets

    calls = detector_calls
    monkeypatch.setattr(secrets, "_CLEAN", {})
    longest, too_long = "a " * 512, "a " * 512 + "b"
    assert len(longest) == 1024
    for _ in range(2):
        assert scan(longest) == [] and scan(too_long) == []
    assert calls.count(longest) == 1 and calls.count(too_long) == 2
    sizes = []
    for n in range(300):
        scan(f"clean note {n}")
        sizes.append(len(secrets._CLEAN))
    assert max(sizes) == 256 and sizes[-1] < 256


def test_the_detectors_load_once_and_leave_the_hosts_warnings_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from contextfs.gate import secrets, secrets_detectors

    monkeypatch.setattr(secrets, "_loaded", None)
    before = warnings.showwarning
    logging.captureWarnings(True)  # the host routes warnings to logging; it stays so
    try:
        routed = warnings.showwarning
        assert [f.kind for f in scan(f"{_GITHUB}\n")] == ["GitHub token"]
        assert secrets._loaded is secrets_detectors
        assert warnings.showwarning is routed
    finally:
        logging.captureWarnings(False)
    assert warnings.showwarning is before


def test_loading_the_detectors_undoes_the_warning_capture_their_import_makes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """detect-secrets routes every warning of the process to logging when it is imported;
    the scanner imports it on first use and puts the host's warnings back. Imported afresh
    here (the rest of the suite has it loaded already), as a fresh process would."""
    import contextfs.gate
    from contextfs.gate import secrets

    # the package's attribute is rebound by the import below: put the suite's copy back after
    monkeypatch.setattr(contextfs.gate, "secrets_detectors", contextfs.gate.secrets_detectors)
    fresh = [m for m in sys.modules if m.startswith("detect_secrets")]
    for name in [*fresh, "contextfs.gate.secrets_detectors"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(secrets, "_loaded", None)
    before = warnings.showwarning
    try:
        assert [f.kind for f in scan(f"{_GITHUB}\n")] == ["GitHub token"]
        assert "detect_secrets.core.log" in sys.modules  # it was imported again
        assert warnings.showwarning is before
    finally:
        logging.captureWarnings(False)
        for name in [m for m in sys.modules if m.startswith("detect_secrets")]:
            if name not in fresh:  # loaded only by this test: the suite keeps its own copy
                del sys.modules[name]


# -- the filters every candidate passes (secrets_detectors) -------------------------

_VALUE = "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsax"


@pytest.mark.parametrize(
    ("line", "glued"),
    [
        (f"{_VALUE} at the start", False),
        (f"bot{_VALUE}", False),  # a word before it: no digit
        (f"ab12{_VALUE}", True),  # a run holding a digit
        (f"9{_VALUE}", True),  # from the very first character
        (f"9{'a' * 64}{_VALUE}", False),  # the digit is 65 characters back
        (f"9{'a' * 63}{_VALUE}", True),  # 64 characters back
        (f"9-{_VALUE}", False),  # punctuation ends the run
        (f"1\u00e9ab{_VALUE}", False),  # so does a letter outside ASCII
        (f"1\u00e9{_VALUE}", False),
        (f"x1{_VALUE} and {_VALUE}", False),  # every occurrence must be glued
        (f"x1{_VALUE} and 2{_VALUE}", True),
        (f"x1{_VALUE} {_VALUE} 2{_VALUE}", False),
    ],
)
def test_a_value_is_glued_when_every_occurrence_continues_a_run_with_a_digit(
    line: str, glued: bool
) -> None:
    assert _glued(_VALUE, line) is glued


def test_overlapping_occurrences_are_each_judged() -> None:
    assert _glued("--", "9--") and not _glued("--", "9---")


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("tidewater-db", True),
        ("changeme", True),
        ("12345678", True),
        ("!!!!", True),  # symbols only: one class
        ("a.b/c:d@e_f-g", True),  # a name's punctuation is no class
        ("Tidewater", False),
        ("tidewater1", False),
        ("Tidewater1", False),
        ("tide!water", False),
    ],
)
def test_one_class_of_characters_reads_as_a_name(value: str, name: bool) -> None:
    assert _reads_as_a_name(value) is name


_TOKEN = "ghp_Zq8Rt2Lw9Xk4Vb7Nm1Pc6Jd3Hf5Gs0Ay2Ue8"


def test_the_filters_of_a_format_and_of_a_guess() -> None:
    line = f"the CI token is {_TOKEN}"
    # a vendor format is a secret wherever it appears, unless it is a slice of a longer run
    assert not _filtered(_TOKEN, line, False)
    assert _filtered(_VALUE, f"x9f{_VALUE}", False)
    assert not _filtered(_VALUE, f"x9f{_VALUE}", True)  # a guess is not judged glued
    # detect-secrets' value heuristics, for every detector
    uuid = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
    for value in ("abcdefghijklmnop", "{{token}}", "$Tok3nX9abcd", uuid, "!@#$%^&*()"):
        assert _filtered(value, f"x = {value}", False), value
    assert not _filtered(uuid, f"x = {uuid}", False, uuid=True)  # the format holds one
    # and for guesses, the context: an id, an indirect reference, a name
    value = "Zq8Rt2Lw9Xk4"
    assert not _filtered(value, f'password = "{value}"', True)
    assert not _filtered(value, f'password = "{value}"', False)
    assert _filtered(value, f'user_id = "{value}"', True)
    assert not _filtered(value, f'user_id = "{value}"', True, ids=False)  # a vendor pattern's
    assert _filtered(value, f'password = get_secret("{value}")', True)
    assert _filtered("tidewater-db", 'password = "tidewater-db"', True)
    assert not _filtered(value, f'password = get_secret("{value}")', False)


def test_a_password_in_a_url_after_an_id_like_name_is_refused() -> None:
    """The id guess (``user_id = ...`` holds an id) is made for values no vendor pattern
    found; a URL's password matched by its pattern is a password whatever name precedes it.
    No rule of the vendor rule set finds this one, so the URL pattern alone decides."""
    password = "Xk39vLq2pRw8"
    for name in ("session_id:", "user_ids =", "myid:"):
        line = f"{name} https://admin:{password}@db.internal.example/app"
        assert not list(secrets_rules.matches(line)), line
        assert [f.kind for f in scan(line)] == ["password in URL"], line


def test_plugin_matches_give_the_value_and_what_is_fingerprinted() -> None:
    """A pattern's group that only starts the match (GitHub's ``ghp``) gives way to the
    whole match as material; an assignment's group is its own material; a match without
    groups is its own value; a plugin with its own check (JWT) is asked as it is."""
    assert set(_matches(GitHubTokenDetector(), f"ci {_TOKEN}")) == {("ghp", _TOKEN)}
    secret = "Zq8Rt2Lw9Xk4Vb7Nm1Pc6Jd3Hf5Gs0Ay2Ue8Io4T"
    assert set(_matches(_AWS_SECRET, f"aws_secret_access_key = {secret}")) == {(secret, secret)}
    plain = _plugin("PlainDetector", (re.compile(r"tok_[0-9]{4}"),))
    assert type(plain).__name__ == "PlainDetector" and plain.secret_type == "PlainDetector"
    assert list(_matches(plain, "a tok_1234 b tok_5678")) == [
        ("tok_1234", "tok_1234"),
        ("tok_5678", "tok_5678"),
    ]
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0."
    found = set(_matches(JwtTokenDetector(), f"{jwt}c2ln and eyJub3Rqc29u.eyJ4.eQ"))
    assert found == {(jwt, jwt)}


def test_one_finding_per_secret_per_line() -> None:
    """A format beats a guess, a named kind beats a rule of the vendor set even with a
    shorter value, and a value containing another on its line is that one."""
    merged = _merge(
        [
            Candidate("rule github-pat", 2, "ghp_abc", False, rule_set=True),
            Candidate("GitHub token", 2, "ghp_abcd", False),
            Candidate("password or secret assignment", 1, "npm_x", True),
            Candidate("npm token", 1, "npm_x # comment", False),
            Candidate("npm token", 1, "npm_y", False),
        ]
    )
    assert merged == [
        ("npm token", 1, "npm_y"),
        ("npm token", 1, "npm_x # comment"),
        ("GitHub token", 2, "ghp_abcd"),
    ]


def test_the_path_picks_the_syntax_in_scan_and_check() -> None:
    """Unquoted `password: Winter-Garden` is a value in a YAML file, prose in a note."""
    text = "password: Winter-Garden\n"
    assert [f.kind for f in scan(text, path="deploy/values.yaml")] == [
        "password or secret assignment"
    ]
    assert scan(text, path="notes/n.md") == [] and scan(text) == []
    with pytest.raises(ContentError, match="deploy/values.yaml holds a secret"):
        check(text, path="deploy/values.yaml")
    check(text, path="notes/n.md")


def test_a_finding_above_the_body_is_in_the_frontmatter_wherever_the_body_starts() -> None:
    with pytest.raises(ContentError) as caught:
        check(f"{_GITHUB}\n---\nbody\n", body_line=3, written_line=5)
    assert "GitHub token in the frontmatter" in str(caught.value)


@pytest.mark.parametrize("allow", ["0123456789abcdef", b"0123456789abcdef", 5])
def test_an_allow_list_that_is_not_a_list_is_refused_as_such(allow: object) -> None:
    with pytest.raises(ConfigError, match="allow-list must be a list of fingerprints"):
        SecretPolicy(allow=allow)  # type: ignore[arg-type]


@pytest.mark.parametrize("registry", ["registry.npmjs.org", "r" * 215])
def test_a_long_line_is_scanned_in_windows_that_hold_the_whole_match(registry: str) -> None:
    """On a line longer than 4096 characters an npm registry line is seen through a window
    that starts up to 512 characters before its ``_authToken`` (from the line's very first
    character) and reaches past the token, even when the token crosses a 256-character
    step."""
    token = "9f3c0e7a1b4d6f2a8c5e0b9d7f1a3c6e4b2d"
    line = f"//{registry}/:_authToken={token} "
    line += "#" * (5000 - len(line))
    assert [f.kind for f in scan(line)] == ["npm token"]


# -- every match is judged on its own ----------------------------------------------------
def test_a_match_passed_over_does_not_hide_the_next_on_its_line() -> None:
    """A line may hold a documented example or a slice of a longer run before a real key:
    passing over the first goes on to the next (matches are judged in the order found)."""
    rng = random.Random("two keys")
    real = "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))
    findings = scan(f"the logs show AKIAIOSFODNN7EXAMPLE and {real}\n")
    assert [(f.kind, f.fingerprint) for f in findings] == [("AWS access key", fingerprint(real))]
    # a Docker auth that does not decode to user:password, then one that does
    broken = base64.b64encode(b"ci-bot:Vq8tL2mZx7").decode() + "="
    auth = base64.b64encode(b"ci-bot:Hr4kT9wQz2").decode()
    note = f'{{"auths": {{"a.io": {{"auth": "{broken}"}}, "b.io": {{"auth": "{auth}"}}}}}}\n'
    docker = [f for f in scan(note, path="notes/n.md") if f.kind == "Docker registry credential"]
    assert [f.fingerprint for f in docker] == [fingerprint(auth)]


def test_a_rule_match_passed_over_does_not_end_the_scan() -> None:
    """A placeholder found by the vendor rule set on one line, a real token on the next."""
    rng = random.Random("shopify")
    token = "shpat_" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    text = f"sendgrid: SG.{'x' * 22}.{'x' * 43}\nshopify: {token}\n"
    assert [(f.kind, f.line) for f in scan(text)] == [("rule shopify-access-token", 2)]


def test_an_assigned_id_does_not_end_the_scan() -> None:
    """A value under an id's name is passed over; the secret assigned after it is not. (Only
    the value's own name says id: another key's `_id` earlier on the line says nothing, see
    test_secrets.py.)"""
    rng = random.Random("ids")
    alphabet = string.ascii_letters + string.digits
    session, secret = ("".join(rng.choice(alphabet) for _ in range(24)) for _ in range(2))
    text = (
        f'{{"user": 7, "session_token_id": "{session}"}}\n'
        f'token: "{session}"  # pragma: allowlist secret\n'
        f'signing_key: "{secret}"\n'
    )
    findings = scan(text)
    assert [(f.kind, f.line, f.fingerprint) for f in findings] == [
        ("password or secret assignment", 3, fingerprint(secret))
    ]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # Another key's id before the value, in one line of JSON, INI or a query string.
        ('{"user_id": 7, "password": "hunter2hunter2"}', True),
        ("user_id=7; password=hunter2hunter2", True),
        ("user_id=7&password=hunter2hunter2", True),
        # Where a value occurs twice, the pair it is judged in is the first.
        ('{"password": "hunter2hunter2", "user_id": "hunter2hunter2"}', True),
        # The pair starts at the last separator before the value, not the first.
        ('{"a": 1, "user_id": 7, "password": "hunter2hunter2"}', True),
    ],
)
def test_the_keyword_guess_takes_an_id_only_from_the_values_own_pair(
    text: str, found: bool
) -> None:
    """detect-secrets' keyword detector finds `hunter2hunter2` (two classes, so not the value
    rule); its "an id" guess reads the pair the value belongs to."""
    assert [f.kind for f in scan(text)] == (["password or secret assignment"] if found else [])


_B64 = random.Random("key bodies")
_PIECE = [
    "".join(_B64.choice(string.ascii_letters + string.digits + "+/") for _ in range(n))
    for n in (30, 30, 40, 20)
]


@pytest.mark.parametrize(
    "body",
    [
        f"{_PIECE[0]}...{_PIECE[1]}",  # a key cut short
        f"{_PIECE[2]}\\n{_PIECE[3]}",  # 60 characters of base64: no key is that short
    ],
)
def test_a_key_block_on_one_line_without_key_material_is_not_refused(body: str) -> None:
    """A JSON string holding a private key's armour around no key (a key cut short in a
    setup note, or too short to be one) is matched by the rule set's private-key rule and
    then passed over, like the same block on lines of its own."""
    text = (
        '{"private_key": "-----BEGIN RSA PRIVATE KEY-----\\n'
        + body
        + '\\n-----END RSA PRIVATE KEY-----"}\n'
    )
    assert [kind for kind, *_ in secrets_rules.matches(text)] == ["rule private-key"]
    assert scan(text) == []
    # and a token the rule set finds further down is still refused
    rng = random.Random("after the key")
    token = "shpat_" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    findings = scan(text + f"shopify: {token}\n")
    assert [(f.kind, f.line) for f in findings] == [("rule shopify-access-token", 2)]


def test_a_key_header_without_a_key_does_not_hide_a_key_further_down() -> None:
    """A setup note showing the armour alone, then a real key: the key is refused."""
    rng = random.Random("pem")
    body = "\n".join(
        "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(64))
        for _ in range(4)
    )
    text = (
        "Paste the key between these lines:\n"
        "-----BEGIN RSA PRIVATE KEY-----\n(your key)\n-----END RSA PRIVATE KEY-----\n"
        "The staging one:\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"
    )
    assert [(f.kind, f.line) for f in scan(text)] == [("private key", 6)]


@pytest.mark.parametrize("value", ["changeme123", "MyP4ssw0rdExample", "dummy-Pass-123"])
def test_a_placeholder_password_in_code_is_not_refused(value: str) -> None:
    """Setup notes show passwords to replace; the keyword patterns find them and the
    placeholder rule passes them over, as it does for every detector."""
    assert scan(f'password = "{value}"\n', path="docs/setup.py") == []


def test_a_name_like_value_does_not_hide_a_password_after_it_on_its_line() -> None:
    """Two assignments on one line: the first value reads as a name (one class of
    characters), the second is a password only the keyword patterns find (too regular for
    the value rule), and it is refused."""
    text = 'db_password = "tidewater-db"; admin_password = "hunter2hunter2"\n'
    findings = scan(text, path="app/settings.py")
    assert [(f.kind, f.fingerprint) for f in findings] == [
        ("password or secret assignment", fingerprint("hunter2hunter2"))
    ]


def test_a_key_under_a_label_only_the_rule_set_knows_is_refused() -> None:
    """detect-secrets lists the usual PEM labels; the vendor rule set matches any
    ``... PRIVATE KEY`` armour, on one line (a JSON string) or across lines. A key under
    another label, with a body, is refused by the rule set's finding; its armour alone is
    not."""
    rng = random.Random("x509")
    body = "\\n".join(
        "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(64))
        for _ in range(5)
    )
    armour = "-----BEGIN X509 PRIVATE KEY-----\\n" + body + "\\n-----END X509 PRIVATE KEY-----"
    text = '{"key": "' + armour + '"}\n'
    assert [(f.kind, f.line) for f in scan(text)] == [("rule private-key", 1)]
    # the same key on lines of its own, as a PEM file holds it; its armour alone is not
    pem = armour.replace("\\n", "\n")
    assert [(f.kind, f.line) for f in scan(f"notes\n{pem}\n")] == [("rule private-key", 2)]
    empty = "-----BEGIN X509 PRIVATE KEY-----\n(your key)\n-----END X509 PRIVATE KEY-----\n"
    assert scan(empty) == []


def test_findings_come_in_the_same_order_in_every_process() -> None:
    """Four keys on one line are reported in the order of the text whatever the process's
    hash seed (matches were once judged as a set, in an order each process chose)."""
    code = (
        "import random, string\n"
        "from contextfs.gate.secrets import fingerprint, scan\n"
        "r = random.Random(4)\n"
        "alphabet = string.ascii_uppercase + string.digits\n"
        "keys = ['AKIA' + ''.join(r.choice(alphabet) for _ in range(16)) for _ in range(4)]\n"
        "print([f.fingerprint for f in scan('the keys ' + ' '.join(keys) + '\\n')])\n"
        "print([fingerprint(key) for key in keys])\n"
    )
    outputs = set()
    for seed in ("0", "1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(proc.stdout)
    (output,) = outputs
    found, in_text = output.splitlines()
    assert found == in_text


# -- bytes inlined as a data URI --------------------------------------------------------------


def _payload(rng: random.Random, middle: str) -> str:
    b64 = string.ascii_letters + string.digits + "+/"
    head = "/9j/4AAQSkZJRgABAQIAHAAcAAD/2wBD" + "".join(rng.choice(b64) for _ in range(300))
    return head + "/" + middle + "".join(rng.choice(b64) for _ in range(300)) + "=="


def test_a_token_spelled_by_an_inlined_images_bytes_is_not_a_secret() -> None:
    # A base64 JPEG in HTML holds `/EAA` and 90 letters somewhere: a Meta token's shape.
    rng = random.Random(8)
    meta = "EAA" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(120))
    image = _payload(rng, meta)
    html = f'<td><img src="data:image/jpg;base64,{image}" alt="logo"></td>\n'
    css = f".logo {{ background: url(data:image/png;charset=utf-8;base64,{image}); }}\n"
    assert scan(html, path="notes/page.md") == [] and scan(css, path="notes/s.md") == []
    # the same token written beside the image on the line is still one
    assert [f.kind for f in scan(f"token {meta} " + html, path="notes/page.md")] == [
        "Meta access token"
    ]
    assert in_data_uri(meta, html) and not in_data_uri(meta, f"{meta} {html}")
    assert not in_data_uri(meta, f"base64, {meta}") and not in_data_uri("absent", html)


def test_a_value_at_the_edges_of_a_payload_lies_in_it() -> None:
    value = "EAAQx7Zk29fLq8Xv03NmW7pRt5Yh2aQe41Lm0o9Uv"
    assert in_data_uri(value, f"data:image/png;base64,{value}")  # at its start
    assert in_data_uri(value, f'src="data:image/png;base64,QUJD{value}" />')  # at its end
    # a value running past the payload's last base64 character is not inside it
    assert not in_data_uri("QUJD.tail-of-it", "data:image/png;base64,QUJD.tail-of-it")
    # every occurrence counts: inside, outside, then inside another payload
    line = f"data:a/b;base64,{value} and {value} data:a/b;base64,{value}"
    assert not in_data_uri(value, line)
