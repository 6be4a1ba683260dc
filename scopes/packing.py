"""The budget packer: turn ranked candidates into one markdown view that never exceeds its budget.

Every layer that puts context in front of a model (scopes, topics, memory, the evolving
agent) hands the packer a list of :class:`Candidate` and a token budget and gets back a
:class:`ContextView`. The packer's promises:

* ``view.tokens <= budget`` whenever a budget is set, counted exactly on the final text
  (it re-packs against a tighter target if token merges at section joins ever push the
  total over);
* pinned candidates are always shown whole; if they alone do not fit, :class:`BudgetError`
  names them and their sizes;
* a candidate whose file cannot be read (binary, not UTF-8, broken frontmatter) is left
  out and listed in ``view.dropped`` as ``unreadable: ...``, pinned or not;
* when the rest does not fit, items step down the tier ladder (full → excerpt → overview →
  abstract → cue), the least important first, one tier per round, and only when every item
  sits at its lowest allowed tier does anything get dropped (least important first);
* room left at the end is given back, most important first (a larger excerpt, a richer tier);
* the result is a pure function of the candidates' bytes, the query and the budget — no
  clock, no index state — so ``as_of`` can reproduce it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfs import paths
from contextfs.document import blob_version, decode, parse
from contextfs.errors import BudgetError, ConfigError, ContextFSError, NotFoundError
from contextfs.tokens import get_counter

from .arguments import check_int, check_number
from .tiers import TIERS, Source, query_terms, render

__all__ = ["Candidate", "ContextView", "DroppedItem", "ViewItem", "load_or_drop", "load_source", "pack", "resolve_rev"]

log = logging.getLogger(__name__)

_DROPPED = len(TIERS)
#: Below this many tokens an excerpt shows too little to be worth its heading.
MIN_EXCERPT_TOKENS = 40
_SEP = 1  # "\n\n" between sections


@dataclass(frozen=True)
class Candidate:
    """Something that may go into a view, and how much it matters."""

    path: str
    reason: str
    priority: int
    pinned: bool = False
    body: str | None = None
    min_tier: str = "cue"
    title: str | None = None


@dataclass(frozen=True)
class ViewItem:
    """One item shown in a view: at which tier, at what cost, and why it is there."""

    path: str
    tier: str
    tokens: int
    version: str
    reason: str
    priority: int = 0
    pinned: bool = False
    lines: str | None = None  # excerpt line ranges, e.g. "12-18,40"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "tier": self.tier, "tokens": self.tokens, "version": self.version,
            "reason": self.reason, "priority": self.priority, "pinned": self.pinned, "lines": self.lines,
        }


@dataclass(frozen=True)
class DroppedItem:
    """A candidate that is not in the view, and why."""

    path: str
    reason: str
    tokens: int = 0  # what it would have cost in full (0 when it could not be read)
    version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason, "tokens": self.tokens, "version": self.version}


@dataclass(frozen=True)
class ContextView:
    """An assembled view: the text, its exact token count and the accounting behind it."""

    text: str
    tokens: int
    budget: int | None
    items: tuple[ViewItem, ...] = ()
    dropped: tuple[DroppedItem, ...] = ()
    manifest: tuple[tuple[str, str], ...] = ()
    encoding: str = "cl100k_base"
    query: str | None = None
    as_of: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text

    def tier_of(self, path: str) -> str | None:
        """The tier ``path`` is shown at, or None when it is not in the view."""
        for item in self.items:
            if item.path == path:
                return item.tier
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "budget": self.budget,
            "encoding": self.encoding,
            "query": self.query,
            "as_of": self.as_of,
            **self.meta,
            "items": [i.to_dict() for i in self.items],
            "dropped": [d.to_dict() for d in self.dropped],
            "manifest": [{"path": p, "version": v} for p, v in self.manifest],
            "text": self.text,
        }


# ----------------------------------------------------------------- loading
def resolve_rev(ctx: Any, rev: str | None) -> str | None:
    """The full commit id for ``rev`` (NotFoundError when it does not exist)."""
    if rev is None:
        return None
    return ctx.git.resolve(rev).hexsha


_SOURCES: OrderedDict[tuple[str, str, str | None], Source] = OrderedDict()
_SOURCES_SIZE = 4096
_SOURCES_LOCK = threading.Lock()


def _from_bytes(rel: str, data: bytes, title: str | None) -> Source:
    """Parse once per (path, blob): YAML frontmatter costs milliseconds a file, hashing microseconds."""
    key = (rel, blob_version(data), title)
    with _SOURCES_LOCK:
        hit = _SOURCES.get(key)
        if hit is not None:
            _SOURCES.move_to_end(key)
            return hit
    src = _parse_source(rel, data, title)
    with _SOURCES_LOCK:
        _SOURCES[key] = src
        if len(_SOURCES) > _SOURCES_SIZE:
            _SOURCES.popitem(last=False)
    return src


def _parse_source(rel: str, data: bytes, title: str | None) -> Source:
    text = decode(data, rel)
    doc = parse(text, rel, version=blob_version(data))
    offset = text[: len(text) - len(doc.body)].count("\n") if doc.body and text.endswith(doc.body) else 0
    return Source(rel, doc.body, dict(doc.metadata), doc.version or blob_version(data), offset, title)


def load_source(ctx: Any, cand: Candidate, rev: str | None) -> Source | None:
    """The candidate's content (at ``rev`` when given), or None when it does not exist."""
    if cand.body is not None:
        return Source(cand.path, cand.body, {}, blob_version(cand.body.encode("utf-8", "surrogatepass")), 0, cand.title)
    rel = paths.check(ctx.root, cand.path)
    data = ctx.git.blob_at(rel, rev) if rev is not None else ctx.read_raw(rel)
    if data is None:
        return None
    return _from_bytes(rel, data, cand.title)


