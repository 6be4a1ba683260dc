"""The named kinds of ``contextfs.gate.secrets_formats_services``: hosted services' credentials.

As in ``test_secrets_formats.py``, every token is made at test time from the alphabet, length
and structure its vendor documents or issues (see the comment on each format); none is, or
was, a real credential. Each kind gets positives in the contexts it usually appears in (the
tests name the kind, so they fail without its format; most of these notes were not refused at
all before it, having no credential-like name next to the value), near-misses that must not
fire, and the write gate's refusal through the agent's ``write_context`` tool.
"""

from __future__ import annotations

import base64
import random
import re
import string
import urllib.parse
import uuid
import zlib
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextfs.gate import secrets_formats_services as services
from contextfs.gate.secrets import scan
from contextfs.gate.secrets_values import is_placeholder

LOWER = string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` that no placeholder rule takes for filler, holding
    a digit when the alphabet has digits."""
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        digits = set(string.digits) & set(alphabet)
        if not is_placeholder(value) and (not digits or set(value) & digits):
            return value


def _b64(rng: random.Random, size: int) -> str:
    while True:
        value = base64.b64encode(rng.randbytes(size)).decode()
        if not is_placeholder(value):
            return value


def _sas_signature(rng: random.Random) -> str:
    """An HMAC-SHA256 in base64, URL-encoded, as a SAS carries it."""
    return urllib.parse.quote(_b64(rng, 32), safe="")


def _acr_password(rng: random.Random) -> str:
    return _pick(rng, B64, 42) + "+ACR" + rng.choice("ABCD") + _pick(rng, B64, 5)


def _docker_auth(rng: random.Random) -> str:
    user = _pick(rng, LOWER, 8)
    password = _pick(rng, ALNUM + "!@#%", 18)
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _tableau_secret(rng: random.Random) -> str:
    return _b64(rng, 16) + ":" + _pick(rng, ALNUM, 32)


def _atlassian_access_token(rng: random.Random) -> str:
    body = "ATCTT3xFfGN0" + _pick(rng, B64URL, 170)
    return f"{body}={zlib.crc32(body.encode()):08X}"


def _data_center_pat(rng: random.Random) -> str:
    token_id = "".join(rng.choice(string.digits) for _ in range(12))
    return base64.b64encode(token_id.encode() + b":" + rng.randbytes(20)).decode()


def _maxmind_key(rng: random.Random) -> str:
    return _pick(rng, ALNUM, 6) + "_" + _pick(rng, ALNUM + "_", 29) + "_mmk"


def _refresh_token(rng: random.Random) -> str:
    return "1." + _pick(rng, B64URL, 90) + "." + _pick(rng, B64URL, 240)


def _reference_token(rng: random.Random) -> str:
    expiry = str(rng.randrange(1_700_000_000, 1_900_000_000))
    raw = f"reftkn:01:{expiry}:{_pick(rng, ALNUM, 27)}".encode()
    return base64.b64encode(raw).decode().rstrip("=")


def _rapidapi_key(rng: random.Random) -> str:
    parts = [_pick(rng, HEX, n) for n in (10, 15, 6, 12)]
    return f"{parts[0]}msh{parts[1]}p{parts[2]}jsn{parts[3]}"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


Maker = Callable[[random.Random], str]
USUAL: dict[str, tuple[str, Maker]] = {
    "Azure SAS token in a .env line": (
        "Azure SAS token",
        lambda r: (
            "AZURE_BLOB_SAS=sp=racwl&st=2025-03-04T07:24:52Z&se=2025-04-04T15:24:52Z"
            f"&spr=https&sv=2022-11-02&sr=c&sig={_sas_signature(r)}\n"
        ),
    ),
    "Azure SAS URL": (
        "Azure SAS token",
        lambda r: (
            "Download it from https://acct.blob.core.windows.net/builds/app.zip?sv=2023-01-03"
            f"&st=2025-06-18T08%3A45%3A11Z&se=2025-06-19T08%3A45%3A11Z&sr=b&sp=r&sig={_sas_signature(r)}"
            " before Friday.\n"
        ),
    ),
    "Azure SAS, signature before the version": (
        "Azure SAS token",
        lambda r: f"?sig={_sas_signature(r)}&se=2026-01-01&sp=rl&sv=2021-08-06&sr=c\n",
    ),
    "Azure Container Registry password in docker login": (
        "Azure Container Registry password",
        lambda r: (
            f"```bash\ndocker login myreg.azurecr.io -u myreg -p {_acr_password(r)}\n"
            "docker push myreg.azurecr.io/app:1.4\n```\n"
        ),
    ),
    "Azure Container Registry password in prose": (
        "Azure Container Registry password",
        lambda r: (
            f"The pull credential for the registry is {_acr_password(r)} (rotated monthly).\n"
        ),
    ),
    "Logic Apps trigger URL": (
        "Azure workflow trigger URL",
        lambda r: (
            "```bash\ncurl -X POST 'https://prod-27.westus.logic.azure.com:443/workflows/"
            f"{_pick(r, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01"
            f"&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={_pick(r, B64URL, 43)}' -d @alert.json\n```\n"
        ),
    ),
    "Teams workflow URL (Power Automate)": (
        "Azure workflow trigger URL",
        lambda r: (
            f"Teams alerts post to https://{_pick(r, HEX, 32)}.62.environment.api.powerplatform.com"
            f":443/powerautomate/automations/direct/workflows/{_pick(r, HEX, 32)}/triggers/manual"
            f"/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={_pick(r, B64URL, 43)}\n"
        ),
    ),
    "refresh token in a token cache": (
        "OAuth refresh token",
        lambda r: (
            '```json\n{\n  "tokenType": "Bearer",\n  "resource": "https://graph.windows.net",\n'
            f'  "refreshToken": "{_refresh_token(r)}"\n}}\n```\n'
        ),
    ),
    "refresh token in a request body": (
        "OAuth refresh token",
        lambda r: (
            f"body: client_id={_uuid(r)}&grant_type=refresh_token&client_info=1"
            f"&refresh_token={_refresh_token(r)}&scope=offline_access\n"
        ),
    ),
    "Docker config auths": (
        "Docker registry credential",
        lambda r: (
            '```json\n{\n  "auths": {\n    "registry.corp.io": {\n'
            f'      "auth": "{_docker_auth(r)}"\n    }}\n  }}\n}}\n```\n'
        ),
    ),
    "Docker config in a CI variable": (
        "Docker registry credential",
        lambda r: (
            'environment = ["DOCKER_AUTH_CONFIG={\\"auths\\":{\\"registry.corp.io:8083\\":'
            f'{{\\"auth\\":\\"{_docker_auth(r)}\\"}}}}}}"]\n'
        ),
    ),
    "Tableau PAT secret on its own line": (
        "Tableau token",
        lambda r: (
            f"pat ci-publisher\n{_tableau_secret(r)}\nserver=prod-useast-a.online.tableau.com\n"
        ),
    ),
    "Tableau PAT in a sign-in call": (
        "Tableau token",
        lambda r: (
            '```python\nauth = TSC.PersonalAccessTokenAuth("ci-publisher", '
            f'"{_tableau_secret(r)}", site_id="ops")\n```\n'
        ),
    ),
    "Discord webhook URL": (
        "Discord webhook",
        lambda r: (
            "```yaml\nnotify:\n  discord_hook: https://discord.com/api/webhooks/"
            f"{r.randrange(10**17, 10**19)}/{_pick(r, B64URL, 68)}\n```\n"
        ),
    ),
    "Discord webhook URL, legacy host": (
        "Discord webhook",
        lambda r: (
            f"Posted via https://discordapp.com/api/webhooks/{r.randrange(10**17, 10**19)}/"
            f"{_pick(r, B64URL, 68)} last night.\n"
        ),
    ),
    "LaunchDarkly SDK key in code": (
        "LaunchDarkly key",
        lambda r: f'```python\nldclient.set_config(Config("sdk-{_uuid(r)}"))\n```\n',
    ),
    "LaunchDarkly API token next to the vendor": (
        "LaunchDarkly key",
        lambda r: f"LaunchDarkly automation uses api-{_uuid(r)} for flag cleanup.\n",
    ),
    "Atlassian access token in a header": (
        "Atlassian access token",
        lambda r: (
            f'```bash\ncurl -H "Authorization: Bearer {_atlassian_access_token(r)}" '
            "https://api.bitbucket.org/2.0/repositories/team\n```\n"
        ),
    ),
    "Atlassian access token in a clone URL": (
        "Atlassian access token",
        lambda r: (
            f"git clone https://x-token-auth:{_atlassian_access_token(r)}"
            "@bitbucket.org/team/app.git\n"
        ),
    ),
    "Data Center PAT in a header": (
        "Atlassian Data Center token",
        lambda r: (
            f'```bash\ncurl -H "Authorization: Bearer {_data_center_pat(r)}" '
            "https://wiki.corp.local/rest/api/content\n```\n"
        ),
    ),
    "Data Center PAT under a product name": (
        "Atlassian Data Center token",
        lambda r: f"confluence_prod={_data_center_pat(r)}\n",
    ),
    "MaxMind license key in a download URL": (
        "MaxMind license key",
        lambda r: (
            "wget 'https://download.maxmind.com/app/geoip_download?edition_id=GeoLite2-City"
            f"&license_key={_maxmind_key(r)}&suffix=tar.gz'\n"
        ),
    ),
    "MaxMind license key in GeoIP.conf": (
        "MaxMind license key",
        lambda r: f"AccountID 123456\nLicenseKey {_maxmind_key(r)}\nEditionIDs GeoLite2-City\n",
    ),
    "SonarQube token under a login name": (
        "SonarQube token",
        lambda r: f"- name: SONAR_LOGIN\n  value: sqa_{_pick(r, HEX, 40)}\n",
    ),
    "SonarQube token in a scanner call": (
        "SonarQube token",
        lambda r: (
            f"sonar-scanner -Dsonar.host.url=https://sq.corp -Dsonar.token=squ_{_pick(r, HEX, 40)}\n"
        ),
    ),
    "Stripe webhook secret in code": (
        "Stripe webhook secret",
        lambda r: f'endpoint_secret = "whsec_{_pick(r, ALNUM, 32)}"\n',
    ),
    "RapidAPI key in a header": (
        "RapidAPI key",
        lambda r: (
            f'headers = {{"X-RapidAPI-Host": "api.example.io", "X-Value": "{_rapidapi_key(r)}"}}\n'
        ),
    ),
    "Artifactory reference token as a password": (
        "Artifactory credential",
        lambda r: f"docker login corp.jfrog.io -u deploy -p {_reference_token(r)}\n",
    ),
    "Mailgun key in a curl call": (
        "Mailgun key",
        lambda r: (
            f"curl -s --user 'api:key-{_pick(r, HEX, 32)}' https://api.mailgun.net/v3/mg.corp.io/messages\n"
        ),
    ),
    "Braintree access token in code": (
        "Braintree access token",
        lambda r: (
            "gateway = braintree.BraintreeGateway(access_token="
            f'"access_token$production${_pick(r, LOWER + string.digits, 16)}${_pick(r, HEX, 32)}")\n'
        ),
    ),
    "Meta access token in a Graph URL": (
        "Meta access token",
        lambda r: (
            f"GET https://graph.facebook.com/v19.0/me/accounts?access_token=EAA{_pick(r, ALNUM, 180)}\n"
        ),
    ),
    "Mapbox secret token in a config": (
        "Mapbox secret token",
        lambda r: f"MAPBOX_DOWNLOADS=sk.eyJ1Ijoi{_pick(r, B64URL, 40)}.{_pick(r, B64URL, 22)}\n",
    ),
}


