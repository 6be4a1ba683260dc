"""The keyword filters of ``search()``: every accepted form of each, and what they combine to.

A filter takes one value or a list, tuple or set of them, each meaning "any of these";
tags are matched the way they are indexed (trimmed, lower case); folders with or without
their slashes; two filters together mean both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contextfs import ContextManager
from contextfs.errors import SearchIndexError
from contextfs.scopes.memory import Memory


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> ContextManager:
    # Only read by the tests below: one root for all of them.
    manager = ContextManager(tmp_path_factory.mktemp("filters") / "ctx", actor="agent:test")
    manager.write("project/a.md", "alpha topic", {"tags": ["x", "y"], "trust": "untrusted"})
    with manager.provenance(actor="human"):
        manager.write("memory/b.md", "alpha topic", {"tags": ["x"]})
    with manager.provenance(actor="agent:scout"):
        manager.write("memory/c.md", "alpha topic", {"tags": ["z"]})
    manager.write("tasks/d.md", "alpha topic")
    Memory(manager).import_transcript(
        [
            {"speaker": "Caroline", "text": "alpha topic from Caroline"},
            {"speaker": "Melanie", "text": "alpha topic from Melanie"},
        ],
        session="talk",
    )
    yield manager
    manager.close()


def found(ctx: ContextManager, **filters: object) -> set[str]:
    return {h.path for h in ctx.search("alpha", limit=50, **filters)}


NOTES = {"project/a.md", "memory/b.md", "memory/c.md", "tasks/d.md"}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"tag": " X "}, {"project/a.md", "memory/b.md"}),
        ({"tag": ["x", "y"]}, {"project/a.md"}),
        ({"tags": ("x", "y")}, {"project/a.md"}),
        ({"tags": {"z"}}, {"memory/c.md"}),
        ({"tags": frozenset({"Y"})}, {"project/a.md"}),
        ({"tag": "x", "tags": ["y"]}, {"project/a.md"}),
        ({"kind": ["memory", "tasks"]}, {"memory/b.md", "memory/c.md", "tasks/d.md"}),
        ({"kind": "project"}, {"project/a.md"}),
        ({"folder": "/memory/"}, {"memory/b.md", "memory/c.md"}),
        ({"folder": ["project", "", "tasks/"]}, {"project/a.md", "tasks/d.md"}),
        ({"author": ["human", "agent:scout"]}, {"memory/b.md", "memory/c.md"}),
        ({"author": "agent:scout"}, {"memory/c.md"}),
        ({"trust": ["untrusted", "quarantined"]}, {"project/a.md"}),
        ({"folder": "memory", "author": "human"}, {"memory/b.md"}),
        ({"folder": "memory", "tag": "x", "author": "agent"}, set()),
        ({"tag": None, "kind": None, "folder": None, "author": None, "trust": None}, None),
    ],
)
def test_each_filter_and_its_forms(
    ctx: ContextManager, filters: dict[str, object], expected: set[str] | None
) -> None:
    got = found(ctx, **filters)
    if expected is None:  # every filter given as None: no filter at all
        assert got == found(ctx) and got >= NOTES
    else:
        assert got == expected


def test_turns_are_filtered_by_speaker_and_role(ctx: ContextManager) -> None:
    def turns(**filters: object) -> set[tuple[str | None, str | None]]:
        return {(h.speaker, h.role) for h in ctx.search("alpha", limit=50, **filters)}

    caroline = turns(speaker="Caroline")
    assert caroline and {s for s, _ in caroline} == {"Caroline"}
    both = turns(speaker=["Caroline", "Melanie"])
    assert {s for s, _ in both} == {"Caroline", "Melanie"}
    for _, role in both:
        assert role and {r for _, r in turns(role=role, speaker="Melanie")} == {role}
    assert turns(role=["nobody-has-this-role"]) == set()


def test_a_path_and_filters_combine(ctx: ContextManager) -> None:
    assert {h.path for h in ctx.search("alpha", path="memory", tag="x")} == {"memory/b.md"}
    assert {h.path for h in ctx.search("alpha", path="memory/c.md")} == {"memory/c.md"}


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"tag": 5}, "the tag filter must be a string or a list of strings"),
        ({"tags": ["x", 5]}, "the tags filter must be"),
        ({"kind": {"a": 1}}, "the kind filter must be"),
        ({"folder": 3}, "the folder filter must be"),
        ({"author": b"human"}, "the author filter must be"),
        ({"role": [1]}, "the role filter must be"),
        ({"speaker": 2.5}, "the speaker filter must be"),
        ({"trust": True}, "the trust filter must be"),
        ({"since": 20260101}, "the since filter must be a date"),
        ({"until": ["2026"]}, "the until filter must be a date"),
        ({"colour": "red"}, "unknown search filter 'colour'"),
    ],
)
def test_a_filter_of_the_wrong_kind_is_refused_by_name(
    ctx: ContextManager, filters: dict[str, object], message: str
) -> None:
    with pytest.raises(SearchIndexError, match=message):
        ctx.search("alpha", **filters)


def test_a_folder_keeps_every_letter_of_its_name(tmp_path: Path) -> None:
    # Only slashes are trimmed from a folder: "Xrays/" is not "rays".
    manager = ContextManager(tmp_path / "root")
    manager.write("Xrays/a.md", "alpha in the X-ray notes\n")
    manager.write("rays/b.md", "alpha in the ray notes\n")
    assert found(manager, folder="Xrays/") == {"Xrays/a.md"}
    assert found(manager, folder="/rays") == {"rays/b.md"}
    manager.close()
