"""How tool results are shaped for a model: retrieved text as data, capped, with its source.

Everything a tool hands back that was *read* (a file body, a search snippet, a recalled
memory, a topic summary) may carry instructions someone planted in it. The tools never
return such text bare: each piece comes with the place it came from, and text that is
marked ``trust: untrusted``/``quarantined`` in its frontmatter, or that the poisoning
guard flags now, is fenced by :func:`contextfs.scopes.render_untrusted` as quoted data
(scoped views come fenced from the packer, which counts the fences in the budget).
Outputs longer than :data:`MAX_OUTPUT_CHARS` are cut with a marker the model can see and
act on, so a huge file cannot crowd out the rest of the prompt unnoticed.
"""

from __future__ import annotations

from collections.abc import Iterable

from contextfs.errors import ContentError, InvalidArgumentError
from contextfs.scopes import assess, render_untrusted

__all__ = ["MAX_OUTPUT_CHARS", "as_data", "cap", "check_text_args", "short_version"]

#: The longest answer a tool gives (characters); longer ones end with a visible marker.
MAX_OUTPUT_CHARS = 20_000


def cap(text: str, limit: int = MAX_OUTPUT_CHARS, *, hint: str = "narrow the request") -> str:
    """``text`` whole, or its first ``limit`` characters and a marker saying what was cut."""
    if len(text) <= limit:
        return text
    marker = f"\n[... cut: showing {limit} of {len(text)} characters; {hint} to see the rest]"
    return text[: max(0, limit - len(marker))] + marker


def short_version(version: object) -> str:
    return str(version)[:12] if version else "-"


def as_data(text: str, source: str, *, trust: object = "trusted", flagged: Iterable[str] = ()) -> str:
    """Retrieved ``text`` for a prompt: a source line, then the text; fenced when untrusted.

    Trust comes from two places and either one fences: what the file says about itself
    (``trust`` other than ``trusted``, or reasons recorded in ``flagged``) and what the
    guard finds in the text as it is now (a hand edit may have added an instruction).
    """
    verdict = assess(text)
    reasons = tuple(dict.fromkeys([*flagged, *verdict.reasons]))
    if trust in (None, "trusted") and not reasons:
        return f"[from {source}]\n{text}"
    label = source if trust in (None, "trusted") else f"{source}, trust {trust}"
    return render_untrusted(text, label, reasons=reasons)


def check_text_args(args: dict[str, object]) -> None:
    """Refuse strings that are not valid Unicode (lone surrogates arrive in JSON tool calls).

    Such text cannot be written as UTF-8, so it is refused before anything is touched,
    with a message naming the argument.
    """
    for name, value in args.items():
        for text in _strings(value):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidArgumentError(
                    f"argument {name!r} contains a lone surrogate (not valid Unicode text); "
                    "send the text again as valid UTF-8"
                ) from None
            if "\x00" in text:
                raise ContentError(f"argument {name!r} contains a NUL byte; send plain text without NUL characters")


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