def _kinds(text: str) -> list[str]:
    return [finding.kind for finding in scan(text, path="notes/n.md")]


# Each format is found in its usual context and refused by the write gate through the same
# tests as the other named formats (test_secrets_formats.py runs them over both tables).


_SIG = "WSdF9YeZhvrbs%2B%2B1f8ZdDBzEe7fBJ%2BenuaXQ%2BJ9WOw0%3D"
NEAR_MISSES = {
    "SAS signature without a version": f"https://cdn.corp.io/a.js?sp=r&sig={_SIG}",
    "SAS with a placeholder signature": "?sv=2022-11-02&sp=r&sig=<signature>",
    "SAS-like query with a short signature": "?sv=2022-11-02&sp=r&sig=a1B2c3D4e5F6g7H8",
    "Logic Apps URL without a signature": "https://prod-27.westus.logic.azure.com:443/workflows/"
    "0f1e2d3c4b5a69788796a5b4c3d2e1f0/triggers/manual/paths/invoke?api-version=2016-06-01",
    "ACR signature in a longer base64 run": "c2VjcmV0" * 6 + "+ACRAKcPHyQ",
    "ACR-like with the wrong version letter": "Ljc1lq0U0c3jHlMHxSxAhCipKt6zU43HfMleYmj9Ab+ACRZKcPHy",
    "refresh token placeholder": '"refresh_token": "<refresh-token>"',
    "refresh token parameter name in prose": "Send grant_type=refresh_token with the refresh_token "
    "you stored; the response has a new refresh_token too.",
    "refresh token variable": "refresh_token = session.get_refresh_token_from_cache_or_login()",
    "refresh token of one character class": "refresh_token: " + "abcdefghjkmnpqrstuvwxyz" * 3,
    "docker auth template": '{"auths": {"r.io": {"auth": "{{ AUTH_BASE64 }}"}}}',
    "base64 salt and a hex digest": "pbkdf2 YMqNfVWiTSa0QgpoJ9GpCw==:9f86d081884c7d659a2feaa0c55ad015",
    "Tableau-like with a short tail": "YMqNfVWiTSa0QgpoJ9GpCw==:KTamjuKrXF5gVETjIJaf",
    "Discord API URL without a token": "https://discord.com/api/webhooks/144147826297622273",
    "Discord channel URL": "https://discord.com/channels/144147826297622273/1369248176954937405",
    "sdk- followed by a version": "pip install launchdarkly-server-sdk-9.4.0 and ldclient",
    "api- UUID without the vendor": "Deployment api-4361420b-8fde-48eb-b62a-0e34fec63f5c rolled out.",
    "LaunchDarkly placeholder key": 'Config("sdk-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")',
    "Atlassian prefix alone": "Bitbucket access tokens start with ATCTT3xFfGN0 and end in a checksum.",
    "Atlassian token cut short": "ATCTT3xFfGN0...",
    "44 base64 characters that are not a PAT": "digest "
    + base64.b64encode(bytes(range(33))).decode(),
    "MaxMind suffix in prose": "New license keys end in _mmk and have 40 characters.",
    "MaxMind-like but short": "the key lo0tFI_SibGoBsBoqEJmOr0jMU7_mmk is short",
    "SonarQube prefix with too few digits": "Token format: squ_ then 40 hex digits, e.g. squ_1a2b",
    "Stripe webhook placeholder": 'STRIPE_WEBHOOK_SECRET="whsec_..."',
    "RapidAPI-like with letters out of place": "6f1bbe24b9mshcbb5030202794a4q18f7d0jsndd55ab0f981d",
    "base64 that is no reference token": "cmVmdGtuOjAxOj" + "QUJD" * 12,
    "a cache key named after a digest": "evicted cache-key-d41d8cd98f00b204e9800998ecf8427e",
    "Braintree format named in prose": "Braintree tokens look like access_token$production$<id>$<hex>",
    "EAA inside a longer word": "XEAA" + "b" * 100,
    "Mapbox public token": "pk.eyJ1IjoibWFwYm94IiwiYSI6ImNpejY4M3ZvZjA0aTIyd3BjZ3ZkN2F5cmEifQ.XyZ123abcDEF456ghiJKL7",
}


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_misses_do_not_fire(name: str) -> None:
    assert scan(NEAR_MISSES[name], path="notes/n.md") == [], NEAR_MISSES[name]


