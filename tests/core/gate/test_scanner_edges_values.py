"""The judgments of :mod:`contextfs.gate.secrets_values` at their exact boundaries: what
a credential looks like, what a placeholder is, and what a private key block holds.

Every value here is made up for the test; none is a real credential.
"""

from __future__ import annotations

import math
import random

import pytest

from contextfs.gate.secrets import fingerprint, scan
from contextfs.gate.secrets_assigned import assigned_values, other_name
from contextfs.gate.secrets_values import (
    credential_like,
    entropy,
    is_placeholder,
    private_key_block,
    private_key_has_body,
    reads_as_words,
)

# -- entropy and tokens ------------------------------------------------------------------


def test_entropy_is_shannons_in_bits_per_character() -> None:
    assert entropy("") == 0.0
    assert entropy("zzzz") == 0.0
    assert entropy("ab") == 1.0
    assert entropy("abcd") == 2.0
    assert entropy("aab") == pytest.approx(-(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3))


def test_letters_of_one_case_at_exactly_the_entropy_floor_read_as_a_credential() -> None:
    """The floor of 3.3 bits for a value of one case is inclusive. Both values are the same
    80 letters (one 25 times, six 5 times, two 8 times, one 4 times, five once: exactly 3.3
    bits in exact arithmetic); the order they first appear in decides how the float sum
    rounds, to 3.3 itself or to just under it."""
    at = "ykkwqjpqpkgqxzqqwypqvqhfqqqyzqyfzmqqqbzcvqkxqpqwxjqkqvqqqyffpjyjqpxqpzvyxwypjqwv"
    under = "yqfzqwkqxwyfqjqppqyqxfxbqypqvqzqfqqwqjzvkzhwqqpqpvzyjkywqqcpvkqqyjqpqqxjkvqyxgpm"
    assert sorted(at) == sorted(under)
    assert entropy(at) == 3.3 and entropy(under) < 3.3
    assert credential_like(at) and not credential_like(under)


def test_words_take_two_and_a_half_characters_or_more_per_token() -> None:
    assert reads_as_words("ReadOnlyGroup") and reads_as_words("shipment_id_seq")
    assert reads_as_words("abcdefghijkl")  # one token
    assert reads_as_words("xkcdpassword")  # three characters per token
    assert reads_as_words("lemon") and reads_as_words("1234567890")  # exactly 2.5
    assert not reads_as_words("q7x2k9z4mwpb")  # about one character per token
    assert not reads_as_words("")


# -- placeholders ----------------------------------------------------------------------

_TELEGRAM_DOCS = "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
_JWT_IO = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
    "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


def test_documented_examples_and_their_heads_are_placeholders() -> None:
    assert is_placeholder(_TELEGRAM_DOCS)  # nothing but the list says so
    assert is_placeholder(_JWT_IO)
    # a detector may match the head of a documented token: 40 characters or more of it
    assert is_placeholder(_JWT_IO[:40]) and is_placeholder(_JWT_IO[:41])
    assert not is_placeholder(_JWT_IO[:39])
    assert not is_placeholder(_TELEGRAM_DOCS[:13])
    # a value holding a documented example whole is that example (`user:<example>`)
    assert is_placeholder(f"deploy:{_JWT_IO}") and is_placeholder(f"bot{_TELEGRAM_DOCS}")
    assert not is_placeholder("q7X2k9Z4mwPb8Lx3")


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [
        ("MyDummyToken123", True),  # says what it is, in any case
        ("sk_REDACTED_42", True),
        ("k7Qp2ZZZZZZm9Lx", True),  # six of one character in a row
        ("k7Qp2ZZZZZm9Lx", False),  # five is not a run
        ("ababababcdcd", True),  # twelve characters of four kinds: filler
        ("abcdeabcdeab", True),  # of five kinds
        ("abcdefabcdef", False),  # six kinds is not filler
        ("ababababcdc", False),  # eleven characters is too short to call
        ("abc", False),
        ("<token>", True),  # a name in angle brackets stands for the value
        ("sk-<your-key>", True),
        ("ghp_<...>", True),
        ("x9<Kq2>", True),
        ("MW1pxMcto<yA(>M%0Vl", False),  # lone angles among random characters
        ("Q$:B]zZjN-AdT<>h7V1.vm+k^", False),
        ("k9Qz>2Lm<7Xw", False),
    ],
)
def test_filler_and_self_describing_values_are_placeholders(value: str, placeholder: bool) -> None:
    assert is_placeholder(value) is placeholder


