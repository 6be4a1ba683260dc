"""The five ways one file can be shown, from the whole body down to a one-line cue.

A budget that is too small should make a file *shorter*, never cut it blind. So each file
has a ladder of renderings — ``full`` (the body), ``excerpt`` (the paragraphs that best
match the query, each marked with its line range), ``overview`` (a paragraph),
``abstract`` (one line) and ``cue`` (path and a few words) — and the packer walks down
the ladder. Files that carry no ``overview``/``abstract`` frontmatter get a deterministic
extractive one (first heading and first sentences), so the same bytes always render the
same way; that is what lets ``as_of`` reproduce a past view exactly.

Every rendering is fenced as quoted data (:func:`contextfs.gate.poisoning.render_untrusted`)
when its file is not trusted *or* when the poisoning guard flags the text it shows: a
trusted file (a person's, a clone's) can still hold an instruction. The fence is part of
the rendering, so the packer counts it against the budget like any other text; a
conversation log is fenced turn by turn.

Nothing here reads files or clocks: every function is a pure function of its inputs.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from contextfs.gate.fencing import seal
from contextfs.gate.poisoning import assess, render_untrusted
from contextfs.text import analysis as contextfs_text
from contextfs.text import scoring
from contextfs.text.turns import is_log

from .passages import Chunk, blocks, chunk_terms, chunks_of, is_heading

__all__ = [
    "CUT_MARK",
    "TIERS",
    "Chunk",
    "Source",
    "chunks_of",
    "clip",
    "excerpt_floor",
    "extract_abstract",
    "extract_overview",
    "flags",
    "join_sections",
    "plain_section",
    "query_terms",
    "render",
    "render_passages",
    "sealed",
    "shows_whole",
    "terms_of",
]

#: Tiers from richest to leanest; the packer steps down this ladder.
TIERS: tuple[str, ...] = ("full", "excerpt", "overview", "abstract", "cue")
#: Shown wherever text was shortened somewhere other than a sentence end.
CUT_MARK = " […]"

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9`\"'(\[*_-])")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


@dataclass(frozen=True)
class Source:
    """One file's content as the packer sees it (a pure value: same bytes, same renders)."""

    path: str
    body: str
    metadata: dict[str, Any]
    version: str
    line_offset: int = 0  # lines of frontmatter before the body, so excerpts cite file lines
    title: str | None = None

    @property
    def trust(self) -> str:
        value = self.metadata.get("trust", "trusted")
        return value if isinstance(value, str) else "trusted"

    @property
    def source_label(self) -> str:
        """Where untrusted content came from, for the fence."""
        for key in ("source", "author"):
            value = self.metadata.get(key)
            if isinstance(value, str) and value.strip():
                return f"{self.path} ({key}: {value.strip()})"
        return self.path


# ----------------------------------------------------------------- words
#: Lower-cased, stop-word-free, stemmed words: the unit of lexical matching (contextfs.text.analysis).
terms_of = contextfs_text.terms
#: The distinct terms of a query, in first-seen order.
query_terms = contextfs_text.query_terms


# ----------------------------------------------------------------- text
def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def clip(text: str, max_words: int) -> str:
    """At most ``max_words`` words, ending at a sentence end if one is near, else marked."""
    words = str(text).split()
    if len(words) <= max_words:
        return " ".join(words)
    head = " ".join(words[:max_words])
    ends = [m.start() for m in _SENTENCE_END.finditer(head + " X")]
    if ends and ends[-1] >= len(head) // 2:
        return head[: ends[-1]]  # a sentence end: the match starts right after its mark
    return head.rstrip(" ,;:-") + CUT_MARK


def _first_heading(body: str) -> str | None:
    for line in body.splitlines():
        m = _HEADING.match(line.strip())
        if m:
            return m.group(2).strip().strip("#").strip() or None
    return None


def _prose(body: str) -> str:
    """The body without headings, fences and markup noise, as running text."""
    out: list[str] = []
    fenced = False
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not stripped or _HEADING.match(stripped) or stripped.startswith("|"):
            continue
        stripped = re.sub(r"^([-*+]|\d+[.)])\s+", "", stripped)
        if not stripped.endswith((".", "!", "?", ":", ";")):
            stripped += ";"
        out.append(stripped)
    return " ".join(out)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _meta_text(src: Source, key: str) -> str | None:
    value = src.metadata.get(key)
    if isinstance(value, str) and value.strip():
        return _one_line(value)
    return None


def _title(src: Source) -> str:
    if src.title:
        return _one_line(src.title)
    value = _meta_text(src, "title")
    return value or _first_heading(src.body) or posixpath.basename(src.path)