def _reference(body: bytes) -> str:
    return base64.b64encode(b"reftkn:01:" + body).decode()


@pytest.mark.parametrize("size", [16, 26, 27, 28])
@pytest.mark.parametrize("padded", [True, False])
def test_a_reference_token_is_found_with_or_without_its_padding(size: int, padded: bool) -> None:
    """Random parts of 16 characters (the least taken) and of the sizes that leave the base64
    one, two or no `=` of padding; people copy the token with its padding or without."""
    token = _reference(b"1790000000:" + _pick(random.Random(size), ALNUM, size).encode())
    token = token if padded else token.rstrip("=")
    found = scan(f"docker login corp.jfrog.io -u deploy -p {token}\n", path="notes/n.md")
    assert [f.kind for f in found] == ["Artifactory credential"]


@pytest.mark.parametrize(
    "token",
    [
        _reference(b"1790000000:" + b"q8W7e6R5t4Y3u2I"),  # a random part one short
        _reference(b"tomorrow:q8W7e6R5t4Y3u2I1o0P9"),  # an expiry that is no number
        _reference(b"1790000000q8W7e6R5t4Y3u2I1o0P9a8"),  # no `:` after the expiry
        "cmVmdGtuOjAxOj" + "QUJD" * 8 + "Q",  # a length no base64 has
    ],
)
def test_what_does_not_decode_to_a_reference_token_is_not_one(token: str) -> None:
    assert scan(f"docker login corp.jfrog.io -u deploy -p {token}\n", path="notes/n.md") == []


