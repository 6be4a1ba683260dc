"""More named kinds' token formats (see :mod:`contextfs.gate.secrets_formats`): hosted
services' credentials that neither detect-secrets nor the vendor rule set lists.

Each constant is a :class:`~contextfs.gate.secrets_formats.Format` with a comment giving the
shape and where it is documented; where a vendor publishes no grammar, the comment says so
and gives the structure of what it issues. A shape that a decoding can confirm (base64 of
``user:password``, of a numeric id and random bytes) carries a ``check``: a candidate the
decoding does not confirm is not reported.
"""

from __future__ import annotations

import base64
import binascii
import re

from .secrets_formats import ASSIGNMENT, TOKEN_END, TOKEN_START, Format, compile_patterns, token
from .secrets_values import entropy, is_placeholder

__all__ = [
    "ARTIFACTORY_REFERENCE",
    "ATLASSIAN_ACCESS",
    "ATLASSIAN_DATA_CENTER",
    "AZURE_ACR",
    "AZURE_SAS",
    "AZURE_WORKFLOW",
    "BRAINTREE",
    "DISCORD_WEBHOOK",
    "DOCKER_AUTH",
    "LAUNCHDARKLY_API",
    "LAUNCHDARKLY_SDK",
    "MAILGUN",
    "MAPBOX_SECRET",
    "MAXMIND",
    "META_ACCESS",
    "OAUTH_REFRESH",
    "RAPIDAPI",
    "SONARQUBE",
    "STRIPE_WEBHOOK",
    "TABLEAU",
    "TOKENS",
]


def _decoded(value: str) -> bytes | None:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


# -- Microsoft ---------------------------------------------------------------------------------

# Azure Storage shared access signatures (learn.microsoft.com, "Create a service SAS" and
# "Create an account SAS"): query parameters, of which `sv` (the signed version, a date) is
# required in every SAS and `sig` is the signature, an HMAC-SHA256 in base64, URL-encoded.
# The signature's alphabet and length are those of Microsoft's own pattern for SAS secrets
# (microsoft/security-utilities, SEC101/060: 43 to 129 characters ending in `=` or `%3D`).
# A signature alone could be any `sig=` parameter, so the query must also carry `sv=<date>`,
# before or after it; the signature is the secret. The parameters between the two are
# bounded (a SAS has fewer than 24, each short), so a hostile line of `sv=...&` repeated
# costs a bounded look-ahead per occurrence, not the rest of the line.
_SAS_SIG = r"((?:[A-Za-z0-9+/]|%2[BbFf]){43,129}(?:=|%3[Dd]))(?![A-Za-z0-9%])"
_SAS_PARAMS = r"(?:&[A-Za-z_]{2,12}=[^&\s\"'<>]{0,256}){0,24}?"
_SAS_VERSION = r"sv=\d{4}-\d{2}-\d{2}"
AZURE_SAS = Format(
    "Azure SAS token",
    compile_patterns(
        r"(?<![A-Za-z0-9_])" + _SAS_VERSION + _SAS_PARAMS + r"&sig=" + _SAS_SIG,
        r"(?<![A-Za-z0-9_])sig=" + _SAS_SIG + r"(?=" + _SAS_PARAMS + r"&" + _SAS_VERSION + ")",
    ),
    ("sig=",),
)
# Azure Container Registry passwords (admin and token passwords) are Microsoft "identifiable
# keys": 42 base64 characters, the signature `+ACR`, a version letter A-D and 5 more
# (microsoft/security-utilities, SEC101/176 AzureContainerRegistryIdentifiableKey).
AZURE_ACR = Format(
    "Azure Container Registry password",
    compile_patterns(
        r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{42}\+ACR[A-D][A-Za-z0-9+/]{5}(?![A-Za-z0-9+/_=-])"
    ),
    ("+ACR",),
)
# Workflow trigger URLs, which hold their own signature (learn.microsoft.com, "Call, trigger,
# or nest logic apps by using HTTPS endpoints": `https://prod-NN.<region>.logic.azure.com:443/
# workflows/<id>/triggers/<name>/paths/invoke?api-version=...&sp=...&sv=1.0&sig=<signature>`;
# Teams' Workflows, which replace its incoming webhooks, issue the same on
# `<environment>.environment.api.powerplatform.com/powerautomate/automations/direct/workflows/`).
# Anyone with the URL can run the workflow; the signature (base64url) is the secret. Each
# part is bounded, so a line of such hosts repeated costs a bounded match per occurrence.
AZURE_WORKFLOW = Format(
    "Azure workflow trigger URL",
    compile_patterns(
        r"https://[A-Za-z0-9.-]{1,253}\.(?:logic\.azure\.com|environment\.api\.powerplatform\.com)"
        r"(?::\d{1,5})?/[^\s?\"'<>]{0,100}?workflows/[0-9a-fA-F]{32}/triggers/[^\s?\"'<>/]{1,100}"
        r"/paths/invoke\?[^\s\"'<>]{0,1000}?(?<=[?&])sig=([A-Za-z0-9_-]{43,})"
    ),
    ("logic.azure.com", "powerplatform.com"),
)
# OAuth 2.0 refresh tokens under the name the protocol gives them (RFC 6749, sections 5.1 and
# 6: `refresh_token` in the token response and in the refresh request; `refreshToken` in the
# token caches of Azure's tools). Microsoft Entra ID calls its refresh tokens opaque and
# publishes no grammar, so the name is the evidence: a value of 40 or more characters of the
# token alphabet (base64url, `.`, `~`, `+`, `/`) mixing upper case, lower case and digits.
OAUTH_REFRESH = Format(
    "OAuth refresh token",
    compile_patterns(
        r"(?i:refresh[_-]?token)"
        + ASSIGNMENT
        + r"(?=[A-Za-z0-9._~+/-]*[0-9])(?=[A-Za-z0-9._~+/-]*[A-Z])(?=[A-Za-z0-9._~+/-]*[a-z])"
        r"([A-Za-z0-9._~+/-]{40,}={0,2})(?![A-Za-z0-9._~+/=-])"
    ),
    ("refresh",),
    folded=True,
)


