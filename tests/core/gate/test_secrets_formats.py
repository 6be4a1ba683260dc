"""The named kinds of ``contextfs.gate.secrets_formats``: each vendor's documented token shape.

Every token here is made at test time from the alphabet and length its vendor documents (see
the comment on each format); none is, or was, a real credential. Each kind gets a positive in
the context it usually appears in, near-misses that must not fire (one character short, the
wrong alphabet, no vendor name where one is needed, placeholders), and the write gate's
refusal through the agent's ``write_context`` tool.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_secrets_formats_services import USUAL as SERVICE_USUAL

from contextfs import ContextManager
from contextfs.gate import secrets_formats
from contextfs.gate import secrets_formats_services as services
from contextfs.gate.secrets import KINDS, fingerprint, scan
from contextfs.gate.secrets_formats import token
from contextfs.gate.secrets_values import credential_like, is_placeholder
from contextfs.integrations import make_tools

LOWER = string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
BASE32 = LOWER + "234567"
# wp_generate_password(64, true, true): letters, digits and its two sets of special characters
WORDPRESS = ALNUM + "!@#$%^&*()" + "-_ []{}<>~`+=,.;:/?|"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` that no placeholder rule takes for filler."""
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        digits = set(string.digits) & set(alphabet)
        if not is_placeholder(value) and (not digits or set(value) & digits):
            return value


