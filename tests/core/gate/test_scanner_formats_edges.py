"""The scanner's formats and windows at their edges: how a pattern is compiled, what a
Docker ``auth`` and a Data Center token must decode to, and which part of a long line the
detectors read, and which case a gate reads.

Every value here is made up for the test; none is a real credential.
"""

from __future__ import annotations

import base64
import random
import re
import string

import pytest

from contextfs.gate.secrets import fingerprint, scan
from contextfs.gate.secrets_detectors import _LONG_LINE, _WINDOW_REACH, _WINDOW_STEP, _segments
from contextfs.gate.secrets_formats import compile_patterns


# ------------------------------------------------------------------ formats
def test_compile_patterns_keeps_each_pattern_and_the_flags_asked_for() -> None:
    # The formats are compiled when their module loads, before any test runs: checked here.
    assert compile_patterns(r"ab+c") == (re.compile(r"ab+c"),)
    folded = compile_patterns(r"ab+c", r"x\d", flags=re.IGNORECASE)
    assert folded == (re.compile(r"ab+c", re.IGNORECASE), re.compile(r"x\d", re.IGNORECASE))
    assert folded[0].fullmatch("ABBC")


def _docker_kinds(auth: str) -> list[str]:
    note = f'{{"auths": {{"registry.corp.io": {{"auth": "{auth}"}}}}}}\n'
    return [f.kind for f in scan(note, path="notes/n.md")]


def test_a_docker_password_is_everything_after_the_first_colon() -> None:
    # Basic authentication: a user id holds no colon, a password may, even as its last character.
    auth = base64.b64encode(b"ci-bot:Vq8tL2mZ:").decode()
    assert "Docker registry credential" in _docker_kinds(auth)


def test_a_docker_auth_that_is_not_base64_is_not_a_credential() -> None:
    # A padding character too many (Docker's client refuses it), and a length no base64 has.
    whole = base64.b64encode(b"ci-bot:Vq8tL2mZx7").decode()
    assert whole.endswith("=") and not whole.endswith("==")
    for auth in (whole + "=", "Y2ktYm90OlZxO"):
        assert "Docker registry credential" not in _docker_kinds(auth), auth


def test_a_data_center_token_id_is_all_digits() -> None:
    # The pattern spells out digits and the colon, but lets ':' and ';' through as the first
    # byte of each three: the decoding is what refuses them.
    rng = random.Random("dc-edges")
    kinds = []
    for token_id in (b"123456789012", b";23456789012", b"123456789:12"):
        token = base64.b64encode(token_id + b":" + rng.randbytes(20)).decode()
        kinds.append("Atlassian Data Center token" in [f.kind for f in scan(f"token {token}\n")])
    assert kinds == [True, False, False]


# ------------------------------------------------------------------ windows
def test_a_short_line_is_read_whole() -> None:
    line = "x" * _LONG_LINE
    assert _segments(line, [5, 4000]) == [line]


def test_a_long_line_is_read_in_bounded_windows_around_its_needles() -> None:
    """A line longer than the limit is read only around the offsets where a detector's
    needle is: one window per stretch of the line holding one, reaching a fixed distance
    either side, so a 4 MB line costs the detectors what its needles do, not its length."""
    rng = random.Random("windows")
    line = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(40_000))
    offsets = [100, 130, 9_000, 39_990]
    windows = _segments(line, offsets)
    assert len(windows) == 3  # 100 and 130 fall in the same stretch
    for window in windows:
        assert len(window) <= _WINDOW_STEP + 2 * _WINDOW_REACH
        assert window in line
    for offset in offsets:  # each needle with what surrounds it on either side
        around = line[max(0, offset - _WINDOW_REACH) : offset + _WINDOW_REACH]
        assert any(around in window for window in windows), offset
    middle = windows[1]
    start = line.index(middle)
    assert start == (9_000 // _WINDOW_STEP) * _WINDOW_STEP - _WINDOW_REACH
    assert start + len(middle) == (9_000 // _WINDOW_STEP + 1) * _WINDOW_STEP + _WINDOW_REACH


def test_only_the_detectors_that_backtrack_read_a_long_line_in_windows() -> None:
    """A token longer than a window (a JWT with a large payload, as identity providers
    issue) on a long line is read whole: the JWT pattern cannot backtrack, so it reads the
    line as it is and reports the whole token, never a slice cut at a window's edge."""
    rng = random.Random("long jwt")

    def part(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    claims = ",".join(f'"c{k}":"{rng.randrange(10**12)}"' for k in range(60))
    token = ".".join(
        (
            part(b'{"alg":"HS256","typ":"JWT"}'),
            part(("{" + claims + "}").encode()),
            part(rng.randbytes(32)),
        )
    )
    assert len(token) > _WINDOW_STEP + 2 * _WINDOW_REACH
    line = "x " * (_LONG_LINE // 2) + f"Authorization: Bearer {token}"
    findings = scan(line + "\n")
    # detect-secrets' JWT pattern ends lazily: its value, which the fingerprint covers, is
    # the header and the payload up to the second dot
    signed = token[: token.rindex(".") + 1]
    assert [(f.kind, f.fingerprint) for f in findings] == [("JSON web token", fingerprint(signed))]


def test_a_gate_reads_the_text_case_folded() -> None:
    """The IBM detectors run only on lines their gate (``key``, ``token``, ... assigned a
    long value) passes, and the gate reads the line in lower case: a key of mixed case is
    named for what it is, not just taken for some assigned secret."""
    rng = random.Random("iam")
    key = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(44))
    for line in (f'cloud_api_key = "{key}"', f"IAM_TOKEN={key}", f"iam api key: {key}"):
        assert [f.kind for f in scan(line + "\n")] == ["IBM Cloud IAM key"], line


# ------------------------------------------------------------------ comparisons
@pytest.mark.parametrize(
    "line",
    [
        '"Zq8Rt2Lw9Xk4Vb7Np" == password',  # at the very start of the line
        'if "Zq8Rt2Lw9Xk4Vb7Np" == password:',
        'if user and "Zq8Rt2Lw9Xk4Vb7Np" != db_pass_hash:',
        'if "Zq8Rt2Lw9Xk4Vb7Np" == PASSWORD:',  # a constant's name in capitals
        'IF "Zq8Rt2Lw9Xk4Vb7Np" != Db_Password THEN',
    ],
)
def test_a_value_compared_with_a_password_is_found(line: str) -> None:
    """Code that checks a password against a literal holds the password: detect-secrets'
    comparison pattern, read back from the keyword to the quoted value before it."""
    findings = scan(line + "\n", path="app/login.py")
    assert [(f.kind, f.line) for f in findings] == [("password or secret assignment", 1)]


def test_an_assigned_value_is_judged_up_to_a_thousand_characters() -> None:
    """The documented reach of the name rules (docs/reliability.md, Limits): a random value
    of 1,000 characters under a password name is refused, one of 1,200 is not judged by
    them; both bounds keep a line of repeated assignments linear."""
    rng = random.Random("reach")
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    for length, found in ((600, True), (1_000, True), (1_200, False)):
        value = "".join(rng.choice(alphabet) for _ in range(length))
        for line in (f'password = "{value}"', f"db_password: '{value}'"):
            kinds = [f.kind for f in scan(line + "\n", path="app/settings.py")]
            assert kinds == (["password or secret assignment"] if found else []), (length, line)