def test_a_name_holding_something_else_than_the_credential() -> None:
    assert other_name("token_ttl") and other_name("publicKey") and other_name("API_URL")
    assert not other_name("api_token") and not other_name("clientSecret")


@pytest.mark.parametrize(
    ("name", "other"),
    [
        # the last word names what is held: a prefix, a length, an id, an address
        ("token_prefix", True),
        ("STRIPE_PUBLISHABLE_KEY", True),  # a key its vendor publishes, like a public one
        ("api_key_id", True),
        ("secretName", True),
        ("TOKEN_URL", True),
        ("max_tokens", True),
        ("author", True),  # a word that merely contains `auth`
        ("public_api_token", True),  # public wherever it stands
        ("pubKey", True),
        ("passwordless_login", True),
        ("TENANT_ID_TOKENLESS", True),
        # a word before the credential only says which one it is
        ("prefix_token", False),
        ("GITLAB_PREFIX_TOKEN", False),
        ("id_token", False),  # an OpenID Connect ID token is a bearer credential
        ("file_key", False),
        ("endpointKey", False),  # Azure's endpoint keys authenticate calls
        ("author_token", False),
        ("tOKEN", False),  # no word says what is held: the keyword matched across the split
    ],
)
def test_the_last_word_of_a_name_decides_what_it_holds(name: str, other: bool) -> None:
    assert other_name(name) is other


def test_a_token_under_a_name_whose_first_word_is_no_credential_is_found() -> None:
    text = "GITLAB_PREFIX_TOKEN=glrtr-KZX7Mizo7RYFKh2JScz6aeqZ3WG8nxujE21QpZVIr\n"
    assert scan(text)
    assert not scan("TOKEN_PREFIX=glrtr-\n") and not scan("token_prefix: glpat-\n")


# -- private key blocks ------------------------------------------------------------------

_HEADER = "-----BEGIN RSA PRIVATE KEY-----"
_FOOTER = "-----END RSA PRIVATE KEY-----"
_BODY = [
    "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
]


def _pem(body: list[str], after: str = "") -> str:
    return "\n".join([_HEADER, *body, _FOOTER]) + after


def _key_print(text: str) -> str:
    (finding,) = scan(text)
    assert finding.kind == "private key"
    return finding.fingerprint


def test_a_private_key_is_fingerprinted_by_its_block_from_header_to_end() -> None:
    pem = _pem(_BODY)
    assert _key_print(pem) == fingerprint(pem)
    # the lines after the header are taken stripped
    indented = "\n".join([_HEADER, *("    " + line for line in pem.split("\n")[1:])])
    assert _key_print(indented) == fingerprint(pem)
    # what follows END is not part of it; every line before it is
    assert _key_print(_pem(_BODY, "\n\nmore notes\nENDPOINT: PRIVATE KEY rotation")) == (
        fingerprint(pem)
    )
    changed_first = _pem(["X" + _BODY[0][1:], *_BODY[1:]])
    assert _key_print(changed_first) == fingerprint(changed_first) != fingerprint(pem)


def test_a_body_line_holding_end_does_not_end_the_block() -> None:
    body = [_BODY[0], "ENDo" + _BODY[1][4:], _BODY[2]]
    pem = _pem(body)
    assert _key_print(pem) == fingerprint(pem)


