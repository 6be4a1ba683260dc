"""The secret scanner: what it finds, what it must not flag, and what it never says.

Every secret here is generated (``tests/secret_samples.py``); none is a real credential.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers import REPO, SAMPLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secret_samples import (
    CONTEXTS,
    EXPECTED_KIND,
    NOT_EXPECTED,
    SECRET_KINDS,
    Secret,
    github_classic_token,
    ordinary_note,
    rsa_private_key,
)

from contextfs.errors import ConfigError, ContentError, ContextFSError, InvalidArgumentError
from contextfs.gate.secrets import (
    ALLOWLIST_MARKER,
    DEFAULT_POLICY,
    KINDS,
    SecretFinding,
    SecretPolicy,
    check,
    describe,
    fingerprint,
    scan,
)

CASES = [
    (kind, context)
    for kind in SECRET_KINDS
    for context in CONTEXTS
    if context not in NOT_EXPECTED.get(kind, set())
]


def _make(kind: str, seed: int = 0) -> tuple[Secret, random.Random]:
    rng = random.Random(f"{kind}/{seed}")
    return SECRET_KINDS[kind](rng), rng


def _line_of(text: str, payload: str) -> int:
    """1-based line where the payload starts (as written, or percent-encoded)."""
    return next(
        n for n, line in enumerate(text.split("\n"), start=1) if payload[:16] in unquote(line)
    )


def _substrings(secret: str, size: int = 8) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


# -- every kind, in every context a note carries it ------------------------------------


@pytest.mark.parametrize(("kind", "context"), CASES, ids=[f"{k}-{c}" for k, c in CASES])
def test_every_kind_is_found_in_realistic_contexts(kind: str, context: str) -> None:
    for seed in range(3):
        secret, rng = _make(kind, seed)
        note = CONTEXTS[context](secret, rng)
        findings = scan(note, path="memory/notes/handover.md")
        assert EXPECTED_KIND[kind] in {f.kind for f in findings}, note
        found = [f for f in findings if f.kind == EXPECTED_KIND[kind]]
        if "PRIVATE KEY" in secret.text:
            header = next(i for i, line in enumerate(note.split("\n"), 1) if "PRIVATE KEY" in line)
            assert header in {f.line for f in found}
        else:
            assert _line_of(note, secret.payload) in {f.line for f in found}, note


def test_a_finding_carries_kind_line_and_fingerprint_only() -> None:
    secret, _ = _make("GitHub classic token")
    text = f"# Notes\n\nfirst line\nthe CI token is {secret.text} for now\n"
    (finding,) = scan(text)
    assert finding == SecretFinding("GitHub token", 4, fingerprint(secret.payload))
    assert set(vars(finding)) == {"kind", "line", "fingerprint"}
    for shown in (str(finding), repr(finding)):
        assert not any(piece in shown for piece in _substrings(secret.payload))


def test_kinds_lists_every_kind_a_detector_reports() -> None:
    from contextfs.gate import secrets_detectors

    reported = {d.kind for d in secrets_detectors.DETECTORS} | {
        secrets_detectors.KEYWORD_KIND,
        secrets_detectors.ASSIGNED_KIND,
    }
    assert reported == set(KINDS)
    assert set(EXPECTED_KIND.values()) <= set(KINDS)


def test_every_detect_secrets_plugin_is_used_or_left_out_on_purpose() -> None:
    """A detect-secrets upgrade that adds a plugin must be a decision, not a silent gap."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.keyword import KeywordDetector

    from contextfs.gate import secrets_detectors

    used = {type(d.plugin) for d in secrets_detectors.DETECTORS} | {KeywordDetector}
    # AWS runs as two plugins of our own: its key-id pattern with boundaries, and its
    # secret-near-"aws" pattern as it is (the second must stay detect-secrets' own).
    near = [
        d.plugin
        for d in secrets_detectors.DETECTORS
        if type(d.plugin).__name__ == "AwsSecretNearKeywordDetector"
    ]
    assert [p.denylist for p in near] == [tuple(AWSKeyDetector.denylist[1:])]
    used.add(AWSKeyDetector)
    builtin = set(get_mapping_from_secret_type_to_class().values())
    assert {cls.__name__ for cls in builtin - used} == {
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "IPPublicDetector",
    }


# -- what must not be flagged -------------------------------------------------------------

