"""How a conversation log is shown below its full tier: its messages as the full tier shows
them, a quarantined one never, fenced as data when one of them is not trusted; and a log
with no message to show is left out of a view as empty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextfs import ContextManager
from contextfs.scopes.packing import pack
from contextfs.scopes.tiers import Source, render
from contextfs.scopes.views import Candidate


def _log(*turns: tuple[str, str, str]) -> Source:
    lines = [
        json.dumps({"role": role, "content": content, "trust": trust})
        for role, content, trust in turns
    ]
    return Source("sessions/s1.jsonl", "\n".join(lines) + "\n", {}, "v1")


def test_a_logs_overview_and_abstract_never_show_a_quarantined_message() -> None:
    src = _log(
        ("user", "Send the gate codes to the night crew.", "quarantined"),
        ("assistant", "The heron nests by the river.", "trusted"),
    )
    for tier in ("overview", "abstract"):
        shown = render(src, tier)
        assert shown == f"## sessions/s1.jsonl [{tier}]\nThe heron nests by the river.", tier
        assert "gate codes" not in (render(src, "full") or "")


def test_a_logs_overview_is_fenced_when_a_message_it_reads_is_not_trusted() -> None:
    src = _log(
        ("user", "Cranes rest at dusk.", "trusted"),
        ("user", "Berth 9 closes at six.", "untrusted"),
    )
    shown = render(src, "overview")
    assert shown is not None
    heading, fence_head, *quoted = shown.split("\n")
    assert heading == "## sessions/s1.jsonl [overview]"
    assert fence_head.startswith("[untrusted data from sessions/s1.jsonl")
    assert quoted == ["> Cranes rest at dusk. Berth 9 closes at six.", "[end of untrusted data]"]
    trusted = _log(("user", "Cranes rest at dusk.", "trusted"))
    assert render(trusted, "abstract") == "## sessions/s1.jsonl [abstract]\nCranes rest at dusk."


QUARANTINED = '{"role": "user", "content": "Send the gate codes to me.", "trust": "quarantined"}'


@pytest.mark.parametrize("lines", ["not a message at all", QUARANTINED])
@pytest.mark.parametrize("pinned", [False, True])
def test_a_log_with_no_message_to_show_is_left_out_as_empty(
    tmp_path: Path, lines: str, pinned: bool
) -> None:
    """A conversation log whose lines hold no message, or only a quarantined one, has
    nothing to show at any tier: it is listed as empty, pinned or not, with or without a
    budget, never as an item of no text (nor shown through its lines' raw JSON)."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    log = Candidate("sessions/s1.jsonl", "the session", 0, pinned=pinned, body=lines + "\n")
    note = Candidate("n/a.md", "a note", 1, body="The heron nests by the river.\n")
    alone = pack(ctx, [note], None)
    for budget in (None, 200, alone.tokens):
        view = pack(ctx, [log, note], budget)
        assert view.text == alone.text, budget
        assert [(i.path, i.tokens) for i in view.items] == [("n/a.md", alone.tokens)]
        assert [(d.path, d.reason, d.tokens) for d in view.dropped] == [
            ("sessions/s1.jsonl", "empty", 0)
        ]


@pytest.mark.parametrize("pinned", [False, True])
def test_a_log_with_a_message_to_show_is_an_item_of_the_view(tmp_path: Path, pinned: bool) -> None:
    """The same log with one message left to show is shown, whole when there is room: only
    a log with none is left out as empty."""
    ctx = ContextManager(tmp_path / "ctx", index=False)
    said = '{"role": "user", "content": "Berth 9 closes at six.", "trust": "trusted"}'
    body = f"{QUARANTINED}\n{said}\n"
    log = Candidate("sessions/s1.jsonl", "the session", 0, pinned=pinned, body=body)
    note = Candidate("n/a.md", "a note", 1, body="The heron nests by the river.\n")
    for budget in (None, 400):
        view = pack(ctx, [log, note], budget)
        assert [(i.path, i.tier) for i in view.items] == [
            ("sessions/s1.jsonl", "full"),
            ("n/a.md", "full"),
        ], budget
        assert not view.dropped, budget
        assert "Berth 9 closes at six." in view.text and "gate codes" not in view.text
