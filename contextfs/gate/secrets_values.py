"""What a matched value is: a credential, a placeholder, or a word that only looks like one.

Every detector of the secret scanner (the vendor rule set, detect-secrets' plugins, the
assignment rule below) proposes values; the judgments here apply to all of them alike:

* :func:`is_placeholder`: documented example keys (``AKIAIOSFODNN7EXAMPLE``, the jwt.io
  token), values that say what they are (``<your-token>``, ``...EXAMPLE...``, ``dummy``,
  ``redacted``) and filler (``ghp_xxxxxxxx...``, ``0000000000``, a run of one character),
  so setup notes can show where a credential goes;
* :func:`private_key_has_body`: a private key is the block, not its header; a block
  whose body is ``...`` or ``anything`` holds nothing;
* :func:`assigned_values`: a value assigned to a credential-like name (``api_token =``,
  ``"client_secret":``, ``export X_TOKEN=``, ``Authorization: <any scheme>``,
  ``<password>...</password>``, ``?token=...&``, a ``.netrc`` line) in any syntax, or
  paired with such a name in one entry (``- name: DB_PASSWORD`` / ``value: ...``). The
  shape is that of Betterleaks' ``generic-api-key`` rule, with its two filters: Shannon
  entropy above 3.5 bits per character, and *token efficiency* (random strings take many
  BPE tokens per character, words and identifiers few; measured with the tiktoken encoding
  contextfs already counts budgets with).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator

from ..text.tokens import count_tokens
from .secrets_text import fold

__all__ = [
    "DOCUMENTED_EXAMPLES",
    "assigned_values",
    "credential_like",
    "entropy",
    "is_placeholder",
    "private_key_block",
    "private_key_has_body",
    "reads_as_words",
]

#: Keys vendors publish in their documentation, for readers to copy into examples.
DOCUMENTED_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",  # AWS access key id
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS secret access key
        "AKIAI44QH8DHBEXAMPLE",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "ASIAIOSFODNN7EXAMPLE",
        "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",  # Telegram's Bot API documentation
        # jwt.io's sample token
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
        "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    }
)
# Words a value carries when it stands for a credential instead of being one. A random
# 40-character token holds one of these by chance about once in 10^6 values or fewer.
_MARKERS = (
    "example",
    "placeholder",
    "dummy",
    "redacted",
    "changeme",
    "yourkey",
    "your_",
    "your-",
    "<",
    ">",
    "xxxx",
    "****",
    "....",
    "…",
    "fake",
)
_RUN = re.compile(r"(.)\1{5,}")  # six of one character in a row


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def is_placeholder(value: str) -> bool:
    """True for documented example keys, self-describing stand-ins and filler."""
    if value in DOCUMENTED_EXAMPLES:
        return True
    # a detector may match the head of a documented token (a JWT without its signature)
    if len(value) >= 40 and any(example.startswith(value) for example in DOCUMENTED_EXAMPLES):
        return True
    folded = value.lower()
    if any(marker in folded for marker in _MARKERS):
        return True
    if _RUN.search(value):
        return True
    return len(value) >= 12 and len(set(value)) <= 5


def reads_as_words(value: str) -> bool:
    """True when ``value`` tokenizes like language or an identifier (``ReadOnlyGroup``,
    ``shipment_id_seq``) rather than like random characters: 2.5 or more characters per
    BPE token, Betterleaks' threshold for its generic rule."""
    tokens = count_tokens(value)
    return tokens > 0 and len(value) / tokens >= 2.5


def private_key_block(lines: list[str], index: int) -> str:
    """What a private key finding is fingerprinted by: the key block, not its header (every
    RSA key has the same header, and allowing one must not allow all)."""
    block = [lines[index]]
    for line in lines[index + 1 : index + 200]:
        block.append(line.strip())
        if "END" in line and "PRIVATE KEY" in line:
            break
    return "\n".join(block)


_KEY_LINE = re.compile(r"[A-Za-z0-9+/=]{16,}")


def private_key_has_body(block: str) -> bool:
    """True when a private key block (its header and what follows, up to END) holds key
    material: at least 64 characters on lines that are base64 and nothing else (a PEM body,
    a PuTTY ``Private-Lines`` section, or the same with escaped newlines in a JSON string),
    none of them filler."""
    lines = block.replace("\\r", "").replace("\\n", "\n").splitlines() or [""]
    # what follows the header on its own line (a key written on one line) counts too
    pieces = lines[0].partition("KEY-----")[2].split() + lines[1:]
    total = 0
    for piece in pieces:
        piece = piece.strip().strip("\"',")
        if _KEY_LINE.fullmatch(piece) and not is_placeholder(piece):
            total += len(piece)
    return total >= 64


# -- values assigned to credential-like names ---------------------------------------------