ORDINARY = {
    "commit id": "Fixed in e83c5163316f89bfbde7d9ab23ca2e25604af290 (short e83c516).",
    "quoted commit id": 'revision: "e83c5163316f89bfbde7d9ab23ca2e25604af290"',
    "blob id": "`git cat-file -p 9daeafb9864cf43055ae93beb0afd6c7d144bfa4`",
    "sha256 digest": "image@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "quoted sha256": 'checksum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    "uuid": 'request_id: "3fa85f64-5717-4562-b3fc-2c963f66afa6"',
    "base64 of text": '"VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZyBhbmQgcnVucyBhd2F5"',
    "SRI hash": 'integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"',
    "URL without credentials": "See https://docs.example.com/api/v2/shipments?limit=50&cursor=abc and postgres://db.internal:5432/app",
    "URL with user only": "git clone ssh://git@github.com/tidewater-io/backend.git",
    "versions": "Upgraded FastAPI 0.115.2 -> 0.116.0, Python 3.12.4, v2.31.0-rc.1",
    "env reference": 'export AWS_SECRET_ACCESS_KEY="$(vault kv get -field=secret aws/prod)"',
    "templated": 'password: "{{ .Values.db.password }}"',
    "dollar": 'password = "${DB_PASSWORD}"',
    "format directive as a URL's password": 'MQ_URL = "amqp://admin:%s@mq.internal:5672" % pw',
    "named format directive": 'dsn = "postgres://app:%(password)s@db:5432/app" % cfg',
    "Go format string": 'fmt.Sprintf("redis://%s:%v@%s:6379", user, pass, host)',
    "placeholder": 'api_key = "<your-api-key>"',
    "password that says it is a stand-in": 'password = "Dummy-Passw0rd-2024"',
    "indirect": 'password = os.environ["DB_PASSWORD"]',
    "k8s secret name": "```yaml\nsecretKeyRef:\n  name: tidewater-db\nsecretName: tidewater-tls\npassword: changeme\n```",
    "prose about secrets": "Rotate the AWS key every 90 days; the GitHub token lives in 1Password.",
    "prose key value": "Password: rotate every 90 days, owner ops-team",
    "markdown table": "| key | value |\n|---|---|\n| retries | 3 |\n| token budget | 8000 |",
    "hex run glued to a colon": "result 6e796f9544830376:c922ffd8fb57df5e0ac4de2901ae42b0ce6 ok",
    "ip address": "The NAT gateway is 203.0.113.7 and the resolver 8.8.8.8.",
}


@pytest.mark.parametrize(
    "text",
    [
        '{"installed":{"client_id":"514233951460-q8w7e6r5.apps.googleusercontent.com",'
        '"project_id":"billing-prod","client_secret":"Tg7xYWFmND-1NTYwNTgzMDM3N"}}',
        "GET /cb?request_id=a8F3kd92LmQ0zX7pR4tY&token=Zk29fLq8Xv03NmW7pRt5 HTTP/1.1",
        'session_id = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"; api_key = "Zk29fLq8Xv03NmW7pRt5Yh"',
    ],
)
def test_an_id_earlier_on_the_line_does_not_hide_the_next_keys_secret(text: str) -> None:
    """The "an id" guess reads the value's own name: another key's `_id` before it on the
    same line (one-line JSON, a query string) says nothing about it."""
    assert [f.kind for f in scan(text, path="notes/n.md")] == ["password or secret assignment"]


@pytest.mark.parametrize(
    "text",
    [
        'const accountKey = process.env.ACCOUNT_KEY || "4dVw+l0W8My+FwuZ08dWXn+gHxcmBtS7esLAQSrm6/Om3j==";',
        "DEPLOY_TOKEN: process.env.DEPLOY_TOKEN || '9acf34ff1e738bcd6d5daf102a8cfcb8a158e44e',",
        'const k = process.env.STRIPE_KEY ?? "Zk29fLq8Xv03NmW7pRt5Yh2a";',
        'token = os.environ.get("API_TOKEN") or "Zk29fLq8Xv03NmW7pRt5Yh2a"',
        # A UUID is a credential under a token's name (Heroku and Postmark keys are UUIDs).
        'const accessToken = process.env.DEPLOY_API_TOKEN || "3fa85f64-5717-4562-b3fc-2c963f66afa6";',
        # The name ends where the variable does: words after the literal are not part of it.
        'const k = process.env.STRIPE_KEY ?? "Zk29fLq8Xv03NmW7pRt5Yh2a"; // one per region',
    ],
)
def test_a_credential_given_as_a_variables_fallback_is_found(text: str) -> None:
    """The assignment takes the reference (`process.env.X`) for its value; the literal after
    `||`, `??` or `or` is the credential the code ships for when the variable is unset."""
    assert [f.kind for f in scan(text, path="notes/n.md")] == ["password or secret assignment"]


