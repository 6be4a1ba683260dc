"""The secret scanner on formats nobody listed: the vendor rule set, value judgments, placeholders.

The formats below are made in each vendor's published shape from a seeded generator; none is
a real credential. The corpus sample is Nosey Parker's (``tests/data/secret_corpus``), which
the scanner was not tuned on.
"""

from __future__ import annotations

import random
import socket
import string
from pathlib import Path

import pytest
from secret_corpora import SAMPLE, assigned_notes, evident_placeholder, rule_examples, values_of

from contextfs import ContentError, ContextManager
from contextfs.gate import secrets_rules
from contextfs.gate.secrets import check, scan

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if not set(string.digits) & set(alphabet) or any(c.isdigit() for c in value):
            return value


def _formats(rng: random.Random) -> dict[str, str]:
    """Formats the scanner's own detectors never listed, in their vendors' shapes."""
    return {
        "Stripe test key": "sk_test_" + _pick(rng, ALNUM, 24),
        "Heroku platform key": "HRKU-AA" + _pick(rng, ALNUM + "_-", 58),
        "Grafana service account token": "glsa_" + _pick(rng, ALNUM, 32) + "_" + _pick(rng, HEX, 8),
        "Shopify access token": "shpat_" + _pick(rng, HEX, 32),
        "DigitalOcean token": "dop_v1_" + _pick(rng, HEX, 64),
        "Sentry user token": "sntryu_" + _pick(rng, HEX, 64),
        "Vault service token": "hvs." + _pick(rng, ALNUM, 90),
        "Hugging Face org token": "api_org_" + _pick(rng, string.ascii_letters, 34),
        "Square access token": "EAAA" + _pick(rng, ALNUM + "-_", 60),
        "GitLab feature-flag token": "glffct-" + _pick(rng, ALNUM + "_-", 20),
        "Slack refresh token": "xoxe-1-" + _pick(rng, ALNUM, 146),
        "Discord bot token": "MTA"
        + _pick(rng, ALNUM, 23)
        + "."
        + _pick(rng, ALNUM, 6)
        + "."
        + _pick(rng, ALNUM, 38),
        "PyPI token": "pypi-AgEIcHlwaS5vcmc" + _pick(rng, ALNUM, 70),
        "SendGrid key": "SG." + _pick(rng, ALNUM, 22) + "." + _pick(rng, ALNUM, 43),
    }


@pytest.mark.parametrize("name", sorted(_formats(random.Random(0))))
def test_vendor_formats_are_refused_in_prose_and_assigned(name: str) -> None:
    for seed in range(3):
        value = _formats(random.Random(seed))[name]
        for note in (
            f"## Deploy\n\nThe value we use is {value} for now.\n",
            f"```bash\nexport SERVICE_TOKEN={value}\n```\n",
        ):
            findings = scan(note, path="notes/deploy.md")
            assert findings, note
            with pytest.raises(ContentError) as caught:
                check(note, path="notes/deploy.md")
            message = str(caught.value)
            assert not any(value[i : i + 8] in message for i in range(len(value) - 7))


def _random_token(rng: random.Random, n: int = 32) -> str:
    while True:
        value = _pick(rng, ALNUM, n)
        if any(c.isupper() for c in value) and any(c.islower() for c in value):
            return value


@pytest.mark.parametrize("template", [name for name, _ in assigned_notes("svc", "x")])
def test_a_random_value_under_any_credential_name_is_refused(template: str) -> None:
    """INI, JSON, YAML, frontmatter, `export X_TOKEN=`, `.env`, Bearer headers, `curl -u`
    and code: the names and syntaxes the issue found at 26% are refused."""
    for seed in range(5):
        rng = random.Random(f"{template}/{seed}")
        value = _random_token(rng, rng.choice([16, 24, 40]))
        note = dict(assigned_notes("billing", value))[template]
        assert scan(note, path="notes/setup.md"), note