def _guid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# name -> (kind, maker of the note that carries a token in its usual context)
Maker = Callable[[random.Random], str]
USUAL: dict[str, tuple[str, Maker]] = {
    "Doppler service token": (
        "Doppler token",
        lambda r: (
            "```bash\necho 'dp.st.prd."
            + _pick(r, ALNUM, 43)
            + "' | doppler configure set token --scope /srv/app\n```\n"
        ),
    ),
    "Doppler CLI token": (
        "Doppler token",
        lambda r: "The build box logged in with dp.ct." + _pick(r, ALNUM, 43) + " last week.\n",
    ),
    "Teams webhook (legacy host)": (
        "Microsoft Teams webhook",
        lambda r: (
            "```bash\ncurl -H 'Content-Type: application/json' -d '{\"text\": \"deployed\"}' "
            f"https://outlook.office.com/webhook/{_guid(r)}@{_guid(r)}/IncomingWebhook/"
            f"{_pick(r, HEX, 32)}/{_guid(r)}\n```\n"
        ),
    ),
    "Teams webhook (webhookb2)": (
        "Microsoft Teams webhook",
        lambda r: (
            f"Alerts go to https://contoso.webhook.office.com/webhookb2/{_guid(r)}@"
            f"{_guid(r)}/IncomingWebhook/{_pick(r, HEX, 32)}/{_guid(r)}/V2{_pick(r, B64URL, 45)}\n"
        ),
    ),
    "Twitch stream key": (
        "Twitch stream key",
        lambda r: (
            "```bash\nffmpeg -re -i show.mp4 -f flv rtmp://live.twitch.tv/app/live_"
            + str(r.randrange(10**8, 10**9))
            + "_"
            + _pick(r, ALNUM, 30)
            + "\n```\n"
        ),
    ),
    "NuGet API key": (
        "NuGet API key",
        lambda r: (
            "nuget push build/app.1.2.0.nupkg oy2"
            + _pick(r, LOWER + string.digits, 43)
            + " -Source https://api.nuget.org/v3/index.json\n"
        ),
    ),
    "Vault namespaced legacy token": (
        "Vault token",
        lambda r: (
            "```bash\nvault login s." + _pick(r, ALNUM, 24) + "." + _pick(r, ALNUM, 5) + "\n```\n"
        ),
    ),
    "Vault legacy token, long body": (
        "Vault token",
        lambda r: "Run the job with `-vaultToken s.CAES" + _pick(r, B64URL, 100) + "`.\n",
    ),
    "Vault unseal key": (
        "Vault unseal key",
        lambda r: "```bash\nvault operator unseal " + _pick(r, B64, 44) + "\n```\n",
    ),
    "New Relic EU license key": (
        "New Relic key",
        lambda r: "The EU account ingests with eu01xx" + _pick(r, HEX, 30) + "NRAL for now.\n",
    ),
    "New Relic user key": (
        "New Relic key",
        lambda r: (
            "NerdGraph calls use NRAK-"
            + _pick(r, string.ascii_uppercase + string.digits, 27)
            + " (ops user).\n"
        ),
    ),
    "Postmark token in a config object": (
        "Postmark token",
        lambda r: '```js\nconst keys = {\n  postmark: "' + _guid(r) + '",\n};\n```\n',
    ),
    "Postmark server token": (
        "Postmark token",
        lambda r: (
            "```bash\ncurl https://api.postmarkapp.com/email -H 'X-Postmark-Server-Token: "
            + _guid(r)
            + "' -d @mail.json\n```\n"
        ),
    ),
    "Telegram bot token, 5-digit id": (
        "Telegram bot token",
        lambda r: (
            f"https://api.telegram.org/bot{r.randrange(10**4, 10**5)}:AA"
            + _pick(r, B64URL, 33)
            + "/getMe\n"
        ),
    ),
    "Telegram bot token, 16-digit id": (
        "Telegram bot token",
        lambda r: (
            f"The alerts bot is {r.randrange(10**15, 2**52)}:AA" + _pick(r, B64URL, 33) + ".\n"
        ),
    ),
    "Sourcegraph token": (
        "Sourcegraph token",
        lambda r: (
            "<p>CI token: <code>sgp_"
            + _pick(r, HEX, 16)
            + "_"
            + _pick(r, HEX, 40)
            + "</code></p>\n"
        ),
    ),
    "Square legacy personal token": (
        "Square access token",
        lambda r: "personal access token <code>sq0atp-" + _pick(r, B64URL, 22) + "</code>\n",
    ),
    "Salesforce session id": (
        "Salesforce access token",
        lambda r: (
            "Session: 00D"
            + _pick(r, ALNUM, 12)
            + "!"
            + _pick(r, ALNUM, 60)
            + "."
            + _pick(r, ALNUM + "_", 35)
            + "\n"
        ),
    ),
    "Azure DevOps PAT": (
        "Azure DevOps token",
        lambda r: '```python\nado_pat = "' + _pick(r, BASE32, 52) + '"\n```\n',
    ),
    "Google OAuth access token": (
        "Google OAuth token",
        lambda r: (
            "```js\nconst creds = {\n  access_token:\n    'ya29."
            + _pick(r, B64URL, 120)
            + "',\n};\n```\n"
        ),
    ),
    "Google OAuth client secret in a client JSON": (
        "Google OAuth client secret",
        lambda r: (
            '{"installed": {"client_id": "1234-abc.apps.googleusercontent.com", '
            '"client_secret": "GOCSPX-' + _pick(r, B64URL, 28) + '"}}\n'
        ),
    ),
    "GitLab runner token from registration": (
        "GitLab token",
        lambda r: "gitlab-runner register --token glrtr-" + _pick(r, B64URL, 29) + "\n",
    ),
    "WordPress salt in wp-config.php": (
        "WordPress key or salt",
        lambda r: (
            "```php\ndefine( 'DB_HOST', 'localhost' );\ndefine('SECURE_AUTH_SALT',  '"
            + _pick(r, WORDPRESS, 64)
            + "');\n```\n"
        ),
    ),
    "a prefixed token of a vendor no format lists, in a YAML list": (
        "token with a vendor prefix",
        lambda r: "acme:\n  staging:\n    - acme_live_" + _pick(r, ALNUM, 40) + "\n",
    ),
    "a prefixed token of a vendor no format lists, in prose": (
        "token with a vendor prefix",
        lambda r: "The staging box used zq-" + _pick(r, ALNUM, 48) + ", rotated since.\n",
    ),
    "WordPress key in a Bedrock .env": (
        "WordPress key or salt",
        lambda r: 'WP_ENV=production\nNONCE_KEY="' + _pick(r, WORDPRESS, 64) + '"\n',
    ),
}


def _kinds(text: str) -> list[str]:
    return [finding.kind for finding in scan(text, path="notes/n.md")]


#: Every named format, with the hosted services' ones (test_secrets_formats_services.py).
EVERY = {**USUAL, **SERVICE_USUAL}


def test_every_format_is_a_listed_kind() -> None:
    assert not set(USUAL) & set(SERVICE_USUAL)
    formats = {token.kind for token in (*secrets_formats.TOKENS, *services.TOKENS)}
    assert formats <= set(KINDS)
    assert {kind for kind, _ in EVERY.values()} == formats