@pytest.mark.parametrize(
    "text",
    [
        'const host = process.env.API_HOST || "api.internal.example.org";',
        'const t = process.env.API_TOKEN || "";',
        'const id = process.env.API_KEY_ID || "Zk29fLq8Xv03NmW7pRt5Yh2a";',
        'const t = process.env.API_TOKEN || "${fallbackTokenValue}";',
        "const t = process.env.API_TOKEN || '<your-token>';",
        # The whole name decides, as for an assignment: a public key, an id.
        'PUBLIC_KEY || "Zk29fLq8Xv03NmW7pRt5Yh2a"',
        'const k = process.env.STRIPE_PUBLIC_KEY || "Zk29fLq8Xv03NmW7pRt5Yh2a";',
        'const r = process.env.REQUEST_TOKEN_ID || "3fa85f64-5717-4562-b3fc-2c963f66afa6";',
        'const r = process.env.BUILD_KEY || "3fa85f64-5717-4562-b3fc-2c963f66afa6";',
    ],
)
def test_fallbacks_that_are_no_credential_pass(text: str) -> None:
    assert scan(text, path="notes/n.md") == []


def test_a_value_under_an_id_name_is_still_taken_for_an_id() -> None:
    for text in ('user_id: "a8F3kd92LmQ0zX7pR4tY"', '{"user_id": "a8F3kd92LmQ0zX7pR4tY"}'):
        assert scan(text, path="notes/n.md") == [], text


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_content_is_not_flagged(name: str) -> None:
    assert scan(ORDINARY[name], path="project/notes.md") == []


def test_generated_ordinary_notes_are_not_flagged() -> None:
    flagged = [
        i
        for i in range(150)
        if scan(ordinary_note(random.Random(i)), path=f"memory/archive/{i}.md")
    ]
    assert flagged == []


def test_the_sample_context_is_not_flagged() -> None:
    files = sorted(SAMPLE.rglob("*.md"))
    assert files
    for path in files:
        assert scan(path.read_text("utf-8"), path=path.relative_to(SAMPLE).as_posix()) == [], path


def test_keyword_syntax_follows_the_document_structure() -> None:
    value = "Tr0ub4dor-x9"
    flagged = {
        "frontmatter": f"---\ntitle: x\npassword: {value}\n---\nbody\n",
        "yaml fence": f"```yaml\ndb:\n  password: {value}\n```\n",
        "env line in prose": f"Set this:\nDB_PASSWORD={value}\n",
        "quoted in prose": f'The old config had password = "{value}" in it.\n',
    }
    for name, text in flagged.items():
        assert [f.kind for f in scan(text, path="n.md")] == ["password or secret assignment"], name
    # Unquoted in prose or code, a value is judged by its shape (secrets_values): a phrase
    # or a name is not a password, random characters are.
    words = "rotate-every-quarter"
    not_flagged = {
        "python fence, unquoted": f"```python\npassword: {words}\n```\n",
        "prose, unquoted": f"password: {words}\n",
    }
    for name, text in not_flagged.items():
        assert scan(text, path="n.md") == [], name
    assert scan(f"DB_PASSWORD={value}\n", path="deploy/.env") != []
    assert scan(f"password: {value}\n", path="deploy/values.yaml") != []


# -- allow-listing ----------------------------------------------------------------------


