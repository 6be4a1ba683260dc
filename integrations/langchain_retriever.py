"""A LangChain retriever over a context root's search index.

Chains that expect a ``BaseRetriever`` (RAG prompts, ``create_retrieval_chain``) can
then read contextfs without knowing about it: each search hit becomes a
``Document`` whose metadata says where it came from (path, title, version, score),
so an answer can cite the file and a later write can pass the version back as
``expected_version``.

>>> retriever = ContextRetriever(ctx=ctx, k=3, folder="project")   # doctest: +SKIP
>>> retriever.invoke("which database do we use?")                   # doctest: +SKIP
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from contextfs.manager import ContextManager

__all__ = ["ContextRetriever"]

log = logging.getLogger(__name__)


class ContextRetriever(BaseRetriever):
    """Ranked context files as LangChain ``Document``s.

    ``whole_body=False`` (the default) puts the hit's snippet in ``page_content``, which
    keeps prompts small; ``True`` puts the file's whole body there instead (files
    removed since the index saw them are skipped). ``filters`` are passed through to
    ``ctx.search`` unchanged. Search errors (a malformed query) are raised as
    :class:`~contextfs.SearchIndexError`, as for any other retriever failure.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ctx: ContextManager
    k: int = Field(default=4, ge=1, le=100)
    folder: str = ""
    whole_body: bool = False
    filters: dict[str, Any] = Field(default_factory=dict)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = self.ctx.search(query, path=self.folder, limit=self.k, **self.filters)
        docs: list[Document] = []
        for hit in hits:
            if self.whole_body:
                content = self.ctx.read(hit.path)
                if content is None:
                    log.debug("search hit %s no longer exists; skipped", hit.path)
                    continue
            else:
                content = getattr(hit, "snippet", "") or self.ctx.read(hit.path) or ""
            docs.append(
                Document(
                    page_content=content,
                    metadata={
                        "path": hit.path,
                        "score": float(getattr(hit, "score", 0.0) or 0.0),
                        "title": getattr(hit, "title", None),
                        "version": getattr(hit, "version", None),
                        "source": f"contextfs:{hit.path}",
                    },
                )
            )
        return docs