PLACEHOLDERS = {
    "AWS documented key id": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "AWS documented secret": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "GitHub filler": "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "GitHub filler upper": "token: ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "private key with no body": "-----BEGIN RSA PRIVATE KEY-----\nanything\n-----END RSA PRIVATE KEY-----",
    "private key ellipsis": "-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE KEY-----",
    "a header in prose": "The file starts with -----BEGIN RSA PRIVATE KEY----- and is kept in the vault.",
    "angle placeholder": "export OPENAI_API_KEY=<your-openai-key>",
    "your key": "api_key: YOUR_API_KEY_HERE",
    "env reference": "Authorization: Bearer $API_TOKEN",
    "template": 'token: "{{ secrets.deploy_token }}"',
    "jwt.io sample": "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ikpv"
    "aG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    # a documented example as the password of a pair (`curl -u user:...`) is still the example
    "jwt.io sample in a pair": "curl -u deploy:eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3"
    "ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    " https://api.example.com/v1/me",
    "stripe filler": "STRIPE_KEY=sk_live_0000000000000000000000000000",
    "slack filler": "SLACK_BOT_TOKEN=xoxb-000000000000-0000000000000-xxxxxxxxxxxxxxxxxxxxxxxx",
    "redacted": "password: [REDACTED]",
}


@pytest.mark.parametrize("name", sorted(PLACEHOLDERS))
def test_placeholders_and_documented_examples_are_not_refused(name: str) -> None:
    assert scan(PLACEHOLDERS[name], path="notes/setup.md") == []


def test_an_agent_can_write_setup_notes_that_show_placeholders(ctx: ContextManager) -> None:
    note = "# Setup\n\n" + "\n".join(f"- {text}" for text in PLACEHOLDERS.values()) + "\n"
    with ctx.provenance(actor="agent:setup"):
        ctx.write("skills/setup.md", note)
    assert ctx.read("skills/setup.md").startswith("# Setup")


UPPER_CASE_PROSE = [
    "THE CONFIGURATIONAKIAPARAMETERSWEREMOVEDTOTHEVAULT LAST WEEK",
    "ERRORCODE_ASIAPACIFICREGIONTIMEOUTEXCEEDED in the logs",
    "See RUNBOOKSECTIONABIAXXAVAILABILITYZONEFAILOVERSTEPS.",
]


@pytest.mark.parametrize("text", UPPER_CASE_PROSE)
def test_the_aws_pattern_does_not_fire_inside_long_upper_case_words(text: str) -> None:
    assert scan(text, path="notes/ops.md") == []


def test_word_like_values_under_credential_names_are_not_refused() -> None:
    ordinary = [
        "tokenizer: cl100k_base",
        "max_tokens: 4096",
        "token_budget: 2000",
        "access: ReadOnlyAnalyticsGroup",
        "auth: handled-by-the-gateway",
        "api_url: https://api.example.com/v2",
        "public_key: AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        "session_token_ttl: 3600s",
        "---\nauthor: agent:scout-2\nsession: s-cfg\n---\na\n",
        "passport: X12345678 expires 2031",
        "The API key rotation runs every 90 days.",
    ]
    for text in ordinary:
        assert scan(text, path="notes/config.md") == [], text


def _sample_vendor_examples() -> list:
    """Examples of the sample's vendor credential rules (not the generic family of chosen
    passwords) whose secret is not an evident placeholder."""
    examples = [e for e in rule_examples(SAMPLE) if e.credential and e.family != "generic"]
    return [e for e in examples if any(not evident_placeholder(v) for v in values_of(e))]


def test_the_corpus_sample_as_written() -> None:
    realistic = _sample_vendor_examples()
    assert len(realistic) >= 60
    found = [e for e in realistic if scan(e.text, path="notes/n.md")]
    assert len(found) / len(realistic) >= 0.9  # 60 of 64 when written


def test_the_corpus_sample_assigned_to_credential_names() -> None:
    values = sorted(
        {v for e in _sample_vendor_examples() for v in values_of(e) if not evident_placeholder(v)}
    )
    notes = [note for v in values for _, note in assigned_notes("svc", v)]
    found = sum(bool(scan(note, path="notes/setup.md")) for note in notes)
    assert found / len(notes) >= 0.95  # 834 of 868 when written


