"""Where the layers above the core keep derived state.

Derived state is rebuilt from the markdown files at will, git-ignored and never
committed. Every such path the scopes and evolve layers use starts from a constant
defined here and nowhere else, so moving derived state (for example under ``.git/``,
where a clone never brings it) is a one-line change per path.
"""

from __future__ import annotations

__all__ = ["CACHE_DIR", "VOCABULARY_FILE"]

#: Caches keyed by file contents or stats (topic token sizes, read times for cleanup).
CACHE_DIR = ".contextfs/cache"
#: The active topic's transcription terms, for a speech transcriber's prompt.
VOCABULARY_FILE = ".contextfs/active-vocabulary.txt"
