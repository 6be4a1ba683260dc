"""How tool results are shaped for a model: retrieved text as data, capped, with its source.

Everything a tool hands back that was *read* (a file body, a search snippet, a recalled
memory, a topic summary) may carry instructions someone planted in it. The tools never
return such text bare: each piece comes with the place it came from
(:func:`contextfs.fencing.as_data`), and text that is marked ``trust: untrusted``/
``quarantined`` in its frontmatter, or that the poisoning guard flags now, is fenced as
quoted data (scoped views come fenced from the packer, which counts the fences in the
budget). Then the whole answer is sealed (:func:`contextfs.fencing.seal`): names, titles,
subjects and refusals that read as instructions are fenced too. Outputs longer than
:data:`MAX_OUTPUT_CHARS` are cut with a marker the model can see and act on, so a huge
file cannot crowd out the rest of the prompt unnoticed.
"""

from __future__ import annotations

from collections.abc import Iterable

from contextfs.errors import ContentError, InvalidArgumentError
from contextfs.fencing import as_data, seal, seal_refusal

__all__ = ["MAX_OUTPUT_CHARS", "as_data", "cap", "check_text_args", "seal", "seal_refusal", "short_version"]

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