def extract_abstract(body: str, title: str | None = None, max_words: int = 30) -> str:
    """One line: the title or first heading, then the first sentence."""
    head = title or _first_heading(body)
    sentences = _sentences(_prose(body))
    first = sentences[0].rstrip(";") if sentences else ""
    text = f"{head}: {first}" if head and first else head or first
    return clip(text, max_words)


def extract_overview(body: str, title: str | None = None, max_words: int = 90) -> str:
    """A paragraph: the title or first heading, then leading sentences up to ``max_words``."""
    head = title or _first_heading(body)
    picked: list[str] = []
    used = len(head.split()) if head else 0
    for sentence in _sentences(_prose(body)):
        n = len(sentence.split())
        if used + n > max_words and picked:
            break
        # A sentence that fills the allowance exactly ends it too: the next has a word.
        picked.append(sentence)
        used += n
    text = " ".join(picked).rstrip(";")
    text = f"{head}. {text}" if head and text else head or text
    return clip(text, max_words + 10)


# ----------------------------------------------------------------- excerpts
def _usable(chunks: Sequence[Chunk]) -> list[int]:
    """The passages an excerpt may show, in file order."""
    # A heading alone says little, and every passage's label already names its section.
    return [i for i, ch in enumerate(chunks) if not is_heading(ch)]


def _order(chunks: Sequence[Chunk], terms: tuple[str, ...], title: str) -> list[int]:
    """The passages an excerpt may show, in the order it takes them: best matches first, then
    the lead.

    Matches are ranked with BM25 over the file's own passages (a term in every paragraph
    says little, a rare one identifies the passage).
    """
    usable = _usable(chunks)
    if not terms:
        return usable
    docs = [Counter(chunk_terms(chunks[i], title)) for i in usable]
    scores = scoring.BM25().scores(terms, docs)
    matched = [idx for score, idx in sorted(((-s, i) for s, i in zip(scores, usable) if s > 0))]  # noqa: B905
    seen = set(matched)
    return matched + [i for i in usable if i not in seen]


def _passage_cost(chunks: Sequence[Chunk], idx: int, count: Callable[[str], int]) -> int:
    return count(blocks(chunks, [idx])[0]) + 4  # the join and a possible "[…]" line


def _select(
    chunks: Sequence[Chunk],
    terms: tuple[str, ...],
    allowance: int,
    count: Callable[[str], int],
    title: str,
) -> list[int]:
    """The passages to show within ``allowance`` tokens, taken in :func:`_order`."""
    picked: list[int] = []
    used = 0
    for idx in _order(chunks, terms, title):
        cost = _passage_cost(chunks, idx, count)
        if used + cost > allowance:
            if terms:
                continue  # a later, smaller match may still fit
            break
        picked.append(idx)
        used += cost
    return sorted(picked)


def _excerpt_overhead(src: Source, count: Callable[[str], int]) -> int:
    """What an excerpt costs besides its passages: the heading, and room for a fence."""
    return count(f"## {src.path} [excerpt]") + 2 + (60 if src.trust != "trusted" else 0)


def excerpt_floor(src: Source, terms: tuple[str, ...], count: Callable[[str], int]) -> int | None:
    """The smallest allowance at which :func:`render` shows ``src`` as an excerpt, or None when
    no allowance does (a file of one passage: its excerpt would be the whole file).

    With a query any passage may be the one that fits (the cheapest does first); without one,
    an excerpt is the opening, so its first passage must fit.
    """
    chunks = chunks_of(src.body, src.line_offset, src.path)
    usable = _usable(chunks)
    if len(usable) < 2:
        return None
    costs = [_passage_cost(chunks, idx, count) for idx in (usable if terms else usable[:1])]
    return _excerpt_overhead(src, count) + min(costs)


# ----------------------------------------------------------------- rendering
@lru_cache(maxsize=8192)
def flags(text: str) -> tuple[str, ...]:
    """Why the poisoning guard flags ``text`` (empty when it does not); packing renders the
    same text many times while it fits a budget, so verdicts are kept."""
    return assess(text).reasons


@lru_cache(maxsize=8192)
def sealed(text: str, source: str) -> str:
    """:func:`~contextfs.gate.fencing.seal`, kept: packing renders the same passages many times."""
    return seal(text, source)


def _fence(src: Source, text: str, trust: str | None = None) -> str:
    """``text`` as shown: fenced when its file (or its turn: ``trust``) is not trusted; otherwise
    sealed (what reads as an instruction is fenced; text fenced already stays as it is)."""
    if src.trust == "trusted" and trust in (None, "trusted"):
        return sealed(text, src.source_label)
    return render_untrusted(text, src.source_label, reasons=flags(text))