def test_inline_marker_allows_its_line_and_the_next_line_form() -> None:
    token = _make("GitHub classic token")[0].text
    assert scan(f"example {token} <!-- {ALLOWLIST_MARKER} -->\n") == []
    assert scan(f"```python\nTOKEN = '{token}'  # {ALLOWLIST_MARKER}\n```\n") == []
    assert scan(f"# pragma: allowlist nextline secret\nTOKEN = '{token}'\n") == []
    # the marker covers its own line only
    text = f"<!-- {ALLOWLIST_MARKER} -->\n\nTOKEN {token}\n"
    assert [f.line for f in scan(text)] == [3]
    # and can be switched off (for writers that must not allow-list themselves)
    assert scan(f"example {token} <!-- {ALLOWLIST_MARKER} -->\n", inline_allowlist=False) != []
    policy = SecretPolicy(inline_allowlist=False)
    with pytest.raises(ContentError) as caught:
        check(f"example {token} <!-- {ALLOWLIST_MARKER} -->\n", policy=policy)
    assert ALLOWLIST_MARKER not in str(caught.value)


def test_fingerprints_allow_one_value_and_nothing_else() -> None:
    first, second = (_make("Slack token", seed)[0].text for seed in (1, 2))
    text = f"bot: {first}\nother bot: {second}\n"
    findings = scan(text)
    assert [f.line for f in findings] == [1, 2]
    assert len({f.fingerprint for f in findings}) == 2
    allowed = scan(text, allow=[findings[0].fingerprint])
    assert [f.line for f in allowed] == [2]
    # the fingerprint is the value's, wherever it appears
    assert scan(f"# moved\n\n{first}\n")[0].fingerprint == findings[0].fingerprint
    assert scan(text.replace("\n", "\r\n")) == findings


@pytest.mark.parametrize("kind", sorted(SECRET_KINDS))
def test_two_secrets_of_a_kind_never_share_a_fingerprint(kind: str) -> None:
    """detect-secrets yields only the prefix group of some patterns (``ghp`` for every
    GitHub token); a fingerprint must cover the secret itself."""
    prints: list[set[str]] = []
    for seed in range(5):
        findings = scan(f"{_make(kind, seed)[0].text}\n", path="n.md")
        assert findings
        prints.append({f.fingerprint for f in findings})
    assert len(set().union(*prints)) == sum(len(p) for p in prints)


def test_private_keys_are_fingerprinted_by_their_body_not_their_header() -> None:
    one, two = (rsa_private_key(random.Random(seed)).text for seed in (1, 2))
    (a,), (b,) = scan(one), scan(two)
    assert a.fingerprint != b.fingerprint
    assert scan(two, allow=[a.fingerprint]) == [b]


def test_fingerprint_shape() -> None:
    value = fingerprint("x")
    assert len(value) == 16 and set(value) <= set("0123456789abcdef")
    assert fingerprint("x") == value and fingerprint("y") != value
    assert len(fingerprint("\ud800lone surrogate")) == 16
    with pytest.raises(InvalidArgumentError):
        fingerprint(b"x")  # type: ignore[arg-type]


# -- the policy and its config --------------------------------------------------------


def test_policy_from_config_reads_the_secrets_table() -> None:
    assert (
        SecretPolicy.from_config({}) == DEFAULT_POLICY == SecretPolicy("refuse", frozenset(), True)
    )
    policy = SecretPolicy.from_config(
        {"secrets": {"policy": "refuse", "allow": ["0123456789ABCDEF"], "inline_allowlist": False}}
    )
    assert policy == SecretPolicy("refuse", frozenset({"0123456789abcdef"}), False)
    assert SecretPolicy.from_config({"secrets": {"policy": "allow"}}).policy == "allow"