@pytest.mark.parametrize("name", sorted(EVERY))
def test_each_token_is_found_in_its_usual_context(name: str) -> None:
    kind, make = EVERY[name]
    for seed in range(5):
        note = make(random.Random(f"{name}/{seed}"))
        assert kind in _kinds(note), note


@pytest.mark.parametrize("name", sorted(EVERY))
def test_the_write_gate_refuses_each_token_through_write_context(
    ctx: ContextManager, name: str
) -> None:
    kind, make = EVERY[name]
    note = make(random.Random(name))
    tools = {t.name: t for t in make_tools(ctx)}
    out = tools["write_context"].invoke(
        {
            "id": "1",
            "name": "write_context",
            "type": "tool_call",
            "args": {"path": "notes/setup.md", "content": note},
        }
    )
    assert out.status == "error" and kind in out.content, out.content
    assert not ctx.exists("notes/setup.md")


NEAR_MISSES = {
    "Doppler body one short": "Rotated dp.ct." + "aB3" * 13 + " yesterday.",
    "Doppler unknown type": "Rotated dp.xx.bAqhcVzrhy5cRHkOlNTc0Ve6w5NUDCpcutm8vGE9myq today.",
    "Doppler placeholder": "export DOPPLER_TOKEN=dp.st.prd.xxxx",
    "Doppler in prose": "The dp.st.dev config is the one to use.",
    "Doppler filler": "DOPPLER_TOKEN: dp.pt." + "X" * 43,
    "NuGet filler": "nuget push a.nupkg oy2"
    + "a" * 43
    + " -Source https://api.nuget.org/v3/index.json",
    "Square filler": "Bearer EAAA" + "0" * 60,
    "Teams webhook placeholders": "https://outlook.office.com/webhook/<group-id>@<tenant-id>"
    "/IncomingWebhook/<connector-id>/<owner-id>",
    "Teams docs filler": "https://contoso.webhook.office.com/webhookb2/xxxxxxxx-xxxx-xxxx-xxxx-"
    "xxxxxxxxxxxx@xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx/IncomingWebhook/xxxxxxxxxxxxxxxxxxxxxxxx"
    "xxxxxxxx/xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
    "GUIDs in a Graph URL": "https://graph.microsoft.com/v1.0/teams/"
    "9da5da9c-4218-4c22-aed6-b5c8baebfff5/channels/2f2b54b7-0141-4ba7-8fcd-ab7d17a60547",
    "Twitch key one short": "rtmp://live.twitch.tv/app/live_126031192_tiX3sbwIzL9VmkecdxioBMA1LJ9S4",
    "Twitch-like identifier": "see live_2024_release_notes_for_the_streaming_team_q3 in the wiki",
    "NuGet one short": "nuget push a.nupkg oy2dgb333j35kjjybcf99yzxo7hjyloera4anxn4ivcvl -Source x",
    "NuGet upper case": "oy2DGB333J35KJJYBCF99YZXO7HJYLOERA4ANXN4IVCVLE",
    "Vault attribute access": "vault.secrets.kv.v2.read_secret_version(path='app') in vault_client.py",
    "Vault hvs one short": "hvs." + "Xy7" * 7 + "Q",
    "unseal without a key": "vault operator unseal  # then paste a key share when asked",
    "unseal key placeholder": "vault operator unseal <unseal-key-1>",
    "New Relic user key one short": "NRAK-CIH1YVYWKA9ZP6E49WP5XYJH1G",
    "sha1 digest": "commit 4361420b8fde48ebb62a0e34fec63f5c1bf66ccb was reverted",
    "NRAL in prose": "NRAL is the suffix New Relic license keys end with.",
    "Postmark message id": "postmark_message_id: b7bc2f4a-e38e-4336-af7d-e6c392c2f817",
    "Postmark response": '{"To": "a@b.c", "MessageID": "b7bc2f4a-e38e-4336-af7d-e6c392c2f817"}',
    "a bare UUID": "Request 4361420b-8fde-48eb-b62a-0e34fec63f5c failed twice.",
    "Telegram documented example": "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    "Telegram-like with a 4-digit id": "1234:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaq",
    "Telegram-like with a 17-digit id": "12345678901234567:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaq",
    "a time and a word": "at 12:30 AAA batteries were sold out",
    "Sourcegraph one short": "sgp_a70aabf5f685734b19792789feeb73c6393cd02",
    "Square one short": "sq0atp-qUlZzae8wVMc5P5NZdf5D",
    "Facebook-style token": "EAAB" + "Zx9kQ" * 30,
    "Salesforce org id alone": "Org 00D5e000000AbCd is the sandbox.",
    "Salesforce body short": "00DE0X0A0M0PeLE!CJoAQOx1GCLf1UIt4UU9y0VOPLUZAYN6I8Ds",
    "base32 without an Azure name": 'checksum = "iyfmob6xjrfmit67anxbot64umfx2clwx7dz5ynxi4q2z3uqegvq"',
    "Azure name, letters only": 'ado_pat = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"',
    "Azure name, one short": 'ado_pat = "iyfmob6xjrfmit67anxbot64umfx2clwx7dz5ynxi4q2z3uqegv"',
    "Google prefix alone": "Tokens from Google start with ya29. and expire in an hour.",
    "Google client secret one short": "GOCSPX-FAsZauZ28P3STmkBhqQi1Y-EsEa",
    "GitLab runner prefix alone": "Runner tokens now start with glrtr- after registration.",
    "prefixed publishable key": "stripe.js loads with pk_live_8fnvGNx6jvr7SIftRutlZfOjUStEkUdf",
    "prefixed public key": "The widget embeds pub-8fnvGNx6jvr7SIftRutlZfOjUStEkUdfMI7z in pages.",
    "subresource digest": 'integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6R9GqQ8KuxyR9rx7HNQlGYl1kP"',
    "prefixed id": "Customer cus_NffrFeUfNV2Hib and message msg_013Zva2CMHLNnXjNJJKqJ2EF.",
    "prefixed body of one case": "cache_k7jqevt0mlamrtvetw0tesuleetldq8b8vw2x9",
    "prefixed body without digits": "cache_KjqevtMLaMRTvetwtESulEETldqbVwxQzRtY",
    "prefixed body one short": "Use cfk_ZeiNNCiia3anXn9k3ksu9mI4ROnl89S for the API.",
    "prefixed words": "see test_shouldReturnTrueWhenTheUserIsAnAdministrator2 in the suite",
    "prefixed in a path": "https://cdn.example.com/img_SUuErsEz5jhy0I9lO7F3vlfFrGYJ3GxeYYXw",
    "prefixed in a domain": "https://app_k7jqevt0MLaMRTvetw0tESulEETldq8b8Vw2.example.com/",
    "prefixed inside base64": "data=QUJD+abc_k7jqevt0MLaMRTvetw0tESulEETldq8b8Vw2",
    "WordPress sample placeholder": "define( 'AUTH_KEY',         'put your unique phrase here' );",
    "WordPress salt one short": "define('NONCE_SALT', '"
    + "j@cGIZJfObpPU);AZgYH5,ubbSlUp|ZnLZNlq|;tkFe5xc(=_0[LKbF71T.EE ~"
    + "');",
    "WordPress name inside another": "define('MY_AUTH_KEY', '"
    + "j@cGIZJfObpPU);AZgYH5,ubbSlUp|ZnLZNlq|;tkFe5xc(=_0[LKbF71T.EE ~9"
    + "');",
}


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_misses_do_not_fire(name: str) -> None:
    assert scan(NEAR_MISSES[name], path="notes/n.md") == [], NEAR_MISSES[name]