def test_a_docker_auth_is_a_credential_only_when_it_decodes_to_user_and_password() -> None:
    # (The value rule may still judge the value under its `auth` name; this is the format's
    # own verdict.)
    rng = random.Random("docker")
    key = _pick(rng, B64, 40)
    for plain, expected in (
        (b"ci-bot:" + _pick(rng, ALNUM, 20).encode(), True),
        (
            b'_json_key:{\n  "type": "service_account",\n  "private_key": "'
            + key.encode()
            + b'"\n}',
            True,
        ),
        (b":" + _pick(rng, ALNUM, 20).encode(), False),  # no user
        (b"ci-bot:", False),  # no password
        (b"deploy:changeme", False),  # a stand-in password
        (b"just some configuration text", False),  # no colon
        (b"\x00\x01\x02\x03:\xff\xfe", False),  # not text
    ):
        auth = base64.b64encode(plain).decode()
        note = f'{{"auths": {{"registry.corp.io": {{"auth": "{auth}"}}}}}}\n'
        assert ("Docker registry credential" in _kinds(note)) is expected, plain


def test_a_data_center_pat_is_a_credential_only_when_it_decodes_to_an_id_and_bytes() -> None:
    rng = random.Random("dc")
    assert "Atlassian Data Center token" in _kinds(f"token {_data_center_pat(rng)}\n")
    not_an_id = base64.b64encode(b"12345678901x:" + rng.randbytes(20)).decode()
    assert "Atlassian Data Center token" not in _kinds(f"token {not_an_id}\n")