@pytest.mark.parametrize(
    ("section", "names"),
    [
        ({"polcy": "refuse"}, ["polcy", "policy, allow, inline_allowlist"]),
        ({"policy": "warn"}, ["policy", "'warn'", "refuse"]),
        ({"policy": 3}, ["policy"]),
        ({"allow": "0123456789abcdef"}, ["allow", "list"]),
        ({"allow": ["not-a-fingerprint"]}, ["allow", "item 1", "fingerprint"]),
        ({"allow": [123]}, ["allow", "item 1"]),
        ({"inline_allowlist": "yes"}, ["inline_allowlist", "true or false"]),
    ],
)
def test_policy_from_config_names_the_bad_key(section: dict, names: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        SecretPolicy.from_config({"secrets": section})
    for name in names:
        assert name in str(caught.value)


def test_policy_config_errors_never_echo_an_allow_entry() -> None:
    token = _make("GitHub classic token")[0].payload
    with pytest.raises(ConfigError) as caught:
        SecretPolicy.from_config({"secrets": {"allow": [token]}})
    assert not any(piece in str(caught.value) for piece in _substrings(token))


def test_policy_config_must_be_tables() -> None:
    with pytest.raises(ConfigError, match=r"\[secrets\].*table"):
        SecretPolicy.from_config({"secrets": ["refuse"]})
    with pytest.raises(ConfigError):
        SecretPolicy.from_config("policy = 'refuse'")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        SecretPolicy(policy="warn")
    with pytest.raises(ConfigError):
        SecretPolicy(allow="0123456789abcdef")  # type: ignore[arg-type]


def test_policy_allow_turns_scanning_off() -> None:
    token = _make("Stripe live key")[0].text
    policy = SecretPolicy.from_config({"secrets": {"policy": "allow"}})
    assert policy.findings(token) == []
    check(token, policy=policy)
    with pytest.raises(InvalidArgumentError):
        policy.findings(b"bytes")  # type: ignore[arg-type]


# -- the refusal ----------------------------------------------------------------------


def test_check_refuses_with_kinds_lines_and_the_fix() -> None:
    aws = _make("AWS access key id")[0].text
    pem = rsa_private_key(random.Random(3)).text
    text = f"# Deploy\n\nkey id {aws}\n\n{pem}\n"
    check("# Deploy\n\nnothing to see\n")
    with pytest.raises(ContentError) as caught:
        check(text, path="memory/deploy.md")
    message = str(caught.value)
    assert "memory/deploy.md holds 2 secrets" in message
    assert "AWS access key on line 3" in message and "private key on line 5" in message
    for finding in scan(text):
        assert finding.fingerprint in message
    assert message.endswith(f"(# {ALLOWLIST_MARKER} in code)")
    assert (
        "store a reference to where it is kept" in message and ".contextfs/config.toml" in message
    )


def test_refusal_lists_a_bounded_number_of_findings() -> None:
    tokens = [github_classic_token(random.Random(i)).text for i in range(12)]
    findings = scan("\n".join(tokens))
    assert len(findings) == 12
    text = describe(findings, path="a.md")
    assert text.startswith("a.md holds 12 secrets: ") and text.endswith("; and 4 more")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(SECRET_KINDS)),
    seed=st.integers(0, 2**32),
    before=st.text(max_size=300),
    after=st.text(max_size=300),
)
def test_refusals_never_echo_any_part_of_the_secret(
    kind: str, seed: int, before: str, after: str
) -> None:
    secret = SECRET_KINDS[kind](random.Random(seed))
    text = f"{before}\n{secret.text}\n{after}"
    with pytest.raises(ContentError) as caught:
        check(text, path="notes/x.md")
    message = str(caught.value)
    assert EXPECTED_KIND[kind] in message
    assert not any(piece in message for piece in _substrings(secret.payload))


# -- hostile and odd input --------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=400),
    st.sampled_from([None, "a.md", "x.yaml", ".env", "a\ud800.py"]),
)
def test_any_text_scans_or_fails_typed(text: str, path: str | None) -> None:
    try:
        findings = scan(text, path=path)
    except ContextFSError:
        return
    assert all(isinstance(f, SecretFinding) and f.kind in KINDS for f in findings)


def test_odd_unicode_around_secrets() -> None:
    token = _make("GitHub classic token")[0].text
    odd = [
        "\ud800",
        "\udfff",
        "\x00",
        "\u202e",
        "\u2028",
        "\u0130" * 3,
        "\x0b\x0c",
        "e\u0301",
        "\U0001f511",
        "\ufeff",
    ]
    for piece in odd:
        assert [f.kind for f in scan(f"{piece}\n{token} {piece}\n{piece}")] == ["GitHub token"], (
            repr(piece)
        )
        assert scan(f"{piece}ordinary {piece} text\n" * 3) == []
    # a value holding a lone surrogate still gets a fingerprint
    assert len(scan('password = "Ab1\ud800xyz9"\n')) == 1


