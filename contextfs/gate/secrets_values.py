"""What a matched value is: a credential, a placeholder, or a word that only looks like one.

Every detector of the secret scanner (the vendor rule set, detect-secrets' plugins, the
assignment rules of :mod:`.secrets_assigned`) proposes values; the judgments here apply to
all of them alike:

* :func:`is_placeholder`: documented example keys (``AKIAIOSFODNN7EXAMPLE``, the jwt.io
  token), values that say what they are (``<your-token>``, ``...EXAMPLE...``, ``dummy``,
  ``redacted``) and filler (``ghp_xxxxxxxx...``, ``0000000000``, a run of one character),
  so setup notes can show where a credential goes;
* :func:`private_key_has_body`: a private key is the block, not its header; a block
  whose body is ``...`` or ``anything`` holds nothing;
* :func:`credential_like`: whether a value read under a name is a credential by its shape:
  random characters (Shannon entropy near the most for its length, and *token
  efficiency*: random strings take many BPE tokens per character, words and identifiers
  few; measured with the tiktoken encoding contextfs already counts budgets with), a
  password built to a policy, or a UUID under a credential's name; never a reference, a
  pattern or template, or a file path.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from ..text.tokens import count_tokens

__all__ = [
    "DOCUMENTED_EXAMPLES",
    "PUBLIC_WORDS",
    "credential_like",
    "entropy",
    "is_placeholder",
    "private_key_block",
    "private_key_has_body",
    "reads_as_words",
]

#: Words that say a key is meant to be seen (the public half of a pair, a publishable key
#: served in web pages): a name or a token prefix holding one holds no secret.
PUBLIC_WORDS = frozenset({"public", "pub", "publishable"})
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
    "xxxx",
    "****",
    "....",
    "…",
    "fake",
)
_RUN = re.compile(r"(.)\1{5,}")  # six of one character in a row
# A stand-in in angle brackets (`<token>`, `<your-api-key>`, `<...>`): a name between them.
# A lone `<` or `>` is a character of a random value (WordPress's salts draw both).
_ANGLED = re.compile(r"<[\w .:/@-]{1,60}>")


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def is_placeholder(value: str) -> bool:
    """True for documented example keys, self-describing stand-ins and filler."""
    # the example itself, or a value holding it whole (`user:<example>` of a credential pair,
    # `bot<token>` of a URL): the examples are long and unique, so none holds one by chance
    if any(example in value for example in DOCUMENTED_EXAMPLES):
        return True
    # a detector may match the head of a documented token (a JWT without its signature)
    if len(value) >= 40 and any(example.startswith(value) for example in DOCUMENTED_EXAMPLES):
        return True
    folded = value.lower()
    if any(marker in folded for marker in _MARKERS) or _ANGLED.search(value):
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


# A UUID is a credential under these names (Heroku and Postmark keys are UUIDs), an id elsewhere.
_UUID_NAMES = re.compile(r"token|secret|passw|api|auth|cred|private", re.IGNORECASE)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_HEX = re.compile(r"[0-9a-fA-F]+")
# A number as code writes it, up to 64 bits (`0x1F0003`, a flag mask under `TIMER_ALL_ACCESS`):
# a constant, not a credential. Longer hex after `0x` (an Ethereum private key) is judged.
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]{1,16}")
# A keyboard shortcut, modifier names joined by `+` and a key's name (`Ctrl+Shift+P`, a
# keybinding under `key:`): three classes of characters that are no password.
_SHORTCUT = re.compile(
    r"(?:(?:ctrl|control|alt|altgr|shift|cmd|command|meta|super|win|option|opt|fn|hyper)\+)+"
    r"(?:[a-z0-9]|f\d{1,2}|[a-z]{2,12})",
    re.IGNORECASE,
)
# A reference to a value kept elsewhere (`$TOKEN`, `%API_KEY%`, `#TOKEN#`, `{{ x }}`, `${x}`)
# or a crypt-style hash (`$2b$12$...`).
_REFERENCE = re.compile(r"^\$|^%\w+%|^#\w+#|\{\{|\$\{|^<.*>\Z")
# Inside a value, `%name%` and `#name#` are a template's fields (`f2py_rout_#modulename#`)
# when they name something: a random value (a Django key holds `%` and `#`) puts random
# characters between them (`%f9w%`, `#hao#`), which do not read as words.
_FIELD = re.compile(r"%([a-z]\w{2,})%|#([a-z]\w{2,})#", re.IGNORECASE)


def _reference(value: str) -> bool:
    if _REFERENCE.search(value):
        return True
    return any(reads_as_words(m.group(1) or m.group(2)) for m in _FIELD.finditer(value))


_CLASSES = (str.islower, str.isupper, str.isdigit)
_SYMBOLS = frozenset("!@#$%^&*+=?~")
# A path or a file, not a value: `./data/x.csv`.
_FILE = re.compile(
    r"^\.{0,2}/|\.(?:csv|json|ya?ml|txt|md|py|js|ts|html|png|jpe?g|gz|zip|log|toml|ini|cfg|conf|sh)\Z"
)
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _structure(value: str) -> bool:
    """A pattern or a template (`[0-9a-f]{1,4}`, `{hex}:{hex}`, `%(password)s`): brackets
    that pair, each closing the last one opened. A random value may draw brackets from its
    alphabet (a Django secret key holds `(` and `)`), and they seldom pair: one in twelve of
    Django's keys does, where a pattern's and a template's always do."""
    expected: list[str] = []
    pairs = 0
    for char in value:
        if char in _CLOSERS:
            expected.append(_CLOSERS[char])
        elif char in ")]}":
            if not expected or expected.pop() != char:
                return False
            pairs += 1
    return pairs > 0 and not expected


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
    if is_placeholder(value) or _reference(value) or _FILE.search(value):
        return False
    if _structure(value):
        return False
    if _NUMBER.fullmatch(value) or _SHORTCUT.fullmatch(value):
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
