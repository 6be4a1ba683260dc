"""The token formats of the secret scanner's named kinds that detect-secrets does not know.

Each constant is a tuple of compiled patterns, one credential format, with a comment giving
the shape its vendor documents (prefix, alphabet, length) and where. A format is matched
wherever it appears when its shape alone tells it from prose, code, hashes and UUIDs (a
vendor prefix plus a fixed length and alphabet); a shape too loose for that (a bare UUID,
52 base32 characters, a one-letter prefix) is matched only next to its vendor's name, in the
pattern itself, and its value is the pattern's group.

:mod:`contextfs.gate.secrets_detectors` wraps each tuple in a detect-secrets plugin and lists
it in its detector table under a kind of :data:`contextfs.gate.secrets.KINDS`, with those of
:mod:`contextfs.gate.secrets_formats_services` (hosted services' credentials); the judgments
every candidate passes (placeholders, documented examples, filler, a token glued to a longer
hash) are made there, the same way for every source.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .secrets_values import PUBLIC_WORDS, credential_like

__all__ = [
    "ANTHROPIC",
    "ASSIGNMENT",
    "AWS_KEY_ID",
    "AWS_SECRET",
    "AZURE_DEVOPS",
    "DOPPLER",
    "EXTRA_PRIVATE_KEY",
    "Format",
    "GITHUB_PAT",
    "GITLAB_RUNNER",
    "GOOGLE",
    "GOOGLE_OAUTH",
    "GOOGLE_OAUTH_SECRET",
    "HUGGING_FACE",
    "NEW_RELIC",
    "NPM",
    "NUGET",
    "OPENAI",
    "PREFIXED",
    "POSTMARK",
    "SALESFORCE",
    "SLACK_APP",
    "SOURCEGRAPH",
    "SQUARE",
    "STRIPE_TEST",
    "TEAMS_WEBHOOK",
    "TELEGRAM",
    "TOKENS",
    "TOKEN_END",
    "TOKEN_START",
    "compile_patterns",
    "token",
    "TWITCH",
    "URL_PASSWORD",
    "VAULT",
    "VAULT_LEGACY",
    "VAULT_UNSEAL",
    "WORDPRESS",
]

Formats = tuple[re.Pattern[str], ...]

# Boundaries keep a token from matching inside a longer identifier.
TOKEN_START = r"(?<![A-Za-z0-9_-])"
TOKEN_END = r"(?![A-Za-z0-9_-])"
_GUID = r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"
# An assignment after a name: `name = v`, `name: "v"`, `"name": 'v'`, `name := v`, `name => v`.
ASSIGNMENT = r"""["']?\s*(?::=|=>|[:=])\s*["']?"""


def compile_patterns(*patterns: str, flags: int = 0) -> Formats:
    return tuple(re.compile(p, flags) for p in patterns)


@dataclass(frozen=True)
class Format:
    """A named kind's token format: ``needles`` are literal strings one of which every match
    holds (``folded``: looked for in the lower-cased text; None: the patterns run once over
    the whole text, for a shape with no literal part); ``uuid``: the format holds a UUID,
    so detect-secrets' UUID filter (which keeps ids from being taken for secrets) does not
    judge it; ``check``: what the shape's decoding must confirm of a matched value (base64
    of ``user:password``), for shapes a pattern alone cannot tell from other base64;
    ``guess``: the format infers a credential from a shape many vendors share, so any named
    kind that finds the same value names it instead; ``gate``: for a shape with no literal
    part, a cheaper pattern that finds the lines worth running it on."""

    kind: str
    patterns: Formats
    needles: tuple[str, ...] | None
    folded: bool = False
    uuid: bool = False
    check: Callable[[str], bool] | None = None
    guess: bool = False
    gate: re.Pattern[str] | None = None


def token(kind: str, needles: tuple[str, ...], *shapes: str) -> Format:
    """A format whose shape alone tells it from prose, code, hashes and UUIDs: each shape
    matched wherever it stands as a token of its own (between :data:`TOKEN_START` and
    :data:`TOKEN_END`)."""
    return Format(
        kind, compile_patterns(*(TOKEN_START + shape + TOKEN_END for shape in shapes)), needles
    )


# -- formats that newer keys of detect-secrets' vendors use ---------------------------------

# OpenAI project, service-account and admin keys: detect-secrets knows only the legacy
# `sk-...T3BlbkFJ...` shape, which newer keys do not always carry.
OPENAI = compile_patterns(TOKEN_START + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}" + TOKEN_END)
ANTHROPIC = compile_patterns(
    TOKEN_START + r"sk-ant-[a-z]{2,10}\d{2}-[A-Za-z0-9_-]{40,}" + TOKEN_END
)
# GitHub fine-grained personal access tokens (detect-secrets knows the `gh?_` tokens).
GITHUB_PAT = compile_patterns(
    TOKEN_START + r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}" + TOKEN_END
)
GOOGLE = compile_patterns(TOKEN_START + r"AIza[0-9A-Za-z_-]{35}" + TOKEN_END)
HUGGING_FACE = compile_patterns(TOKEN_START + r"hf_[A-Za-z0-9]{34}" + TOKEN_END)
# npm tokens anywhere (detect-secrets finds them only in `.npmrc` syntax).
NPM = compile_patterns(TOKEN_START + r"npm_[A-Za-z0-9]{36}" + TOKEN_END)
# Slack app-level tokens (detect-secrets knows the `xox?-` family).
SLACK_APP = compile_patterns(TOKEN_START + r"xapp-\d-[A-Z0-9]{8,}-\d{6,}-[a-f0-9]{32,}" + TOKEN_END)
# `AWS_SECRET_ACCESS_KEY=...` unquoted (.env, shell, INI credentials files): detect-secrets'
# AWS pattern for secret keys requires quotes.
AWS_SECRET = compile_patterns(
    r"aws_?secret_?(?:access_?)?key\\?[\"']?\s*(?:=|:|:=)\s*\\?[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    flags=re.IGNORECASE,
)
# `scheme://user:password@host` where the password holds RFC 3986 sub-delimiters
# (`! $ & ' ( ) * + , ; =`), which userinfo allows unencoded and detect-secrets' basic auth
# pattern leaves out; `{` and `}` stay out so templates are not flagged.
URL_PASSWORD = compile_patterns(r"://[^\s:/?#\[\]@{}]+:([^\s/?#\[\]@{}]+)@")
# AWS key ids as tokens of their own: detect-secrets' pattern has no boundaries, so it fires
# inside long upper-case words (``...PARAMETERSAKIA...``).
AWS_KEY_ID = compile_patterns(
    r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"
)
# Stripe test-mode keys: detect-secrets knows live keys only, and a test key still opens the
# account's test data and settings.
STRIPE_TEST = compile_patterns(TOKEN_START + r"(?:r|s)k_test_[0-9a-zA-Z]{24,99}" + TOKEN_END)
# Encrypted PKCS#8 and PuTTY v3 keys, which detect-secrets' header list misses.
EXTRA_PRIVATE_KEY = compile_patterns(r"BEGIN ENCRYPTED PRIVATE KEY|PuTTY-User-Key-File-3")