@pytest.mark.parametrize("bad", [b"AKIA", None, 42, ["text"]])
def test_non_text_is_a_typed_error(bad: object) -> None:
    with pytest.raises(InvalidArgumentError):
        scan(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        check(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        scan("text", path=bad if not isinstance(bad, type(None)) else 3)  # type: ignore[arg-type]


def test_a_scanner_failure_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    from contextfs.gate import secrets_detectors

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom AKIA")

    monkeypatch.setattr(secrets_detectors, "find", broken)
    with pytest.raises(ContentError, match="could not be scanned for secrets") as caught:
        check("anything", path="a.md")
    assert "boom" not in str(caught.value)


def test_a_4_mb_file_is_scanned_whole() -> None:
    rng = random.Random(4)
    notes: list[str] = []
    size = 0
    while size < 4 * 1024 * 1024 - 2048:
        notes.append(ordinary_note(rng))
        size += len(notes[-1]) + 1
    body = "\n".join(notes)
    token = _make("Anthropic key")[0].text
    text = f"{body}\nlast line: {token}\n"
    assert len(text.encode()) <= 4 * 1024 * 1024
    (finding,) = scan(text, path="memory/archive/big.md")
    assert finding.kind == "Anthropic API key" and finding.line == body.count("\n") + 2
    # one 4 MB line, the secret in the middle
    line = "x" * (2 * 1024 * 1024) + f" {token} " + "y" * (2 * 1024 * 1024 - 200)
    assert [f.line for f in scan(line)] == [1]


@pytest.mark.parametrize(
    "unit", ["password", "password(", "password: 'a", "//a/:_authToken=", "://:", "eyJa."]
)
def test_backtracking_shapes_are_scanned_whole(unit: str) -> None:
    """Lines that make detect-secrets' keyword and npm patterns backtrack quadratically
    (``"password" * 2000`` alone takes seconds there) are scanned in bounded windows, and
    the windows lose nothing: a 1 MB line of the shape finds what a short one does, and a
    token at its very end is still found."""
    token = _make("GitHub classic token")[0].text
    text = unit * (1024 * 1024 // len(unit)) + " " + token
    kinds = {f.kind for f in scan(text)}
    assert kinds == {f.kind for f in scan(unit * 8)} | {f.kind for f in scan(token)}, kinds
    assert {f.kind for f in scan(token)}  # the token alone is found


# -- isolation and laziness -----------------------------------------------------------


def test_global_detect_secrets_settings_do_not_reach_a_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import requests
    from detect_secrets.settings import get_settings, transient_settings

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a candidate was sent to a vendor for verification")

    monkeypatch.setattr(requests, "get", no_network)
    monkeypatch.setattr(requests, "post", no_network)
    monkeypatch.setattr(requests.Session, "request", no_network)
    slack = _make("Slack token")[0].text
    expected = scan(f"bot {slack}\n")
    verify = {
        "path": "detect_secrets.filters.common.is_ignored_due_to_verification_policies",
        "min_level": 2,
    }
    with transient_settings(
        {"plugins_used": [{"name": "AWSKeyDetector"}], "filters_used": [verify]}
    ):
        before = get_settings().json()
        assert scan(f"bot {slack}\n") == expected
        assert get_settings().json() == before


def test_concurrent_scans_agree() -> None:
    texts = [CONTEXTS[c](*_make(k, 1)) for k, c in CASES[:40]]
    expected = [scan(t) for t in texts]
    results: list[list[list[SecretFinding]]] = []

    def run() -> None:
        results.append([scan(t) for t in texts])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


def test_importing_the_scanner_is_cheap_and_scanning_leaves_warnings_alone(tmp_path: Path) -> None:
    code = (
        "import sys, warnings\n"
        "import contextfs.gate.secrets as s\n"
        "assert not any(m.startswith(('detect_secrets', 'requests', 'kingfisher_sdk', 'tiktoken')) for m in sys.modules), 'eager import'\n"
        "before = warnings.showwarning\n"
        "assert s.scan('nothing here') == []\n"
        "assert 'detect_secrets' in sys.modules\n"
        "assert warnings.showwarning is before, 'warnings rerouted'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_a_short_clean_text_is_scanned_once_and_a_secret_every_time(
    detector_calls: list[str],
) -> None:
    """A commit scans its paths twice and its author every time: a short text that held
    nothing is remembered as clean; one that holds a secret is scanned again each time and
    never remembered (neither is its secret)."""
    from contextfs.gate import secrets

    calls = detector_calls
    name = f"notes/clean-{random.random()}.md"
    token = _make("GitHub classic token")[0].text
    for _ in range(3):
        assert scan(name) == []
        assert len(scan(f"key {token}")) == 1
    assert calls.count(name) == 1
    assert calls.count(f"key {token}") == 3
    assert not any(key[1] == f"key {token}" for key in secrets._CLEAN)