def load_or_drop(ctx: Any, cand: Candidate, rev: str | None) -> Source | DroppedItem | None:
    """The candidate's content; None when it does not exist; a :class:`DroppedItem` when it
    exists but cannot be read (binary, not UTF-8, broken frontmatter...).

    An unreadable file is left out and reported (in the view's ``dropped`` and a logged
    warning), pinned or not: one bad file must never take every view down with it.
    """
    try:
        return load_source(ctx, cand, rev)
    except NotFoundError:
        return None
    except ContextFSError as exc:
        log.warning("leaving %s out of the view: %s", cand.path, exc)
        return DroppedItem(cand.path, f"unreadable: {exc}")


# ----------------------------------------------------------------- packing
class _Slot:
    __slots__ = ("cand", "src", "order", "level", "text", "cost", "min_level", "paged", "full_cost")

    def __init__(self, cand: Candidate, src: Source, order: int, paged: bool = False) -> None:
        self.cand = cand
        self.src = src
        self.order = order
        self.paged = paged
        self.level = 0
        self.text: str | None = None
        self.cost = 0
        self.full_cost = 0
        self.min_level = 0 if cand.pinned else TIERS.index(cand.min_tier)

    @property
    def key(self) -> tuple[int, int]:
        return (self.cand.priority, self.order)


class _Packer:
    def __init__(self, counter: Any, terms: tuple[str, ...]) -> None:
        self.counter = counter
        self.terms = terms

    def count(self, text: str) -> int:
        return self.counter.count(text)

    def section(self, slot: _Slot, level: int, allowance: int | None = None, only_matches: bool = False) -> tuple[str | None, int]:
        if level >= _DROPPED:
            return None, 0
        tier = TIERS[level]
        if tier == "excerpt":
            if allowance is None or allowance < MIN_EXCERPT_TOKENS:
                return None, 0
            text = render(slot.src, tier, terms=self.terms, allowance=allowance, count=self.count, only_matches=only_matches)
        else:
            text = render(slot.src, tier)
        if text is None:
            return None, 0
        return text, self.count(text) + _SEP

    def place(self, slot: _Slot, level: int, allowance: int | None = None) -> bool:
        text, cost = self.section(slot, level, allowance)
        if text is None and level < _DROPPED:
            return False
        slot.level, slot.text, slot.cost = level, text, cost
        return True

    def step_down(self, slot: _Slot, room: int) -> bool:
        """Move ``slot`` to the next cheaper tier it allows (``room``: tokens free without it).

        False when no allowed tier is cheaper; the slot then waits for the drop phase.
        """
        for level in range(slot.level + 1, slot.min_level + 1):
            allowance = min(room, slot.cost - 1) if TIERS[level] == "excerpt" else None
            text, cost = self.section(slot, level, allowance)
            if text is not None and cost < slot.cost:
                slot.level, slot.text, slot.cost = level, text, cost
                return True
        return False

    def fit(self, pinned: list[_Slot], others: list[_Slot], target: int, fixed: int) -> None:
        """Degrade ``others`` until everything fits ``target`` tokens (``fixed`` is already spent)."""
        for slot in others:
            self.place(slot, 0)
        total = fixed + sum(s.cost for s in pinned) + sum(s.cost for s in others)
        ranked = sorted(others, key=lambda s: s.key)
        stuck: set[int] = set()
        while total > target:
            movable = [s for s in ranked if s.level < s.min_level and id(s) not in stuck]
            if movable:
                # One tier per round: the richest items step down first, least important first.
                victim = min(movable, key=lambda s: (s.level, -ranked.index(s)))
            else:
                alive = [s for s in ranked if s.level < _DROPPED]
                if not alive:
                    break
                victim = alive[-1]
                self.place(victim, _DROPPED)
                total = fixed + sum(s.cost for s in pinned) + sum(s.cost for s in others)
                continue
            room = target - (total - victim.cost) - _SEP
            if not self.step_down(victim, room):
                stuck.add(id(victim))
            total = fixed + sum(s.cost for s in pinned) + sum(s.cost for s in others)
        # Give back what is left, most important first.
        for slot in ranked:
            room = target - total
            if room <= 0:
                break
            top = min(slot.level, slot.min_level)
            for level in range(0, top + 1):
                resize = level == slot.level and TIERS[level] == "excerpt"
                if level == slot.level and not resize:
                    break
                allowance = room + slot.cost - _SEP if TIERS[level] == "excerpt" else None
                text, cost = self.section(slot, level, allowance)
                if text is not None and cost - slot.cost <= room and (level < slot.level or cost > slot.cost):
                    total += cost - slot.cost
                    slot.level, slot.text, slot.cost = level, text, cost
                    break