# -- the vendor rule set's surface (kingfisher-secret-scanner) --------------------------


def test_the_rule_set_surface_contextfs_uses() -> None:
    import kingfisher_sdk

    assert kingfisher_sdk.__version__.startswith("1.5.")
    rules = kingfisher_sdk.Rules()
    assert len(rules) >= 400
    token = "ghp_" + _random_token(random.Random(1), 36)
    (finding,) = [
        f for f in kingfisher_sdk.Scanner(rules).scan(f"a\nb\n  t: {token}\n".encode()) if f.visible
    ]
    assert finding.rule_id.startswith("betterleaks.") and finding.secret == token
    assert finding.location["line"] == 3


@pytest.mark.parametrize("sep", ["\n", "\r\n", "\r", "\u2028", "\x0b", "\x0c", "\x85"])
def test_the_rule_set_counts_lines_by_newline_alone(sep: str) -> None:
    """The scanner reads a finding's line as ``text.split("\\n")[line - 1]``: the rule set's
    numbering must agree for every line break Python knows, or a finding would point past
    the text (or at the wrong line)."""
    token = "glpat-" + _random_token(random.Random(2), 20)
    text = f"one{sep}two{sep}token = {token}{sep}"
    (found,) = [(number, value) for _, number, value, _ in secrets_rules.matches(text)]
    number, value = found
    assert value == token and token in text.split("\n")[number - 1]


def test_a_scan_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:

    secrets_rules.load()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the scanner opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    value = _formats(random.Random(3))["Shopify access token"]
    assert [f.kind for f in scan(f"key {value}")] == ["rule shopify-access-token"]


def test_rule_set_findings_never_echo_the_secret() -> None:
    for value in _formats(random.Random(5)).values():
        for finding in scan(f"value: {value}\n"):
            shown = str(finding) + repr(finding)
            assert not any(value[i : i + 8] in shown for i in range(len(value) - 7))


def test_the_corpus_sample_carries_its_licence() -> None:
    assert (
        (SAMPLE / "LICENSE")
        .read_text()
        .startswith("\n                                 Apache License")
    )
    assert "Praetorian" in (SAMPLE / "NOTICE").read_text()
    assert sorted(p.name for p in Path(SAMPLE).glob("*.yml"))


def test_the_rule_set_findings_come_in_the_order_of_their_lines() -> None:
    rng = random.Random(3)
    shopify = "shpat_" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    text = f"sendgrid: SG.{'x' * 22}.{'x' * 43}\nshopify: {shopify}\n"
    assert [(kind, number) for kind, number, _, _ in secrets_rules.matches(text)] == [
        ("rule sendgrid", 1),
        ("rule shopify-access-token", 2),
    ]


# -- credentials the rule set reports only next to a companion ---------------------------


def _alone(rng: random.Random) -> dict[str, str]:
    """Credentials whose catalogue rule waits for an id, a URL or a name to validate them."""
    azure = _pick(rng, ALNUM, 3) + "8Q~" + _pick(rng, ALNUM + "_~.-", 34)
    return {
        "rule azure-ad-client-secret": f'client_secret = "{azure}"',
        "rule planetscale-api-token": "pscale_tkn_" + _pick(rng, ALNUM, 43),
        "rule supabase-project-api-key": "SUPABASE_KEY=sb_secret_" + _pick(rng, ALNUM, 31),
        "rule mongodb-atlas-service-account-secret": "mdb_sa_sk_" + _pick(rng, ALNUM, 40),
        "rule ramp-client-secret": "ramp_sec_" + _pick(rng, ALNUM, 48),
        "rule packagistsecret": "packagist_acs_" + _pick(rng, HEX, 64),
    }


@pytest.mark.parametrize("kind", sorted(_alone(random.Random(0))))
def test_a_credential_is_refused_without_the_companion_its_rule_validates_with(
    kind: str,
) -> None:
    # Kingfisher reports these only beside an id or URL it needs to call the vendor; a
    # secret alone is still a secret to keep out of history.
    for seed in range(3):
        text = _alone(random.Random(seed))[kind]
        assert [f.kind for f in scan(f"Notes from setup:\n{text}\n")] == [kind], text


