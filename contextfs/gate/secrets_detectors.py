"""The detectors behind :mod:`contextfs.gate.secrets`: which run, how, and what filters them.

Three sources feed one list of candidates: detect-secrets' plugins (below, with the formats
they lack from :mod:`contextfs.gate.secrets_formats`), the vendor rule set
(:mod:`contextfs.gate.secrets_rules`) and values assigned to credential-like names
(:mod:`contextfs.gate.secrets_assigned`); every candidate then passes the same judgments
(placeholders, filler, keyless private key blocks, detect-secrets' heuristic filters).

Imported lazily, on the first scan: detect-secrets (and the ``requests`` it imports) costs
about 100 ms to load, which paths that never scan must not pay.

Why the scanning loop lives here instead of detect-secrets' own ``scan_file``/``scan_line``:

* its entry points read files or one line at a time under a *global* settings object
  (``transient_settings`` swaps it process-wide), and ``BasePlugin.analyze_line`` asks that
  global object whether to *verify* a candidate, i.e. send it to the vendor's API. Here
  every plugin is an instance configured by its constructor and called through
  ``analyze_string`` only, so nothing another caller configured can change a scan and no
  candidate ever leaves the process;
* its keyword and npm patterns backtrack quadratically on hostile lines (``"password" * 2000``
  takes 14 s in ``KeywordDetector``), so those run only where a cheap linear gate matched,
  on bounded windows;
* a context store is markdown: the keyword detector picks its syntax (quoted values in
  prose and code, unquoted ``key: value`` in frontmatter, config fences and ``.env`` lines)
  per line, from the document's structure, where detect-secrets picks it per file extension.

What is left out on purpose, with the measurements in ``docs/reliability.md``:
``HexHighEntropyString`` flags every quoted commit id and digest, ``Base64HighEntropyString``
flags quoted base64 of ordinary content and SRI hashes (64 hits in the sample context, none
a secret), and ``IPPublicDetector`` reports addresses, which are not credentials.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Set
from dataclasses import dataclass

from detect_secrets.filters import allowlist, heuristic
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import (
    DENYLIST,
    PRECEDED_BY_EQUAL_COMPARISON_SIGNS_QUOTES_REQUIRED_REGEX,
)
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector
from detect_secrets.util.code_snippet import get_code_snippet

from . import secrets_formats as formats
from . import secrets_formats_services as services
from . import secrets_rules
from .secrets_assigned import assigned_values
from .secrets_syntax import Syntax, SyntaxMap
from .secrets_text import ScannedText, fold, in_data_uri
from .secrets_values import is_placeholder, private_key_block, private_key_has_body

__all__ = ["ASSIGNED_KIND", "Candidate", "DETECTORS", "KEYWORD_KIND", "find"]


# -- formats detect-secrets 1.5 does not know -------------------------------------------
# Each is a detect-secrets plugin (a RegexBasedDetector subclass, its documented extension
# point) around the patterns of :mod:`contextfs.gate.secrets_formats`, where each format's
# documented shape is given.


def _plugin(name: str, patterns: tuple[re.Pattern[str], ...]) -> RegexBasedDetector:
    """An instance of a new RegexBasedDetector subclass named ``name``."""
    return type(name, (RegexBasedDetector,), {"secret_type": name, "denylist": patterns})()


_OPENAI = _plugin("OpenAIKeyDetector", formats.OPENAI)
_ANTHROPIC = _plugin("AnthropicKeyDetector", formats.ANTHROPIC)
_GITHUB_PAT = _plugin("GitHubFineGrainedTokenDetector", formats.GITHUB_PAT)
_GOOGLE = _plugin("GoogleApiKeyDetector", formats.GOOGLE)
_HUGGING_FACE = _plugin("HuggingFaceTokenDetector", formats.HUGGING_FACE)
_NPM = _plugin("NpmAccessTokenDetector", formats.NPM)
_SLACK_APP = _plugin("SlackAppTokenDetector", formats.SLACK_APP)
_AWS_SECRET = _plugin("AwsSecretAssignmentDetector", formats.AWS_SECRET)
_URL_PASSWORD = _plugin("UrlPasswordDetector", formats.URL_PASSWORD)
_AWS_KEY_ID = _plugin("AwsKeyIdDetector", formats.AWS_KEY_ID)
# detect-secrets' second AWS pattern (secret keys quoted near "aws") is kept as it is.
_AWS_NEAR_KEYWORD = _plugin("AwsSecretNearKeywordDetector", tuple(AWSKeyDetector.denylist[1:]))
_STRIPE_TEST = _plugin("StripeTestKeyDetector", formats.STRIPE_TEST)
_EXTRA_PRIVATE_KEY = _plugin("ExtraPrivateKeyDetector", formats.EXTRA_PRIVATE_KEY)


# -- the detector table ---------------------------------------------------------------


@dataclass(frozen=True)
class Detector:
    """One detect-secrets plugin under a user-facing kind, and where it is worth running.

    ``needles`` are literal strings one of which every match contains; ``gate`` is a cheap
    linear pattern every matching line contains (``folded``: both are looked for in the
    lower-cased text, for case-insensitive patterns). A detector whose needles or gate are
    absent costs one substring search; otherwise it runs on the lines that hold them.
    Without either, the plugin's own patterns (linear, and never spanning lines) run once
    over the whole text, and only the lines holding a match are scanned again.

    ``guess`` marks detectors that infer a secret from its surroundings (a keyword, an
    assignment, a URL's userinfo) rather than from a vendor's format: only they get
    detect-secrets' context filters (indirect references, id strings) and the value-shape
    rule, because a precise token format is a secret wherever it appears.

    ``windowed`` detectors backtrack on long lines; they see a long line as windows around
    their needles.

    ``uuid``: the format holds a UUID; ``check``: what a value's decoding must confirm
    (both as in :class:`contextfs.gate.secrets_formats.Format`).
    """

    kind: str
    plugin: BasePlugin
    needles: tuple[str, ...] | None = None
    gate: re.Pattern[str] | None = None
    folded: bool = False
    guess: bool = False
    windowed: bool = False
    uuid: bool = False
    check: Callable[[str], bool] | None = None


_PRIVATE_KEY = "private key"
KEYWORD_KIND = "password or secret assignment"
ASSIGNED_KIND = KEYWORD_KIND  # the same finding, from the value rule of secrets_assigned
# The vendor patterns built on detect-secrets' `build_assignment_regex`: a key, password or
# token word, an assignment, then a value of 24+ word characters; or a vendor URL.
_ASSIGNED_VALUE = re.compile(
    r"""(?:key|pwd|pw|password|pass|token)["'\]]{0,2} *(?:=|:|:=|=>| +|::) *["']?[a-z0-9_-]{24}"""
    r"|cloudant\.com|softlayer\.com"
)

DETECTORS: tuple[Detector, ...] = (
    # AWS's second pattern (secret keys near "aws" + key/pass/token) is case-sensitive.
    Detector("AWS access key", _AWS_KEY_ID, needles=("AKIA", "ASIA", "ABIA", "ACCA", "A3T")),
    Detector("AWS access key", _AWS_NEAR_KEYWORD, needles=("aws",)),
    Detector("AWS access key", _AWS_SECRET, needles=("aws",), folded=True),
    Detector(_PRIVATE_KEY, PrivateKeyDetector(), needles=("PRIVATE KEY", "PuTTY-User-Key-File")),
    Detector(_PRIVATE_KEY, _EXTRA_PRIVATE_KEY, needles=("PRIVATE KEY", "PuTTY-User-Key-File")),
    Detector(
        "GitHub token", GitHubTokenDetector(), needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
    ),
    Detector("GitHub token", _GITHUB_PAT, needles=("github_pat_",)),
    Detector(
        "GitLab token",
        GitLabTokenDetector(),
        needles=(
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "GR1348941",
            "glcbt-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
        ),
    ),
    Detector("Slack token", SlackDetector(), needles=("xox", "hooks.slack.com"), folded=True),
    Detector("Slack token", _SLACK_APP, needles=("xapp-",)),
    Detector("OpenAI API key", OpenAIDetector(), needles=("T3BlbkFJ",)),
    Detector("OpenAI API key", _OPENAI, needles=("sk-proj-", "sk-svcacct-", "sk-admin-")),
    Detector("Anthropic API key", _ANTHROPIC, needles=("sk-ant-",)),
    Detector("Google API key", _GOOGLE, needles=("AIza",)),
    Detector("Hugging Face token", _HUGGING_FACE, needles=("hf_",)),
    Detector("Stripe key", StripeDetector(), needles=("k_live_",)),
    Detector("Stripe key", _STRIPE_TEST, needles=("k_test_",)),
    Detector("Square OAuth secret", SquareOAuthDetector(), needles=("sq0csp-",)),
    Detector("SendGrid API key", SendGridDetector(), needles=("SG.",)),
    Detector("Twilio API key", TwilioKeyDetector(), needles=("AC", "SK")),
    Detector("Mailchimp API key", MailchimpDetector(), needles=("-us",)),
    Detector("Discord bot token", DiscordBotTokenDetector()),
    Detector("Telegram bot token", TelegramBotTokenDetector()),
    Detector("npm token", _NPM, needles=("npm_",)),
    # `//registry/:_authToken=` with a greedy `.+`: quadratic on long lines full of `//`.
    Detector("npm token", NpmDetector(), needles=("_authToken",), windowed=True),
    Detector("PyPI token", PypiTokenDetector(), needles=("pypi-",)),
    Detector("JSON web token", JwtTokenDetector(), needles=("eyJ",)),
    Detector("Azure storage key", AzureStorageKeyDetector(), needles=("AccountKey=",)),
    Detector("Artifactory credential", ArtifactoryDetector(), needles=("AKC", "AP")),
    Detector("password in URL", BasicAuthDetector(), needles=("://",), guess=True),
    Detector("password in URL", _URL_PASSWORD, needles=("://",), guess=True),
    Detector(
        "Cloudant credential", CloudantDetector(), gate=_ASSIGNED_VALUE, folded=True, guess=True
    ),
    Detector(
        "IBM Cloud IAM key", IbmCloudIamDetector(), gate=_ASSIGNED_VALUE, folded=True, guess=True
    ),
    Detector(
        "IBM COS HMAC credential",
        IbmCosHmacDetector(),
        gate=_ASSIGNED_VALUE,
        folded=True,
        guess=True,
    ),
    Detector(
        "SoftLayer credential", SoftlayerDetector(), gate=_ASSIGNED_VALUE, folded=True, guess=True
    ),
    *(
        Detector(
            token.kind,
            _plugin(token.kind.title().replace(" ", "") + "Detector", token.patterns),
            needles=token.needles,
            folded=token.folded,
            uuid=token.uuid,
            check=token.check,
            guess=token.guess,
            gate=token.gate,
        )
        for token in (*formats.TOKENS, *services.TOKENS)
    ),
)

#: Lower-case strings one of which every DENYLIST keyword contains.
_KEYWORD_NEEDLES = ("key", "pass", "pwd", "secret", "contrase")
# A keyword occurrence whose identifier ends within 64 characters: longer runs of word
# characters after a keyword are not variable names, and they are what makes
# KeywordDetector's `keyword\w*` backtrack quadratically.
_KEYWORD_GATE = re.compile(r"(?:{})\w{{0,64}}(?!\w)".format("|".join(DENYLIST)), re.IGNORECASE)
# Every keyword pattern but one needs punctuation after the keyword and its identifier
# (`password = `, `secret:`, `api_key(`, `private_key "x";`); found in the folded text.
_KEYWORD_ASSIGNED = re.compile(
    r"(?:{})\w{{0,64}}[\]'\"]{{0,2}}\s*[^\w\s]".format("|".join(DENYLIST))
)
_KEYWORD_BEFORE = 256  # "value" == password: how far back a compared value may start
_KEYWORD_AFTER = 512  # password = "value": how far the assignment may reach
# Windowed detectors see a line longer than this as windows around their needles.
_LONG_LINE = 4096
_WINDOW_STEP = 256
_WINDOW_REACH = 512


@dataclass(frozen=True)
class Candidate:
    """A raw hit (``value``: what the fingerprint covers); it never leaves
    :mod:`contextfs.gate.secrets`, which keeps only the hash."""

    kind: str
    line: int
    value: str
    guess: bool
    rule_set: bool = False  # found by the vendor rule set (its kinds give way to the named ones)


# -- filters ----------------------------------------------------------------------------

_WORD_PUNCTUATION = frozenset("-_./:@")
# A printf or %-format directive standing where the value will be put in (`amqp://admin:%s@`,
# `%(password)s`, Go's `%v`): a template, as `{password}` and `${PASSWORD}` are.
_FORMAT_DIRECTIVE = re.compile(
    r"%(?:\([A-Za-z_]\w{0,63}\))?[-#0 +]?\d{0,3}(?:\.\d{1,3})?[sdifrvqx]"
)


def _reads_as_a_name(value: str) -> bool:
    """One character class only (``tidewater-db``, ``changeme``, ``12345678``): a name or a
    reference, not a credential. Applied to guessing detectors only."""
    classes = 0
    for test in (str.islower, str.isupper, str.isdigit):
        if any(test(c) for c in value):
            classes += 1
    if any(not c.isalnum() and c not in _WORD_PUNCTUATION for c in value):
        classes += 1
    return classes < 2


def _likely_id(value: str, line: str) -> bool:
    """detect-secrets' guess that a value is an id (`_id`, or `id` opening the text before
    it), read on the value's own pair of name and value: the line from the last `,`, `;`,
    `{` or `&` before the value (where it first occurs). On a one-line JSON document or a
    query string, another key's `user_id` earlier on the line says nothing about the value
    of `password`."""
    before = line[: line.find(value)]
    start = max(before.rfind(separator) for separator in ",;{&") + 1
    return heuristic.is_likely_id_string(value, line[start:])


def _glued(value: str, line: str) -> bool:
    """Every occurrence of ``value`` continues a run of letters and digits that holds a digit:
    a slice of a longer hash or base64 value (``...9544830376:c922...`` reads as a Telegram
    token), not a token of its own. A word before it (``bot123:AA...``) does not count.
    A value that is not on the line at all (a key block the rule set matched across lines)
    continues nothing."""
    start = line.find(value)
    if start == -1:
        return False
    while start != -1:
        run, limit = start, max(0, start - 64)
        while run > limit and line[run - 1].isascii() and line[run - 1].isalnum():
            run -= 1
        if not any(c.isdigit() for c in line[run:start]):
            return False
        start = line.find(value, start + 1)
    return True


def _filtered(value: str, line: str, guess: bool, *, uuid: bool = False, ids: bool = True) -> bool:
    """detect-secrets' heuristic filters, called directly (they are plain functions);
    ``uuid``: the format holds a UUID, so holding one says nothing; ``ids``: a guess after an
    id-like name (``user_id = ...``) is taken for an id. detect-secrets makes that last guess
    only for findings of no vendor pattern (keywords, generic rules), never for a regex
    plugin's: a password in a URL after ``session_id:`` is still a password."""
    if (not guess and _glued(value, line)) or in_data_uri(value, line):
        return True
    if (
        heuristic.is_sequential_string(value)
        or (not uuid and heuristic.is_potential_uuid(value))
        or heuristic.is_templated_secret(value)
        or _FORMAT_DIRECTIVE.fullmatch(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_not_alphanumeric_string(value)
    ):
        return True
    return guess and (
        (ids and _likely_id(value, line))
        or heuristic.is_indirect_reference(line)
        or _reads_as_a_name(value)
    )


# -- the scan ----------------------------------------------------------------------------


def _keyword_values(
    line: str, syntax: Syntax, assigned: list[int], compared: bool
) -> Iterator[str]:
    """KeywordDetector's patterns, anchored where a keyword is followed by an assignment
    (``assigned`` offsets) in bounded windows; the one comparison pattern (``"x" ==
    password``) only on lines that hold a comparison. That pattern, unlike the others, spells
    its keywords in lower case only: it reads the line folded (``"x" == DB_PASSWORD``), and
    the value is taken from the line as written, at the same offsets."""
    for regex, group in syntax.items():
        if regex is PRECEDED_BY_EQUAL_COMPARISON_SIGNS_QUOTES_REQUIRED_REGEX:
            if compared:
                folded = fold(line)
                for hit in _KEYWORD_GATE.finditer(line):
                    start = max(0, hit.start() - _KEYWORD_BEFORE)
                    match = regex.search(folded, start, hit.end())
                    if match:
                        yield line[match.start(group) : match.end(group)]
            continue
        for start in assigned:
            match = regex.match(line, start, start + _KEYWORD_AFTER)
            if match:
                yield match.group(group)


def _matches(plugin: BasePlugin, segment: str) -> Iterator[tuple[str, str]]:
    """(value, material) pairs: the value detect-secrets' filters judge, and what the
    fingerprint is taken over.

    ``RegexBasedDetector.analyze_string`` yields each pattern's non-empty groups, which is
    the secret for assignment patterns (AWS, basic auth) but only the *prefix* for GitHub's
    ``(ghp|gho|...)_...`` and GitLab's ``(glpat|...)-...`` (so every GitHub token would
    share one fingerprint), and nothing at all for ``glcbt-`` tokens whose optional group
    is empty. Here a group that merely starts the match gives way to the whole match, and
    a match without groups is its own value.
    """
    if (
        not isinstance(plugin, RegexBasedDetector)
        or type(plugin).analyze_string is not RegexBasedDetector.analyze_string
    ):
        for value in plugin.analyze_string(segment):  # JWT: its own validity check
            yield value, value
        return
    for regex in plugin.denylist:
        for match in regex.finditer(segment):
            whole = match.group(0)
            groups = [group for group in match.groups() if group]
            if not groups:
                yield whole, whole
            for group in groups:
                yield group, whole if whole.startswith(group) else group


def _segments(line: str, offsets: list[int]) -> list[str]:
    """The line itself, or for a long line, overlapping windows around the offsets."""
    if len(line) <= _LONG_LINE:
        return [line]
    keys = sorted({offset // _WINDOW_STEP for offset in offsets})
    return [
        line[max(0, key * _WINDOW_STEP - _WINDOW_REACH) : (key + 1) * _WINDOW_STEP + _WINDOW_REACH]
        for key in keys
    ]


def find(text: str, path: str | None, *, inline_allowlist: bool) -> list[Candidate]:
    """Every candidate secret in ``text``, by 1-based line; raw values, for hashing only."""
    doc = ScannedText(text)
    found: list[Candidate] = []
    allowed: dict[int, bool] = {}

    def is_allowed(index: int) -> bool:
        if not inline_allowlist:
            return False
        if index not in allowed:
            context = get_code_snippet(doc.all_lines(), index + 1)
            allowed[index] = allowlist.is_line_allowlisted(path or "", doc.line(index), context)
        return allowed[index]

    for detector in DETECTORS:
        if detector.needles is not None:
            hits = doc.hits(detector.needles, detector.folded)
        elif detector.gate is not None:
            hits = doc.gated(detector.gate, detector.folded)
        else:
            # Patterns without needles cannot span lines, so the whole-text matches are the
            # lines' matches: only the lines holding one are scanned again, line by line.
            values = tuple({value for value, _ in _matches(detector.plugin, text)})
            if not values:
                continue
            hits = doc.hits(values, False)
        for index, offsets in hits.items():
            line = doc.line(index)
            block = None  # a private key is the block its header opens, when it holds a key
            if detector.kind == _PRIVATE_KEY:
                block = private_key_block(doc.all_lines(), index)
                if not private_key_has_body(block):
                    continue
            for segment in _segments(line, offsets) if detector.windowed else [line]:
                # in the order found (a set would order them by hash, differently per process)
                for value, material in dict.fromkeys(_matches(detector.plugin, segment)):
                    if (
                        _filtered(value, segment, detector.guess, uuid=detector.uuid, ids=False)
                        or (detector.check is not None and not detector.check(value))
                        or is_allowed(index)
                    ):
                        continue
                    if block is not None:
                        material = block
                    elif is_placeholder(value) or is_placeholder(material):
                        continue
                    found.append(Candidate(detector.kind, index + 1, material, detector.guess))

    for kind, number, value, guess in secrets_rules.matches(text):
        index = number - 1  # the rule set counts lines by "\n" alone, as raw_lines does
        line = doc.line(index)
        if is_placeholder(value) or is_allowed(index) or _filtered(value, line, guess):
            continue
        if "PRIVATE KEY" in value + line:
            # a key is its block, whichever detector found it: fingerprinted the same way
            # (one finding where the named detector found it too), and only with a body
            value = private_key_block(doc.all_lines(), index)
            if not private_key_has_body(value):
                continue
        found.append(Candidate(kind, number, value, guess, rule_set=True))

    for offset, value in assigned_values(text, doc.folded):
        index = bisect_right(doc.starts, offset) - 1
        # The value's own shape was judged by credential_like, and its name by other_name
        # (an id's name included); of the line-level heuristics none applies: an indirect
        # reference on the line (`App(api_key="...")`) says nothing about a quoted value, and
        # another key's id before it (`{"user_id": 7, "token": "..."}`) nothing either.
        if is_allowed(index) or heuristic.is_sequential_string(value):
            continue
        found.append(Candidate(ASSIGNED_KIND, index + 1, value, True))

    assigned = doc.gated(_KEYWORD_ASSIGNED, True)
    compared: Set[int] = doc.hits(("==", "!="), False).keys()
    if compared:
        compared = compared & doc.hits(_KEYWORD_NEEDLES, True).keys()
    if assigned or compared:
        syntaxes = SyntaxMap(text, doc.raw_lines, doc.starts, path)
        for index in sorted(assigned.keys() | compared):
            line = doc.line(index)
            keyword_values = _keyword_values(
                line, syntaxes.of(index), assigned.get(index, []), index in compared
            )
            for value in dict.fromkeys(keyword_values):
                if _filtered(value, line, True) or is_placeholder(value) or is_allowed(index):
                    continue
                found.append(Candidate(KEYWORD_KIND, index + 1, value, True))
    return found
