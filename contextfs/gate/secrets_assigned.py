"""Values assigned to credential-like names, in any syntax, and the names that hold one.

:func:`assigned_values` finds a value given to a credential-like name (``api_token =``,
``"client_secret":``, ``export X_TOKEN=``, ``Authorization: <any scheme>``,
``<password>...</password>``, ``?token=...&``, a ``.netrc`` entry, ``curl -u``, a flag),
or paired with such a name in one entry (``- name: DB_PASSWORD`` / ``value: ...``). The
shape is that of Betterleaks' ``generic-api-key`` rule; :func:`other_name` skips names that
hold something beside the credential (``token_ttl``, ``publicKey``), and each value must
read as a credential (:func:`.secrets_values.credential_like`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator

from .secrets_text import fold
from .secrets_values import PUBLIC_WORDS, credential_like

__all__ = ["assigned_values", "other_name"]

_NAMES = r"access|auth|api|credential|creds|key|passw(?:or)?d|pwd|pass|secret|token|bearer"
_SCHEMES = r"bearer|token|basic|ssws|apikey|key"
# The next parameter of a query string (`&grant_type=`), which ends a value before it.
_PARAMETER = r"&[\w.-]{1,64}="
# A value, quoted or bare. Each is taken whole, without backtracking into it (a lookahead
# captures the longest run, then the match consumes exactly that), and `=` only ends a bare
# value (base64 padding), so a line of `token=token=...` costs a few steps per keyword. A
# bare value may hold `&` (a password's symbol), except where the next parameter of a query
# string follows it (`?client_secret=...&grant_type=...`): there `&` ends it.
_VALUE = (
    r"(?:(?P<quote>['\"\x60])(?=(?P<quoted>[^'\"\x60\s\\]{8,1000}))(?P=quoted)(?P=quote)"
    r"|(?=(?P<param>[\w.+/~-][\w.+/~:!@#$%^*?-]{7,1000}={0,3}))(?P=param)(?=" + _PARAMETER + r")"
    r"|(?=(?P<bare>[\w.+/~-][\w.+/~:!@#$%^&*?-]{7,1000}={0,3}))(?P=bare)"
    r"(?=\\?['\"\x60]|[\s;,)\]}<>]|\\[nr]|$))"  # `<`: an XML element's end tag
)


def _value_of(text: str, match: re.Match[str]) -> tuple[int, str]:
    """Where the value a :data:`_VALUE` match holds starts, and the value (a bare one without
    the sentence's closing punctuation)."""
    group = next(g for g in ("quoted", "param", "bare") if match.group(g) is not None)
    value = text[match.start(group) : match.end(group)]
    return match.start(group), value if group == "quoted" else value.rstrip(".:!?")


_ASSIGNED = re.compile(
    r"(?P<name>(?:" + _NAMES + r")[ \t\w.-]{0,20}?)[ \t]{0,3}['\"\]]{0,2}[ \t]{0,3}"
    r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,|[ \t]+(?=(?:" + _SCHEMES + r")[ \t]|['\"]))"
    # spaces after the separator: a value aligned in a column (WordPress's `define` calls)
    r"[ \t=]{0,32}(?:(?:" + _SCHEMES + r")[ \t]+)?" + _VALUE,
    re.MULTILINE,  # matched in the lower-cased text: IGNORECASE makes it five times slower
)
# Words of a name that holds something else than the credential: its id, where it is, its
# size or age, or the public half of a key pair.
_OTHER_WORDS = frozenset(
    [
        "public",
        "pub",
        "id",
        "ids",
        "name",
        "file",
        "path",
        "url",
        "uri",
        "type",
        "length",
        "len",
        "size",
        "count",
        "max",
        "min",
        "ttl",
        "expiry",
        "expires",
        "expiration",
        "timeout",
        "policy",
        "header",
        "field",
        "format",
        "version",
        "endpoint",
        "budget",
        "limit",
        "tokens",
        "tokenizer",
        "hash",
        "fingerprint",
        "region",
        "usage",
        "prefix",
        "suffix",
        "sha",
        "sha1",
        "sha256",
        "sha512",
        "md5",
        "digest",
        "checksum",
        "crc",
        # words that merely contain a keyword: `author: agent:scout-2` is who wrote a note
        "author",
        "authors",
        "authored",
        "authority",
        "keyboard",
        "keyword",
        "keywords",
        "passenger",
        "passengers",
        "passport",
        "compass",
        "accessibility",
        "accessible",
        "accessor",
        "capital",
    ]
)
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_KEYWORD = re.compile(_NAMES)


def other_name(name: str) -> bool:
    """True when a name holds something beside a credential (``token_ttl``, ``publicKey``,
    ``api_url``, ``max_tokens``). The last word that says what is held decides, as in any
    compound noun: ``token_prefix`` is a prefix, ``prefix_token`` and ``id_token`` are
    tokens. Only a public key or token is public wherever the word stands."""
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    if any(word in PUBLIC_WORDS for word in words):
        return True
    for word in reversed(words):
        if word in _OTHER_WORDS or word.endswith("less"):  # `tokenless`: none is held
            return True
        if _KEYWORD.search(word):
            return False
    return False


# Command-line flags (`--api-key VALUE`, `-Password VALUE`, `--token=VALUE`): found from the
# keyword, like assignments; the caller checks that the word is a flag (starts with `-` after
# a space), which a pattern starting with `-` would try at every hyphen of a text.
_FLAG = re.compile(
    r"(?P<name>(?:" + _NAMES + r")[\w-]{0,20}?)(?:[ \t]+|=)['\"]?(?P<value>[^\s'\"]{8,1000})",
    re.MULTILINE,
)
# `curl -u user:password` (and `--user`), quoted or not.
_CURL_USER = re.compile(
    r"(?:-u|--user)(?:[ \t]+|=)['\"]?[^\s:'\"]{1,64}:(?P<value>[^\s'\"]{8,1000})"
)


# A configuration directive: a line that is a one-word name, spaces and a bare value, as
# `.netrc` (`  password VALUE`) and `redis.conf` (`requirepass VALUE`) write credentials. In
# prose a name and a word after it are no assignment (`kubectl logs api web-7f9c8d-x2kz9`),
# so the name must start its line and the value end it.
_SPACED = re.compile(
    r"^[ \t]*(?P<name>[\w.-]{0,40}?(?:" + _NAMES + r")[\w.-]{0,20}?)[ \t]+" + _VALUE + r"[ \t]*$",
    re.MULTILINE,
)


# A configuration line that is a credential-like name, `=` or `:`, and one run of printable
# characters but quotes to the line's end (`.env`, YAML, ini, a shell `export`): the whole
# run is the value, whatever symbols it holds. A bare value elsewhere ends at a parenthesis
# or `=`, as code around it does; here nothing follows it, so a generated password drawn
# from `!@#$%^&*(-_=+)` (Django's secret keys) is read whole, from a first character that
# may be a symbol too. A run holding a quote is code (`r'...'`).
_NEXT_PARAMETER = re.compile(_PARAMETER)
_LINE = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?P<name>[\w.-]{0,40}?(?:" + _NAMES + r")[\w.-]{0,20}?)"
    r"[ \t]*[:=][ \t]*(?P<value>[^\s'\"\x60]{8,1000})[ \t]*$",
    re.MULTILINE,
)


# A `.netrc` entry written on one line, as curl, git and ftp read it (`machine HOST login USER
# password VALUE`, `default` for any host): its words are pairs of a keyword and a value, so
# the password need not start the line as a directive's name must.
_NETRC = re.compile(
    r"(?:machine[ \t]+\S+|default)(?:[ \t]+(?:login|account|port)[ \t]+\S+)*"
    r"[ \t]+password[ \t]+" + _VALUE
)


# An HTTP Authorization header names its scheme before the credentials (RFC 9110,
# `Authorization: <scheme> <credentials>`), and vendors define their own (`Bot`, `GenieKey`,
# `Splunk`, `BotConnector`, `Klaviyo-API-Key`): after this one name, any one-word scheme
# comes before the value. The common schemes are read by the assignment pattern already.
_AUTH_HEADER = re.compile(
    r"authorization['\"]?[ \t]*[:=,][ \t]*['\"]?(?P<scheme>[a-z][\w.-]{0,40})[ \t]+" + _VALUE
)
_COMMON_SCHEMES = re.compile(_SCHEMES)


# An XML element named like a credential whose start tag holds attributes (FileZilla's
# `<Pass encoding="base64">`): its text is the value. Without attributes the assignment
# pattern reads it (`>` is one of its separators).
_ELEMENT = re.compile(
    r"<(?P<name>[\w.:-]{0,40}?(?:" + _NAMES + r")[\w.-]{0,20})\s[^<>]{0,200}>" + _VALUE
)


# A literal given as the fallback of a credential-like variable (`process.env.DB_PASSWORD ||
# "..."`, `??`, Python's `or`): the code ships the credential for when the variable is unset.
# The assignment before it (`key = process.env.ACCOUNT_KEY || ...`) takes the reference for its
# value and moves past the literal, so the fallback is looked for on its own.
_FALLBACK = re.compile(
    r"(?P<name>(?:"
    + _NAMES
    + r")[\w.-]{0,40}?)['\"\])]{0,3}[ \t]{0,3}(?:\|\||\?\?|\bor\b)[ \t]{0,3}"
    r"(?P<quote>['\"\x60])(?=(?P<value>[^'\"\x60\s\\]{8,1000}))(?P=value)(?P=quote)"
)


# A name and its value as two fields of one entry: a Kubernetes or ECS environment variable
# (`- name: DB_PASSWORD` then `value: ...`, `{"name": "API_TOKEN", "value": "..."}`), a
# CloudFormation parameter (`ParameterKey` / `ParameterValue`), .NET's `<add key="ApiKey"
# value="..."/>`. The name field comes first, as every one of these writes it; the value field
# must follow within _PAIR_REACH characters with no other name field between.
# The patterns start with their literal words, which lets the regular expression engine skip
# to them (a leading `\b` would make it try every offset of a long text); that the word starts
# a word is checked after.
_NAME_FIELD = re.compile(
    r"(?:parameterkey|parametername|name|key|variable)['\"]?[ \t]*[:=][ \t]*['\"]?"
    r"(?P<name>[\w.-]{0,80})"
)
_CREDENTIAL_NAME = re.compile(_NAMES)
_VALUE_FIELD = re.compile(r"value['\"]?[ \t]*[:=][ \t]*" + _VALUE)
_PAIR_REACH = 160


def _starts_word(folded: str, start: int) -> bool:
    return start == 0 or not (folded[start - 1].isalnum() or folded[start - 1] == "_")


def _paired_values(text: str, folded: str) -> Iterator[tuple[int, str]]:
    """(offset, value) for each value field whose entry's name field names a credential."""
    values = [
        m
        for m in _VALUE_FIELD.finditer(folded)
        if _starts_word(folded, m.start())
        or (folded.endswith("parameter", 0, m.start()) and _starts_word(folded, m.start() - 9))
    ]
    if not values:
        return
    starts = [m.start() for m in values]
    fields = [m for m in _NAME_FIELD.finditer(folded) if _starts_word(folded, m.start())]
    ends = [f.start() for f in fields[1:]] + [len(folded)]
    for field, after in zip(fields, ends[: len(fields)], strict=True):
        name = text[field.start("name") : field.end("name")]
        if not _CREDENTIAL_NAME.search(name.lower()) or other_name(name):
            continue
        at = bisect_left(starts, field.end())
        # the value field follows closely, before the next entry's name field
        if at == len(values) or starts[at] - field.end() > _PAIR_REACH or starts[at] > after:
            continue
        offset, value = _value_of(text, values[at])
        if credential_like(value, name):
            yield offset, value


def _whole_name(text: str, start: int, end: int) -> str:
    """The name a keyword found at ``start:end`` belongs to: the keyword and up to 40 word
    characters, dots and hyphens before it (`client_secret`, `process.env.PUBLIC_KEY`)."""
    head = start
    while head > max(0, start - 40) and (text[head - 1].isalnum() or text[head - 1] in "_.-"):
        head -= 1
    return text[head:end]


def assigned_values(text: str, folded: str | None = None) -> Iterator[tuple[int, str]]:
    """(offset, value) for each value in ``text`` assigned to a credential-like name that
    reads as a credential (:func:`credential_like`), once however many syntaxes read it.
    ``folded`` is ``text`` lower-cased with the same length (the patterns run there; values
    and names are read from ``text``)."""
    if folded is None or len(folded) != len(text):
        folded = fold(text)
    seen: set[int] = set()
    for offset, value in _assignments(text, folded):
        if offset not in seen:
            seen.add(offset)
            yield offset, value


def _assignments(text: str, folded: str) -> Iterator[tuple[int, str]]:
    for match in _ASSIGNED.finditer(folded):
        name = _whole_name(text, match.start("name"), match.end("name"))
        if other_name(name):
            continue
        offset, value = _value_of(text, match)
        if credential_like(value, name):
            yield offset, value
    for match in _FLAG.finditer(folded):
        head = match.start("name")
        while head > 0 and (text[head - 1].isalnum() or text[head - 1] in "_-"):
            head -= 1
        if text[head] != "-" or (head and not text[head - 1].isspace()):
            continue
        name = text[head : match.end("name")]
        value = text[match.start("value") : match.end("value")]
        if not other_name(name) and credential_like(value, name):
            yield match.start("value"), value
    for match in _ELEMENT.finditer(folded):
        name = text[match.start("name") : match.end("name")]
        offset, value = _value_of(text, match)
        if not other_name(name) and credential_like(value, name):
            yield offset, value
    for match in _FALLBACK.finditer(folded):
        name = _whole_name(text, match.start("name"), match.end("name"))
        value = text[match.start("value") : match.end("value")]
        if not other_name(name) and credential_like(value, name):
            yield match.start("value"), value
    for match in _CURL_USER.finditer(text):
        if match.start() and not text[match.start() - 1].isspace():
            continue
        if credential_like(match.group("value"), "password"):
            yield match.start("value"), match.group("value")
    for match in _AUTH_HEADER.finditer(folded):
        head = match.start() - 6 if folded.endswith("proxy-", 0, match.start()) else match.start()
        if not _starts_word(folded, head) or _COMMON_SCHEMES.fullmatch(match.group("scheme")):
            continue
        offset, value = _value_of(text, match)
        if credential_like(value, "authorization"):
            yield offset, value
    for match in _NETRC.finditer(folded):
        if _starts_word(folded, match.start()):
            offset, value = _value_of(text, match)
            if credential_like(value, "password"):
                yield offset, value
    for match in _LINE.finditer(folded):
        name = text[match.start("name") : match.end("name")]
        # a query string's next parameter ends the value, as it ends a bare one; a value that
        # is a query string itself (`r=...&e=...&s=...`) is its parameters, each judged by
        # its own name
        value, *rest = _NEXT_PARAMETER.split(text[match.start("value") : match.end("value")], 1)
        if rest and "=" in value:
            continue
        if not other_name(name) and credential_like(value, name):
            yield match.start("value"), value
    for match in _SPACED.finditer(folded):
        if match.group("quoted") is not None:
            continue  # a quoted value after a space is the assignment pattern's
        name = text[match.start("name") : match.end("name")]
        offset, value = _value_of(text, match)
        if not other_name(name) and credential_like(value, name):
            yield offset, value
    yield from _paired_values(text, folded)