def test_with_its_companion_it_is_reported_once() -> None:
    secret = _alone(random.Random(4))["rule azure-ad-client-secret"].split('"')[1]
    text = (
        "AZURE_TENANT_ID=3f0c9a1e-5b7d-4c44-8a1e-0c9a1e5b7d2c\n"
        "AZURE_CLIENT_ID=9a0c9a1e-5b7d-4c44-8a1e-0c9a1e5b7d2c\n"
        f"AZURE_CLIENT_SECRET={secret}\n"
    )
    assert [(f.kind, f.line) for f in scan(text)] == [("rule azure-ad-client-secret", 3)]


def test_every_rule_waiting_for_a_companion_also_runs_alone() -> None:
    import kingfisher_sdk

    rules = kingfisher_sdk.Rules()
    waiting = {
        m["id"]
        for m in rules.metadata()
        if m["visible"]
        and any(not d.get("optional") for d in rules.detail(m["id"])["depends_on_rule"] or ())
    }
    standalone = secrets_rules.standalone_rules(rules)
    assert len(waiting) >= 30  # the catalogue's validating rules (40 in 1.5.0)
    assert {r["id"] for r in standalone} == {
        "custom." + secrets_rules.kind_of(i).removeprefix("rule ")
        for i in waiting - set(secrets_rules.NAMED_ELSEWHERE)
    }
    from contextfs.gate.secrets import KINDS

    assert set(secrets_rules.NAMED_ELSEWHERE.values()) <= set(KINDS)


def test_a_generic_rule_is_not_run_alone() -> None:
    # Alibaba's secret rules take `secret`/`key` and 30 letters: alone, any hash under a name
    # (`key_sha256: <hex>`) would read as one. The value rule judges such names itself.
    import kingfisher_sdk

    rules = kingfisher_sdk.Rules()
    scanner = secrets_rules.standalone_scanner(rules)
    kept = {m["id"] for m in scanner.rules.metadata()}
    left_out = {r["id"] for r in secrets_rules.standalone_rules(rules)} - kept
    assert left_out == {
        "custom.alibaba-secret-key",
        "custom.alibaba-sts-access-key-secret",
        "custom.azure-storage-account-key",
        "custom.ovh-application-secret",
    }
    token = "pscale_tkn_" + _pick(random.Random(6), ALNUM, 43)
    assert [f.rule_id for f in scanner.scan(f"{token}\n".encode())] == [
        "custom.planetscale-api-token"
    ]
    digest = "bb1636883c2707b51c5b7fc26c6927af4430f2e0785a8c7bc886337f919f9edf"
    assert scan(f'"initial": {{"key_sha256": "{digest}", "pos": 9}},\n') == []
    assert scan("class RuleAwsSandboxConfigSecretAccessKey(BaseModel):\n") == []


def test_a_rule_run_alone_is_the_catalogues_own() -> None:
    import kingfisher_sdk

    rules = kingfisher_sdk.Rules()
    compiled = secrets_rules.standalone_scanner(rules).rules
    by_kind = {secrets_rules.kind_of(m["id"]): m["id"] for m in rules.metadata()}
    for meta in compiled.metadata():
        own, alone = (
            rules.detail(by_kind[secrets_rules.kind_of(meta["id"])]),
            compiled.detail(meta["id"]),
        )
        assert (alone["name"], alone["pattern"]) == (own["name"], own["pattern"])
        assert alone["min_entropy"] == own["min_entropy"] and alone["confidence"] == "medium"
        assert not alone["depends_on_rule"] and meta["visible"]


def test_a_value_found_by_a_rule_alone_must_read_as_a_credential() -> None:
    # The session-token rule alone takes any 16 or more characters after its name; a
    # variable passed on is not a token.
    assert scan("AWS_SESSION_TOKEN=aws_session_token_from_the_environment\n") == []
    token = "FwoGZXIvYXdzE" + _pick(random.Random(7), ALNUM, 120)
    assert [f.kind for f in scan(f"AWS_SESSION_TOKEN={token}\n")] == ["rule aws-session-token"]
