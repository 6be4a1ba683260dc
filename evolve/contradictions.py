"""Same subject, another value: a new fact that contradicts a live one, found without a model.

The facts step asks the model to say which old fact a new one supersedes, but a plain list
("- The API gateway now runs on port 9090") is an answer the docs accept, and it says
nothing about the old line. Left alone, a view would serve both "port 8080" and "port
9090" as current. So the plain cases are found here, by rule:

* the **values** of a fact are what changes when a fact is updated: numbers and versions
  (``8080``, ``3.13``, ``4.5``), quoted and code spans, addresses (URLs, ``@handles``,
  ``#channels``, paths with ``/``);
* its **subject** is the rest of its words, as :mod:`contextfs.text.analysis` reads them (stop words
  out, stems), less the words that only say a fact changed ("now", "currently", "moved"...);
* a ``Label: value`` line ("Database: PostgreSQL 16") has its label as its subject and the
  rest as its value (not for labels that annotate, "Note: ...", "Tip: ...").

A new fact contradicts an old one when both have values, their subjects are the same (and
not empty) and their values differ. Anything less certain is left for the model: a false
match would strike out a true fact, which is worse than keeping a stale one visible.
"""

from __future__ import annotations

import re

from contextfs.text import analysis as contextfs_text

__all__ = ["contradicts", "subject_and_values"]

#: Words that say a fact changed or holds now; they are not part of what the fact is about.
CHANGE_WORDS: frozenset[str] = frozenset(
    """
    now currently nowadays today instead anymore longer since moved changed switched updated
    new still actually again latest recently
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_VALUE = re.compile(
    r"`[^`]+`"  # code
    r"|\"[^\"]+\""  # quoted
    r"|\b[a-z][a-z0-9+.-]*://\S+"  # URLs
    r"|[@#][\w.-]+"  # handles, channels
    r"|(?<![\w.])[\w.-]*\d[\w.:/%-]*"  # numbers, versions, sizes, times (8080, 3.13, 4.5GB, v2, 10:30)
    r"|\S+/\S+",  # paths
    re.IGNORECASE,
)
_LABEL = re.compile(r"^\s*([^:\n]{1,40}?)\s*:\s+(\S.*)$")
#: Labels that annotate a line rather than name what it is about ("Note: ...", "Tip: ...").
_ANNOTATIONS = frozenset(
    {
        "note",
        "tip",
        "todo",
        "warning",
        "example",
        "reminder",
        "fyi",
        "update",
        "important",
        "fact",
        "lesson",
        "caveat",
        "nb",
        "ps",
    }
)
_CHANGE_TERMS = frozenset(t for t in (contextfs_text.term(w) for w in CHANGE_WORDS) if t)


def _clean(text: str) -> str:
    """The fact without list markers, emphasis or a trailing full stop."""
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", text.strip())
    return re.sub(r"[*_~]{1,2}", "", text).strip().rstrip(".;")


def subject_and_values(fact: str) -> tuple[frozenset[str], frozenset[str]]:
    """What a fact is about (terms) and the values it gives (normalised), as this module reads them."""
    text = _clean(fact)
    label = _LABEL.match(text)
    if (
        label
        and len(label.group(1).split()) <= 4
        and not _VALUE.fullmatch(label.group(1))
        and label.group(1).strip().casefold() not in _ANNOTATIONS
    ):
        subject = frozenset(contextfs_text.terms(label.group(1))) - _CHANGE_TERMS
        return subject, frozenset({" ".join(contextfs_text.words(label.group(2)))})
    values = frozenset(
        m.group().strip('`"').casefold().rstrip(".,;") for m in _VALUE.finditer(text)
    )
    rest = _VALUE.sub(" ", text)
    return frozenset(contextfs_text.terms(rest)) - _CHANGE_TERMS, values


def contradicts(old: str, new: str) -> bool:
    """True when ``new`` gives another value for the same subject as ``old`` (see the module doc)."""
    old_subject, old_values = subject_and_values(old)
    new_subject, new_values = subject_and_values(new)
    return (
        bool(old_subject)
        and old_subject == new_subject
        and bool(old_values)
        and bool(new_values)
        and old_values != new_values
    )
