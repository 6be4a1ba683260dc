"""The stemmer in use gives exactly the stems of Snowball's pure-Python English stemmer.

snowballstemmer hands ``stemmer("english")`` to PyStemmer (the same Snowball algorithm,
compiled) when it is installed, which spares every search the import of the pure-Python
stemmers of all its languages. A stem that differed would change what the search index
holds and how a question matches it, so the two are compared word for word: every word of
the sample tree and the search page, each also with suffixes the algorithm's steps remove.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import SAMPLE
from snowballstemmer.english_stemmer import EnglishStemmer

from contextfs.text import analysis

DOCS = Path(__file__).resolve().parents[3] / "docs"
#: Endings that reach each step of the English algorithm (plurals, -ed/-ing, -ly, the
#: derivational suffixes); a run over 4.5 million words and forms found no difference either.
SUFFIXES = ("", "s", "ies", "'s", "ed", "ingly", "ly", "ness", "ational", "ization", "ement", "ful")


def _vocabulary() -> set[str]:
    words: set[str] = set()
    for folder in (SAMPLE, DOCS / "search.md"):
        for path in (folder,) if folder.is_file() else folder.rglob("*.md"):
            words.update(analysis.words(path.read_text(encoding="utf-8")))
    words.update(analysis.STOP_WORDS, analysis.VARIANTS, analysis.VARIANTS.values())
    # Exceptional words of the algorithm, and forms that only the first steps see.
    words.update(
        "skis skies dying lying tying idly gently ugly early only singly sky news howe atlas "  # noqa: SIM905
        "cosmos bias andes inning outing canning herring earring proceed exceed succeed "
        "generate generous generously arsenal communism communication universe united "
        "'' ' a aa y yy ying yes".split()
    )
    return words


def test_the_stemmer_in_use_gives_snowballs_english_stems() -> None:
    reference = EnglishStemmer()
    words = sorted(
        {w + s for w in _vocabulary() for s in SUFFIXES if re.fullmatch(r"[a-z']+", w) or not s}
    )
    assert len(words) > 20_000  # the comparison covers a real vocabulary
    differ = [
        (w, analysis.stem(w), reference.stemWord(w))
        for w in words
        if analysis.stem(w) != reference.stemWord(w)
    ]
    assert differ == []
