"""The shapes the poisoning guard looks for, each under a stable reason name.

Matched against text that :func:`normalise` folded (NFKC, case-folded, hidden characters
removed). Each pattern names one shape an injection takes; the reasons are part of the
guard's interface (``Verdict.reasons``, the ``flagged:`` frontmatter key, the fence), so a
pattern may grow but a name never changes meaning.

The shapes lean on grammar that ordinary notes and conversations do not use: orders in the
second person or the imperative (``pretend you are``, not ``I pretend to be``), about the
model's own prompt and output (``repeat your instructions``, ``begin your reply with``),
and markup that only a prompt has (``=== END USER INPUT ===``, ``<|im_start|>``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["PATTERNS", "Shape", "hidden_characters", "matches", "normalise", "strip_hidden"]

#: Characters that render as nothing. Removed before matching, so ``ig\u200bnore`` cannot
#: split a keyword; counted by :func:`hidden_characters` only where they hide something.
_HIDDEN = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad]|[\U000e0000-\U000e007f]")
# Inside a Latin word, a zero-width character has no use but to split the word from a
# reader's eye or a filter (soft hyphens are hyphenation points and stay out).
_IN_WORD = re.compile("[A-Za-z][\u200b-\u200d\u2060-\u2064\ufeff]+[A-Za-z]")
# Bidirectional embeddings and overrides reorder what a reviewer sees.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Unicode tag characters carry invisible ASCII ("ASCII smuggling"); a flag emoji's
# subdivision sequence (black flag, tags, cancel tag) is their one ordinary use.
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_FLAG_EMOJI = "\U0001f3f4"


def strip_hidden(text: str) -> str:
    return _HIDDEN.sub("", text)


def normalise(text: str) -> str:
    # NFKC folds full-width and compatibility letters ("ｉｇｎｏｒｅ").
    return strip_hidden(unicodedata.normalize("NFKC", text)).casefold()


def hidden_characters(text: str) -> bool:
    """True when invisible characters hide something: split a Latin word, reorder text (two
    or more bidirectional controls), or carry tag characters outside a flag emoji. Emoji
    joiners (🧘‍♀️), byte-order marks between words and zero-width spaces in scripts that
    use them (Khmer, Thai) are how ordinary text looks."""
    if _IN_WORD.search(text) or len(_BIDI.findall(text)) >= 2:
        return True
    return any(match.start() == 0 or text[match.start() - 1] != _FLAG_EMOJI for match in _TAGS.finditer(text))


# The nouns of a model's own orders.
_NOUNS = (r"(?:instructions?|directives?|rules|prompts?|guidelines|guardrails|context|commands?|messages"
          r"|constraints|programming|orders)")
# Override verbs and "the previous instructions" in the languages a payload is translated to.
_OVERRIDE_OTHER = (
    # German
    r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen|missachte(?:n)?)\b[^.\n]{0,30}?\b(?:alle|die|deine|ihre|vorherigen|"
    r"bisherigen|obigen|vorangegangenen|vorigen)\b[^.\n]{0,30}?\b(?:anweisungen|instruktionen|befehle|regeln|vorgaben"
    r"|aufgaben|aufträge|angaben)\b"
    r"|\b(?:vergiss|vergessen\s+sie)\s+alles\b|\b(?:die\s+)?obigen\s+ausführungen\s+ignorieren\b"
    # French
    r"|\b(?:ignore[rz]?|oublie[rz]?)\b[^.\n]{0,30}?\b(?:toutes|les|vos|tes)\b[^.\n]{0,30}?\b(?:instructions|consignes|"
    r"directives|règles)\b|\boublie[rz]?\s+tout\b"
    # Spanish, Portuguese, Italian
    r"|\b(?:ignora[rd]?|olvida[rd]?|ignore|esqueça|dimentica)\b[^.\n]{0,30}?\b(?:todas|las|as|tus|suas|tutte|le)\b"
    r"[^.\n]{0,30}?\b(?:instrucciones|instruções|istruzioni|reglas|regras|regole)\b"
    r"|\b(?:olvida|esqueça|dimentica)\s+tod[oa]\b"
    # Dutch
    r"|\b(?:negeer|vergeet)\b[^.\n]{0,30}?\b(?:alle|de|je)\b[^.\n]{0,30}?\b(?:instructies|regels|opdrachten)\b"
)

@dataclass(frozen=True)
class Shape:
    """One shape under a reason name; ``before``, when set, must match the text just before
    a hit (it is checked only on hits, so a pattern stays a fast literal search)."""

    reason: str
    pattern: re.Pattern[str]
    before: re.Pattern[str] | None = None


# An order: at the start of a sentence, a line or a list item, or after "please", "now"...
_ORDER = re.compile(r"(?:^|[.!?:;\n]\s*|(?:^|\s)(?:you|and|now|please|so|then)\s+)(?:[-*+>]\s+|#{1,6}\s+|\d+[.)]\s+|[\"'“(\[]\s*)*\Z")
# Markup that sets a line apart: a run of symbols, or an opening bracket.
_MARKUP = re.compile(r"(?:%{2,}|={3,}|#{3,}|-{3,}|\*{3,}|~{3,}|\[|<)\s*\Z")
_BEFORE = 48  # how much text before a hit `before` sees

PATTERNS: tuple[Shape, ...] = (
    Shape(
        "override-instructions",
        re.compile(
            r"\b(?:ignore|disregard|forget)\b[^.\n]{0,40}?"
            r"\b(?:all|any|every|the|your|my|previous|prior|above|earlier|preceding|future|system|original|existing)\b"
            r"[^.\n]{0,30}?\b" + _NOUNS + r"\b"
            # verbs that also name ordinary work ("drop the legacy directive parser") need
            # the words that point at the model's own orders
            r"|\b(?:override|bypass|drop|abandon|discard)\b[^.\n]{0,40}?"
            r"\b(?:all|every|your|previous|prior|above|earlier|preceding|system|original|existing)\b"
            r"[^.\n]{0,30}?\b" + _NOUNS + r"\b"
            r"|\b(?:ignore|disregard)\s+(?:the\s+)?above\b"
            r"|\b(?:leave|put|remove)\s+all\s+(?:the\s+)?previous\s+(?:information|tasks|instructions)\b"
            r"|" + _OVERRIDE_OTHER
        ),
    ),
    Shape(
        "override-instructions",
        re.compile(r"\b(?:ignore|disregard|forget)\s+(?:everything|anything|all)\s*"
                   r"(?:[,.;:!]|(?:but|except|above|before|else|that|we|you|i)\b)"),
        before=_ORDER,
    ),
    Shape(
        "new-instructions",
        re.compile(
            r"\b(?:new|updated|real|actual|true)\s+(?:system\s+)?(?:instructions?|rules|directives?|prompt|tasks?|assignment)"
            r"\s*(?::|are|is|follow)"
            r"|\bnow\s+(?:come|comes|follow|follows)\s+(?:a\s+)?(?:new|further)\s+(?:tasks?|instructions?|assignments?)\b"
            r"|\bnow\s+further\s+tasks\b|\byour\s+new\s+(?:task|assignment|role|instructions?)\s*(?::|is|are)"
            r"|\bnun\s+folgen\s+(?:neue|weitere)\s+aufgaben\b|\b(?:deine|ihre)\s+neue\s+aufgabe\b"
        ),
    ),
    Shape(
        # orders to take another persona, in the second person or the imperative only
        "role-play",
        re.compile(r"\b(?:you\s+are\s+(?:now|no\s+longer)\b|pretend\s+(?:to\s+be|you\s+are|that\s+you)\b)"),
        before=_ORDER,
    ),
    Shape(
        "role-play",
        re.compile(
            r"\byou\s+are\s+(?:now\s+)?(?:dan|stan|dude|aim|an?\s+(?:unrestricted|unfiltered|jailbroken|evil)\b)"
            r"|\bfrom\s+now\s+on,?\s+(?:you|act|respond|behave|answer|always|never)\b"
            r"|\b(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:are|were)\b|an?\s+(?:unrestricted|unfiltered|evil|different|new)\b)"
            r"|\bi\s+want\s+you\s+to\s+(?:act|pretend|behave|respond|answer|reply|only)\b"
            r"|\bich\s+möchte,?\s+dass\s+(?:sie|du)\s+als\b|\b(?:jetzt|nun)\s+bist\s+du\b"
            r"|\b(?:take|assume|play)\s+(?:on\s+)?the\s+role\s+of\b|\brole-?\s?play\s+as\b"
            r"|\b(?:developer|god|jailbreak|dan)\s+mode\b|\bdo\s+anything\s+now\b"
        ),
    ),
    Shape(
        "chat-template",
        re.compile(
            r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>"
            r"|\[/?inst\]|<</?sys>>|</?(?:system|assistant|user)>"
            r"|^\s*(?:[-*+>]\s*)?#{0,3}\s*(?:system|assistant)\s*:",
            re.MULTILINE,
        ),
    ),
    Shape(
        "fake-delimiter",
        # a marked-up line that claims the input or the prompt ends or begins here
        re.compile(
            r"\b(?:end|begin|start|stop)\b[^\n]{0,40}?"
            r"\b(?:input|prompt|instructions?|passphrase|context|login|attempt|conversation|ambiguity|untrusted|section)\b"
        ),
        before=_MARKUP,
    ),
    Shape(
        "fake-delimiter",
        re.compile(
            r"\bend\s+(?:of\s+)?(?:the\s+)?user\s+input\b|\buntrusted\s+(?:user\s+)?input\s+(?:starting|starts|begins|ends)\b"
            # a false alarm to break the prompt's flow
            r"|\b(?:attention|achtung)\s*[-–:!]+\s*(?:stop|stopp)\b",
        ),
    ),
    # a run of escaped newlines as padding (its own pattern: it starts with a literal)
    Shape("fake-delimiter", re.compile(r"(?:\\\s?n\s*){4,}")),
    Shape(
        "prompt-extraction",
        re.compile(
            r"\b(?:repeat|print|output|reveal|show(?:ing)?|list|format|write\s+out|spell\s+out|translate|summari[sz]e|dump|echo|recite"
            r"|tell\s+me|give\s+me|what\s+(?:are|were|is))\b[^.\n]{0,25}?"
            r"\b(?:your|the\s+above|all\s+(?:the\s+|of\s+your\s+)?|previous|prior|above|preceding|hidden|secret|system|initial"
            r"|original|pre-?)\s*(?:instructions?|prompts?|rules|directives|guidelines|words|text|pre-?prompt)\b"
            r"|\b(?:instructions|prompt)\s+(?:so\s+far|above|verbatim)\b|\bprompt[- ]texts?\b"
            r"|\bzeige?\s+(?:mir\s+)?(?:alle\s+)?(?:deine[ns]?|ihre[ns]?)\s+(?:gesamten\s+)?(?:prompt|anweisungen|instruktionen)"
            r"|\b(?:repeat|print|output|reveal|include|append|tell\s+me|give\s+me)\s+(?:me\s+)?(?:the|your)\s+"
            r"(?:secret\s+)?(?:password|access\s+code|passphrase)\b"
        ),
    ),
    Shape(
        "output-forcing",
        re.compile(
            r"\b(?:begin|start|prefix|prepend|preface|end|finish|conclude)\s+(?:your|the|each|every)\s+"
            r"(?:response|reply|answer|output|message)s?\b"
            r"|\b(?:prefix|prepend)\s+(?:your\s+)?(?:response|reply|answer|output)\b"
            r"|\b(?:respond|reply|answer|output|say|print)\s+(?:only|just|exactly|simply)\b"
            r"|\b(?:say|output|print|respond\s+with|reply\s+with)\b[^.\n]{0,60}?\b(?:and|but)\s+nothing\s+(?:else|more)\b"
            r"|\bonly\s+(?:output|say|respond\s+with|reply\s+with)\b"
            r"|\byou\s+(?:will|must|should|shall)\s+(?:say|respond\s+with|reply\s+with|output|print)\s*:?\s*[\"“'\[]"
            # code planted in the model's answer: "add the following code snippet to your implementation"
            r"|\b(?:following|subsequent|below)\s+code\s*(?:snippet|block|excerpt|section|segment)?\b[^\n]{0,80}?"
            r"\b(?:your|the)\s+(?:response|reply|answer|output|implementation|solution|algorithm|codebase|elucidation"
            r"|code\s+implementation)\b"
            r"|\b(?:your|the)\s+(?:response|reply|answer|output|implementation|solution|algorithm|codebase)\b[^\n]{0,40}?"
            r"\b(?:following|subsequent|below)\s+code\b"
        ),
    ),
    Shape(
        "tool-call",
        re.compile(
            r"</?(?:tool_call|tool_use|function_calls?|invoke|antml:[a-z_]+)\b"
            r"|\"(?:tool|function|tool_name|name)\"\s*:\s*\"[^\"]+\"\s*,\s*\"(?:arguments|args|input|parameters)\"\s*:"
            r"|\b(?:core_memory_(?:append|replace|rethink)|archival_memory_(?:insert|search)|conversation_search"
            r"|send_message|exec|eval|os\.system|subprocess\.run)\s*\("
        ),
    ),
    Shape(
        "directive-to-agent",
        re.compile(
            r"\b(?:ai|assistant|agent|model|chatbot|llm)\s*[,:]\s*(?:you\s+must|always|never|do\s+not|don't)\b"
            r"|\byou\s+must\s+(?:always|never|now|immediately)\b"
            r"|\bthe\s+(?:ai|assistant|agent|model|chatbot|llm)\s+(?:must|shall|should|will)\s+(?:always|never|not)\b"
            r"|\b(?:do\s+not|don't|never)\s+(?:tell|inform|reveal\s+to|mention\s+to)\s+the\s+user\b"
            r"|\breveal\s+(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions|instructions|api\s+keys?|secrets?)\b"
            r"|\b(?:print|output|repeat)\s+(?:your|the)\s+system\s+prompt\b"
        ),
    ),
    Shape(
        "exfiltration",
        re.compile(
            r"\b(?:send|post|upload|forward|leak|exfiltrate|email)\b[^.\n]{0,60}?"
            r"\b(?:password|credential|secret|token|api[\s_-]?key|conversation|memory|history)s?\b"
            r"[^.\n]{0,40}?\b(?:to|at)\s+(?:https?://|\S+@\S+)"
        ),
    ),
)


def matches(shape: Shape, text: str) -> bool:
    """Whether ``shape`` occurs in normalised ``text``."""
    for hit in shape.pattern.finditer(text):
        if shape.before is None or shape.before.search(text, max(0, hit.start() - _BEFORE), hit.start()):
            return True
    return False
