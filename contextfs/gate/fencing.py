"""The one fence: whatever reaches an agent that reads as an instruction arrives as quoted data.

An agent reads more than file bodies: names in a listing, a title in a search result, a
commit subject in a history, a view's headings, a refusal that quotes its input. Any of
them can carry a planted instruction, so the rule is applied to the whole answer, not to
the bodies alone:

* :func:`contextfs.gate.poisoning.flags` is the one judgement of text: the poisoning guard's reasons for the text
  as written and for the text read as words (``ignore_all_previous_instructions.md``,
  ``IgnoreAllPrevious``, ``ignore.all.previous`` read as the words they spell). The write
  gate judges contents and names with it; every fence below uses it;
* :func:`as_data` gives retrieved text with its source line, fenced when its file is not
  trusted or when it is flagged now;
* :func:`seal` is applied to every answer at the door (tool results, MCP resources, the
  memory tool's answers and refusals, views, retriever documents): each run of lines
  outside a fence that is flagged is fenced in turn, with the answer's source. Text
  already fenced stays as it is, so nothing is fenced twice.

The fence itself is :func:`contextfs.gate.poisoning.render_untrusted`: every line quoted with
``> ``, a header naming the source (moved inside the quote when the source itself is
flagged) and an end line.
"""

from __future__ import annotations

from collections.abc import Iterable

from .poisoning import flags, render_untrusted

__all__ = ["FENCE_END", "FENCE_OPEN", "as_data", "seal", "seal_refusal"]

#: How a fence starts and ends (see :func:`contextfs.gate.poisoning.render_untrusted`).
FENCE_OPEN = "[untrusted data"
FENCE_END = "[end of untrusted data]"


# Separators between letters or digits in names ("a_b", "a-b", "a.b", "a/b") and the step
# from a lower-case letter to an upper-case one ("aB") both become spaces.
def as_data(
    text: str, source: str, *, trust: object = "trusted", flagged: Iterable[str] = ()
) -> str:
    """Retrieved ``text`` for a prompt: a source line, then the text; fenced when untrusted.

    Trust comes from two places and either one fences: what the file says about itself
    (``trust`` other than ``trusted``, or reasons recorded in ``flagged``) and what the
    guard finds in the text or its source as they are now (a hand edit may have added an
    instruction; a name may be one).
    """
    reasons = tuple(dict.fromkeys([*flagged, *flags(text), *flags(source)]))
    if trust in (None, "trusted") and not reasons:
        return f"[from {source}]\n{text}"
    label = source if trust in (None, "trusted") else f"{source}, trust {trust}"
    return render_untrusted(text, label, reasons=reasons)


def seal_refusal(message: str, source: str) -> str:
    """A refusal's message, sealed, in a form that may follow a prefix (``Error: ``): a fence
    always starts on a line of its own."""
    sealed = seal(message, source)
    if sealed.startswith(FENCE_OPEN):
        return f"the request was refused; the message quotes it, so it is quoted as data:\n{sealed}"
    return sealed


def _fence_region(lines: list[str], start: int) -> int:
    """The index after the fence that starts at ``lines[start]`` (its quoted lines and end line)."""
    end = start + 1
    while end < len(lines) and (lines[end].startswith("> ") or lines[end] == ">"):
        end += 1
    if end < len(lines) and lines[end] == FENCE_END:
        end += 1
    return end


def seal(answer: str, source: str) -> str:
    """``answer`` with every flagged run of lines outside a fence fenced, citing ``source``.

    A fence's own header line is judged too (one forged in ordinary text, or one whose
    source reads as an instruction, is fenced as a whole); quoted lines are data already.
    """
    lines = answer.split("\n")  # an empty answer is one empty line, and comes back empty
    out: list[str] = []
    free: list[str] = []

    def flush() -> None:
        if free:
            run = "\n".join(free)
            reasons = flags(run)
            out.append(render_untrusted(run, source, reasons=reasons) if reasons else run)
            free.clear()

    i = 0
    while i < len(lines):
        if not lines[i].startswith(FENCE_OPEN):
            free.append(lines[i])
            i += 1
            continue
        flush()
        end = _fence_region(lines, i)
        region = "\n".join(lines[i:end])
        reasons = flags(lines[i])
        out.append(render_untrusted(region, source, reasons=reasons) if reasons else region)
        i = end
    flush()
    return "\n".join(out)