def test_a_block_without_end_is_its_header_and_the_199_lines_after_it() -> None:
    lines = [_HEADER] + [_BODY[i % 3][:60] + f"{i:04d}" for i in range(260)]
    block = private_key_block(lines, 0)
    assert block == "\n".join(lines[:200])
    assert private_key_block(["intro", *lines], 1) == block


def test_a_key_body_is_64_characters_or_more() -> None:
    # 32 + 32 characters of base64 on their own lines: a body; one fewer is not
    first, second = "X" + _BODY[0][:31], _BODY[1][:31] + "X"
    assert private_key_has_body("\n".join([_HEADER, first, second, _FOOTER]))
    assert not private_key_has_body("\n".join([_HEADER, first[:31], second, _FOOTER]))
    assert not private_key_has_body("")
    assert not private_key_has_body(_HEADER)


def test_a_key_body_may_be_on_the_header_line_or_in_json() -> None:
    assert private_key_has_body(f"{_HEADER} {_BODY[0]} {_BODY[1]} {_FOOTER}")
    # a JSON string with escaped line breaks, CRLF or LF
    assert private_key_has_body("\\r\\n".join([_HEADER, *_BODY, _FOOTER]))
    assert private_key_has_body("\\n".join([_HEADER, *_BODY, _FOOTER]))
    # 60 characters in escaped lines are not a body, however the breaks are written
    short = [_BODY[0][:30], _BODY[1][:30]]
    assert not private_key_has_body("\\r\\n".join([_HEADER, *short, _FOOTER]))
    assert not private_key_has_body("\\n".join([_HEADER, *short, _FOOTER]))
    # lines quoted in a JSON list
    quoted = [_HEADER, *(f'"{line}",' for line in _BODY[:2]), _FOOTER]
    assert private_key_has_body("\n".join(quoted))


# -- what a credential looks like ----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "credential"),
    [
        # random letters and digits, 12 or more, entropy near the most for their length
        ("n66zhny7iqah", True),  # 12 characters: floor log2(12) - 0.6
        ("w58sf6tn3bsg", True),
        ("6bxitkti9jk3j", False),  # 13 characters, entropy below log2(13) - 0.6
        ("MJJY3E7JNM43", False),  # entropy 2.86: below the floor of 12 characters
        ("ymmdvm4rl95670djmat0elby", True),  # 24 characters: the floor is capped at 3.5
        # hexadecimal: 16 characters or more and an entropy of 3 bits (16 symbols)
        ("c0b6aadc195c10d1", True),
        ("a1b2c3d4a1b2c3d4", True),  # exactly 3.0 bits
        ("8064ff81b7f2", False),  # 12 hex digits are a short id
        # letters of one case, random ones: fewer than two characters per token
        ("gjkvwimjpyau", True),
        ("B0CB647819AD", False),  # exactly two characters per token
        ("qxzkwpbvjdf", False),  # 11 characters
        # a password built to a policy: 8 characters of three classes
        ("1dd47cAf", True),
        ("qXzKwP!#", True),
        ("q7x2K9z4", True),
        ("q7x2k9z4", False),  # two classes
        ("qxzkwpbv", False),
        ("aC61", False),  # too short
        # words and identifiers are not credentials, whatever their classes
        ("ReadOnlyGroup2024", False),
        ("HelloWorld1", False),
        ("Summer2024!", False),
        ("shipment_id_seq_42", False),
        # references, patterns and files
        ("$Tok3nX9abc", False),
        ("%Tok3n_X9%", False),
        ("#Tok3n_X9#", False),
        ("__f2py_cb_#name#", False),  # a template's fields, where they name something
        ("f2py_rout_#modulename#_#name#", False),
        ("x9Kq2_%username%_Lm7", False),
        ("j3=bzh6%ju@xk@pi7v2a0rq%f9w%ptzbj9qi71q0t70s0bgb2i", True),  # `%f9w%` inside
        ("p7@xq2#w9k#z4m!r8t1v", True),
        ("{{ deploy_token }}", False),
        ("./data/k9Qx2Lm7.csv", False),
        ("[0-9a-fA-F]{32}", False),
        ("[A-Za-z0-9!@#$%^&*]{8,}", False),
        ("%(password)s", False),
        ("{scheme}://{user}:{password}@{host}", False),
        ("(none)", False),
        ("[A-Za-z0-9X]{8,}", False),  # a letter is no bracket
        ("Qm9x7Rt2(LpZ8vW4k)", False),  # one pair is enough
        ("Qm9x7Rt2)LpZ8vW4k(", True),  # a closer before its opener pairs with nothing
        # brackets that do not pair are characters of a random value, not a structure: a
        # Django secret key draws `(` and `)` from its alphabet
        ("zh!=!gq(w^_t[sBR29954x)HI+$ehwss*xYNQeu([xcWMhdzzr", True),
        ("k9)q2x(7mzt4w1r8", True),
        ("q7x2k9z4{m8)", True),
        # numbers as code writes them, up to 64 bits; a longer hex key after `0x` is judged
        ("0x1F0003", False),
        ("0xAb19D82E7f546cC3", False),
        ("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318", True),
        ("0x1f0003b7e9a4c2d5f", True),  # 17 hex digits: more than a machine word
        # a keyboard shortcut, modifier names joined by `+` (a keybinding under `key:`)
        ("Ctrl+Shift+P", False),
        ("Cmd+Option+Esc", False),
        ("Ctrl+Alt+F12", False),
        ("Ctrl+Xk9mP2qR5vLw8", True),  # a long random part is no key's name
        ("Shift+k9Qz2Lm7Xw", True),
        # no letters
        ("3815", False),
        ("38159264871032", False),
        ("ieqh", False),
        ("524y", False),
        ("ng5b", False),
        ("0hqrl4dnfy", False),
    ],
)
def test_a_value_reads_as_a_credential_by_its_shape(value: str, credential: bool) -> None:
    assert credential_like(value, "api_key") is credential
    assert credential_like(value) is credential


