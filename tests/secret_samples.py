"""Generated secrets and ordinary notes for the secret scanner's tests and benchmark.

Every secret is made here from a random generator in the shape its vendor issues (prefix,
alphabet, length, checksum-free); none is, or was ever, a real credential. ``SECRET_KINDS``
maps a name to a maker returning ``(text, payload)``: the text as it would be pasted, and
the payload, the part that must never be echoed. ``CONTEXTS`` embeds a text the way notes
carry it (prose, YAML frontmatter, code fences, JSON, ``.env`` lines).

``ordinary_note`` writes a realistic note full of the things a scanner must *not* flag:
commit ids, digests, UUIDs, URLs without credentials, base64 of ordinary content, version
strings, code that reads secrets from elsewhere, and placeholders.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import quote

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = LOWER + UPPER + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"


class Secret(NamedTuple):
    """A generated secret: ``text`` as pasted, ``payload`` the part never to be echoed, and
    for assignment-shaped kinds the variable ``name`` (then ``payload`` is its value)."""

    text: str
    payload: str
    name: str = ""


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """Random text that holds upper, lower and digit (as real tokens almost always do)."""
    while True:
        value = _pick(rng, alphabet, n)
        if (
            any(c in UPPER for c in value)
            and any(c in LOWER for c in value)
            and any(c in DIGITS for c in value)
        ):
            return value


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def aws_access_key(rng: random.Random) -> Secret:
    value = rng.choice(["AKIA", "ASIA"]) + _pick(rng, UPPER + "234567", 16)
    return Secret(value, value)


def aws_secret_key(rng: random.Random) -> Secret:
    value = _mixed(rng, B64, 40)
    return Secret(f"aws_secret_access_key = {value}", value, "aws_secret_access_key")


def _pem(rng: random.Random, label: str, body_bytes: int) -> Secret:
    body = base64.b64encode(rng.randbytes(body_bytes)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return Secret(
        f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----", body
    )


def rsa_private_key(rng: random.Random) -> Secret:
    return _pem(rng, "RSA PRIVATE KEY", 600)


def openssh_private_key(rng: random.Random) -> Secret:
    return _pem(rng, "OPENSSH PRIVATE KEY", 300)


def pkcs8_private_key(rng: random.Random) -> Secret:
    return _pem(rng, rng.choice(["PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]), 200)


def github_classic_token(rng: random.Random) -> Secret:
    value = rng.choice(["ghp_", "gho_", "ghs_"]) + _mixed(rng, ALNUM, 36)
    return Secret(value, value)


def github_fine_grained_token(rng: random.Random) -> Secret:
    value = "github_pat_" + _mixed(rng, ALNUM, 22) + "_" + _mixed(rng, ALNUM, 59)
    return Secret(value, value)


def gitlab_token(rng: random.Random) -> Secret:
    value = "glpat-" + _mixed(rng, ALNUM + "_-", 20)
    return Secret(value, value)


def slack_token(rng: random.Random) -> Secret:
    value = f"xox{rng.choice('bpa')}-{_pick(rng, DIGITS, 12)}-{_pick(rng, DIGITS, 12)}-{_mixed(rng, ALNUM, 24)}"
    return Secret(value, value)


def slack_webhook(rng: random.Random) -> Secret:
    tail = _mixed(rng, ALNUM, 24)
    return Secret(
        f"https://hooks.slack.com/services/T{_pick(rng, UPPER + DIGITS, 10)}/B{_pick(rng, UPPER + DIGITS, 10)}/{tail}",
        tail,
    )


def openai_legacy_key(rng: random.Random) -> Secret:
    value = "sk-" + _mixed(rng, ALNUM, 20) + "T3BlbkFJ" + _mixed(rng, ALNUM, 20)
    return Secret(value, value)


def openai_project_key(rng: random.Random) -> Secret:
    prefix = rng.choice(["sk-proj-", "sk-svcacct-", "sk-admin-"])
    value = prefix + _mixed(rng, B64URL, rng.randrange(48, 157))
    return Secret(value, value)


def anthropic_key(rng: random.Random) -> Secret:
    value = "sk-ant-api03-" + _mixed(rng, B64URL, 93) + "AA"
    return Secret(value, value)


def stripe_key(rng: random.Random) -> Secret:
    value = rng.choice(["sk_live_", "rk_live_"]) + _mixed(rng, ALNUM, rng.randrange(24, 99))
    return Secret(value, value)


def google_api_key(rng: random.Random) -> Secret:
    value = "AIza" + _mixed(rng, B64URL, 35)
    return Secret(value, value)


def jwt(rng: random.Random) -> Secret:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {
        "sub": str(rng.randrange(10**9)),
        "name": _pick(rng, LOWER, 8),
        "iat": rng.randrange(1_600_000_000, 1_800_000_000),
    }
    value = f"{header}.{_b64url(json.dumps(claims).encode())}.{_b64url(rng.randbytes(32))}"
    return Secret(value, value)


def sendgrid_key(rng: random.Random) -> Secret:
    value = "SG." + _mixed(rng, B64URL, 22) + "." + _mixed(rng, B64URL, 43)
    return Secret(value, value)


def twilio_key(rng: random.Random) -> Secret:
    value = rng.choice(["SK", "AC"]) + _pick(rng, HEX, 32)
    return Secret(value, value)


def npm_token(rng: random.Random) -> Secret:
    value = "npm_" + _mixed(rng, ALNUM, 36)
    if rng.random() < 0.5:
        return Secret(f"//registry.npmjs.org/:_authToken={value}", value)
    return Secret(value, value)


def pypi_token(rng: random.Random) -> Secret:
    value = "pypi-AgEIcHlwaS5vcmc" + _mixed(rng, B64URL, rng.randrange(70, 160))
    return Secret(value, value)


def discord_token(rng: random.Random) -> Secret:
    value = (
        rng.choice("MNO")
        + _mixed(rng, ALNUM, 23)
        + "."
        + _mixed(rng, B64URL, 6)
        + "."
        + _mixed(rng, B64URL, 27)
    )
    return Secret(value, value)


def telegram_token(rng: random.Random) -> Secret:
    value = f"{rng.randrange(10**8, 10**10)}:AA{_mixed(rng, B64URL, 33)}"
    return Secret(value, value)


def azure_storage_key(rng: random.Random) -> Secret:
    value = base64.b64encode(rng.randbytes(64)).decode()
    return Secret(
        f"DefaultEndpointsProtocol=https;AccountName=tw{_pick(rng, LOWER, 6)};AccountKey={value};EndpointSuffix=core.windows.net",
        value,
    )


def huggingface_token(rng: random.Random) -> Secret:
    value = "hf_" + _mixed(rng, ALNUM, 34)
    return Secret(value, value)


def mailchimp_key(rng: random.Random) -> Secret:
    value = _pick(rng, HEX, 32) + f"-us{rng.randrange(1, 21)}"
    return Secret(value, value)


def square_secret(rng: random.Random) -> Secret:
    value = "sq0csp-" + _mixed(rng, B64URL, 43)
    return Secret(value, value)


def _password(rng: random.Random, symbols: str = "!#%&*+?-_.") -> str:
    return (
        _mixed(rng, ALNUM, rng.randrange(3, 8))
        + rng.choice(symbols)
        + _mixed(rng, ALNUM, rng.randrange(3, 8))
    )


def password_in_url(rng: random.Random) -> Secret:
    # Userinfo may hold unreserved characters and sub-delimiters unencoded (RFC 3986).
    pw = _password(rng, "-._~!$&*+,;=")
    scheme = rng.choice(["postgres", "postgresql", "mysql", "redis", "amqp", "https"])
    return Secret(
        f"{scheme}://{rng.choice(['admin', 'app', 'svc_ingest'])}:{pw}@db-{_pick(rng, LOWER, 5)}.internal:5432/prod",
        pw,
    )


def password_assignment(rng: random.Random) -> Secret:
    pw = _password(rng)
    name = rng.choice(["password", "db_password", "api_key", "client_secret", "secret_key"])
    return Secret(f'{name} = "{pw}"', pw, name)


#: name -> maker; the recall benchmark plants every one of them in notes.
SECRET_KINDS: dict[str, Callable[[random.Random], Secret]] = {
    "AWS access key id": aws_access_key,
    "AWS secret access key": aws_secret_key,
    "RSA private key (PEM)": rsa_private_key,
    "OpenSSH private key": openssh_private_key,
    "PKCS#8 / EC private key": pkcs8_private_key,
    "GitHub classic token": github_classic_token,
    "GitHub fine-grained token": github_fine_grained_token,
    "GitLab token": gitlab_token,
    "Slack token": slack_token,
    "Slack webhook URL": slack_webhook,
    "OpenAI key (legacy)": openai_legacy_key,
    "OpenAI key (project)": openai_project_key,
    "Anthropic key": anthropic_key,
    "Stripe live key": stripe_key,
    "Google API key": google_api_key,
    "JSON web token": jwt,
    "SendGrid key": sendgrid_key,
    "Twilio key": twilio_key,
    "npm token": npm_token,
    "PyPI token": pypi_token,
    "Discord bot token": discord_token,
    "Telegram bot token": telegram_token,
    "Azure storage key": azure_storage_key,
    "Hugging Face token": huggingface_token,
    "Mailchimp key": mailchimp_key,
    "Square OAuth secret": square_secret,
    "password in URL": password_in_url,
    "password assignment": password_assignment,
}


# -- contexts ------------------------------------------------------------------------------


def in_prose(secret: Secret, rng: random.Random) -> str:
    lead = rng.choice(
        [
            "Ops handed over the credential for the staging bucket:",
            "While debugging the webhook backlog we used",
            "Temporary value until the vault migration lands:",
            "- key for the nightly export job:",
        ]
    )
    return f"# Handover notes\n\nWe rotated keys on Tuesday.\n\n{lead} {secret.text} and it worked.\n\nNext: check the dashboards.\n"


def in_frontmatter(secret: Secret, rng: random.Random) -> str:
    name = secret.name or "credential"
    value = secret.payload if secret.name else secret.text
    if "\n" in value:
        value = "|\n" + "\n".join("  " + line for line in value.split("\n"))
    elif rng.random() < 0.5 or value.startswith(("-", "*", "&", "!")):
        value = json.dumps(value)
    return f"---\ntitle: Staging access\n{name}: {value}\ntags: [ops, staging]\n---\n\n# Staging access\n\nSee the value above.\n"


def in_code_fence(secret: Secret, rng: random.Random) -> str:
    if "\n" in secret.text:
        return f"## Deploy key\n\n```\n{secret.text}\n```\n\nInstall it with ssh-add.\n"
    name, value = (secret.name, secret.payload) if secret.name else ("TOKEN", secret.text)
    language, line = rng.choice(
        [
            ("python", f'{name} = "{value}"'),
            ("js", f'const {name} = "{value}";'),
            ("go", f'{name} := "{value}"'),
        ]
    )
    return f"## Client\n\n```{language}\n// setup\n{line}\nclient = connect()\n```\n"


def in_json(secret: Secret, rng: random.Random) -> str:
    name, value = (secret.name, secret.payload) if secret.name else ("credential", secret.text)
    return (
        "```json\n"
        + json.dumps({"service": "ingest", name: value, "retries": 3}, indent=rng.choice([None, 2]))
        + "\n```\n"
    )


def in_env(secret: Secret, rng: random.Random) -> str:
    if secret.name:
        line = f"{secret.name.upper()}={secret.payload}"
    elif "\n" in secret.text:
        line = 'DEPLOY_KEY="' + secret.text.replace("\n", "\\n") + '"'
    else:
        line = f"SERVICE_CREDENTIAL={secret.text}"
    fence = rng.choice(["```", "```dotenv", "```bash"])
    return f"Put this in `.env`:\n\n{fence}\nAPP_ENV=staging\n{line}\nLOG_LEVEL=info\n```\n"


def in_request_log(secret: Secret, rng: random.Random) -> str:
    """A logged request whose redirect parameter carries the credential percent-encoded."""
    name, value = (secret.name, secret.payload) if secret.name else ("token", secret.text)
    page = rng.choice(["home", "settings", "dashboard"])
    target = quote(f"/{page}?{name}={value}&tab=1", safe="")
    return (
        "The proxy logged the failing call:\n\n"
        f"    GET /oauth/callback?next={target} HTTP/1.1\n\nIt returns 502.\n"
    )


def in_json_string(secret: Secret, rng: random.Random) -> str:
    """A captured request body whose JSON string holds a file, its line breaks escaped: the
    credential starts a line of that file, right after a ``\\n``."""
    content = f"# {rng.choice(['deploy', 'ci', 'local'])} credentials\n{secret.text}\nREGION=eu\n"
    return (
        "Captured request body:\n\n" + json.dumps({"path": "creds.txt", "content": content}) + "\n"
    )


CONTEXTS: dict[str, Callable[[Secret, random.Random], str]] = {
    "prose": in_prose,
    "frontmatter": in_frontmatter,
    "code fence": in_code_fence,
    "JSON": in_json,
    ".env line": in_env,
    "request log": in_request_log,
    "JSON string": in_json_string,
}

#: Contexts where a kind is not expected to be found, and why (documented limits).
NOT_EXPECTED: dict[str, set[str]] = {
    # A bare `password: value` in prose reads like ordinary prose; only assignments are
    # flagged (code, config, frontmatter, .env, JSON). In a query string a value is judged
    # by the value rule alone, which needs 8 characters or more (the generator makes some
    # of 7, which are not found written plainly there either).
    "password assignment": {"prose", "request log"},
    # A private key is a block of lines: encoded into one line of a URL it is none.
    "RSA private key (PEM)": {"request log"},
    "OpenSSH private key": {"request log"},
    "PKCS#8 / EC private key": {"request log"},
}


# -- ordinary notes (the false-positive corpus) ---------------------------------------------

_WORDS = [
    "ingest",
    "normaliser",
    "webhook",
    "dispatcher",
    "carrier",
    "shipment",
    "tenant",
    "outbox",
    "replica",
    "index",
    "cache",
    "latency",
    "budget",
    "deploy",
    "rollback",
    "migration",
    "schema",
    "partition",
    "queue",
    "retry",
    "backoff",
    "token",
    "session",
    "secret",
    "key",
    "password",
    "rotation",
    "vault",
    "audit",
    "incident",
    "runbook",
    "dashboard",
    "alert",
    "eviction",
    "redis",
    "postgres",
    "kubernetes",
    "helm",
    "chart",
    "release",
    "staging",
    "production",
    "owner",
    "review",
]


def _sentence(rng: random.Random, n: int = 12) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _b64_of_text(rng: random.Random) -> str:
    return base64.b64encode(
        " ".join(_sentence(rng) for _ in range(rng.randrange(1, 4))).encode()
    ).decode()


def _ordinary_blocks(rng: random.Random) -> list[str]:
    sha = hashlib.sha1(rng.randbytes(16)).hexdigest()
    sha256 = hashlib.sha256(rng.randbytes(16)).hexdigest()
    uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    b64 = _b64_of_text(rng)
    version = f"{rng.randrange(0, 5)}.{rng.randrange(0, 30)}.{rng.randrange(0, 20)}"
    epoch = rng.randrange(1_600_000_000, 1_800_000_000)
    return [
        f"Fixed in commit {sha} (short `{sha[:7]}`), released as v{version}.",
        f"The image is pinned by digest: `ghcr.io/tidewater-io/backend@sha256:{sha256}`.",
        f'```yaml\nimage: "ghcr.io/tidewater-io/api:{version}"\ndigest: "sha256:{sha256}"\nrevision: "{sha}"\n```',
        f"Request id `{uid}` failed with 502; tenant `{str(uuid.UUID(int=rng.getrandbits(128), version=4))}`.",
        f'```json\n{{"id": "{uid}", "commit": "{sha}", "checksum": "{sha256}", "version": "{version}"}}\n```',
        f"Docs: https://docs.example.com/api/v{rng.randrange(1, 4)}/shipments?limit=50&cursor={sha[:12]} and "
        f"s3://tw-prod-raw-events/{rng.randrange(2020, 2027)}/ and postgresql://db.internal:5432/tidewater.",
        f'The fixture payload is base64: "{b64}"',
        f"```\n{b64}\n```",
        f'<img src="data:image/png;base64,{base64.b64encode(rng.randbytes(24)).decode()}">',
        f"Lockfile entry: `integrity sha512-{base64.b64encode(hashlib.sha512(rng.randbytes(8)).digest()).decode()}`",
        '```python\npassword = os.environ["DB_PASSWORD"]\napi_key = settings.API_KEY\nsecret = get_secret("prod/db")\n```',
        "```yaml\nenv:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: tidewater-db\n        key: password\nsecretName: tidewater-tls\n```",
        '```bash\nexport AWS_SECRET_ACCESS_KEY="$(vault kv get -field=secret aws/prod)"\nexport GITHUB_TOKEN=${GITHUB_TOKEN}\n```',
        'Config template: `password: "{{ .Values.db.password }}"`, `api_key = "<your-api-key>"`, `token: "${TOKEN}"`.',
        "The GitHub token lives in 1Password under `ci/github`; rotate the AWS key every 90 days.",
        f"Cron ran at {epoch} with result {sha[:16]}:{sha256[:35]} and exit 0.",
        f"| version | commit | date |\n|---|---|---|\n| {version} | `{sha[:10]}` | 2026-0{rng.randrange(1, 10)}-1{rng.randrange(0, 10)} |",
        f"Contact ops@tidewater.io, pager +44 20 7946 0{rng.randrange(100, 999)}, host 10.{rng.randrange(256)}.{rng.randrange(256)}.4.",
        '```python\nclass Settings(BaseSettings):\n    api_key: str\n    password: SecretStr = Field(repr=False)\n    secret_name: str = "tidewater-db"\n```',
        f"Session {sha[:8]}-{sha[8:12]} resumed; cursor `eyJvZmZzZXQiOiA{rng.randrange(10)}fQ` is not a token.",
        f"- [x] bump `ruff` to {version}\n- [ ] read https://github.com/tidewater-io/backend/pull/{rng.randrange(100, 9999)}",
        f"`git cat-file -p {sha}` shows tree {hashlib.sha1(rng.randbytes(8)).hexdigest()}.",
        'We compare `if token == "":` and `password != None` in the legacy client.',
    ]


def ordinary_note(rng: random.Random) -> str:
    """A realistic note (~1-3 KB) with no secret in it."""
    blocks = _ordinary_blocks(rng)
    chosen = rng.sample(blocks, rng.randrange(5, 10))
    title = " ".join(rng.choice(_WORDS) for _ in range(3)).title()
    front = f"---\ntitle: {title}\ntags: [{rng.choice(_WORDS)}, {rng.choice(_WORDS)}]\nupdated: 2026-09-{rng.randrange(10, 29)}\n---\n\n"
    body = [f"# {title}", ""]
    for block in chosen:
        body += [_sentence(rng, rng.randrange(8, 20)), "", block, ""]
    return front + "\n".join(body)


#: The finding kind each generated secret must be reported as.
EXPECTED_KIND: dict[str, str] = {
    "AWS access key id": "AWS access key",
    "AWS secret access key": "AWS access key",
    "RSA private key (PEM)": "private key",
    "OpenSSH private key": "private key",
    "PKCS#8 / EC private key": "private key",
    "GitHub classic token": "GitHub token",
    "GitHub fine-grained token": "GitHub token",
    "GitLab token": "GitLab token",
    "Slack token": "Slack token",
    "Slack webhook URL": "Slack token",
    "OpenAI key (legacy)": "OpenAI API key",
    "OpenAI key (project)": "OpenAI API key",
    "Anthropic key": "Anthropic API key",
    "Stripe live key": "Stripe key",
    "Google API key": "Google API key",
    "JSON web token": "JSON web token",
    "SendGrid key": "SendGrid API key",
    "Twilio key": "Twilio API key",
    "npm token": "npm token",
    "PyPI token": "PyPI token",
    "Discord bot token": "Discord bot token",
    "Telegram bot token": "Telegram bot token",
    "Azure storage key": "Azure storage key",
    "Hugging Face token": "Hugging Face token",
    "Mailchimp key": "Mailchimp API key",
    "Square OAuth secret": "Square OAuth secret",
    "password in URL": "password in URL",
    "password assignment": "password or secret assignment",
}
