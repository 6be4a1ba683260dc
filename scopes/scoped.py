"""``ScopedContext``: the context an agent sees for a project, task or subtask scope.

Without a budget, :meth:`ScopedContext.get_context` returns the scope's whole files as
plain ``## <path>`` sections joined by ``---`` (a stable format callers parse).
:meth:`ScopedContext.assemble` is the budgeted form: it turns the scope rules into ranked candidates, optionally pages in the best
matches for a query from the rest of the tree, and hands everything to the packer, which
guarantees ``view.tokens <= budget`` and explains every choice in ``view.items`` and
``view.dropped``. With ``as_of=REV`` every byte is read from that commit, so an auditor
gets exactly the view the agent got when REV was the head.

>>> scoped = ScopedContext(ctx, budget=2000)                      # doctest: +SKIP
>>> view = scoped.assemble("task", query="webhook retry schedule")  # doctest: +SKIP
>>> view.tokens <= 2000                                            # doctest: +SKIP
True
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextfs.errors import (
    ConfigError,
    ContextFSError,
    InvalidArgumentError,
    NotFoundError,
    TopicError,
)
from contextfs.fencing import seal
from contextfs.fixes import Fix

from .arguments import check_choice, check_int, check_number, check_strings, check_text
from .packing import (
    Candidate,
    ContextView,
    DroppedItem,
    PagedPassage,
    ViewItem,
    load_or_drop,
    pack,
    resolve_rev,
)
from .pagein import PAGERS, rank, relevance
from .passages import chunks_of
from .rules import SCOPES, Rule, ScopeRules, check_subtask_id, glob_base, match, rules_from_config
from .tiers import Source, flags, plain_section, render
from .topics.files import DECISIONS_FILE, TOPIC_FILE, TOPICS_DIR, WHERE_FILE
from .views import left_out_note

if TYPE_CHECKING:
    from contextfs.manager import ContextManager

__all__ = ["ContextView", "DroppedItem", "PassageHit", "ScopedContext", "ViewItem"]

log = logging.getLogger(__name__)

#: How many ranked passages page-in considers (it stops earlier when the budget is spent).
PAGE_IN_LIMIT = 400
_TOPIC_FILES = ((WHERE_FILE, 8), (TOPIC_FILE, 12), (DECISIONS_FILE, 15))


def scope_for(scope: str | None, subtask_id: str | None) -> str:
    """The scope a call asks for: as given, else the subtask scope when a subtask is named,
    else the task scope (every interface leaves the scope out the same way)."""
    if scope is None:
        return "subtask" if subtask_id is not None else "task"
    return check_choice(scope, "scope", SCOPES)


@dataclass(frozen=True)
class PassageHit:
    """One passage that matches a query: where it is, what it says, and how well it matches.

    ``note`` is a conversation turn's date and speaker ("2023-05-08 13:56 · Caroline"),
    ``heading`` the section a markdown passage sits in.
    """

    path: str
    first: int
    last: int
    text: str
    score: float
    heading: str = ""
    note: str = ""

    @property
    def lines(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "lines": self.lines, "text": self.text, "score": round(self.score, 4),
                "heading": self.heading, "note": self.note}


class ScopedContext:
    """Delivers the context for a scope, within a token budget when one is set."""

    def __init__(
        self,
        ctx: ContextManager,
        budget: int | None = None,
        rules: ScopeRules | Mapping[str, Any] | None = None,
        encoding: str | None = None,
        *,
        page_share: float | None = None,
        pager: str = "exact",
    ) -> None:
        self.ctx = ctx
        if budget is not None:
            check_int(budget, "budget", minimum=1, expect="a positive number of tokens", fix="pass e.g. budget=2000",
                      error=ConfigError)
        self.budget = budget
        if rules is None:
            rules = rules_from_config(ctx.config)
        elif isinstance(rules, Mapping):
            rules = rules_from_config(rules if "scopes" in rules else {"scopes": rules})
        elif not isinstance(rules, ScopeRules):
            raise ConfigError("rules must be a ScopeRules or a mapping like the [scopes] table of config.toml")
        self.rules = rules
        self.encoding = encoding or rules.encoding
        share = rules.page_share if page_share is None else page_share
        self.page_share = check_number(share, "page_share", low=0, high=0.9, fix=f"the default is {rules.page_share}",
                                       error=ConfigError)
        self.pager = check_choice(pager, "pager", PAGERS, error=ConfigError)

    @property
    def SCOPE_RULES(self) -> dict[str, list[str]]:  # noqa: N802 - a public name callers already use
        """The rule paths per level as a plain dict of lists (read-only view of ``rules``)."""
        return {level: [r.path for r in rules] for level, rules in self.rules.levels.items()}

    # ------------------------------------------------------------ candidates
    def _listing(self, folder: str, rev: str | None, cache: dict[str, list[str]]) -> list[str]:
        if folder not in cache:
            if rev is None:
                try:
                    cache[folder] = self.ctx.list(folder)
                except ContextFSError as exc:
                    raise ConfigError(f"scope rule folder {folder!r} is not usable ({exc}); fix .contextfs/config.toml") from None
            else:
                cache[folder] = sorted(self.ctx.git.files_at(rev, folder))
        return cache[folder]

    def _expand(self, rule: Rule, subtask_id: str | None, rev: str | None, cache: dict[str, list[str]]) -> list[str]:
        pattern = rule.expand(subtask_id)
        if pattern is None:
            return []
        if rule.is_glob:
            return [p for p in match(pattern, self._listing(glob_base(pattern), rev, cache)) if p.endswith(".md")]
        folder = pattern.rsplit("/", 1)[0] if "/" in pattern else ""
        return [pattern] if pattern in self._listing(folder, rev, cache) else []

    def subtasks(self, *, as_of: str | None = None) -> list[str]:
        """The ids of the subtasks that have a file (``task/subtasks/<id>.md`` by default)."""
        return sorted(self._subtask_ids(resolve_rev(self.ctx, as_of), {}))

    def _subtask_ids(self, rev: str | None, cache: dict[str, list[str]]) -> set[str]:
        found: set[str] = set()
        for rule in self.rules.levels.get("subtask", ()):
            if "{subtask}" in rule.path:
                folder = glob_base(rule.path.replace("{subtask}", "*"))
                found |= rule.subtask_ids(self._listing(folder, rev, cache))
        return found

    def _check_subtask(self, scope: str, subtask_id: str | None, rev: str | None, cache: dict[str, list[str]]) -> str | None:
        """The subtask id, checked against the scope and the tree: a view is never silently
        assembled without the subtask it was asked for."""
        subtask_id = check_subtask_id(subtask_id)
        if scope != "subtask":
            if subtask_id is not None:
                raise InvalidArgumentError(f"subtask {subtask_id!r} was given for the {scope} scope, which has no "
                                           "subtask", fix=Fix("subtask-scope"))
            return None
        per_subtask = [r for r in self.rules.levels.get("subtask", ()) if "{subtask}" in r.path]
        if not per_subtask:  # rules that name no per-subtask file: nothing to look for
            return subtask_id
        if subtask_id is not None and any(self._expand(r, subtask_id, rev, cache) for r in per_subtask):
            return subtask_id
        known = sorted(self._subtask_ids(rev, cache))
        listed = f"the subtasks are: {', '.join(known)}" if known else "there are no subtasks yet"
        if subtask_id is None:
            raise InvalidArgumentError(f"the subtask scope needs a subtask id ({listed})",
                                       fix=Fix("subtask") if known else Fix("write", per_subtask[0].path.replace("{subtask}", "<id>")))
        missing = per_subtask[0].expand(subtask_id) or ""
        raise NotFoundError(f"subtask {subtask_id!r} has no file {missing} ({listed})", path=missing,
                            fix=Fix("list", glob_base(missing)) if per_subtask[0].is_glob else Fix("write", missing))

    def candidates(
        self, scope: str | None = None, subtask_id: str | None = None, *, topic: str | None = None,
        as_of: str | None = None,
    ) -> list[Candidate]:
        """The scope's items as packer candidates, most important first."""
        scope = scope_for(scope, subtask_id)
        rev = resolve_rev(self.ctx, as_of)
        cache: dict[str, list[str]] = {}
        subtask_id = self._check_subtask(scope, subtask_id, rev, cache)
        out: list[Candidate] = []
        seen: set[str] = set()
        rules = self.rules.rules_for(scope)
        for rule in sorted(rules, key=lambda r: (not r.pinned, r.priority)):
            for path in self._expand(rule, subtask_id, rev, cache):
                if path in seen:
                    continue
                seen.add(path)
                reason = rule.reason.replace("{subtask}", subtask_id or "") or f"{scope} scope"
                out.append(Candidate(path, reason, rule.priority, pinned=rule.pinned, min_tier=rule.min_tier))
        if topic is not None:
            out.extend(self._topic_candidates(topic, rev, cache, seen))
        return out

    def _topic_candidates(self, topic: str, rev: str | None, cache: dict[str, list[str]], seen: set[str]) -> list[Candidate]:
        slug = check_subtask_id(topic)
        folder = f"{TOPICS_DIR}/{slug}"
        present = set(self._listing(folder, rev, cache))
        found = [
            Candidate(f"{folder}/{name}", f"topic {slug}: {name}", priority)
            for name, priority in _TOPIC_FILES
            if f"{folder}/{name}" in present and f"{folder}/{name}" not in seen
        ]
        if not any(f"{folder}/{name}" in present for name, _ in _TOPIC_FILES):
            raise TopicError(f"topic {slug!r} has no files under {folder}/; list topics with `contextfs topic list`")
        return found

    # ------------------------------------------------------------ passages
    def passages(self, query: str, *, limit: int = 10, as_of: str | None = None) -> list[PassageHit]:
        """The ``limit`` passages of the whole tree that best match ``query``, best first.

        The ranking page-in uses (BM25 over paragraphs, sentence windows of long prose and
        conversation turns, at ``as_of`` when given): what a view would page in, as a list.
        """
        check_text(query, "query", fix="pass a few words to look for")
        limit = check_int(limit, "limit", minimum=1, fix="pass how many passages to return, e.g. 10")
        rev = resolve_rev(self.ctx, as_of)
        out: list[PassageHit] = []
        sources: dict[str, Any] = {}
        for p in rank(self.ctx, query, rev=rev, exclude=set(), limit=limit):
            if p.path not in sources:
                sources[p.path] = load_or_drop(self.ctx, Candidate(p.path, "passage", 0), rev)
            src = sources[p.path]
            if not isinstance(src, Source):
                continue
            chunks = chunks_of(src.body, src.line_offset, src.path)
            if 0 <= p.index < len(chunks):
                ch = chunks[p.index]
                out.append(PassageHit(p.path, ch.first, ch.last, ch.text, p.score, ch.heading, ch.note))
        return out

    # ------------------------------------------------------------ views
    def get_context(self, scope: str | None = None, subtask_id: str | None = None) -> str:
        """The scope's context as text: whole files in the plain format without a budget, a packed view with one."""
        scope = scope_for(scope, subtask_id)
        budget = self.budget or self.rules.budgets.get(scope)
        if budget is not None:
            return self.assemble(scope, subtask_id, budget=budget).text
        return self._plain_text(scope, subtask_id)

    def _plain_text(self, scope: str, subtask_id: str | None) -> str:
        """``## <path>\n<body>`` sections joined by ``---``: pinned core memory, project, task,
        subtask (labelled ``Subtask: <id>``), then lessons (labelled ``Lessons Learned``)."""
        subtask_id = self._check_subtask(scope, subtask_id, None, {})
        levels = SCOPES[scope]
        order = {"pinned": 0, "project": 1, "task": 2, "subtask": 3, "lessons": 4}
        keyed: list[tuple[int, int, int, str, str]] = []
        seen: set[str] = set()
        for level in levels:
            for i, rule in enumerate(self.rules.levels.get(level, ())):
                group = "pinned" if rule.pinned else ("lessons" if level == "always" else level)
                for path in self._expand(rule, subtask_id, None, {}):
                    if path not in seen:
                        seen.add(path)
                        keyed.append((order[group], rule.priority if group == "pinned" else i, len(keyed), path, level))
        parts: list[str] = []
        left_out: list[DroppedItem] = []
        for _, _, _, path, level in sorted(keyed):
            src = load_or_drop(self.ctx, Candidate(path, "", 0), None)  # unreadable: logged, left out
            if isinstance(src, DroppedItem):
                left_out.append(src)
            elif isinstance(src, Source) and src.trust == "quarantined":
                left_out.append(DroppedItem(path, "quarantined: shown only on explicit request"))
            if not isinstance(src, Source) or not src.body or src.trust == "quarantined":
                continue
            # Untrusted or flagged text is fenced as the packer fences it (render's rule).
            body = src.body if src.trust == "trusted" and not flags(src.body) \
                else (render(src, "full") or "").partition("\n")[2]
            if level == "subtask" and subtask_id:
                label = f"Subtask: {subtask_id}"
            elif path == "memory/lessons.md":
                label = "Lessons Learned"
            else:
                label = path
            parts.append(seal(plain_section(label, body), "the view's headings"))
        text = "\n\n---\n\n".join(parts)
        notes = "\n".join(left_out_note(d) for d in left_out)  # a reader sees what is missing, and why
        return f"{text}\n\n{notes}" if text and notes else text or notes

    def assemble(
        self,
        scope: str | None = None,
        subtask_id: str | None = None,
        *,
        budget: int | None = None,
        query: str | None = None,
        topic: str | None = None,
        as_of: str | None = None,
        extra: Sequence[Candidate] = (),
        header: str | None = None,
        skip: Sequence[str] = (),
    ) -> ContextView:
        """A :class:`ContextView` of the scope, within ``budget`` (or the configured one).

        ``extra`` candidates are packed with the scope's items under the same budget (a
        caller's own sections: an agent's topic context, a conversation summary); on the
        same path, the more important candidate wins. ``header`` opens the view (counted in
        the budget); page-in never takes passages from folders listed in ``skip``.
        """
        scope = scope_for(scope, subtask_id)
        check_text(query, "query", optional=True, fix="pass a few words to page in matching files, or None")
        check_text(header, "header", optional=True, fix="pass the view's opening line as text, or None")
        skipped = tuple(f"{p.strip('/')}/" for p in check_strings(skip, "skip", fix="pass folder names like ['sessions']"))
        budget = budget if budget is not None else (self.budget or self.rules.budgets.get(scope))
        rev = resolve_rev(self.ctx, as_of)
        cands = self.candidates(scope, subtask_id, topic=topic, as_of=rev) + list(extra)
        paged: list[PagedPassage] = []
        scores: dict[str, float] = {}
        if query and budget is not None and self.page_share > 0:
            exclude = {c.path for c in cands}
            # Topics are isolated contexts: page-in never mixes another topic's files into
            # a view; only the topic the view was asked for (topic=...) may contribute.
            own = f"{TOPICS_DIR}/{check_subtask_id(topic)}/" if topic is not None else None
            ranked = rank(self.ctx, query, rev=rev, exclude=exclude, limit=PAGE_IN_LIMIT,
                          pager=self.pager if rev is None else "exact",
                          allow=lambda p: (not p.startswith(f"{TOPICS_DIR}/") or bool(own and p.startswith(own)))
                          and not p.startswith(skipped))
            paged = [PagedPassage(p.path, p.index, p.score) for p in ranked]
            scores = relevance(self.ctx, query, [c.path for c in cands if not c.pinned], rev=rev)
        view = pack(
            self.ctx, cands, budget, query=query, encoding=self.encoding, as_of=rev, header=header,
            paged=paged, page_share=self.page_share, relevance=scores,
        )
        view.meta.update({"scope": scope, "subtask": subtask_id, "topic": topic})
        return view