# -- token types the vendor rule set lacks for vendors it knows -------------------------------

# Doppler (docs.doppler.com, API reference "Authentication" and "Service Tokens"): `dp.`, the
# token type (`ct` CLI, `pt` personal, `st` service, `sa` service account, `scim`, `audit`),
# `.`, then the body, letters and digits (43 in tokens issued now, 40 in older ones); a
# service token carries its config's name between type and body (`dp.st.prd.`; config names
# are lower-case letters, digits, `_` and `-`).
DOPPLER = token(
    "Doppler token",
    ("dp.",),
    r"dp\.(?:ct|pt|sa|scim|audit|st(?:\.[a-z0-9_-]{1,64})?)\.[A-Za-z0-9]{40,44}",
)
# Microsoft Teams incoming webhooks (Office 365 connectors, learn.microsoft.com "Create an
# Incoming Webhook"): `https://<tenant>.webhook.office.com/webhookb2/<group>@<tenant>/
# IncomingWebhook/<32 hex>/<owner>` with an optional `/V2<signature>`, formerly on
# `outlook.office.com` or `outlook.office365.com` under `/webhook/`; the ids are GUIDs, so
# detect-secrets' UUID filter must not judge it.
TEAMS_WEBHOOK = Format(
    "Microsoft Teams webhook",
    compile_patterns(
        r"https://(?:[a-z0-9-]+\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/"
        + _GUID
        + "@"
        + _GUID
        + r"/IncomingWebhook/[0-9a-f]{32}/"
        + _GUID
        + r"(?:/V2[A-Za-z0-9_-]{20,})?"
    ),
    ("IncomingWebhook",),
    uuid=True,
)
# Twitch stream keys, as the creator dashboard's stream settings issue them (Twitch publishes
# no grammar): `live_`, the channel's numeric user id, `_`, then 30 letters and digits.
TWITCH = token("Twitch stream key", ("live_",), r"live_\d{5,12}_[A-Za-z0-9]{30}")
# NuGet.org API keys (NuGetGallery's `ApiKeyV4`): 46 lower-case characters, the base32 of an
# id part that starts with the bytes `v4` (so the key always starts `oy2`) and of a 16-byte
# password part.
NUGET = token("NuGet API key", ("oy2",), r"oy2[a-z0-9]{43}")
# HashiCorp Vault tokens (developer.hashicorp.com/vault/docs/concepts/tokens, "Token
# prefixes"): `hvs.` service, `hvb.` batch and `hvr.` recovery tokens since 1.10, base64url
# bodies (service tokens 95 characters or more).
VAULT = token("Vault token", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_-]{24,}")
# Before 1.10 (and on servers that keep them): `s.`, `b.`, `r.` with 24 base62 characters
# (`.` and a 5-character namespace id when namespaced), or a long base64url body. A one-letter
# prefix is no evidence in prose, so these need "vault" on the line (the detector's gate).
VAULT_LEGACY = Format(
    "Vault token",
    compile_patterns(
        r"(?<![\w.-])[sbr]\.(?:[A-Za-z0-9]{24}(?:\.[A-Za-z0-9]{5})?|[A-Za-z0-9_-]{90,})(?![\w.-])"
    ),
    ("vault",),
    folded=True,
)
# Vault unseal keys: `vault operator init` prints each key share ("Unseal Key 1: ...") in
# base64 of its 33 bytes, 44 characters, and `vault operator unseal <key>` takes one.
VAULT_UNSEAL = Format(
    "Vault unseal key",
    compile_patterns(
        r"(?i:operator\s+unseal|unseal\s+key\s+\d{1,3}\s*:)\s+(?:-\S+\s+)*"
        r"([A-Za-z0-9+/]{43}[A-Za-z0-9+/=])(?![A-Za-z0-9+/=])"
    ),
    ("unseal",),
    folded=True,
)
# New Relic (docs.newrelic.com, "New Relic API keys"): user keys `NRAK-` and 27 upper-case
# letters and digits; license (ingest) keys of 40 characters, which in the current format end
# in `NRAL`, hex after an optional region prefix (`eu01xx`). Older license keys are 40 hex,
# which is any SHA-1: those are left to names (the rule set's and the value rule).
NEW_RELIC = token(
    "New Relic key",
    ("NRAK-", "NRAL"),
    r"NRAK-[A-Z0-9]{27}",
    r"(?:[a-z]{2}\d{2}xx[0-9a-f]{30}|[0-9a-f]{36})NRAL",
)
# Postmark server and account tokens (postmarkapp.com/developer, "API overview:
# authentication"): sent as `X-Postmark-Server-Token` / `X-Postmark-Account-Token`, each a
# UUID, so only under those headers or a Postmark token name (`POSTMARK_SERVER_TOKEN=`,
# `postmark:`); `postmark_message_id:` is not one.
POSTMARK = Format(
    "Postmark token",
    compile_patterns(
        r"(?i:x-postmark-(?:server|account)-token|postmark(?:[_.-]?(?:server|account|api))?"
        r"(?:[_.-]?(?:token|key))?)" + ASSIGNMENT + "(" + _GUID + r")(?![0-9a-fA-F-])"
    ),
    ("postmark",),
    folded=True,
    uuid=True,
)
# Telegram bot tokens (core.telegram.org/bots): `<bot id>:<secret>`. The id is the bot's user
# id, which the Bot API documents as at most 52 significant bits (so up to 16 digits); the
# secret is base64url, 35 characters in tokens BotFather issues and 34 in the example of
# Telegram's bot documentation (`110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw`), and starts
# `AA` in both (Telegram publishes no grammar; the `AA` keeps a number, a colon and a word
# from reading as a token). detect-secrets knows 8-10 digit ids with 35 characters only.
TELEGRAM = Format(
    "Telegram bot token",
    compile_patterns(
        r"(?:(?<=bot)|(?<![A-Za-z0-9_:-]))\d{5,16}:AA[A-Za-z0-9_-]{32,33}" + TOKEN_END
    ),
    (":AA",),
)
# Sourcegraph access tokens (sourcegraph.com/docs, "Revoking an access token": they start
# `sgp_`): then the instance's 16-hex identifier (or `local`) and `_`, then 40 hex; older
# ones `sgp_` and 40 hex.
SOURCEGRAPH = token("Sourcegraph token", ("sgp_",), r"sgp_(?:(?:[0-9a-f]{16}|local)_)?[0-9a-f]{40}")
# Square access tokens (developer.squareup.com, "Access tokens" and the ObtainToken
# reference: 64 characters): issued with the prefix `EAAA`, base64url after it; legacy
# personal access tokens `sq0atp-` and 22 characters.
SQUARE = token(
    "Square access token",
    ("EAAA", "sq0atp-"),
    r"EAAA[A-Za-z0-9_-]{60}",
    r"sq0atp-[A-Za-z0-9_-]{22}",
)
# Salesforce session ids and OAuth access tokens: the org's 15-character id (key prefix `00D`,
# Salesforce's prefix for Organization records), `!`, then letters, digits, `.` and `_`.
SALESFORCE = token("Salesforce access token", ("00D",), r"00D[A-Za-z0-9]{12}![A-Za-z0-9._]{80,}")
# Azure DevOps personal access tokens (learn.microsoft.com, "Use personal access tokens"), as
# issued before the 84-character format: 52 lower-case base32 characters (a-z, 2-7) with no
# prefix of their own, so only under a name that says Azure DevOps (`ado_pat =`,
# `AZURE_DEVOPS_EXT_PAT=`, the az CLI's variable; `azdo_token:`). A random one holds a digit
# (all-letter runs are words). The 84-character tokens are not matched here.
AZURE_DEVOPS = Format(
    "Azure DevOps token",
    compile_patterns(
        r"(?i:(?<![a-z])(?:ado|azdo|azure[_-]?devops|devops|vsts)[\w.-]{0,30}?)"
        + ASSIGNMENT
        + r"((?=[a-z2-7]*[2-7])[a-z2-7]{52})(?![A-Za-z0-9])"
    ),
    ("ado", "devops", "vsts"),
    folded=True,
)
# Google OAuth 2.0 access tokens (developers.google.com/identity/protocols/oauth2, whose
# requests show `Authorization: Bearer ya29...`): `ya29.` then base64url.
GOOGLE_OAUTH = token("Google OAuth token", ("ya29.",), r"ya29\.[A-Za-z0-9_-]{30,}")
# Google OAuth client secrets as issued since 2021 (Google Cloud's "OAuth client secrets"
# notice: secrets begin with `GOCSPX-`): the prefix, then 28 base64url characters.
GOOGLE_OAUTH_SECRET = token("Google OAuth client secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_-]{28}")
# GitLab runner authentication tokens created by registering a runner (GitLab 18.0,
# gitlab-runner's "Handle the new glrtr- prefix"); detect-secrets knows `glrt-` only.
GITLAB_RUNNER = token("GitLab token", ("glrtr-",), r"glrtr-[A-Za-z0-9_-]{20,50}")
# WordPress authentication keys and salts (wp-config-sample.php, "Authentication unique keys
# and salts"; generated by api.wordpress.org/secret-key/1.1/salt/): eight constants,
# AUTH_KEY, SECURE_AUTH_KEY, LOGGED_IN_KEY, NONCE_KEY and their _SALT twins, each 64
# characters of wp_generate_password's alphabet with its special characters (no quote or
# backslash, but spaces, backticks, `<` and `>`, which no value pattern takes whole), in a
# `define()` call, a PHP array or a `.env` line (Bedrock).
WORDPRESS = Format(
    "WordPress key or salt",
    compile_patterns(
        r"(?<![A-Za-z0-9_])(?:AUTH|SECURE_AUTH|LOGGED_IN|NONCE)_(?:KEY|SALT)['\"]?\s{0,40}"
        r"(?:,|=>|=|:)\s{0,40}(?:'([^'\"\\\n]{64})'|\"([^'\"\\\n]{64})\")"
    ),
    ("_KEY", "_SALT"),
)
# Tokens with an identifiable prefix (the convention GitHub set out in 2021 in "Behind
# GitHub's new authentication token formats", which vendors issuing new tokens follow: a
# short lower-case prefix naming the vendor and kind, `_` or `-`, then a random base62
# body, often with a checksum): `phs_`, `cfk_`, `nfp_`, `pscale_tkn_`, `dop_v1_`. New
# vendors appear faster than any list of formats, so a prefix of one to three short
# lower-case words and a body of 32 or more random letters and digits of all three classes
# is a credential whatever the vendor (ids that vendors prefix the same way, `cus_`, `msg_`,
# `asst_`, are 14 to 29 characters). A key its prefix calls public (`pk_live_`, `pub-`) is
# not; nor a digest or a value inside base64, a path or a domain, or glued to an escape
# (`\nhf_...` is read in the unescaped text). A named kind finding the same value names it.
# `pk` as a token prefix is the publishable half of a key pair (Stripe's `pk_live_`,
# Clerk's `pk_test_`); in a name it is as often a primary key.
_PUBLIC_PREFIXES = PUBLIC_WORDS | {"pk"}
_DIGEST_WORDS = re.compile(r"sha\d*|md5|blake2[bs]?|crc\d*|xxh\d*")
_BODY_CLASSES = (str.islower, str.isupper, str.isdigit)