@given(
    st.one_of(
        st.binary(min_size=16, max_size=64).map(lambda b: b.hex()),
        st.uuids().map(str),
        st.binary(min_size=16, max_size=64).map(lambda b: base64.b64encode(b).decode()),
        st.binary(min_size=33, max_size=33).map(lambda b: base64.b64encode(b).decode()),
        st.text(alphabet=LOWER + " ", min_size=20, max_size=200),
    )
)
@settings(max_examples=300, deadline=None)
def test_hashes_uuids_base64_and_prose_are_none_of_the_new_kinds(text: str) -> None:
    new = {token.kind for token in services.TOKENS}
    note = f"The digest recorded was {text} (see the build log).\n"
    found = set(_kinds(note))
    if re.search(r"AP[0-9A-F]|AKC", text):
        # detect-secrets' older Artifactory patterns (`AP`, a hex digit and 8 more letters or
        # digits; `AKC` and 10 more) report under the kind the reference-token format shares,
        # and base64 of some bytes spells them; that format wants `cmVmdGtuOjAxOj` and its
        # decoding, which such text does not hold.
        found.discard("Artifactory credential")
    assert not new & found, note


@pytest.mark.parametrize(
    "unit",
    [
        "sv=2020-01-01&",
        "sig=" + "Ab1+" * 11 + "=&",
        "https://a.logic.azure.com/",
        "https://a.logic.azure.com:443/workflows/0123456789abcdef0123456789abcdef/triggers/",
    ],
)
def test_repeated_partial_urls_are_scanned_whole(unit: str) -> None:
    """A SAS query or a workflow URL cut short and repeated on one line (nothing that holds a
    secret) makes an unbounded pattern re-read the rest of the line from every occurrence;
    the bounded ones find on a 256 KB line what they find on a short one, and a signature
    at its very end is still found."""
    rng = random.Random(unit)
    sas = f"sv=2022-11-02&sr=c&sp=r&sig={_sas_signature(rng)}"
    text = unit * (256 * 1024 // len(unit)) + " " + sas
    kinds = {f.kind for f in scan(text)}
    assert kinds == {f.kind for f in scan(unit * 8)} | {f.kind for f in scan(sas)}, kinds
    assert "Azure SAS token" in kinds