# -- other services ------------------------------------------------------------------------------


def _user_and_password(value: str) -> bool:
    """Docker's `auth`: base64 of `username:password`, both present, text (line breaks
    allowed: Google's registries take the JSON key file itself as the password of the user
    `_json_key`), and the password no stand-in (`deploy:changeme`)."""
    raw = _decoded(value)
    if raw is None:
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    user, colon, password = text.partition(":")
    printable = all(c.isprintable() or c in "\n\r\t" for c in text)
    return bool(colon and user and password and printable) and not is_placeholder(password)


# Docker registry credentials (docs.docker.com, `docker login`, "Credential stores": without
# a credential store the client keeps `{"auths": {"<registry>": {"auth": "<base64 of
# username:password>"}}}` in config.json; Kubernetes' `.dockerconfigjson` and CI variables
# such as `DOCKER_AUTH_CONFIG` carry the same JSON, often with escaped quotes).
DOCKER_AUTH = Format(
    "Docker registry credential",
    compile_patterns(r"\\*\"auth\\*\"\s*:\s*\\*\"([A-Za-z0-9+/]{8,}={0,2})\\*\""),
    ('"auth',),
    check=_user_and_password,
)
# Tableau personal access token secrets: Tableau publishes no grammar; the secrets its sites
# issue are the base64 of 16 bytes (22 characters and `==`), `:`, then 32 letters and digits.
# The tail mixes upper and lower case, which keeps a base64 salt and a hex digest
# (`salt==:9f86d0...`) out.
TABLEAU = Format(
    "Tableau token",
    compile_patterns(
        r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{22}==:"
        r"(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{32}(?![A-Za-z0-9])"
    ),
    ("==:",),
)
# Discord webhooks (discord.com/developers/docs, "Webhook resource", Execute Webhook:
# `POST /webhooks/{webhook.id}/{webhook.token}` under `https://discord.com/api` with an
# optional `/v{N}`; ids are snowflakes, 64-bit integers of 17 to 20 digits; older URLs use
# `discordapp.com`, and the `ptb.`/`canary.` clients their own hosts). Anyone with the URL can
# post as the webhook; the whole URL is the secret.
DISCORD_WEBHOOK = Format(
    "Discord webhook",
    compile_patterns(
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api(?:/v\d{1,2})?/webhooks/"
        r"\d{17,20}/[A-Za-z0-9_-]{60,}" + TOKEN_END
    ),
    ("/webhooks/",),
)
# LaunchDarkly (launchdarkly.com/docs, "SDK credentials": "SDK keys always start with the
# prefix sdk-"; they and API access tokens are a UUID's five groups after the prefix). SDK
# keys are secret (mobile keys `mob-` are not); `sdk-` and a UUID-shaped body is evidence on
# its own. An access token's `api-` prefix is not documented, so it needs the vendor's name on
# the line.
_LD_BODY = r"[a-z0-9]{8}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{12}"
LAUNCHDARKLY_SDK = Format(
    "LaunchDarkly key",
    compile_patterns(TOKEN_START + r"sdk-" + _LD_BODY + TOKEN_END),
    ("sdk-",),
    uuid=True,
)
LAUNCHDARKLY_API = Format(
    "LaunchDarkly key",
    compile_patterns(
        r"(?i:launch[ _-]?darkly)[^\n]{0,80}?" + TOKEN_START + r"(api-" + _LD_BODY + ")" + TOKEN_END
    ),
    ("launchdarkly", "launch darkly", "launch_darkly", "launch-darkly"),
    folded=True,
    uuid=True,
)
# Atlassian access tokens (Bitbucket workspace, project and repository tokens): `ATCT`, per
# Atlassian's answer in its community ("Can we confirm BitBucket's token prefixes", 2025:
# "Access Tokens (Workspace, Project, Repo): ATCT"). Atlassian documents variable lengths and
# no grammar; the tokens it issues are `ATCTT3xFfG`, base64url, `=` and 8 upper-case hex
# digits (a checksum), the structure of its `ATATT` API tokens.
ATLASSIAN_ACCESS = token(
    "Atlassian access token", ("ATCTT3xFfG",), r"ATCTT3xFfG[A-Za-z0-9_-]{80,800}=[0-9A-F]{8}"
)


