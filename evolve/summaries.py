"""Better ``abstract`` (L0, one line) and ``overview`` (L1, a paragraph) frontmatter.

The scoped-context tiers show a file at these levels when its body does not fit. Each
summary records the git blob id of the body it describes (``summary_of``), so
``summarize_all(stale_only=True)`` redoes exactly the files whose body changed since.
Hand-written summaries (an ``abstract`` and ``overview`` without ``summary_of``) are
left alone, even by ``stale_only=False``; naming a file in ``paths`` redoes it anyway.

With a model the summaries are written by it; without one they are extractive (first
heading and leading sentences, the same deterministic rule the tiers use), and
``summary_by`` says which, so nobody mistakes one for the other. A file that is a log of
records — a heading per item, each followed only by ``- field: value`` lines, as decision
logs and lesson files are — is summarized by its item headings instead, since its first
sentence is one field of one item.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from contextfs import paths
from contextfs.document import Document, blob_version, decode, parse
from contextfs.errors import ContextFSError, EvolveError
from contextfs.manager import ContextManager
from contextfs.poisoning import assess
from contextfs.scopes.tiers import clip, extract_abstract, extract_overview
from contextfs.tokens import get_counter

from . import prompts
from .llm import LanguageModel, ask, run_sync
from .parsing import extract_json

__all__ = ["Summary", "body_hash", "is_stale", "record_headings", "summarize", "summarize_all"]

log = logging.getLogger(__name__)

#: Model input is capped so one huge file cannot blow the context window.
MAX_INPUT_TOKENS = 6000
_MAX_ABSTRACT = 240
_MAX_OVERVIEW = 1500
_ITEM_HEADING = re.compile(r"#{2,4}[ \t]+(\S.*?)[ \t]*#*")
_FIELD_LINE = re.compile(r"[-*][ \t]+[A-Za-z_][\w-]*[ \t]*:.*")


@dataclass(frozen=True)
class Summary:
    """The summary written (or, in a dry listing, that would be written) for one file."""

    path: str
    abstract: str
    overview: str
    summary_by: str
    summary_of: str


def body_hash(body: str) -> str:
    """The git blob id of the body text: what ``summary_of`` records."""
    return blob_version(body.encode("utf-8"))


def is_stale(doc: Document) -> bool:
    """True when the file lacks a summary or its body changed since its summary."""
    meta = doc.metadata
    if not str(meta.get("abstract") or "").strip() or not str(meta.get("overview") or "").strip():
        return True
    recorded = meta.get("summary_of")
    if recorded is None:
        return False  # written by a person: respect it
    return recorded != body_hash(doc.body)


def _is_person_summary(doc: Document) -> bool:
    meta = doc.metadata
    return bool(str(meta.get("abstract") or "").strip() and str(meta.get("overview") or "").strip()
                and meta.get("summary_of") is None)


def record_headings(body: str) -> list[str]:
    """The item headings of a log of records (two or more headings, every line under each
    a ``- field: value`` line or blank), else []."""
    headings: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        heading = _ITEM_HEADING.fullmatch(stripped)
        if heading:
            headings.append(heading.group(1))
        elif stripped and headings and not _FIELD_LINE.fullmatch(stripped):
            return []
    return headings if len(headings) >= 2 else []


def _extractive(doc: Document) -> tuple[str, str]:
    title = doc.metadata.get("title") if isinstance(doc.metadata.get("title"), str) else None
    items = record_headings(doc.body)
    if items:
        head = title or doc.title
        return (clip(f"{head}: {'; '.join(items)}", 30),
                clip(f"{head}, {len(items)} entries: {'; '.join(items)}", 100))
    abstract = extract_abstract(doc.body, title) or doc.title
    overview = extract_overview(doc.body, title) or abstract
    return abstract, overview


async def _from_model(llm: LanguageModel | None, doc: Document) -> tuple[str, str]:
    body = get_counter().truncate(doc.body, MAX_INPUT_TOKENS)
    text = await ask(llm, prompts.summary_messages(doc.path, doc.title, body), step=f"summarizing {doc.path}")
    value = extract_json(text, what=f"summary of {doc.path}")
    if not isinstance(value, dict):
        raise EvolveError(f"the model's summary of {doc.path} is not a JSON object; retry")
    abstract, overview = value.get("abstract"), value.get("overview")
    if not isinstance(abstract, str) or not abstract.strip() or not isinstance(overview, str) or not overview.strip():
        raise EvolveError(f"the model's summary of {doc.path} lacks an abstract or overview; retry")
    abstract = " ".join(abstract.split())[:_MAX_ABSTRACT]
    overview = " ".join(overview.split())[:_MAX_OVERVIEW]
    for part in (abstract, overview):
        verdict = assess(part)
        if verdict.suspicious:
            raise EvolveError(
                f"the model's summary of {doc.path} reads as an instruction ({', '.join(verdict.reasons)}); "
                "nothing was written; check the file for injected text"
            )
    return abstract, overview


async def _build(ctx: ContextManager, docs: Iterable[Document], llm: LanguageModel | None) -> list[Summary]:
    out = []
    for doc in docs:
        if llm is None:
            abstract, overview, by = *_extractive(doc), "extractive"
        else:
            abstract, overview, by = *(await _from_model(llm, doc)), "model"
        out.append(Summary(doc.path, abstract, overview, by, body_hash(doc.body)))
    return out


def _write(ctx: ContextManager, summaries: list[Summary], message: str) -> None:
    if not summaries:
        return
    with ctx.transaction(message, op="evolve", trailers={"Contextfs-Task": "summarize"}):
        for s in summaries:
            ctx.update_metadata(s.path, {
                "abstract": s.abstract, "overview": s.overview,
                "summary_by": s.summary_by, "summary_of": s.summary_of,
            })


def _peek(ctx: ContextManager, path: str) -> Document:
    """Read without counting as an access: summarizing is not reading for cleanup."""
    rel = paths.check(ctx.root, path)
    data = ctx.read_raw(rel)
    if data is None:
        return ctx.get(rel)  # raises the usual NotFoundError
    return parse(decode(data, rel), rel, version=blob_version(data))


def summarize(ctx: ContextManager, path: str, *, llm: LanguageModel | None = None) -> Summary:
    """Write ``abstract``/``overview`` for one file (model first, then one commit)."""
    doc = _peek(ctx, path)
    [summary] = run_sync(_build(ctx, [doc], llm))
    _write(ctx, [summary], f"evolve: summarize {doc.path}")
    return summary


def _markdown_files(ctx: ContextManager) -> list[str]:
    return [p for p in ctx.list("") if p.endswith(".md")]


def summarize_all(
    ctx: ContextManager, *, llm: LanguageModel | None = None, stale_only: bool = True, dry_run: bool = False,
    paths: Sequence[str] | None = None,
) -> list[Summary]:
    """Summarize every markdown file (or only stale ones), or just ``paths``; one commit.

    ``stale_only=False`` redoes every summary the library wrote, never a person's; files
    named in ``paths`` are summarized whatever they hold. ``dry_run`` lists the files
    without summarizing them. Every model call happens before the commit; one failure
    writes nothing.
    """
    docs = []
    for rel in paths if paths is not None else _markdown_files(ctx):
        try:
            doc = _peek(ctx, rel)
        except ContextFSError as exc:  # an unreadable file must not stop the others
            if paths is not None:
                raise
            log.warning("skipping %s: %s", rel, exc)
            continue
        if paths is not None or doc.body.strip() and not _is_person_summary(doc) and (not stale_only or is_stale(doc)):
            docs.append(doc)
    if dry_run:
        return [Summary(d.path, "", "", "pending", body_hash(d.body)) for d in docs]
    summaries = run_sync(_build(ctx, docs, llm))
    _write(ctx, summaries, f"evolve: summarize {len(summaries)} file(s)")
    return summaries