@given(
    words=st.lists(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), min_size=1, max_size=3),
    separator=st.sampled_from("_-"),
    body=st.text(alphabet=ALNUM, min_size=32, max_size=60),
)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_prefix_and_random_body_of_three_classes_is_a_token(
    words: list[str], separator: str, body: str
) -> None:
    assume(all(any(test(c) for c in body) for test in (str.islower, str.isupper, str.isdigit)))
    assume(credential_like(body) and not is_placeholder(body))
    assume(not {"pk", "pub", "public"} & set(words) and not words[0].startswith("sha"))
    value = separator.join(words) + separator + body
    assert scan(f"We used {value} on the staging box.\n", path="notes/n.md"), value


def test_a_named_kind_names_a_prefixed_token_it_knows() -> None:
    token = "ghp_" + _pick(random.Random("gh"), ALNUM, 36)
    assert _kinds(f"GITHUB_TOKEN={token}\n") == ["GitHub token"]


def test_a_one_letter_vault_prefix_needs_vault_on_the_line() -> None:
    # The vendor rule set's own `vault-service-token` rule takes `s.` + 24 base62 characters
    # anywhere; the named kind wants the vendor's name on the line.
    assert "Vault token" not in _kinds("The field s.Fx8kQ2mZp4LrT7vW1nB9cH3d holds the span id.")
    assert "Vault token" in _kinds("vault login s.Fx8kQ2mZp4LrT7vW1nB9cH3d.Ab3dE")


