"""A LangChain retriever over a context root's search index.

Chains that expect a ``BaseRetriever`` (RAG prompts, ``create_retrieval_chain``) can
then read contextfs without knowing about it: each search hit becomes a
``Document`` whose metadata says where it came from (path, title, version, score),
so an answer can cite the file and a later write can pass the version back as
``expected_version``. A hit on a conversation turn (``sessions/*.jsonl``) is that one
message, not the session's whole log: its metadata adds the line, who said it, in which
role and session, and when. A hit that is not trusted, or whose text, title or name
reads as an instruction, comes back fenced as quoted data with its source (its title
inside the fence), like every other answer an agent gets.

>>> retriever = ContextRetriever(ctx, k=3, folder="project")       # doctest: +SKIP
>>> retriever.invoke("which database do we use?", k=1)              # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from contextfs import ContextManager
from contextfs.errors import InvalidArgumentError
from contextfs.fencing import flags, name_flags
from contextfs.poisoning import render_untrusted
from contextfs.turns import session_of, turn_at

if TYPE_CHECKING:
    from contextfs.search import SearchHit

__all__ = ["ContextRetriever"]

log = logging.getLogger(__name__)


class ContextRetriever(BaseRetriever):
    """Ranked context files as LangChain ``Document``s.

    ``ContextRetriever(ctx)`` and ``ContextRetriever(ctx=ctx)`` both work. ``k``,
    ``folder``, ``whole_body`` and ``filters`` set the defaults; each can be given per call
    too (``retriever.invoke(query, k=1, folder="memory", filters={"tags": ["ops"]})``).
    ``whole_body=False`` (the default) puts the hit's snippet in ``page_content``, which
    keeps prompts small; ``True`` puts the file's whole body there instead (files
    removed since the index saw them are skipped). ``filters`` are the search filters of
    ``ctx.search`` (see docs/search.md). Search errors (a malformed query) are raised as
    :class:`~contextfs.SearchIndexError`, as for any other retriever failure.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ctx: ContextManager
    k: int = Field(default=4, ge=1, le=100)
    folder: str = ""
    whole_body: bool = False
    filters: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, ctx: ContextManager | None = None, /, **data: Any) -> None:
        if ctx is not None:
            data["ctx"] = ctx
        super().__init__(**data)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        unknown = sorted(set(kwargs) - {"k", "folder", "whole_body", "filters"})
        if unknown:
            raise InvalidArgumentError(f"unknown retriever option {unknown[0]!r}; use k, folder, whole_body or filters")
        k = kwargs.get("k", self.k)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 100:
            raise InvalidArgumentError(f"k must be a whole number from 1 to 100, not {k!r}; pass e.g. k=4")
        folder = kwargs.get("folder", self.folder)
        whole_body = bool(kwargs.get("whole_body", self.whole_body))
        extra = kwargs.get("filters") or {}
        if not isinstance(extra, Mapping) or not all(isinstance(key, str) for key in extra):
            raise InvalidArgumentError(f"filters must be a mapping of filter names to values, not {type(extra).__name__}; "
                                       "pass e.g. filters={'tags': ['ops']}")
        filters = {**self.filters, **extra}
        hits = self.ctx.search(query, path=folder, limit=k, **filters)
        docs: list[Document] = []
        for hit in hits:
            doc = self._document(hit, whole_body)
            if doc is None:
                log.debug("search hit %s no longer exists; skipped", hit.ref)
                continue
            docs.append(doc)
        return docs

    def _document(self, hit: SearchHit, whole_body: bool) -> Document | None:
        """One hit as a Document: the file (its snippet or body), or the one message a turn hit names."""
        metadata: dict[str, Any] = {
            "path": hit.path,
            "score": float(hit.score or 0.0),
            "title": hit.title or None,
            "version": hit.version,
            "trust": hit.trust or "trusted",
            "source": f"contextfs:{hit.ref}",
        }
        if hit.line is not None:
            text = self.ctx.read(hit.path)
            turn = turn_at(text, hit.line) if text is not None else None
            if turn is None:
                return None
            content = turn.content if whole_body else (hit.snippet or turn.content)
            metadata.update({"line": turn.line, "ref": hit.ref, "session": session_of(hit.path),
                             "speaker": turn.speaker, "role": turn.role, "date": turn.time or None,
                             "title": None})
        elif whole_body:
            body = self.ctx.read(hit.path)
            if body is None:
                return None
            content = body
        else:
            content = hit.snippet or self.ctx.read(hit.path) or ""
        # Retrieved text that is untrusted, or whose text, title or name reads as an
        # instruction, is quoted as data with its source (the title moves inside the fence).
        title = metadata["title"]
        reasons = tuple(dict.fromkeys([*flags(content), *flags(title or ""), *name_flags(hit.path)]))
        if metadata["trust"] != "trusted" or reasons:
            shown = f"title: {title}\n{content}" if title else content
            content = render_untrusted(shown, f"{metadata['source']}, trust {metadata['trust']}", reasons=reasons)
            metadata["title"] = None
        return Document(page_content=content, metadata=metadata)
