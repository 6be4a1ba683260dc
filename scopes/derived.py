"""Where the layers above the core keep derived state.

Derived state is rebuilt from the markdown files at will and never committed. It lives
in the root's state folder (``ctx.parts.state``, under ``.git/contextfs/``, where a clone never
brings it); every such name the scopes and evolve layers use is defined here, relative
to that folder, and nowhere else.
"""

from __future__ import annotations

__all__ = ["ACTIVE_TOPIC_FILE", "CACHE_DIR", "PAGEIN_STATS", "VOCABULARY_FILE"]

#: Caches keyed by file contents or stats (topic token sizes, read times for cleanup).
CACHE_DIR = "cache"
#: The active topic's transcription terms, for a speech transcriber's prompt.
VOCABULARY_FILE = "active-vocabulary.txt"
#: Which topic this clone is working on. Per machine, never committed: two machines that
#: each switched to a topic both keep their own after they sync.
ACTIVE_TOPIC_FILE = "active-topic.json"
#: Page-in's per-file statistics (:mod:`.pagestore`): ``pagein-<fingerprint of the code>.log``.
PAGEIN_STATS = ("pagein-", ".log")
