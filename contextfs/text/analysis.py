"""The text rules every ranker reads a text by, in one place: words, normalisation, stop words, stems.

The search index's analyzer, page-in, archival and conversation memory, duplicate
detection, topic detection and the evolving agent's hygiene all ask this module what a
word is and how two texts compare, so a question is read the same way everywhere:

* **a word** is a run of letters and digits (``[^\\W_]+``), with inner dots kept so
  ``v1.2.3``, ``4.5`` and ``e.g`` stay one word; underscores, hyphens and apostrophes
  separate words (``dead-letter`` is two, ``Caroline's`` is ``caroline`` + ``s``);
* **normalised** means NFKC-folded and case-folded, so full-width letters and case never
  make two texts differ;
* **stop words** are English function words *and question words* ("what", "did", "how",
  "when", ...): an agent's question ranks by what it asks about, not by how it asks;
* **terms** are normalised words that are not stop words, at least two characters long
  (single digits count: "7 May"), at most 40, reduced to their Snowball (Porter2) stem so
  ``retries`` meets ``retry`` and ``nightly`` meets ``night``; an irregular past form is
  read as its verb first (``met`` meets ``meet``, ``bought`` meets ``buy``: :data:`PAST_FORMS`);
* **forms**: a word whose stem is not the word itself (``visited``) is also kept as it was
  written (``=visited``, :func:`forms`), in the body only; a question's words match their
  own form at :data:`EXACT_WEIGHT`, so "visited" ranks "I visited Mexico" above the many
  "I want to visit ...": the stem finds, the form breaks the tie;
* how texts are scored against a question (BM25, neighbours, who and when, the tie order)
  is :mod:`contextfs.text.scoring`.

Changing a rule here changes what the search index holds: the index's schema fingerprint
includes :data:`RULES_VERSION`, so existing indexes are rebuilt.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable

import snowballstemmer

__all__ = [
    "EXACT_WEIGHT",
    "FORM_MARK",
    "INTERJECTIONS",
    "MAX_TERM_CHARS",
    "PAST_FORMS",
    "QUOTED_WEIGHT",
    "RULES_VERSION",
    "STOP_WORDS",
    "VARIANTS",
    "WORD",
    "address_names",
    "content_words",
    "fingerprint",
    "forms",
    "names_in",
    "normalize",
    "query_forms",
    "query_terms",
    "quoted",
    "raw_words",
    "stem",
    "term",
    "term_counts",
    "term_weights",
    "terms",
    "words",
]

#: Bump when any rule below changes what a text's terms are (the search index rebuilds).
RULES_VERSION = 4
#: What a word is, before normalisation.
WORD = re.compile(r"[^\W_]+(?:\.[^\W_]+)*", re.UNICODE)
MAX_TERM_CHARS = 40

STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just let lets me more most my myself no nor not now of off on once only or other
    our ours ourselves out over own please same shall she should so some someone such than that
    the their theirs them themselves then there these they this those through to too under
    until up upon us very via was we were what whatever when whenever where whereas wherever
    whether which while who whoever whom whose why will with would yet you your yours yourself
    yourselves per tbd might must many much every ever
    don didn doesn isn aren wasn weren haven hasn hadn won wouldn couldn shouldn ll ve re
    """.split()  # noqa: SIM905 - a word list reads better as text
)

#: Short forms people type for a longer word, read as that word in texts and queries alike,
#: so ``postgres`` finds "PostgreSQL" and "Database" is found by ``DB`` (and the other way
#: round). Only forms with one usual meaning in notes about software and work; an ambiguous
#: one (``auth``: authentication or authorization?) is left as written. Prefixes are the
#: query's own business (``postg*``) and compounds stay one word (``PostgreSQL``).
VARIANTS: dict[str, str] = {
    "db": "database",
    "dbs": "databases",
    "postgres": "postgresql",
    "pg": "postgresql",
    "mongo": "mongodb",
    "k8s": "kubernetes",
    "js": "javascript",
    "ts": "typescript",
    "py": "python",
    "repo": "repository",
    "repos": "repositories",
    "config": "configuration",
    "configs": "configurations",
    "cfg": "configuration",
    "env": "environment",
    "envs": "environments",
    "prod": "production",
    "docs": "documentation",
    "msg": "message",
    "msgs": "messages",
    "info": "information",
    "infra": "infrastructure",
    "app": "application",
    "apps": "applications",
    "dept": "department",
    "mgmt": "management",
}

