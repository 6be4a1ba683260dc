"""Merges decided by contextfs: base, ours and theirs in; one result and what was decided out.

No external merge driver runs (a repository can configure one to run any program), and no
conflict marker is ever produced. The pieces, each usable on its own:

- :func:`merge` / :func:`merge_trees` (:mod:`.trees`): two trees against their base, path
  by path, skipping what only one side changed;
- :func:`merge_file` (:mod:`.files`): one file, by the rule of its kind (:func:`kind_of`,
  :mod:`.kinds`);
- :func:`merge_metadata` (:mod:`.frontmatter`), :func:`merge_entries` and
  :func:`merge_text` (:mod:`.lines`), :func:`merge_numbered` (:mod:`.numbered`): the rules;
- :class:`MergeNote`, :func:`conflict_copy_path`, :func:`original_of` (:mod:`.report`).

``contextfs sync`` (:mod:`contextfs.remote`) uses them on the commits a fetch brings; a
review of an agent's branch can use :func:`merge` on any three trees.
"""

from __future__ import annotations

from .files import FileMerge, merge_file
from .frontmatter import KeyConflict, merge_metadata
from .kinds import KINDS, kind_of
from .lines import merge_entries, merge_text
from .numbered import merge_numbered
from .report import NOTE_KINDS, MergeNote, conflict_copy_path, original_of
from .trees import Merged, TreeMerge, merge, merge_trees

__all__ = [
    "KINDS",
    "NOTE_KINDS",
    "FileMerge",
    "KeyConflict",
    "MergeNote",
    "Merged",
    "TreeMerge",
    "conflict_copy_path",
    "kind_of",
    "merge",
    "merge_entries",
    "merge_file",
    "merge_metadata",
    "merge_numbered",
    "merge_text",
    "merge_trees",
    "original_of",
]
