"""Edges of the packer that its other tests pass by: what an item says it shows."""

from __future__ import annotations

from pathlib import Path

from contextfs import ContextManager
from contextfs.scopes.packing import pack
from contextfs.scopes.views import Candidate


def test_an_excerpt_item_names_every_line_and_range_it_shows(tmp_path: Path) -> None:
    """``ViewItem.lines`` lists the excerpt's labels in order: a single line as its number,
    a run as ``first-last``, joined by commas, the same lines the text labels."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    paras = [
        f"Filler paragraph number {i} about nothing in particular, just words." for i in range(12)
    ]
    paras[3] = "The heron nests by the river."
    paras[8] = "The heron flies south in winter.\nIt returns in spring to the heron colony."
    cands = [Candidate("n/a.md", "a note", 0, body="\n\n".join(paras), min_tier="excerpt")]
    view = pack(ctx, cands, 60, query="heron")
    assert [(item.tier, item.lines) for item in view.items] == [("excerpt", "7,17-18")]
    assert "[line 7]\nThe heron nests" in view.text
    assert "[lines 17-18]\nThe heron flies" in view.text
    assert view.items[0].to_dict()["lines"] == "7,17-18"