def _lines_of(text: str | None) -> str | None:
    if not text:
        return None
    found = re.findall(r"^\[lines? (\d+)(?:-(\d+))?", text, flags=re.M)
    if not found:
        return None
    return ",".join(a if not b else f"{a}-{b}" for a, b in found)


def _check_candidates(candidates: Sequence[Candidate]) -> None:
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
        raise ConfigError(f"pack() takes a list of Candidate objects, got {type(candidates).__name__}; "
                          "build them with Candidate(...)")
    for cand in candidates:
        if not isinstance(cand, Candidate):
            raise ConfigError(f"pack() takes Candidate objects, got {type(cand).__name__}; build them with Candidate(...)")
        if cand.min_tier not in TIERS:
            raise ConfigError(f"min_tier {cand.min_tier!r} of {cand.path} is not a tier; use one of {', '.join(TIERS)}")


def pack(
    ctx: Any,
    candidates: list[Candidate],
    budget: int | None,
    *,
    query: str | None = None,
    encoding: str | None = None,
    as_of: str | None = None,
    header: str | None = None,
    paged: Sequence[Candidate] = (),
    page_share: float = 0.0,
) -> ContextView:
    """Pack ``candidates`` into a view of at most ``budget`` tokens (no limit when None).

    ``paged`` are ranked extra candidates (search hits) that may use up to ``page_share``
    of the budget left after the pinned items, each as a whole file when it fits there or
    as excerpts around the query; whatever they leave goes back to ``candidates``.
    """
    if budget is not None:
        check_int(budget, "budget", minimum=0, expect="a non-negative number of tokens", fix="pass e.g. budget=2000",
                  error=ConfigError)
    check_number(page_share, "page_share", low=0, high=1, fix="the default is 0.35", error=ConfigError)
    _check_candidates(candidates)
    _check_candidates(paged)
    counter = get_counter(encoding)
    rev = resolve_rev(ctx, as_of)
    packer = _Packer(counter, query_terms(query))

    slots: list[_Slot] = []
    dropped: list[DroppedItem] = []
    seen: set[str] = set()
    indexed = sorted(enumerate(candidates), key=lambda p: (not p[1].pinned, p[1].priority, p[0]))
    for order, cand in indexed:
        slot = _make_slot(ctx, cand, order, rev, seen, dropped)
        if slot is not None:
            slots.append(slot)

    header_text = header.rstrip("\n") if header else None
    fixed = packer.count(header_text) + _SEP if header_text else 0
    pinned = [s for s in slots if s.cand.pinned]
    others = [s for s in slots if not s.cand.pinned]
    for slot in pinned:
        packer.place(slot, 0)
    for slot in slots:
        slot.full_cost = packer.section(slot, 0)[1] if not slot.cand.pinned else slot.cost

    paged_slots: list[_Slot] = []
    if budget is None:
        for slot in others:
            packer.place(slot, 0)
    else:
        pinned_cost = sum(s.cost for s in pinned)
        if fixed + pinned_cost > budget:
            sizes = ", ".join(f"{s.src.path} ({s.cost} tokens)" for s in pinned)
            raise BudgetError(
                f"the budget of {budget} tokens cannot hold the pinned items alone, which need "
                f"{fixed + pinned_cost} tokens: {sizes}; raise the budget or shorten or unpin them"
            )
        target = budget
        for _attempt in range(12):
            page_used = 0
            if paged and page_share > 0 and query:
                paged_slots = _page_in(ctx, packer, paged, rev, seen, int((target - fixed - pinned_cost) * page_share), len(candidates))
                page_used = sum(s.cost for s in paged_slots)
            packer.fit(pinned, others, target, fixed + page_used)
            text = _join(header_text, slots, paged_slots)
            total = counter.count(text)
            if total <= budget:
                break
            # Token merges at the joins cost more than the per-section sums: aim lower.
            target -= max(1, total - budget)
            if target < fixed + pinned_cost:
                raise BudgetError(
                    f"the budget of {budget} tokens cannot hold the pinned items once joined; raise the budget"
                )
        else:  # pragma: no cover - each attempt lowers the target by at least the overshoot
            raise BudgetError(f"could not pack within {budget} tokens; raise the budget")

    text = _join(header_text, slots, paged_slots)
    total = counter.count(text)
    items: list[ViewItem] = []
    manifest: list[tuple[str, str]] = []
    for slot in _ordered(slots) + paged_slots:
        if slot.level >= _DROPPED:
            dropped.append(DroppedItem(slot.src.path, f"over budget: {slot.cand.reason}", slot.full_cost - _SEP, slot.src.version))
            continue
        tier = TIERS[slot.level]
        items.append(ViewItem(
            slot.src.path, tier, slot.cost - _SEP, slot.src.version, slot.cand.reason,
            slot.cand.priority, slot.cand.pinned, _lines_of(slot.text) if tier == "excerpt" else None,
        ))
        manifest.append((slot.src.path, slot.src.version))
    return ContextView(
        text=text, tokens=total, budget=budget, items=tuple(items), dropped=tuple(dropped),
        manifest=tuple(manifest), encoding=counter.name or counter.requested, query=query, as_of=rev,
    )