def _id_and_bytes(value: str) -> bool:
    """A Data Center token decodes to a 12-digit id, `:`, and 20 random bytes."""
    raw = _decoded(value)
    return raw is not None and len(raw) == 33 and raw[:12].isdigit() and raw[12:13] == b":"


# Jira and Confluence Data Center personal access tokens (confluence.atlassian.com/enterprise,
# "Using Personal Access Tokens": sent as `Authorization: Bearer <token>`). Atlassian
# publishes no grammar; the tokens these products issue are 44 base64 characters, the
# encoding of a 12-digit token id, `:` and 20 random bytes. The pattern is that encoding
# spelled out: each three ASCII digits give four characters from fixed sets, and `:` with the
# next byte gives `O` and one of `g`-`v`; the decoding confirms the whole. A random
# 44-character base64 string (33 bytes of a digest) is therefore not taken for one.
_DIGITS_B64 = r"[MNO][DTjz][AEIMQUYcgk][w-z0-5]"
ATLASSIAN_DATA_CENTER = Format(
    "Atlassian Data Center token",
    compile_patterns(
        r"(?<![A-Za-z0-9+/])(?:" + _DIGITS_B64 + r"){4}O[g-v][A-Za-z0-9+/]{26}(?![A-Za-z0-9+/=])"
    ),
    None,
    check=_id_and_bytes,
)
# MaxMind license keys as issued since March 2023 (dev.maxmind.com, release note "Changes to
# MaxMind License Keys", 2023-03-16): 40 characters of [a-zA-Z0-9_] ending in `_mmk`, with a
# six-character prefix; "the length may be increased in the future". Older keys (16 letters
# and digits) have no mark of their own and are left to names.
MAXMIND = token("MaxMind license key", ("_mmk",), r"[A-Za-z0-9]{6}_[A-Za-z0-9_]{29,60}_mmk")

# SonarQube tokens since 9.5 (docs.sonarsource.com, "Managing your tokens"): `squ_` user,
# `sqa_` global analysis and `sqp_` project analysis tokens, each 40 hexadecimal digits.
SONARQUBE = token("SonarQube token", ("sqa_", "sqp_", "squ_"), r"sq[apu]_[0-9a-f]{40}")
# Stripe webhook signing secrets (docs.stripe.com, "Receive Stripe events in your webhook
# endpoint": the endpoint's secret "starts with whsec_"); with it anyone can sign events the
# endpoint will trust. The secrets Stripe issues carry 32 or more base64 characters.
STRIPE_WEBHOOK = token("Stripe webhook secret", ("whsec_",), r"whsec_[A-Za-z0-9+/]{32,128}={0,2}")
# RapidAPI application keys: RapidAPI publishes no grammar; the keys it issues (sent as
# `X-RapidAPI-Key`) are 50 hexadecimal digits and markers in fixed places: 10 digits, `msh`,
# 15, `p`, 6, `jsn`, 12.
RAPIDAPI = token(
    "RapidAPI key", ("jsn",), r"[0-9a-f]{10}msh[0-9a-f]{15}p[0-9a-f]{6}jsn[0-9a-f]{12}"
)