_NAMES = r"access|auth|api|credential|creds|key|passw(?:or)?d|pwd|pass|secret|token|bearer"
_SCHEMES = r"bearer|token|basic|ssws|apikey|key"
# A value, quoted or bare. Each is taken whole, without backtracking into it (a lookahead
# captures the longest run, then the match consumes exactly that), and `=` only ends a bare
# value (base64 padding), so a line of `token=token=...` costs a few steps per keyword. A
# bare value may hold `&` (a password's symbol), except where the next parameter of a query
# string follows it (`?client_secret=...&grant_type=...`): there `&` ends it.
_VALUE = (
    r"(?:(?P<quote>['\"\x60])(?=(?P<quoted>[^'\"\x60\s\\]{8,1000}))(?P=quoted)(?P=quote)"
    r"|(?=(?P<param>[\w.+/~-][\w.+/~:!@#$%^*?-]{7,1000}={0,3}))(?P=param)(?=&[\w.-]{1,64}=)"
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
    r"[ \t=]{0,4}(?:(?:" + _SCHEMES + r")[ \t]+)?" + _VALUE,
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
_PUBLIC_WORDS = frozenset({"public", "pub"})
_KEYWORD = re.compile(_NAMES)
# A UUID is a credential under these names (Heroku and Postmark keys are UUIDs), an id elsewhere.
_UUID_NAMES = re.compile(r"token|secret|passw|api|auth|cred|private", re.IGNORECASE)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_HEX = re.compile(r"[0-9a-fA-F]+")
_REFERENCE = re.compile(r"^\$|%\w+%|#\w+#|\{\{|\$\{|^<.*>\Z")
_CLASSES = (str.islower, str.isupper, str.isdigit)
_SYMBOLS = frozenset("!@#$%^&*+=?~")
# A pattern, a structure or a file, not a value: `[0-9a-f]{1,4}`, `{hex}:{hex}`, `./data/x.csv`.
_STRUCTURE = re.compile(
    r"\[.*\]|\{.*\}|\(.*\)|^\.{0,2}/|\.(?:csv|json|ya?ml|txt|md|py|js|ts|html|png|jpe?g|gz|zip|log|toml|ini|cfg|conf|sh)\Z"
)


def _classes(value: str) -> int:
    """Lower, upper, digit, symbol (an identifier's `._-` is no symbol)."""
    count = sum(1 for test in _CLASSES if any(test(c) for c in value))
    return count + any(c in _SYMBOLS for c in value)


def credential_like(value: str, name: str = "") -> bool:
    """Whether ``value``, assigned to ``name``, reads as a credential: random characters
    (letters and digits, entropy near the maximum for its length, few characters per BPE
    token), a password built to a policy (8 or more characters of three classes, a digit or
    a symbol among them, that do not tokenize as words), or a UUID under a token, secret,
    password, API or auth name. References (``$X``, ``{{ x }}``) and patterns are not."""
    if is_placeholder(value) or _REFERENCE.search(value) or _STRUCTURE.search(value):
        return False
    if _UUID.fullmatch(value):
        return bool(_UUID_NAMES.search(name))
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    if not letters:
        return False
    bits = entropy(value)
    # Near the most a random string of its length reaches (hex has 16 symbols, so less);
    # shorter strings are too often identifiers (`SECP256R1`) to judge by shape.
    hexadecimal = bool(_HEX.fullmatch(value))
    floor = 3.0 if hexadecimal else min(3.5, math.log2(len(value)) - 0.6)
    long_enough = len(value) >= (16 if hexadecimal else 12)
    if digits and long_enough and bits >= floor and not reads_as_words(value):
        return True
    if (
        (value.islower() or value.isupper())
        and len(value) >= 12
        and bits >= 3.3
        and count_tokens(value) * 2 > len(value)
    ):
        return True  # letters of one case, but random ones (an app password: < 2 per token)
    # A password built to a policy: three classes of lower, upper, digit and symbol.
    return len(value) >= 8 and _classes(value) >= 3 and not reads_as_words(value)


def other_name(name: str) -> bool:
    """True when a name holds something beside a credential (``token_ttl``, ``publicKey``,
    ``api_url``, ``max_tokens``). The last word that says what is held decides, as in any
    compound noun: ``token_prefix`` is a prefix, ``prefix_token`` and ``id_token`` are
    tokens. Only a public key or token is public wherever the word stands."""
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    if any(word in _PUBLIC_WORDS for word in words):
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


# An HTTP Authorization header names its scheme before the credentials (RFC 9110,
# `Authorization: <scheme> <credentials>`), and vendors define their own (`Bot`, `GenieKey`,
# `Splunk`, `BotConnector`, `Klaviyo-API-Key`): after this one name, any one-word scheme
# comes before the value. The common schemes are read by the assignment pattern already.
_AUTH_HEADER = re.compile(
    r"authorization['\"]?[ \t]*[:=,][ \t]*['\"]?(?P<scheme>[a-z][\w.-]{0,40})[ \t]+" + _VALUE
)
_COMMON_SCHEMES = re.compile(_SCHEMES)


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
    for match in _SPACED.finditer(folded):
        if match.group("quoted") is not None:
            continue  # a quoted value after a space is the assignment pattern's
        name = text[match.start("name") : match.end("name")]
        offset, value = _value_of(text, match)
        if not other_name(name) and credential_like(value, name):
            yield offset, value
    yield from _paired_values(text, folded)
