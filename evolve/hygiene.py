"""Sentiment hygiene: memory keeps operational facts, not moods.

"Alex seemed frustrated with the Docker setup" tells the next session nothing it can act
on; "Docker setup is blocked on X" does. Before anything is persisted, text goes through
a deterministic filter: interjections, emoji and sentiment adverbs are stripped; a clause
that carries emotion and no operational content (no number, code, path, cause, error,
requirement) is dropped; "X was frustrated because Y" keeps Y. The filter only removes
words, never invents them, so it is safe to run on anything, and it is idempotent.

When a model is available, :func:`rewrite_with_model` asks it to turn the flagged items
into operational statements; its answer goes through the same filter again, so a
rewrite can never smuggle the mood back in.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from contextfs.errors import EvolveError
from contextfs.text.analysis import words

from . import prompts
from .llm import LanguageModel, ask
from .parsing import extract_json

__all__ = ["CleanResult", "clean", "is_emotional", "rewrite_with_model"]

log = logging.getLogger(__name__)

_EMOTION_WORDS = [
    r"frustrat\w*",
    r"annoy\w*",
    r"angr\w*",
    r"anger",
    r"upset\w*",
    r"furious",
    r"mad",
    r"sad\w*",
    r"unhappy",
    r"happ(?:y|ier|iest|ily)",
    r"excit\w*",
    r"thrill\w*",
    r"delight\w*",
    r"love[ds]?",
    r"loving",
    r"hate[ds]?",
    r"hating",
    r"worr\w*",
    r"anxi\w*",
    r"stress\w*",
    r"tired",
    r"exhaust\w*",
    r"disappoint\w*",
    r"reliev\w*",
    r"grateful",
    r"thankful",
    r"embarrass\w*",
    r"awful",
    r"terrible",
    r"horrible",
    r"dreadful",
    r"nightmare\w*",
    r"painful",
    r"pain",
    r"rough",
    r"miserable",
    r"ugh",
    r"wow",
    r"yay",
    r"phew",
    r"hooray",
    r"fun",
    r"enjoy\w*",
    r"glad",
    r"thrilled",
    r"scared",
    r"afraid",
    r"fear\w*",
    r"nervous",
    r"impatien\w*",
    r"irritat\w*",
    r"mood\w*",
    r"emotional\w*",
    r"tears",
    r"cry\w*",
    r"sigh\w*",
    r"hopeless\w*",
    r"desperat\w*",
    r"ecstatic",
    r"amazing",
    r"awesome",
    r"fantastic",
    r"wonderful",
    r"brutal",
    r"hellish",
    r"tedious",
    r"boring",
    r"bored",
    r"sucks?",
    r"sucked",
    r"grumpy",
    r"cranky",
    r"pissed",
    r"livid",
    r"overwhelm\w*",
    r"confus\w*",
    r"headache\w*",
    r"struggl\w*",
    r"rant\w*",
    r"great",
    r"nice",
    r"proud",
    r"crazy",
    r"insane",
    r"lovely",
]
_EMOTION = re.compile(r"\b(?:" + "|".join(_EMOTION_WORDS) + r")\b", re.I)
# Words that say how the writer feels about a fact, removable without changing it.
_ADVERB = re.compile(
    r"\b(?:unfortunately|sadly|thankfully|luckily|fortunately|frustratingly|annoyingly|"
    r"hopefully|honestly|frankly|happily|mercifully|painfully|finally|ugh|wow|phew|yay|oh|"
    r"of course|needless to say)\b\s*,?\s*",
    re.I,
)
_EMOJI = re.compile(
    "[\U0001f300-\U0001faff\U00002600-\U000027bf\U0001f000-\U0001f2ff\u2190-\u21ff\ufe0f\u200d]+"
)
_EMOTICON = re.compile(r"(?<!\w)(?::-?[()DPp/]|;-?\)|<3|\^_\^)(?!\w)")
_PAREN = re.compile(r"\s*\(([^()]*)\)")
# Content that makes a clause operational: it can be acted on or checked.
_OPERATIONAL = re.compile(
    r"\d|`|[\w-]+\.(?:py|js|ts|sh|md|toml|yaml|yml|json|sql|go|rs|cfg|ini|lock)\b|/\w|\w_\w|"
    r"\b(?:because|caused?|root cause|due to|blocked|blocks|fails?|failed|failing|error|exception|"
    r"timeout|timed out|requires?|required|needs?|must|should|crash\w*|broke|broken|bug|"
    r"fixed|fix|leak\w*|deadlock\w*|race condition|missing|deprecated|version|limit|config\w*|"
    r"returns?|raises?|throws?|uses?|runs?|depends?|lock\w*|port|flag|env\w*|permission\w*|"
    r"denied|refus\w*|rejects?|rejected|slow\w*|latency|memory|cpu|disk|queue\w*|retry|retries)\b",
    re.I,
)
_BECAUSE = re.compile(
    r"^(?P<who>.*?)\b(?:was|were|is|are|got|get|gets|seemed|seems|felt|feels|looked|looks|became|been)\s+"
    r"(?:\w+\s+){0,2}?(?P<emo>\w+)\s+(?:because|since|as|that)\s+(?P<rest>.+)$",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")
_CLAUSE = re.compile(r"(,\s+|;\s+|\s+[—–]\s+|\s+-\s+)")


@dataclass(frozen=True)
class CleanResult:
    """The text as it may be persisted (None: nothing operational was left)."""

    text: str | None
    changed: bool
    dropped: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return self.changed or self.text is None


def is_emotional(text: str) -> bool:
    """True when ``text`` carries emotional colouring the filter would remove."""
    return bool(
        _EMOTION.search(text)
        or _EMOJI.search(text)
        or _EMOTICON.search(text)
        or "!" in text
        or _ADVERB.search(text)
    )


def _clause_keeps(clause: str) -> bool:
    return not _EMOTION.search(clause) or bool(_OPERATIONAL.search(_EMOTION.sub("", clause)))


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,;:—–-")
    text = re.sub(r"(?<!\d)\s+([,.;:])", r"\1", text)  # "8000 ." must not become a list item
    text = re.sub(r"[.]{2,}$", ".", text)
    if text and text[0].islower() and not text.startswith(("`", "e.g", "i.e")):
        text = text[0].upper() + text[1:]
    return text


def _clean_sentence(sentence: str, dropped: list[str]) -> str:
    if not is_emotional(sentence):
        return sentence.strip()
    s = _EMOJI.sub("", sentence)
    s = _EMOTICON.sub("", s)
    s = re.sub(r"\s*!+\s*$", ".", s)  # a final "!" ends the sentence plainly
    s = re.sub(r"\s*!+", "", s)  # one inside it is just emphasis
    s = re.sub(r"\?\.", "?", s)

    def paren(m: re.Match[str]) -> str:
        inner = m.group(1)
        return (
            ""
            if _EMOTION.search(inner) and not _OPERATIONAL.search(_EMOTION.sub("", inner))
            else m.group(0)
        )

    s = _PAREN.sub(paren, s)
    s = _ADVERB.sub("", s)
    m = _BECAUSE.match(s.strip())
    if m and _EMOTION.search(m.group("emo")):
        s = m.group("rest")
    end = "." if s.rstrip().endswith(".") else ""
    parts = _CLAUSE.split(s.rstrip().rstrip("."))
    kept: list[str] = []
    sep = ""
    for i, part in enumerate(parts):
        if i % 2:
            sep = part
            continue
        if not part.strip():
            continue
        if _clause_keeps(part):
            kept.append((sep if kept else "") + part)
        else:
            dropped.append(part.strip())
        sep = ""
    out = _tidy("".join(kept))
    if out and end and not out.endswith((".", "?", ":")):
        out += end
    return out


def clean(text: str) -> CleanResult:
    """Apply the deterministic filter; see the module docstring for the rules."""
    if not text or not text.strip():
        return CleanResult(text=None, changed=bool(text), dropped=())
    dropped: list[str] = []
    result = text.strip()
    # Removing a word can expose a new shape (a leading "3." reads as a list item), so
    # run to a fixpoint; each pass only removes, so this ends within a few passes.
    for _ in range(8):
        again = _one_pass(result, dropped)
        if again == result:
            break
        result = again
    if result and not re.search(r"\w", result):
        result = ""
    changed = _words(result) != _words(text)
    return CleanResult(text=result or None, changed=changed, dropped=tuple(dropped))


def _one_pass(text: str, dropped: list[str]) -> str:
    out_lines = []
    for line in text.strip().splitlines():
        bullet = re.match(r"^(\s*(?:[-*+]|\d+[.)])\s+)", line)
        prefix = bullet.group(1) if bullet else ""
        body = line[len(prefix) :]
        sentences = [_clean_sentence(s, dropped) for s in _SENTENCE.split(body) if s.strip()]
        joined = " ".join(s for s in sentences if s)
        if joined or not body.strip():
            out_lines.append(prefix + joined if joined else "")
    result = "\n".join(out_lines).strip()
    return re.sub(r"\n{3,}", "\n\n", result)


def _words(text: str) -> list[str]:
    return words(text)


async def rewrite_with_model(llm: LanguageModel | None, items: Sequence[str]) -> list[str | None]:
    """Ask the model to restate emotional items operationally (None = drop).

    The answer must be a JSON list the same length as ``items``; each rewrite is filtered
    again deterministically. Raises EvolveError on a malformed answer.
    """
    if not items:
        return []
    text = await ask(llm, prompts.hygiene_messages(items), step="sentiment rewrite")
    value = extract_json(text, what="sentiment rewrite")
    if isinstance(value, dict):
        value = value.get("items", value.get("rewrites"))
    if not isinstance(value, list) or len(value) != len(items):
        raise EvolveError(
            f"the model's sentiment rewrite should be a JSON list of {len(items)} entries; retry the step"
        )
    out: list[str | None] = []
    for original, rewritten in zip(items, value, strict=True):
        if rewritten is None or (
            isinstance(rewritten, str) and rewritten.strip().upper() in ("", "DROP", "NONE")
        ):
            out.append(None)
            continue
        if not isinstance(rewritten, str):
            raise EvolveError(
                "the model's sentiment rewrite contains a non-text entry; retry the step"
            )
        again = clean(rewritten)
        if again.text is None:
            log.info("model rewrite of %r was still emotional; dropped", original)
        out.append(again.text)
    return out