def test_a_teams_webhook_is_fingerprinted_as_the_whole_url() -> None:
    # The rule set's Teams rule reports the last repetition of a group inside a GUID (five
    # characters) as the secret, so allow-listing one webhook would go by that fragment.
    rng = random.Random("teams")
    url = (
        f"https://contoso.webhook.office.com/webhookb2/{_guid(rng)}@{_guid(rng)}"
        f"/IncomingWebhook/{_pick(rng, HEX, 32)}/{_guid(rng)}"
    )
    findings = scan(f"Alerts go to {url}\n", path="notes/n.md")
    assert [(f.kind, f.fingerprint) for f in findings] == [
        ("Microsoft Teams webhook", fingerprint(url))
    ]


# Formats whose shape alone is evidence, with how to make one from a random body.
SELF_EVIDENT: dict[str, tuple[str, str, int, int]] = {
    # kind: (prefix, alphabet of the body, body length, the shortest body the format takes)
    "Doppler token": ("dp.pt.", ALNUM, 43, 40),
    "Twitch stream key": ("live_48213377_", ALNUM, 30, 30),
    "NuGet API key": ("oy2", LOWER + string.digits, 43, 43),
    "Vault token": ("hvb.", B64URL, 138, 24),
    "Sourcegraph token": ("sgp_local_", HEX, 40, 40),
    "Square access token": ("EAAA", B64URL, 60, 60),
    "Google OAuth token": ("ya29.", B64URL, 160, 30),
    "Google OAuth client secret": ("GOCSPX-", B64URL, 28, 28),
}


@given(
    kind=st.sampled_from(sorted(SELF_EVIDENT)),
    data=st.data(),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_body_in_the_documented_alphabet_is_found_and_one_short_is_not(
    kind: str, data: st.DataObject
) -> None:
    prefix, alphabet, size, shortest = SELF_EVIDENT[kind]
    body = data.draw(st.text(alphabet=alphabet, min_size=size, max_size=size))
    assume(not is_placeholder(body) and not is_placeholder(prefix + body))
    assume(set(body) & set(string.digits) or not set(alphabet) & set(string.digits))
    assume(not body.startswith(("-", "_")) and not body.endswith(("-", "_")))
    assert kind in _kinds(f"We used {prefix}{body} on the staging box.\n")
    # One character short of the shortest body the vendor issues is not that token.
    short = body[: shortest - 1]
    assume(not short.endswith(("-", "_")))
    assert kind not in _kinds(f"We used {prefix}{short} on the staging box.\n")


@given(
    st.one_of(
        st.binary(min_size=16, max_size=64).map(lambda b: b.hex()),
        st.uuids().map(str),
        st.binary(min_size=16, max_size=64).map(lambda b: base64.b64encode(b).decode()),
        st.text(alphabet=LOWER + " ", min_size=20, max_size=200),
    )
)
@settings(max_examples=200, deadline=None)
def test_hashes_uuids_base64_and_prose_are_none_of_the_new_kinds(text: str) -> None:
    new = {token.kind for token in secrets_formats.TOKENS}
    note = f"The digest recorded was {text} (see the build log).\n"
    assert not new & set(_kinds(note)), note


def test_a_token_format_is_its_shapes_as_tokens_of_their_own() -> None:
    acme = token("Acme token", ("acme_", "acm2_"), r"acme_[a-z0-9]{8}", r"acm2_[0-9]{4}")
    assert (acme.kind, acme.needles, acme.folded, acme.uuid) == (
        "Acme token",
        ("acme_", "acm2_"),
        False,
        False,
    )

    def found(text: str) -> list[str]:
        return [m.group(0) for pattern in acme.patterns for m in pattern.finditer(text)]

    assert found("use acme_k3y9a8b7 and acm2_2026 here") == ["acme_k3y9a8b7", "acm2_2026"]
    assert found("xacme_k3y9a8b7 acme_k3y9a8b7x acm2_20261 my-acm2_2026") == []