def _make_slot(
    ctx: Any, cand: Candidate, order: int, rev: str | None, seen: set[str], dropped: list[DroppedItem], paged: bool = False
) -> _Slot | None:
    if cand.path in seen:
        return None
    src = load_or_drop(ctx, cand, rev)
    if isinstance(src, DroppedItem):
        dropped.append(src)
        return None
    seen.add(cand.path)
    if src is None:
        if not paged:
            dropped.append(DroppedItem(cand.path, f"not found: {cand.reason}"))
        return None
    if src.trust == "quarantined":
        dropped.append(DroppedItem(src.path, "quarantined: shown only on explicit request", 0, src.version))
        return None
    if not src.body.strip():
        if not paged:
            dropped.append(DroppedItem(src.path, "empty", 0, src.version))
        return None
    return _Slot(cand, src, order, paged)


def _page_in(
    ctx: Any, packer: _Packer, paged: Sequence[Candidate], rev: str | None, seen: set[str], share: int, base: int
) -> list[_Slot]:
    """Fill ``share`` tokens with ranked hits: whole small files, excerpts of large ones."""
    out: list[_Slot] = []
    left = share
    taken = set(seen)
    for i, cand in enumerate(paged):
        if left < MIN_EXCERPT_TOKENS:
            break
        slot = _make_slot(ctx, cand, base + i, rev, taken, [], paged=True)
        if slot is None:
            continue
        text, cost = packer.section(slot, 0)
        slot.full_cost = cost
        # A whole file only when it leaves room for the next hits; else the passages that match.
        if text is not None and cost <= left and cost <= share // 3:
            slot.level, slot.text, slot.cost = 0, text, cost
        else:
            allowance = min(left, max(share // 2, MIN_EXCERPT_TOKENS))
            # Paged excerpts carry only the passages that match; the rest of the share
            # goes to the next hit.
            text, cost = packer.section(slot, TIERS.index("excerpt"), allowance, only_matches=True)
            if text is None or cost > left:
                continue
            slot.level, slot.text, slot.cost = TIERS.index("excerpt"), text, cost
        out.append(slot)
        left -= slot.cost
    return out


def _ordered(slots: list[_Slot]) -> list[_Slot]:
    return sorted(slots, key=lambda s: (not s.cand.pinned, s.key))


def _join(header: str | None, slots: list[_Slot], paged: list[_Slot]) -> str:
    parts = [header] if header else []
    parts += [s.text for s in _ordered(slots) if s.text is not None and s.level < _DROPPED]
    parts += [s.text for s in paged if s.text is not None]
    return "\n\n".join(parts)