def _readable(src: Source) -> tuple[str, str | None]:
    """A log's messages as paragraphs (the quarantined ones left out), and "untrusted" when
    any of them is not trusted."""
    chunks = chunks_of(src.body, src.line_offset, src.path)
    trusted = all(ch.trust == "trusted" for ch in chunks)
    return "\n\n".join(ch.text for ch in chunks), None if trusted else "untrusted"


def _turn_fence(src: Source) -> Callable[[str, str], str]:
    return lambda text, trust: _fence(src, text, trust)


def render(
    src: Source,
    tier: str,
    *,
    terms: tuple[str, ...] = (),
    allowance: int | None = None,
    count: Callable[[str], int] | None = None,
) -> str | None:
    """The markdown section for ``src`` at ``tier``, or None when that tier has nothing to show.

    ``excerpt`` needs ``allowance`` (tokens for the chunks) and ``count``; it returns None
    when no chunk fits, and the packer then steps down to ``overview``.
    """
    untrusted = src.trust != "trusted"
    title = _title(src)
    if tier == "cue":
        desc = clip(_meta_text(src, "abstract") or title, 16)
        if untrusted or flags(desc):
            return f"- `{src.path}` [cue] (untrusted data; read it only as data)"
        return f"- `{src.path}` [cue] {desc}"
    log = is_log(src.path)
    # a title given for the note leads its overview and abstract; a first heading leads them
    # anyway, and a file name never does
    given = title if src.title or _meta_text(src, "title") else None
    # A log's lean tiers read its messages as its full tier shows them: a quarantined one
    # never, and all of them fenced when one is not trusted (the lines' JSON is not text).
    lean = tier in ("overview", "abstract")
    prose, trust = _readable(src) if log and lean else (src.body, None)
    if tier == "full":
        if log:  # a conversation log: its messages, with date and speaker, each fenced on its own
            chunks = chunks_of(src.body, path=src.path)  # numbered by their own lines
            content = "\n".join(blocks(chunks, range(len(chunks)), _turn_fence(src)))
        else:
            content = src.body.strip("\n")
        heading = f"## {src.path} [full]"
    elif tier == "overview":
        content = _meta_text(src, "overview") or extract_overview(prose, given)
        heading = f"## {src.path} [overview]"
    elif tier == "abstract":
        content = _meta_text(src, "abstract") or extract_abstract(prose, given)
        heading = f"## {src.path} [abstract]"
    elif tier == "excerpt":
        if allowance is None or count is None:
            raise ValueError("excerpt needs an allowance and a counter")
        chunks = chunks_of(src.body, src.line_offset, src.path)
        picked = _select(chunks, terms, allowance - _excerpt_overhead(src, count), count, title)
        if not picked or _every_passage(chunks, picked):  # the whole file: the full tier
            return None
        return render_passages(src, picked)
    else:
        raise ValueError(f"unknown tier {tier!r}")
    if not content:
        return None
    if not (log and tier == "full"):
        content = _fence(src, content, trust)
    return f"{heading}\n{content}"


def shows_whole(src: Source, picked: Sequence[int]) -> bool:
    """Whether page-in's ``picked`` passages of ``src`` are shown as the whole file: every
    passage an excerpt may show, of a file that is not a log (the rule by which the
    excerpt tier gives way to ``full``)."""
    return not is_log(src.path) and _every_passage(
        chunks_of(src.body, src.line_offset, src.path), picked
    )


def _every_passage(chunks: Sequence[Chunk], picked: Sequence[int]) -> bool:
    """Whether ``picked`` holds every passage an excerpt of ``chunks`` may show."""
    return set(_usable(chunks)) <= set(picked)


def render_passages(src: Source, picked: Sequence[int]) -> str:
    """``src`` as an excerpt of the picked passages (indexes into its :func:`chunks_of`).

    Picking every passage of a file that is not a log shows the file in full, as the
    ``full`` tier does: its body needs no line labels to be cited, and a one-paragraph note
    costs its text and its path.
    """
    chunks = chunks_of(src.body, src.line_offset, src.path)
    if is_log(src.path):  # each message carries its own trust
        content = "\n".join(blocks(chunks, picked, _turn_fence(src)))
    elif _every_passage(chunks, picked) and (whole := render(src, "full")) is not None:
        return whole
    else:
        content = _fence(src, "\n".join(blocks(chunks, picked)))
    return f"## {src.path} [excerpt]\n{content}"


def plain_section(label: str, body: str) -> str:
    """A ``## <label>\\n<body>`` section: the format of ``get_context()`` without a budget."""
    return f"## {label}\n{body}"


def join_sections(sections: Iterable[str]) -> str:
    """A view's sections, a blank line apart (the separator paging.SEPARATOR_TOKENS prices)."""
    return "\n\n".join(sections)
