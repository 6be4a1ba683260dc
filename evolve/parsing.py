"""Getting structured data out of chatty model output.

Models wrap JSON in prose ("Sure! Here is the JSON you asked for: ..."), in code fences,
or answer with a bullet list when asked for JSON. Everything here is deterministic and
strict about one thing: an answer that *looks* structured but cannot be read (a
truncated JSON object, an empty reply) raises :class:`EvolveError`, because guessing
would persist garbage as memory.
"""

from __future__ import annotations

import json
import re
from typing import Any

from contextfs.errors import EvolveError

__all__ = [
    "extract_items",
    "extract_json",
    "find_json",
    "is_none_answer",
    "message_text",
    "strip_chatter",
]

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n(.*?)```", re.S)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(.*\S)\s*$")
_NONE = re.compile(r"^\W*(none|no new facts?|nothing( new)?|n/?a)\W*$", re.I)
# Lines a model puts around its answer that carry no content of their own.
_CHATTER = re.compile(
    r"^\s*(sure|certainly|of course|okay|ok|here(?:'s| is| are)|below (?:is|are)|"
    r"i (?:hope|think|found|extracted|have)|let me know|the (?:following|lesson|facts?)\b.*:\s*$|"
    r"(?:new )?facts?:\s*$|lessons?:\s*$|json:\s*$)",
    re.I,
)
_ITEM_KEYS = ("text", "fact", "lesson", "content", "statement", "item")
_LIST_KEYS = ("facts", "lessons", "items", "new_facts", "results")


def message_text(result: Any) -> str:
    """The text of whatever a chat model or Runnable returned (AIMessage, str, blocks)."""
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    content = getattr(result, "content", result)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type", "text") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return str(content)


def is_none_answer(text: str) -> bool:
    """True when the model said there is nothing (NONE, "no new facts", ...)."""
    lines = [ln for ln in strip_chatter(text).splitlines() if ln.strip()]
    return len(lines) == 1 and bool(_NONE.match(lines[0]))


def strip_chatter(text: str) -> str:
    """Drop the polite lines around an answer; keep everything else as written."""
    kept = [ln for ln in text.strip().splitlines() if not _CHATTER.match(ln)]
    return "\n".join(kept).strip()


def find_json(text: str) -> tuple[bool, Any]:
    """(found, value) for the first JSON object or array in ``text``.

    Tries, in order: the whole text, each fenced block, then every ``{`` or ``[`` from
    the left with a raw decode, so prose before and after the JSON is ignored.
    """
    stripped = text.strip()
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for cand in candidates:
        if cand[:1] in "{[":
            try:
                return True, json.loads(cand)
            except ValueError:
                pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
            except ValueError:
                continue
            if isinstance(value, (dict, list)) and value:
                return True, value
    return False, None


def _looks_structured(text: str) -> bool:
    s = strip_chatter(text)
    return s[:1] in "{[" or "```" in text or bool(re.search(r"^\s*[{\[]", text, re.M))


def extract_json(text: str, *, what: str = "answer") -> Any:
    """The JSON value in ``text`` or EvolveError naming what was expected."""
    found, value = find_json(text)
    if not found:
        raise EvolveError(
            f"the model's {what} contains no readable JSON ({_preview(text)}); "
            "retry, or use a model that follows JSON instructions"
        )
    return value


def _preview(text: str, n: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat[:n] + ("..." if len(flat) > n else "")) if flat else "empty reply"


def _item_from(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        return {"text": value} if value.strip() else None
    if isinstance(value, dict):
        for key in _ITEM_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                item = dict(value)
                item["text"] = value[key]
                return item
    return None


def extract_items(text: str, *, what: str = "list") -> list[dict[str, Any]]:
    """Items from a JSON list/object or a bullet list; [] for an explicit NONE.

    Each item is a dict with at least ``text``; JSON objects keep their other keys
    (``supersedes``, ``same_as``, ``title``...). Raises EvolveError for an empty reply,
    unreadable JSON, or prose with no list in it.
    """
    if not text or not text.strip():
        raise EvolveError(f"the model returned an empty {what}; retry the step")
    if is_none_answer(text):
        return []
    found, value = find_json(text)
    if found:
        if isinstance(value, dict):
            for key in _LIST_KEYS:
                if key in value:
                    value = value[key]
                    break
            else:
                value = [value]
        if value is None:
            return []
        if not isinstance(value, list):
            raise EvolveError(
                f"the model's {what} is JSON but not a list ({_preview(text)}); retry the step"
            )
        items = [it for it in (_item_from(v) for v in value) if it is not None]
        if value and not items:
            raise EvolveError(
                f"the model's {what} has no usable entries ({_preview(text)}); retry the step"
            )
        return items
    if _looks_structured(text):
        raise EvolveError(
            f"the model's {what} looks like broken JSON ({_preview(text)}); retry the step"
        )
    bullets = [m.group(1) for m in (_BULLET.match(ln) for ln in text.splitlines()) if m]
    if bullets:
        return [{"text": b} for b in bullets if not _NONE.match(b)]
    raise EvolveError(
        f"the model's {what} is neither JSON nor a list ({_preview(text)}); "
        "retry, or use a model that follows the format instructions"
    )