_REFERENCE_BODY = re.compile(rb"reftkn:01:\d{1,12}:[A-Za-z0-9]{16,}")


def _reference_token(value: str) -> bool:
    """A JFrog reference token decodes to `reftkn:01:`, an expiry in seconds, `:`, and 16 or
    more random letters and digits (base64 padding may be left off)."""
    raw = _decoded(value + "=" * (-len(value) % 4))
    return raw is not None and _REFERENCE_BODY.fullmatch(raw) is not None


# JFrog Artifactory reference tokens (jfrog.com/help, "Access Tokens": a reference token is
# the short form of an access token, accepted wherever the token is): the base64 of
# `reftkn:01:<expiry>:<random>`, so every one begins `cmVmdGtuOjAxOj`; the decoding confirms
# the rest. (detect-secrets knows Artifactory's API keys and encrypted passwords.)
ARTIFACTORY_REFERENCE = Format(
    "Artifactory credential",
    compile_patterns(TOKEN_START + r"cmVmdGtuOjAxOj[A-Za-z0-9+/]{30,200}={0,2}" + TOKEN_END),
    ("cmVmdGtuOjAxOj",),
    check=_reference_token,
)
# Mailgun's private API keys in their older form (documentation.mailgun.com, "API keys":
# keys issued before 2021 are `key-` and 32 hexadecimal digits; they still work).
MAILGUN = token("Mailgun key", ("key-",), r"key-[0-9a-f]{32}")
# Braintree access tokens (developer.paypal.com/braintree, "Access tokens", used by the SDKs
# in place of API keys): `access_token$<environment>$<merchant id>$<32 hex digits>`.
BRAINTREE = Format(
    "Braintree access token",
    compile_patterns(
        TOKEN_START
        + r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}"
        + TOKEN_END
    ),
    ("access_token$",),
)
# Meta (Facebook, Instagram) Graph API access tokens: Meta publishes no grammar; the user,
# page and app tokens its Graph API issues begin with `EAA` and run to 100 or more letters and
# digits (sent as `access_token=` in a URL or as a bearer token). Random characters hold
# about 5.9 bits each; a repeated fragment after `EAA` (filler) holds far fewer.
META_ACCESS = Format(
    "Meta access token",
    compile_patterns(TOKEN_START + r"EAA[A-Za-z0-9]{90,1000}" + TOKEN_END),
    ("EAA",),
    check=lambda value: entropy(value) >= 4.5,
)
# Mapbox secret tokens (docs.mapbox.com, "Access tokens": "Secret tokens ... start with
# sk."): `sk.` and a JWT-like body of base64url parts. Public tokens (`pk.`) are meant for
# browsers and are not reported.
MAPBOX_SECRET = Format(
    "Mapbox secret token",
    compile_patterns(
        TOKEN_START + r"sk\.eyJ[A-Za-z0-9_-]{10,500}\.[A-Za-z0-9_-]{20,200}" + TOKEN_END
    ),
    ("sk.eyJ",),
)

#: The formats above, each a detector of :mod:`contextfs.gate.secrets_detectors`.
TOKENS = (
    AZURE_SAS,
    AZURE_ACR,
    AZURE_WORKFLOW,
    OAUTH_REFRESH,
    DOCKER_AUTH,
    TABLEAU,
    DISCORD_WEBHOOK,
    LAUNCHDARKLY_SDK,
    LAUNCHDARKLY_API,
    ATLASSIAN_ACCESS,
    ATLASSIAN_DATA_CENTER,
    MAXMIND,
    SONARQUBE,
    STRIPE_WEBHOOK,
    RAPIDAPI,
    ARTIFACTORY_REFERENCE,
    MAILGUN,
    BRAINTREE,
    META_ACCESS,
    MAPBOX_SECRET,
)