#: Irregular past tenses and past participles, read as their verb, so "When did she meet
#: ..." finds "I met ..." as "retried" finds "retry" (a stemmer only strips regular endings).
#: Forms that are as often another word are left out: "left" (a side), "saw" and "bit"
#: (nouns), "rose" and "ground", "wound", "lay" and "lie", "bore"; "went" and "gone", whose
#: verb "go" is also the Go language and the GO of "CS:GO"; "won" is a stop word (the "won't"
#: of a split contraction).
PAST_FORMS: dict[str, str] = {
    form: verb
    for verb, written in (
        ("arise", "arose arisen"),
        ("awake", "awoke awoken"),
        ("become", "became"),
        ("begin", "began begun"),
        ("bend", "bent"),
        ("bite", "bitten"),
        ("bleed", "bled"),
        ("blow", "blew blown"),
        ("break", "broke broken"),
        ("breed", "bred"),
        ("bring", "brought"),
        ("build", "built"),
        ("burn", "burnt"),
        ("buy", "bought"),
        ("catch", "caught"),
        ("choose", "chose chosen"),
        ("come", "came"),
        ("creep", "crept"),
        ("deal", "dealt"),
        ("dig", "dug"),
        ("draw", "drew drawn"),
        ("dream", "dreamt"),
        ("drink", "drank drunk"),
        ("drive", "drove driven"),
        ("eat", "ate eaten"),
        ("fall", "fell fallen"),
        ("feed", "fed"),
        ("feel", "felt"),
        ("fight", "fought"),
        ("find", "found"),
        ("flee", "fled"),
        ("fly", "flew flown"),
        ("forget", "forgot forgotten"),
        ("forgive", "forgave forgiven"),
        ("freeze", "froze frozen"),
        ("get", "got gotten"),
        ("give", "gave given"),
        ("grow", "grew grown"),
        ("hang", "hung"),
        ("hear", "heard"),
        ("hide", "hid hidden"),
        ("hold", "held"),
        ("keep", "kept"),
        ("kneel", "knelt"),
        ("know", "knew known"),
        ("lead", "led"),
        ("leap", "leapt"),
        ("learn", "learnt"),
        ("lend", "lent"),
        ("lose", "lost"),
        ("make", "made"),
        ("mean", "meant"),
        ("meet", "met"),
        ("mistake", "mistook mistaken"),
        ("overcome", "overcame"),
        ("pay", "paid"),
        ("rebuild", "rebuilt"),
        ("ride", "rode ridden"),
        ("ring", "rang rung"),
        ("rise", "risen"),
        ("run", "ran"),
        ("say", "said"),
        ("see", "seen"),
        ("seek", "sought"),
        ("sell", "sold"),
        ("send", "sent"),
        ("shake", "shook shaken"),
        ("shine", "shone"),
        ("shoot", "shot"),
        ("show", "shown"),
        ("shrink", "shrank shrunk"),
        ("sing", "sang sung"),
        ("sink", "sank sunk"),
        ("sit", "sat"),
        ("sleep", "slept"),
        ("slide", "slid"),
        ("speak", "spoke spoken"),
        ("speed", "sped"),
        ("spend", "spent"),
        ("spin", "spun"),
        ("spring", "sprang sprung"),
        ("stand", "stood"),
        ("steal", "stole stolen"),
        ("stick", "stuck"),
        ("sting", "stung"),
        ("strike", "struck"),
        ("swear", "swore sworn"),
        ("sweep", "swept"),
        ("swim", "swam swum"),
        ("swing", "swung"),
        ("take", "took taken"),
        ("teach", "taught"),
        ("tear", "tore torn"),
        ("tell", "told"),
        ("think", "thought"),
        ("throw", "threw thrown"),
        ("undertake", "undertook undertaken"),
        ("understand", "understood"),
        ("wake", "woke woken"),
        ("wear", "wore worn"),
        ("weep", "wept"),
        ("withdraw", "withdrew withdrawn"),
        ("write", "wrote written"),
    )
    for form in written.split()
}