def test_django_secret_keys_read_as_credentials_unless_their_parentheses_pair() -> None:
    # Django's get_random_secret_key(): 50 characters of this alphabet. One key in twelve
    # pairs its parentheses by chance and reads as a pattern, about one in forty starts like a
    # reference (`$`, `%i%`) or a crypt hash; the others hold brackets that pair with
    # nothing, which no pattern or template does, and `%` or `#` around random characters
    # (`%f9w%`), which name no template field.
    rng = random.Random(20261204)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)"
    keys = ["".join(rng.choice(alphabet) for _ in range(50)) for _ in range(600)]
    passed = [k for k in keys if not credential_like(k, "SECRET_KEY")]
    assert all(k[0] in "$%#" or k.count("(") == k.count(")") > 0 for k in passed), passed
    assert len(passed) < len(keys) * 0.12


def test_a_uuid_is_a_credential_only_under_a_credential_name() -> None:
    uuid = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
    for name in ("api_key", "password", "heroku_token", "CLIENT_SECRET", "authorization"):
        assert credential_like(uuid, name), name
    for name in ("request_id", "trace", ""):
        assert not credential_like(uuid, name), name
    assert not credential_like(uuid)


# -- values assigned to credential-like names -------------------------------------------

_V = "Qm9x7Rt2LpZ8vW4kYc3N"  # 20 random letters and digits


