"""Search over a context root: a Whoosh index that is derived from the files.

- :mod:`.index` keeps the index current, heals it and checks it (:class:`SearchIndex`);
- :mod:`.querying` runs a query and builds hits with snippets (:class:`SearchHit`);
- :mod:`.query` parses the query language (words, phrases, operators, filters);
- :mod:`.rank` ranks plain words block-at-a-time with BM25F;
- :mod:`.schema` says what is indexed for a file, and how it is analysed;
- :mod:`.codec` is the postings layout on disk; :mod:`.stamp` the signed stamp.

Only this package imports Whoosh.
"""

from __future__ import annotations

from .hits import SearchHit
from .index import SearchIndex
from .stamp import INDEX_FORMAT, STAMP_FILE, STAMP_MAGIC, WHOOSH_VERSION
from .upkeep import INDEX_DIR, IndexSource
from .verifying import VerifyReport

__all__ = [
    "INDEX_DIR",
    "INDEX_FORMAT",
    "STAMP_FILE",
    "STAMP_MAGIC",
    "WHOOSH_VERSION",
    "IndexSource",
    "SearchHit",
    "SearchIndex",
    "VerifyReport",
]
