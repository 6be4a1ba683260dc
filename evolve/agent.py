"""The evolving agent: after every task, record what was learned.

``await EvolvingAgent(ctx, llm).complete_task(task, result, success)`` archives
``task/current.md`` to ``task/history/``, records a lesson in ``memory/lessons.md`` when
the task failed, and adds new facts to ``memory/facts.md`` unless the model says there
are none. On the way:

* every model call happens *before* anything is written, and a failing or malformed
  answer raises :class:`EvolveError` with the tree and history untouched;
* the whole outcome is one commit, ``evolve: <task>`` with a ``Contextfs-Task`` trailer
  (and the session trailer every write carries, so ``ctx.revert_session`` undoes it);
* entries are structured and deduplicated (:mod:`.entries`), emotional colouring is
  filtered (:mod:`.hygiene`), and instruction-like text is never promoted
  (:func:`contextfs.poisoning.assess`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfs import clock
from contextfs.document import as_content
from contextfs.errors import EvolveError
from contextfs.manager import ContextManager
from contextfs.paths import slugify
from contextfs.poisoning import assess
from contextfs.scopes.topics import Topics

from . import prompts
from .cleanup import CleanupReport
from .cleanup import cleanup as run_cleanup
from .compaction import CompactionResult
from .compaction import compact as compact_history
from .entries import Change, EntryFile, Kind
from .hygiene import clean, rewrite_with_model
from .llm import LanguageModel, ask, require_model, run_sync
from .parsing import extract_items, find_json, strip_chatter
from .summaries import Summary
from .summaries import summarize as summarize_file
from .summaries import summarize_all as summarize_files

__all__ = ["EvolvingAgent", "Outcome", "Rejected", "parse_lesson"]

log = logging.getLogger(__name__)

CURRENT = "task/current.md"
HISTORY = "task/history"
LESSONS = "memory/lessons.md"
FACTS = "memory/facts.md"
_TITLES = {LESSONS: "Lessons learned", FACTS: "Facts"}


@dataclass(frozen=True)
class Rejected:
    """A candidate that was not persisted, and why (emotional, instruction-like...)."""

    kind: str
    text: str
    reason: str


@dataclass(frozen=True)
class Outcome:
    """What one ``complete_task`` call wrote (``commit`` is None when nothing changed)."""

    task: str
    success: bool
    commit: str | None
    archived: str | None
    lessons: tuple[Change, ...] = ()
    facts: tuple[Change, ...] = ()
    rejected: tuple[Rejected, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass
class _Candidate:
    kind: str  # "lesson" | "fact"
    text: str
    title: str | None = None
    same_as: str | None = None
    supersedes: str | None = None


def _title_of(text: str, words: int = 8) -> str:
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    parts = first.rstrip(".").split()
    return " ".join(parts[:words]) + ("..." if len(parts) > words else "")


def parse_lesson(text: str) -> tuple[str | None, str] | None:
    """(title, lesson) from the model's answer; None when it says nothing was learned.

    Accepts the JSON the prompt asks for (with chatter around it) or a plain prose
    lesson (a model that ignores the format still teaches something). Broken JSON is an error.
    """
    found, value = find_json(text)
    if found:
        if isinstance(value, list):
            value = value[0] if value else {"lesson": None}
        if isinstance(value, str):
            value = {"lesson": value}
        if not isinstance(value, dict) or "lesson" not in value and "text" not in value:
            raise EvolveError("the model's lesson is JSON without a 'lesson' field; retry the step")
        lesson = value.get("lesson", value.get("text"))
        if lesson is None:
            return None
        if not isinstance(lesson, str) or not lesson.strip():
            raise EvolveError("the model's lesson is empty or not text; retry the step")
        title = value.get("title")
        return (title.strip() if isinstance(title, str) and title.strip() else None), lesson.strip()
    items = extract_items(text, what="lesson") if re.search(r"^\s*[-*+]\s", text, re.M) else None
    if items == []:
        return None
    if items:
        return None, " ".join(it["text"] for it in items)
    prose = strip_chatter(text)
    if prose[:1] in "{[" or "```" in text:
        raise EvolveError("the model's lesson looks like broken JSON; retry the step")
    if not prose:
        raise EvolveError("the model's lesson is empty; retry the step")
    return None, " ".join(prose.split())


class EvolvingAgent:
    """Improves a context root after work; ``llm`` is any LangChain chat model or None.

    >>> agent = EvolvingAgent(ctx, llm)                       # doctest: +SKIP
    >>> await agent.complete_task("Fix login", "Token expired", success=False)  # doctest: +SKIP
    """

    def __init__(self, ctx: ContextManager, llm: LanguageModel | None = None) -> None:
        self.ctx = ctx
        self.llm = llm

    # ------------------------------------------------------------ completing a task
    async def complete_task(self, task: str, result: str, success: bool) -> Outcome:
        """Archive the task, learn a lesson on failure and new facts; one commit."""
        task, result = self._check(task, result)
        require_model(self.llm, "extracting lessons and facts from a task", offline="model-or-archive")
        facts_now = EntryFile(self.ctx.read(FACTS), "fact")
        candidates: list[_Candidate] = []
        if not success:
            answer = await ask(self.llm, prompts.lesson_messages(task, result), step="lesson extraction")
            parsed = parse_lesson(answer)
            if parsed is not None:
                title, lesson = parsed
                candidates.append(_Candidate("lesson", lesson, title or _title_of(lesson)))
        answer = await ask(
            self.llm, prompts.facts_messages(task, result, facts_now.existing()), step="fact extraction"
        )
        for item in extract_items(answer, what="fact list"):
            same, sup = item.get("same_as"), item.get("supersedes")
            candidates.append(_Candidate(
                "fact", item["text"],
                same_as=same if isinstance(same, str) else None,
                supersedes=sup if isinstance(sup, str) else None,
            ))
        kept, rejected, notes = await self._screen(candidates)
        return self._commit(task, result, success, kept, rejected, notes)

    def complete_task_sync(self, task: str, result: str, success: bool) -> Outcome:
        """``complete_task`` for synchronous code (also works inside a running loop)."""
        return run_sync(self.complete_task(task, result, success))

    def archive_task(self, task: str, result: str, success: bool) -> Outcome:
        """The offline part of ``complete_task``: archive task/current.md, learn nothing."""
        task, result = self._check(task, result)
        return self._commit(task, result, success, [], [],
                            notes=("no model configured: lessons and facts were not extracted",))

    # ------------------------------------------------------------ other steps
    def summarize(self, path: str) -> Summary:
        """Write ``abstract``/``overview`` for one file (see :mod:`.summaries`)."""
        return summarize_file(self.ctx, path, llm=self.llm)

    def summarize_all(self, stale_only: bool = True) -> list[Summary]:
        """Summarize every markdown file (or only stale ones); one commit."""
        return summarize_files(self.ctx, llm=self.llm, stale_only=stale_only)

    def compact(self, history: Sequence[Any], topics: Topics, **options: Any) -> CompactionResult:
        """Compact a conversation span into a summary and topic updates (see :mod:`.compaction`)."""
        return compact_history(history, topics, llm=self.llm, **options)

    def cleanup(self, older_than_days: float = 30, dry_run: bool = False) -> CleanupReport:
        """Archive files nobody read for ``older_than_days`` and merge duplicate lessons; one commit."""
        return run_cleanup(self.ctx, older_than_days=older_than_days, dry_run=dry_run, llm=self.llm)

    # ------------------------------------------------------------ internals
    @staticmethod
    def _check(task: str, result: str) -> tuple[str, str]:
        if not isinstance(task, str) or not task.strip():
            raise EvolveError("complete_task needs a non-empty task description; pass what the task was")
        if not isinstance(result, str):
            raise EvolveError("complete_task needs the result as text; pass str(result)")
        return " ".join(task.split()), result.strip()

    async def _screen(self, candidates: list[_Candidate]) -> tuple[list[_Candidate], list[Rejected], tuple[str, ...]]:
        """Sentiment hygiene, then the poisoning guard; model rewrites happen here, before writing.

        The model's rewrite is an auxiliary step: when its answer is malformed, each item
        keeps what the deterministic filter made of it (kept or dropped by its rules), the
        fallback is reported in the outcome's notes, and the task's lesson and facts stand.
        """
        rejected: list[Rejected] = []
        notes: list[str] = []
        cleaned: list[tuple[_Candidate, str | None]] = []
        flagged: list[int] = []
        for i, cand in enumerate(candidates):
            res = clean(cand.text)
            cleaned.append((cand, res.text))
            if res.flagged:
                flagged.append(i)
        if flagged and self.llm is not None:
            try:
                rewrites = await rewrite_with_model(self.llm, [candidates[i].text for i in flagged])
            except EvolveError as exc:
                note = f"sentiment rewrite skipped ({exc}); the deterministic filter decided {len(flagged)} item(s)"
                log.warning("evolve: %s", note)
                notes.append(note)
            else:
                for i, text in zip(flagged, rewrites, strict=True):
                    cleaned[i] = (candidates[i], text)
        kept: list[_Candidate] = []
        for cand, text in cleaned:
            if text is None:
                rejected.append(Rejected(cand.kind, cand.text, "emotional, no operational content"))
                continue
            verdict = assess(text)
            title_verdict = assess(cand.title or "")
            if verdict.suspicious or title_verdict.suspicious:
                reasons = ", ".join(verdict.reasons + title_verdict.reasons)
                log.info("not promoting instruction-like %s: %r (%s)", cand.kind, text, reasons)
                rejected.append(Rejected(cand.kind, cand.text, f"instruction-like ({reasons})"))
                continue
            title = clean(cand.title).text if cand.title else None
            kept.append(_Candidate(cand.kind, text, title, cand.same_as, cand.supersedes))
        return kept, rejected, tuple(notes)

    def _archive_path(self, task: str) -> str:
        stamp = clock.now().strftime("%Y%m%d-%H%M")
        return self.ctx.free_path(f"{HISTORY}/{stamp}-{slugify(task, max_len=40, default='task')}")

    def _archive(self, task: str, result: str, success: bool) -> str | None:
        if not self.ctx.exists(CURRENT):
            return None
        doc = self.ctx.get(CURRENT)
        path = self._archive_path(task)
        status = "succeeded" if success else "failed"
        record = clean(result).text or "(the result held no operational detail)"
        meta = {k: v for k, v in doc.metadata.items() if k not in ("created", "updated", "author", "session", "turn")}
        meta.update({"archived_from": CURRENT, "task": task, "outcome": status})
        if assess(result).suspicious:
            meta["trust"] = "untrusted"
        body = doc.body.rstrip("\n") + f"\n\n## Outcome ({status}, {clock.iso()})\n\n{record}\n"
        self.ctx.write(path, as_content(path, body), metadata=meta)
        return path

    def _apply(self, path: str, kind: Kind, cands: list[_Candidate], task: str, source: str | None) -> list[Change]:
        if not cands:
            return []
        current = self.ctx.read(path)
        file = EntryFile(current, kind)
        date = clock.now().date().isoformat()
        changes = [
            file.add(c.text, title=c.title, date=date, task=task, source=source,
                     same_as=c.same_as, supersedes=c.supersedes)
            for c in cands
        ]
        rendered = file.render()
        if rendered != current:
            meta = None if current is not None else {"title": _TITLES[path]}
            self.ctx.write(path, as_content(path, rendered), metadata=meta)
        return changes

    def _commit(self, task: str, result: str, success: bool, kept: list[_Candidate],
                rejected: list[Rejected], notes: tuple[str, ...] = ()) -> Outcome:
        head = self.ctx.git.head()
        source = head[:12] if head else None
        with self.ctx.transaction(f"evolve: {task}", op="evolve", trailers={"Contextfs-Task": task}):
            archived = self._archive(task, result, success)
            lessons = self._apply(LESSONS, "lesson", [c for c in kept if c.kind == "lesson"], task, source)
            facts = self._apply(FACTS, "fact", [c for c in kept if c.kind == "fact"], task, source)
        after = self.ctx.git.head()
        commit = after if after != head else None
        log.info("evolve: %s -> %d lesson(s), %d fact(s), %d rejected", task, len(lessons), len(facts), len(rejected))
        return Outcome(task=task, success=success, commit=commit, archived=archived,
                       lessons=tuple(lessons), facts=tuple(facts), rejected=tuple(rejected), notes=notes)