@pytest.mark.parametrize(
    ("template", "values"),
    [
        # every assignment syntax
        ("api_token = {v}", ["{v}"]),
        ("API_TOKEN={v}.", ["{v}"]),  # a sentence's full stop is not part of the value
        ("token: {v}!", ["{v}"]),
        ("client_secret: '{v}'", ["{v}"]),
        ('password => "{v}"', ["{v}"]),
        ("secret ?= {v}", ["{v}"]),
        ("pass || {v}", ["{v}"]),
        ("key := {v}", ["{v}"]),
        ("auth::= {v}", ["{v}"]),
        ("token , {v}", ["{v}"]),
        ("secret\t=\t{v}", ["{v}"]),
        ("apikey   =    {v}", ["{v}"]),
        ('"password": "{v}"', ["{v}"]),
        ('["token"] = "{v}"', ["{v}"]),
        ('token "{v}"', ["{v}"]),
        ("token '{v}'", ["{v}"]),
        ("export MY_TOKEN={v}", ["{v}"]),
        ("key = '{v}' # note", ["{v}"]),
        ("token = token = {v}", ["{v}"]),
        ("Authorization: Bearer {v}", ["{v}"]),
        ("Authorization: Basic {v}==", ["{v}=="]),  # base64 padding is the value's
        ("token = {v}===", ["{v}==="]),
        ("credential: {v}/x+y~z", ["{v}/x+y~z"]),
        ("token = ~{v}", ["~{v}"]),
        # a configuration line's value runs to the line's end, whatever symbols it holds:
        # Django's alphabet (`!@#$%^&*(-_=+)`) unquoted in `.env`, YAML or a shell export
        ("SECRET_KEY=!k4(w=z@{v}", ["!k4(w=z@{v}"]),
        ("config:\n  secret_key: *q8=m{v}(x\nnext: 1", ["*q8=m{v}(x"]),
        ("export DJANGO_SECRET_KEY=@{v}&z(", ["@{v}&z("]),
        # a column aligned before the separator, wider than the assignment pattern reads; a
        # UUID is a credential by its name
        (
            "api_token" + " " * 30 + ": 3fa85f64-5717-4562-b3fc-2c963f66afa6",
            ["3fa85f64-5717-4562-b3fc-2c963f66afa6"],
        ),
        ("build_id" + " " * 30 + ": 3fa85f64-5717-4562-b3fc-2c963f66afa6", []),
        # a query string's next parameter ends the value; a query string as the value is
        # its parameters, each judged by its own name, and the lines after it are read
        ("password=!{v}&page=2", ["!{v}"]),
        ("sas_token: r={v}&e=6%2f15\napi_key: !{v}", ["!{v}"]),
        ("sas_token: r=https%3a%2f%2fq7.example.net%2fapi{v}&e=6%2f15&s=XXXX", []),
        # where code or prose goes on after it, a bare value ends at `(` or `=` as before
        ("token = k(9{v} in prose", []),
        ("_token_end = r'(?=\\s|#|[)\\]]|$)'", []),  # a string literal of code, prefixed
        ("connect(password={v})", ["{v}"]),
        # where a bare value ends
        ("token = {v}\\n", ["{v}"]),
        ("token = {v}; next", ["{v}"]),
        ("token={v})", ["{v}"]),
        ("token={v}]", ["{v}"]),
        ("token={v}}}", ["{v}"]),
        ("token={v}>", ["{v}"]),
        ("token = {v}:", ["{v}"]),
        ("token = {v}?", ["{v}"]),
        ("token = {v}....", ["{v}"]),
        # an Authorization header's scheme may be any word, as vendors define their own
        ("Authorization: BotConnector {v}", ["{v}"]),
        ('{"Authorization": "GenieKey {v}"}', ["{v}"]),
        ('curl -H "Authorization: Splunk {v}"', ["{v}"]),
        ("Proxy-Authorization: Negotiate {v}", ["{v}"]),
        ("authorization = Klaviyo-API-Key {v}", ["{v}"]),
        ("Authorization: Bot ${DISCORD_TOKEN}", []),
        ("Authorization: handled by the gateway for {v}", []),  # prose: no scheme, value
        ("myauthorization: Custom {v}", []),
        # an XML element named like a credential (Maven's settings.xml, Jenkins, Tomcat)
        ("<password>{v}</password>", ["{v}"]),
        ("<server><id>x</id><adminToken>{v}</adminToken></server>", ["{v}"]),
        ("<apiKeyId>{v}</apiKeyId>", []),
        ("<password>${env.PASS}</password>", []),
        # ... whatever attributes its start tag holds (FileZilla's `<Pass encoding=...>`)
        ('<Pass encoding="base64">{v}</Pass>', ["{v}"]),
        ("<password type='plain' \n  scope=\"all\">{v}</password>", ["{v}"]),
        ('<tokenType lang="en">{v}</tokenType>', []),
        ('<mypass x="1">{v}</mypass>', ["{v}"]),
        ('<compass x="1">{v}</compass>', []),
        # a value aligned in a column after its separator (WordPress's `define` calls)
        ("define('DB_PASSWORD',       '{v}');", ["{v}"]),
        ("API_TOKEN:" + " " * 32 + "{v}", ["{v}"]),
        # a configuration directive: a line of a name, spaces and a value (.netrc, redis.conf)
        ("machine api.example.org\n  login deploy\n  password {v}\n", ["{v}"]),
        ("requirepass {v}", ["{v}"]),
        ("\tmasterauth   {v}  \nport 6379", ["{v}"]),
        ('password "{v}"', ["{v}"]),  # quoted: read once, as an assignment
        # ... or a .netrc entry on one line, whose words are keyword and value pairs
        ("machine x login deploy password {v}", ["{v}"]),
        ("machine x.org login a@b.c account ops port 21 password {v}\n", ["{v}"]),
        ("default login anonymous password {v}", ["{v}"]),
        ("defaultmachine x password {v}", []),  # not the keyword
        ("set password {v} here", []),  # not the line's first word, no entry
        ("kubectl logs api web-{v}", []),
        ("password {v} # rotated", []),  # the value does not end the line
        ("token_ttl {v}", []),
        # in a query string, `&` and the next parameter end the value; elsewhere `&` is a
        # password's symbol
        ("https://api.example.org/v1?api_key={v}&format=json", ["{v}"]),
        ("/oauth/token?client_secret={v}&grant_type=client_credentials", ["{v}"]),
        ("?token={v}==&page=2", ["{v}=="]),
        ("password={v}&amp", ["{v}&amp"]),
        ("password={v}&x-y", ["{v}&x-y"]),
        ("password=p@ss&w=1", []),  # too short to judge either way
        # names
        ("my.access.key = {v}", ["{v}"]),
        ("accessKey = {v}", ["{v}"]),
        ("pwd={v}", ["{v}"]),
        ("passwd: {v}", ["{v}"]),
        ("creds = {v}", ["{v}"]),
        ("\u0130\u0130 token = {v}", ["{v}"]),  # text whose lower case is longer
        ("Stra\u00dfe token = {v}", ["{v}"]),
        ("id token = {v}", ["{v}"]),  # a word before a space is not part of the name
        ("token_ttl = {v}", []),
        ("public_key = {v}", []),
        ("tokens = {v}", []),
        ("tokenizer = {v}", []),
        ("KeyId = {v}", []),
        ("AccessKeyID = {v}", []),
        ("token = ${v}", []),
        ('secret = "{v}\\"', []),
        ("token `{v}`", []),
        ("see a-token {v} here", []),  # a name and a word in prose
        ("key: 1234567890ab", []),
        ("TIMER_ALL_ACCESS = 0x1F0003", []),  # a flag mask
        # flags and curl
        ("run --api-key {v}", ["{v}"]),
        ("run -Password {v}", ["{v}"]),
        ("cmd --api_key {v}", ["{v}"]),
        ("run --token={v}", ["{v}"]),  # an assignment and a flag: one value
        ("run x--token {v} now", []),  # not a flag: glued to a word
        ("-p {v}", []),
        ("cmd --secret-key-file {v}", []),
        ("curl -u admin:{v} https://x", ["{v}"]),
        ("curl --user=admin:{v}", ["{v}"]),
        ("x-u admin:{v} curl -u admin:{v}", ["{v}"]),  # only a flag after a space counts
        ("--api-key {v}", ["{v}"]),  # a flag at the very start of the text
        ("--api-token {v} --verbose", ["{v}"]),  # found only as a flag there
        ("the api-key rotation: run --api-key {v}", ["{v}"]),  # a mention, then a flag
        # a UUID is a credential under a flag or as curl's password, as under a name
        (
            "run --api-key 3fa85f64-5717-4562-b3fc-2c963f66afa6",
            ["3fa85f64-5717-4562-b3fc-2c963f66afa6"],
        ),
        (
            "curl -u deploy:3fa85f64-5717-4562-b3fc-2c963f66afa6 https://x",
            ["3fa85f64-5717-4562-b3fc-2c963f66afa6"],
        ),
        # every assignment is judged, whatever comes before it
        ("token_ttl = {v}\napi_token = {v}", ["{v}"]),
        ("token = {v}XX.", ["{v}XX"]),
        (
            "api_token = 3fa85f64-5717-4562-b3fc-2c963f66afa6",
            ["3fa85f64-5717-4562-b3fc-2c963f66afa6"],
        ),
    ],
)
def test_values_assigned_to_credential_names(template: str, values: list[str]) -> None:
    text = template.replace("{v}", _V)
    found = list(assigned_values(text))
    assert [value for _, value in found] == [v.replace("{v}", _V) for v in values]
    for offset, value in found:
        assert text[offset : offset + len(value)] == value