_STEMMER = snowballstemmer.stemmer("english")
_STEM_LOCK = threading.Lock()
#: word (already case-folded) -> term, or None for a word that is not a term.
_TERMS: dict[str, str | None] = {}
_TERMS_LIMIT = 500_000


def normalize(text: str) -> str:
    """NFKC-folded, case-folded text: the form every comparison works on."""
    return unicodedata.normalize("NFKC", text).casefold()


def raw_words(text: str) -> list[str]:
    """The words of ``text`` in order, as written (case kept)."""
    return WORD.findall(text)


def words(text: str) -> list[str]:
    """The normalised words of ``text`` in order, stop words included."""
    return WORD.findall(normalize(text))


def content_words(text: str) -> list[str]:
    """:func:`words` without stop words: the words that carry meaning (not stemmed)."""
    return [w for w in words(text) if w not in STOP_WORDS]


def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word."""
    with _STEM_LOCK:  # the pure-Python stemmer keeps state between calls
        return _STEMMER.stemWord(word)


def term(word: str) -> str | None:
    """The term for one case-folded word, or None when it is not a term (stop word, size)."""
    got = _TERMS.get(word, "")
    if got != "":
        return got
    norm = word if word.isascii() else unicodedata.normalize("NFKC", word).casefold()
    size = len(norm)
    if norm in STOP_WORDS or size > MAX_TERM_CHARS or (size < 2 and not norm.isdigit()):
        out: str | None = None
    else:
        out = stem(VARIANTS.get(norm) or PAST_FORMS.get(norm, norm))
    if len(_TERMS) > _TERMS_LIMIT:
        _TERMS.clear()
    _TERMS[word] = out
    return out


def terms(text: str) -> list[str]:
    """The terms of ``text`` in order: the unit every ranker matches on."""
    out = []
    for word in WORD.findall(text.casefold()):
        found = term(word)
        if found is not None:
            out.append(found)
    return out


#: What marks a word kept as written (see :func:`forms`); never part of a word or a stem.
FORM_MARK = "="
#: How much a question's word counts when it also matches the word as written, beyond its stem.
EXACT_WEIGHT = 0.25


def _form(word: str, found: str) -> str | None:
    """``=word`` for a term whose stem differs from the (normalised) word, else None."""
    norm = word if word.isascii() else unicodedata.normalize("NFKC", word).casefold()
    return None if norm == found else FORM_MARK + norm


def forms(text: str) -> list[str]:
    """The words of ``text`` whose stem differs from them, as written (``=visited``), in order."""
    out = []
    for word in WORD.findall(text.casefold()):
        found = term(word)
        if found is not None:
            form = _form(word, found)
            if form is not None:
                out.append(form)
    return out


def term_counts(text: str, *, with_forms: bool = False) -> dict[str, int]:
    """How often each term occurs in ``text`` (the same as counting :func:`terms`), and
    with ``with_forms`` each of its :func:`forms` too.

    Words are counted first (in C, by ``Counter``) and turned into terms once per
    distinct word, so the loop runs over a text's vocabulary, not over every word.
    """
    out: dict[str, int] = {}
    for word, n in Counter(WORD.findall(text.casefold())).items():
        found = term(word)
        if found is not None:
            out[found] = out.get(found, 0) + n
            if with_forms:
                form = _form(word, found)
                if form is not None:
                    out[form] = out.get(form, 0) + n
    return out


def query_terms(text: str | None) -> tuple[str, ...]:
    """The distinct terms of a query, in first-seen order."""
    if not text:
        return ()
    return tuple(dict.fromkeys(terms(text)))


def query_forms(text: str | None) -> tuple[str, ...]:
    """The distinct :func:`forms` of a query, in first-seen order (they count :data:`EXACT_WEIGHT`)."""
    if not text:
        return ()
    return tuple(dict.fromkeys(forms(text)))


#: The words a question quotes count this many times as much as its other words
#: ('When did he start playing "TMNT Shredder's Revenge"?'): the quotes say what it is about.
QUOTED_WEIGHT = 2.0

_QUOTED = re.compile(r'"([^"]*)"')


def quoted(text: str | None) -> list[str]:
    """The spans of ``text`` between double quotes that pair up, left to right (an odd
    quote out is punctuation): the titles and exact words a question quotes."""
    return _QUOTED.findall(text) if text and '"' in text else []


def term_weights(text: str | None) -> dict[str, float]:
    """How much each term of a question counts beyond 1: the words it quotes count
    :data:`QUOTED_WEIGHT` times (a quoted span boosts, it never filters: a chat may spell
    the title it names otherwise)."""
    return {t: QUOTED_WEIGHT for span in quoted(text) for t in terms(span)}


#: Words that open or close a chat message without being anyone's name.
INTERJECTIONS: frozenset[str] = frozenset(
    """
    hey hi hello hiya yo dear thanks thank thx ty congrats congratulations cheers wow whoa oh ooh aw aww
    awww ouch ugh yay woohoo woo haha hahaha lol omg yeah yes yep yup yea no nope nah ok okay sure
    cool great awesome nice right well so hmm mmm mm exactly totally definitely absolutely agreed indeed
    morning night evening bye goodbye welcome sorry please true damn gosh phew man dude bro guys
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_GREETING = (
    r"(?i:thank\s+you|good\s+(?:morning|night|evening|luck)|see\s+you|love\s+you|"
    + "|".join(sorted(INTERJECTIONS, key=len, reverse=True))
    + ")"
)
_NAME = r"([A-Z][a-z]{1,19})"
#: A name that opens a message ("Hey Kate!", "Kate, ...", "Thanks Mel.") or closes it ("..., Kate?",
#: "How are you doing today Kate?").
_ADDRESS = (
    re.compile(rf"^\W*(?:{_GREETING}\W+)?{_NAME}\s*[,!?.](?!\w)"),
    re.compile(rf"(?:,|\b{_GREETING}|\w)\s+{_NAME}\s*[!?.]*[^\w]*$"),
)


def address_names(text: str) -> list[str]:
    """The capitalised words a message uses to address someone, as written: a name that
    opens it ("Hey Kate!") or closes it ("How are you doing today Kate?"). A guess per
    message; :func:`contextfs.text.turns.known_as` keeps only names used that way, for one
    person, again and again."""
    out: list[str] = []
    for pattern in _ADDRESS:
        m = pattern.search(text)
        if m and m.group(1) not in out and m.group(1).casefold() not in INTERJECTIONS:
            out.append(m.group(1))
    return out


def names_in(query: Iterable[str], names: Iterable[str]) -> set[str]:
    """The ``names`` (as given) that the query's terms name: a name is named by any of its
    terms ("Caroline's" names Caroline; "Smith" names "Anna Smith")."""
    wanted = set(query)
    return {name for name in names if wanted.intersection(terms(name))} if wanted else set()


def fingerprint(text: str) -> str:
    """A hash of the normalised words in order: case, width, punctuation and spacing do not matter."""
    return hashlib.sha1(" ".join(words(text)).encode("utf-8")).hexdigest()[:20]
