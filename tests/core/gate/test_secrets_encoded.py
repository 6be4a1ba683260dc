"""A credential inside escaped text: percent-encoded in a form body, a redirect's query string
or a logged request line; after a string escape in JSON (``"...\\nAKIA..."``,
``token\\u003dghp_...``). The escape before a token glues it to text, so no format finds it
where it is written; the scanner also reads the text decoded, as its reader would.

Every token here is made up for the test (``secret_samples``).
"""

from __future__ import annotations

import random
import subprocess
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st
from secret_samples import SECRET_KINDS

from contextfs import ContentError, ContextManager
from contextfs.gate.secrets import fingerprint, scan
from contextfs.gate.secrets_escapes import percent_decoded, string_unescaped, terminal_cleared

KINDS = ["GitHub classic token", "Slack token", "OpenAI key (project)", "Stripe live key"]


def _token(kind: str) -> str:
    return SECRET_KINDS[kind](random.Random(kind)).payload


CONTEXTS = {
    "a form body": "POST /login body: user=ana&token%3D{t}%26remember%3D1",
    "json in a form field": "data=%7B%22token%22%3A%22{t}%22%7D",
    "a redirect's query string": "GET /callback?next=%2Fhome%3Ftoken%3D{t}%26x%3D1 HTTP/1.1",
    "encoded twice": "next=%2Fcb%3Ftoken%253D{t}%2526x%253D1",
    "a whole value encoded": "Location: https://app.example.org/cb?state={q}",
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("context", CONTEXTS.values(), ids=CONTEXTS.keys())
def test_a_percent_encoded_credential_is_found(kind: str, context: str) -> None:
    token = _token(kind)
    text = "# Request log\n\n" + context.format(t=token, q=quote(f"token={token}", safe="")) + "\n"
    plain = [f.fingerprint for f in scan(f"token = {token}")]
    findings = scan(text, path="notes/log.md")
    # Found on its own line, fingerprinted as the token written plainly, so one allow-list
    # entry covers both spellings.
    assert [(f.line, f.fingerprint) for f in findings] == [(3, plain[0])]
    assert scan(text, path="notes/log.md", allow=plain) == []


STRING_CONTEXTS = {
    "a file's content in a JSON string": '{{"path": ".env", "content": "# deploy\\n{t}\\nREGION=eu\\n"}}',
    "a tab-separated row in a JSON string": '{{"row": "prod\\t{t}\\tactive"}}',
    "Gson's escaped equals sign": '{{"query": "token\\u003d{t}\\u0026page\\u003d2"}}',
    "a quoted value inside a JSON string": '{{"body": "{{\\"token\\":\\"{t}\\"}}"}}',
}
STRING_KINDS = ["AWS access key id", "OpenAI key (project)", "Google API key", "Hugging Face token"]


TERMINAL_CONTEXTS = {
    "a coloured line": "key: \x1b[1;93m{t}\x1b[0m<<< copied",
    "between markers": ">>>\x1b[93m{t}\x1b[0m<<<",
    "a hyperlink's text": "\x1b]8;;https://ci.example.org/run/7\x1b\\{t}\x1b]8;;\x1b\\ (run 7)",
    "a JSON log of coloured output": '{{"stdout": "created \\u001b[32m{t}\\u001b[0m\\n"}}',
}


GLUED_CONTEXTS = {**STRING_CONTEXTS, **TERMINAL_CONTEXTS}


@pytest.mark.parametrize("kind", STRING_KINDS)
@pytest.mark.parametrize("context", GLUED_CONTEXTS.values(), ids=GLUED_CONTEXTS.keys())
def test_a_credential_after_a_string_or_terminal_escape_is_found(kind: str, context: str) -> None:
    # An escape glues the token to other text (captured terminal output keeps its colour
    # codes); the reader of the text, or a terminal, shows it standing apart.
    token = _token(kind)
    plain = [f.fingerprint for f in scan(f"token = {token}")]
    text = "# Captured output\n\n" + context.format(t=token) + "\n"
    assert [(f.line, f.fingerprint) for f in scan(text)] == [(3, plain[0])]


def test_a_coloured_json_log_holding_a_token_as_written_reports_it_once() -> None:
    # The token is found as written and again in the reading with colours cleared: one
    # finding, fingerprinted as written.
    token = _token("GitHub classic token")
    text = f'{{"stdout": "token {token} \\u001b[32mcreated\\u001b[0m"}}\n'
    assert [(f.line, f.fingerprint) for f in scan(text)] == [(1, fingerprint(token))]


def test_terminal_escapes_read_as_spaces_and_keep_lines() -> None:
    assert terminal_cleared("no escapes") is None
    assert terminal_cleared("a lone escape at the end \x1b") is None
    assert terminal_cleared("x\x1b[1;93mY\x1b[0m\nz\x1b(B.") == "x Y \nz ."
    assert terminal_cleared("\x1b]0;title\x07done") == " done"
    # an unterminated command ends at the line's end, never past it
    assert terminal_cleared("\x1b]0;title\nnext") == " \nnext"


def test_coloured_text_without_a_credential_passes() -> None:
    log = "\x1b[32mPASSED\x1b[0m tests/test_api.py::test_token_refresh \x1b[1m[ 42%]\x1b[0m\n"
    assert scan(log * 3, path="sessions/run.md") == []


def test_string_escapes_decode_in_one_pass_and_keep_lines() -> None:
    assert string_unescaped("plain text") is None
    assert string_unescaped(r"a pattern \d+ and C:\data") is None  # nothing to decode
    assert string_unescaped(r"one\ntwo\tthree \"q\" a\/b") == 'one two\tthree "q" a/b'
    assert string_unescaped(r"a\\nb") == "a\\nb"  # an escaped backslash, then an n
    assert string_unescaped(r"\N \T \U0041") is None  # only the lower-case letters escape
    assert string_unescaped(r"\ud83d\ude00 \ud800 \u000a") == "\U0001f600 \ufffd  "


def test_line_numbers_hold_when_a_line_encodes_a_line_break() -> None:
    token = _token("GitHub classic token")
    text = f"body=first%0Asecond%0D%0Athird\nnext=%2Fcb%3Ftoken%3D{token}\n"
    assert [f.line for f in scan(text)] == [2]


PASSED = {
    "an encoded search": "https://example.org/search?q=caf%C3%A9%20au%20lait&page=2",
    "a percentage in prose": "Latency rose 40%AB testing showed, then fell 3%FF overall.",
    "an encoded path": "GET /files/My%20Report%202024.pdf HTTP/1.1",
    "an encoded placeholder": "token%3D%3Cyour-token%3E",
    "invalid escapes": "%E2%28%A1 %G1 %",
}


@pytest.mark.parametrize("text", PASSED.values(), ids=PASSED.keys())
def test_encoded_text_without_a_credential_passes(text: str) -> None:
    assert scan(text) == []


def test_each_depth_of_escaping_is_a_reading_that_keeps_the_lines() -> None:
    assert percent_decoded("no escapes here\nnor here") == []
    assert percent_decoded("a=%41%0A%42\nplain\nb=%2541") == [
        "a=A B\nplain\nb=%41",
        "a=A B\nplain\nb=A",
    ]
    # a stray `%` or an invalid sequence is kept as written, never raises
    assert percent_decoded("50% of %E2%28 and %zz") == ["50% of \ufffd( and %zz"]
    assert len(percent_decoded("%252525252541")) == 3  # bounded depth


def test_a_literal_escape_inside_a_password_is_read_as_written() -> None:
    # `%12` is part of the password; encoded once it is `%2512`. Decoded twice it would be
    # a control character, and the value no longer the one written plainly.
    password = "Qv7%12tR9!kLm"
    plain = [f.fingerprint for f in scan(f"password = {password}")]
    text = f"GET /cb?next={quote(f'/home?password={password}&tab=1', safe='')} HTTP/1.1"
    assert plain and set(plain) <= {f.fingerprint for f in scan(text)}


def test_the_write_gate_refuses_it_and_history_never_holds_it(ctx: ContextManager) -> None:
    token = _token("GitHub classic token")
    before = [h.commit for h in ctx.history()]
    with pytest.raises(ContentError):
        ctx.write("notes/request.md", f"Failing call: GET /cb?next=%2Fh%3Ftoken%3D{token}\n")
    assert not ctx.exists("notes/request.md")
    assert [h.commit for h in ctx.history()] == before
    log = subprocess.run(
        ["git", "log", "--all", "-p"], cwd=ctx.root, capture_output=True, text=True, check=True
    ).stdout
    assert token[:20] not in log


_PIECES = st.sampled_from(
    ["%", "0", "a", "F", "2", "5", "D", "\n", "\r", "é", "\ud800", "%0A", "%25", "%E2"]
    + ["\\", "u", "U", "n", "N", "T", "d83d", "D83D", "\\ude00", "\\UDE00", "\\u000d", '"']
)


@given(st.lists(_PIECES, max_size=60).map("".join))
def test_any_text_decodes_without_error_and_keeps_its_lines(text: str) -> None:
    readings = percent_decoded(text)
    assert len(readings) <= 3
    unescaped = string_unescaped(text)
    readings += [unescaped] if unescaped is not None else []
    assert all(r.count("\n") == text.count("\n") for r in readings)
    scan(text)  # success or a typed error, never another exception


def test_a_reading_keeps_the_files_comment_syntax_and_its_allowlist_marker() -> None:
    token = _token("GitHub classic token")
    line = f"callback: /cb?next=%2Fh%3Ftoken%3D{token}"
    # the marker in YAML's own comment syntax allows the value, encoded as it is
    assert scan(f"{line}  # pragma: allowlist secret\n", path="config.yaml") == []
    # a marker in a comment syntax YAML has not is no marker there
    assert len(scan(f"{line}  // pragma: allowlist secret\n", path="config.yaml")) == 1
    # and a marker counts only when the policy honours markers
    marked = f"{line}  # pragma: allowlist secret\n"
    assert len(scan(marked, path="config.yaml", inline_allowlist=False)) == 1


def test_two_secrets_on_one_line_stay_two_when_one_is_encoded() -> None:
    plain, encoded = _token("Slack token"), _token("GitHub classic token")
    text = f"SLACK={plain} next=%2Fcb%3Ftoken%3D{encoded}\n"
    expected = {f.fingerprint for t in (plain, encoded) for f in scan(f"token = {t}")}
    assert {f.fingerprint for f in scan(text)} == expected


@pytest.mark.parametrize("value", ["Xk9f%2Fq2Lm8Qz7Wp", "Xk9f%252Fq2Lm8Qz7Wp"])
def test_a_value_holding_escapes_is_one_secret_at_every_depth(value: str) -> None:
    # The value as written is found; each reading finds it decoded again, and is told to
    # be the same secret by decoding the written value as deep as the reading goes.
    text = f'api_key = "{value}"\n'
    assert len(scan(text)) == 1


def test_a_decoded_carriage_return_separates_like_a_line_break() -> None:
    token = _token("AWS access key id")  # a format that must start a word
    assert [f.line for f in scan(f"body=note%0D{token}\n")] == [1]


def test_escapes_of_surrogates_and_of_other_characters() -> None:
    assert string_unescaped(r"\udfff") == "\ufffd"  # the last lone surrogate
    assert string_unescaped(r"\ue000") == "\ue000"  # the first character after them


def test_a_password_with_an_encoded_at_sign_is_one_secret() -> None:
    # URLs percent-encode a password's `@`; decoded, the URL reads as a shorter password
    # before that `@`, a piece of the same secret, which is not reported apart.
    text = "DATABASE_URL=postgres://app:Xk9%40f2Lm8Qz7W@db.internal:5432/prod\n"
    [finding] = scan(text)
    assert finding.kind == "password in URL" and finding.line == 1


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("password=Zq8vN2kLp4Xw7Rt9Bm3Y%21%21\n", "Zq8vN2kLp4Xw7Rt9Bm3Y%21%21"),
        ("url: https://x/?token=Zq8vN2kLp4Xw7Rt9Bm3Y%20more\n", "Zq8vN2kLp4Xw7Rt9Bm3Y%20more"),
    ],
)
def test_a_reading_that_finds_part_of_a_written_value_reports_the_written_one(
    text: str, written: str
) -> None:
    # The reading decodes the tail and ends the value earlier; it is still the secret the
    # text shows as written, so the one finding is fingerprinted as written and the entry
    # that allows the written value clears the whole text.
    assert [f.fingerprint for f in scan(text)] == [fingerprint(written)]
    assert scan(text, allow=[fingerprint(written)]) == []
