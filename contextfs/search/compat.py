"""How far contextfs trusts the installed Whoosh: the tested range, the private hooks, the switch.

The packed postings codec (:mod:`.codec`) and the block-at-a-time ranker (:mod:`.rank`)
are fast because they subclass Whoosh's W3 codec and read its matchers' blocks directly,
through attributes and methods Whoosh does not promise to keep. Three things keep a
Whoosh release from corrupting or silently mis-ranking an index:

* the dependency is pinned to the tested range (:data:`TESTED`, also in ``pyproject.toml``),
  and the index stamp names the Whoosh version, so another version rebuilds the index;
* :data:`HOOKS` lists every private name the codec and the ranker use, and a test checks
  each still exists with the expected parameters;
* :func:`native` switches both off — Whoosh's own codec and matchers, Whoosh's own scoring
  — when ``CONTEXTFS_SEARCH_NATIVE=1`` is set or the installed Whoosh is outside the tested
  range. The stamp's codec id differs between the two, so switching rebuilds the index.

One more hook is a repair: Whoosh names segments and temporary files with the process's
global ``random``, so a program that seeds it (``random.seed(0)``, common in evaluation
scripts) makes two segments share a name and the next commit fail. :func:`own_names`
gives each Whoosh module that draws names a generator of its own (:data:`NAME_USERS`).
Names are drawn only while a writer works, and every writer this package makes is given
:func:`codec`, so that is where it runs: a process that only searches never imports
Whoosh's writing and multiprocessing modules (about 2 ms of a search's start-up).
"""

from __future__ import annotations

import importlib
import logging
import os
import random
from typing import Any

import whoosh
from whoosh.util import IDCHARS

from .codec import CODEC_ID, PackedCodec

__all__ = ["HOOKS", "NAME_USERS", "TESTED", "codec", "codec_id", "native", "own_names"]

log = logging.getLogger(__name__)

#: Whoosh-Reloaded versions the codec and ranker were tested with: [first, last).
TESTED = ((2, 7, 5), (2, 8, 0))
NATIVE_CODEC_ID = "whoosh-w3"

#: (module, class or None, name, parameter names or None for an attribute) of every private
#: Whoosh hook the codec, the ranker and the index upkeep rely on.
HOOKS: tuple[tuple[str, str | None, str, tuple[str, ...] | None], ...] = (
    ("whoosh.codec.whoosh3", None, "_lenfield", ("fieldname",)),
    ("whoosh.codec.whoosh3", "W3PostingsWriter", "_mini_ids", ("self",)),
    ("whoosh.codec.whoosh3", "W3PostingsWriter", "_mini_weights", ("self",)),
    ("whoosh.codec.whoosh3", "W3PostingsWriter", "_mini_values", ("self",)),
    ("whoosh.codec.whoosh3", "W3LeafMatcher", "_read_ids", ("self",)),
    ("whoosh.codec.whoosh3", "W3LeafMatcher", "_read_weights", ("self",)),
    ("whoosh.codec.whoosh3", "W3LeafMatcher", "_read_values", ("self",)),
    ("whoosh.codec.whoosh3", "W3LeafMatcher", "_read_data", ("self",)),
    ("whoosh.codec.whoosh3", "W3LeafMatcher", "_next_block", ("self",)),
    ("whoosh.codec.whoosh3", "W3PerDocReader", "_cached_reader", ("self", "fieldname", "column")),
    ("whoosh.index", "FileIndex", "_read_toc", ("self",)),
    ("whoosh.query.terms", "PatternQuery", "_btexts", ("self", "ixreader")),
    ("whoosh.util", None, "random_name", ("size",)),
)
#: Whoosh modules that name segments and temporary files with ``random_name`` (imported by name).
NAME_USERS = (
    "whoosh.codec.base",
    "whoosh.filedb.filestore",
    "whoosh.filedb.compound",
    "whoosh.writing",
    "whoosh.multiproc",
)
#: Private attributes read on instances (checked on real objects by the test).
INSTANCE_ATTRIBUTES = {
    "W3LeafMatcher": ("_data", "_byteids", "_blocklength"),
    "column reader": ("_dbfile", "_basepos", "_count", "_fixedlen", "_typecode", "_reverse"),
}

_warned: list[bool] = []


def installed() -> tuple[int, ...]:
    """The installed Whoosh version as numbers."""
    return tuple(int(p) for p in whoosh.versionstring().split(".")[:3] if p.isdigit())


def native() -> bool:
    """True when the index must use Whoosh's own codec and scoring only."""
    if os.environ.get("CONTEXTFS_SEARCH_NATIVE", "").strip().lower() in ("1", "true", "yes"):
        return True
    version = installed()
    if TESTED[0] <= version < TESTED[1]:
        return False
    if not _warned:
        _warned.append(True)
        log.warning(
            "Whoosh %s is outside the range contextfs was tested with (%s to before %s); "
            "using Whoosh's own codec and scoring",
            whoosh.versionstring(),
            ".".join(map(str, TESTED[0])),
            ".".join(map(str, TESTED[1])),
        )
    return True


def codec() -> Any:
    """The codec new segments are written with (None: Whoosh's default).

    Every writer (``ix.writer``, ``ix.optimize``) is made with it, so the name generators
    are put in place here, before the writer draws a name (see the module docstring).
    """
    own_names()
    return None if native() else PackedCodec()


def codec_id() -> str:
    """What the index stamp records for the codec: segments written otherwise are rebuilt."""
    return NATIVE_CODEC_ID if native() else CODEC_ID


_names = random.Random()  # seeded from the OS once; a caller's random.seed() never reaches it


def _random_name(size: int = 28) -> str:
    return "".join(_names.choice(IDCHARS) for _ in range(size))


def own_names() -> None:
    """Give Whoosh's modules a name generator of their own (see the module docstring)."""
    for module in NAME_USERS:
        owner = importlib.import_module(module)
        if getattr(owner, "random_name", None) is not _random_name:
            owner.random_name = _random_name  # type: ignore[attr-defined]