def _prefixed_random(value: str) -> bool:
    """The body after the prefix is random base62 (letters of both cases and digits, and
    :func:`.secrets_values.credential_like`), and no word of the prefix says public or digest."""
    words = re.split(r"[_-]", value)
    body = words.pop()
    if any(word in _PUBLIC_PREFIXES or _DIGEST_WORDS.fullmatch(word) for word in words):
        return False
    return all(any(test(c) for c in body) for test in _BODY_CLASSES) and credential_like(body)


PREFIXED = Format(
    "token with a vendor prefix",
    compile_patterns(
        r"(?<![A-Za-z0-9_+/=.@:\\-])[a-z][a-z0-9]{0,9}(?:[_-][a-z0-9]{1,10}){0,2}[_-]"
        r"[A-Za-z0-9]{32,200}(?![A-Za-z0-9_+/=@-])(?!\.[A-Za-z0-9])"
    ),
    None,
    check=_prefixed_random,
    guess=True,
    # the body's run: a search for `_` or `-` skips ahead, where the prefix's pattern would be
    # tried at every word of the text
    gate=re.compile(r"[_-][A-Za-z0-9]{32}"),
)

#: The formats above, each a detector of :mod:`contextfs.gate.secrets_detectors`.
TOKENS = (
    DOPPLER,
    TEAMS_WEBHOOK,
    TWITCH,
    NUGET,
    VAULT,
    VAULT_LEGACY,
    VAULT_UNSEAL,
    NEW_RELIC,
    POSTMARK,
    TELEGRAM,
    SOURCEGRAPH,
    SQUARE,
    SALESFORCE,
    AZURE_DEVOPS,
    GOOGLE_OAUTH,
    GOOGLE_OAUTH_SECRET,
    GITLAB_RUNNER,
    WORDPRESS,
    PREFIXED,
)