def test_a_name_is_read_up_to_40_characters_before_its_keyword() -> None:
    # `public` makes a name hold something else; 41 characters back it is not read
    assert list(assigned_values("public" + "_" * 35 + f"token = {_V}")) != []
    assert list(assigned_values("public" + "_" * 34 + f"token = {_V}")) == []


_UUID = "3b2f6c1e-9a4d-4f7b-8c2e-5d1a0b9e7f64"
_TOKEN = "x8Fq2pLm9ZtR4vYwK3s7"


def test_a_proxy_authorization_header_is_read_and_a_longer_name_is_not() -> None:
    assert [v for _, v in assigned_values(f"Proxy-Authorization: Bot {_TOKEN}")] == [_TOKEN]
    assert list(assigned_values(f"XProxy-Authorization: Bot {_TOKEN}")) == []


@pytest.mark.parametrize(
    "text",
    [
        f"Authorization: Bot {_UUID}",
        f"curl -u deploy:{_UUID}",
        f"password {_UUID}",
        f"machine x login deploy password {_UUID}",
        f'<Password encoding="plain">{_UUID}</Password>',
    ],
    ids=["authorization header", "curl user", "directive", "netrc entry", "xml attributes"],
)
def test_each_syntax_judges_a_uuid_under_its_credential_name(text: str) -> None:
    # A UUID is a credential only under a token, secret, password or auth name (Heroku's
    # and Postmark's keys), so each syntax must hand the value its name.
    assert [v for _, v in assigned_values(text)] == [_UUID]


def test_a_flag_at_the_very_start_of_a_text_is_read() -> None:
    assert [v for _, v in assigned_values(f"--api-key {_TOKEN}")] == [_TOKEN]


def test_a_skipped_match_does_not_end_the_search_for_later_ones() -> None:
    # `-u` glued to a word is no curl flag, and a quoted value after a space belongs to the
    # assignment rule; the search goes on past each to the next of its syntax.
    later = _TOKEN[::-1]
    assert [v for _, v in assigned_values(f"foo-u user:{_TOKEN} ; curl -u deploy:{later}")] == [
        later
    ]
    text = f'password "Xk9f2Lm8Qz7W!p"\nrequirepass {_TOKEN}'
    assert [v for _, v in assigned_values(text)] == ["Xk9f2Lm8Qz7W!p", _TOKEN]


def test_a_header_passed_over_does_not_end_the_search_for_later_headers() -> None:
    later = _TOKEN[::-1]
    text = f"XProxy-Authorization: Bot {_TOKEN}\nAuthorization: Bot {later}\n"
    assert [v for _, v in assigned_values(text)] == [later]
