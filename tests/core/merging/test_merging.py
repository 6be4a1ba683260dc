"""The merge rules on their own: invariants over generated inputs, and the kinds table.

The end-to-end behaviour (real clones, real remotes) is in tests/test_sync_*.py.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from contextfs.changes.markers import conflict_markers
from contextfs.document import parse
from contextfs.merging import (
    conflict_copy_path,
    kind_of,
    merge_entries,
    merge_file,
    merge_metadata,
    merge_numbered,
    original_of,
)

WORDS = st.text(alphabet="abcdefghij ", min_size=1, max_size=12).map(lambda s: s.strip() or "x")
ENTRY_LISTS = st.lists(WORDS, max_size=6, unique=True)


@settings(max_examples=200, deadline=None)
@given(base=ENTRY_LISTS, ours=ENTRY_LISTS, theirs=ENTRY_LISTS)
def test_appends_on_both_sides_keep_every_entry_once(
    base: list[str], ours: list[str], theirs: list[str]
) -> None:
    b = "# Facts\n\n" + "".join(f"- base {e}\n" for e in base)
    o = b + "".join(f"- ours {e}\n" for e in ours)
    t = b + "".join(f"- theirs {e}\n" for e in theirs)
    merged, _ = merge_entries(b, o, t, log=False)
    lines = merged.splitlines()
    for e in base:
        assert lines.count(f"- base {e}") == 1
    for side, added in (("ours", ours), ("theirs", theirs)):
        for e in added:
            assert lines.count(f"- {side} {e}") == 1
    assert not conflict_markers(merged.encode())


@settings(max_examples=100, deadline=None)
@given(
    times=st.lists(st.integers(0, 59), min_size=1, max_size=8, unique=True), split=st.integers(0, 8)
)
def test_log_lines_from_both_sides_come_out_in_time_order(times: list[int], split: int) -> None:
    def line(n: int) -> str:
        return (
            json.dumps({"role": "user", "content": f"m{n}", "time": f"2026-11-30T10:00:{n:02d}Z"})
            + "\n"
        )

    ours = "".join(line(n) for n in sorted(times[:split]))
    theirs = "".join(line(n) for n in sorted(times[split:]))
    merged, _ = merge_entries("", ours, theirs, log=True)
    got = [json.loads(x)["time"] for x in merged.splitlines()]
    assert got == sorted(got) and len(got) == len(times)


def test_an_entry_removed_on_one_side_and_untouched_on_the_other_stays_removed() -> None:
    base = "- a\n- b\n- c\n"
    ours = "- a\n- c\n- d\n"  # b removed, d added
    theirs = "- a\n- b\n- c\n- e\n"  # e added
    merged, _ = merge_entries(base, ours, theirs, log=False)
    assert "- b" not in merged and "- d" in merged and "- e" in merged


METADATA = st.dictionaries(
    st.sampled_from(["owner", "tags", "status", "updated", "created", "author", "trust"]),
    st.one_of(
        st.sampled_from(["ana", "ben", "2026-01-01", "2026-02-01", "untrusted", "trusted"]),
        st.lists(st.sampled_from(["x", "y", "z"]), unique=True, max_size=3),
    ),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(base=METADATA, ours=METADATA, theirs=METADATA, newer=st.booleans())
def test_frontmatter_merges_the_same_whichever_side_merges(base, ours, theirs, newer) -> None:  # type: ignore[no-untyped-def]
    one, _ = merge_metadata(base, ours, theirs, ours_newer=newer)
    two, _ = merge_metadata(base, theirs, ours, ours_newer=not newer)
    # Lists keep the merging side's order; their members are the same either way.
    norm = {k: sorted(v) if isinstance(v, list) else v for k, v in one.items()}
    assert norm == {k: sorted(v) if isinstance(v, list) else v for k, v in two.items()}


def test_managed_keys_resolve_deterministically_and_a_person_key_is_reported() -> None:
    base = {"created": "2026-01-01", "updated": "2026-01-01", "owner": "ana", "trust": "trusted"}
    ours = {**base, "updated": "2026-01-03", "owner": "ben", "author": "agent:a"}
    theirs = {
        **base,
        "updated": "2026-01-02",
        "owner": "cleo",
        "author": "agent:b",
        "trust": "untrusted",
    }
    merged, conflicts = merge_metadata(base, ours, theirs, ours_newer=True)
    assert (
        merged["updated"] == "2026-01-03"
        and merged["author"] == "agent:a"
        and merged["owner"] == "ben"
    )
    assert merged["trust"] == "untrusted"
    assert [(c.key, c.kept, c.other) for c in conflicts] == [("owner", "ben", "cleo")]


def test_numbered_blocks_get_the_same_ids_whichever_side_merges() -> None:
    base = "# Decisions\n\n## D1: first\n- time: 2026-01-01T00:00:00Z\n"
    ours = base + "\n## D2: mine\n- depends_on: [D1]\n- time: 2026-01-02T00:00:02Z\n"
    theirs = (
        base
        + "\n## D2: yours\n- time: 2026-01-02T00:00:01Z\n\n## D3: yours again\n- depends_on: [D2]\n"
        "- time: 2026-01-02T00:00:03Z\n"
    )
    one = merge_numbered(base, ours, theirs, theirs_first=False)
    two = merge_numbered(base, theirs, ours, theirs_first=True)
    assert one is not None and two is not None and one[0] == two[0]
    assert (
        "## D2: yours" in one[0]
        and "## D3: mine" in one[0]
        and "## D4: yours again\n- depends_on: [D2]" in one[0]
    )


def test_a_conflict_is_a_copy_beside_the_file_never_markers() -> None:
    base = b"---\ntitle: n\n---\nThe cache is Redis.\n"
    ours = base.replace(b"Redis", b"Redis 7")
    theirs = base.replace(b"Redis", b"Valkey")
    result = merge_file("project/notes.md", base, ours, theirs)
    assert result.data == ours and result.copy is not None
    path, data = result.copy
    assert (
        data == theirs
        and original_of(path) == "project/notes.md"
        and path == conflict_copy_path("project/notes.md", theirs)
    )
    assert [n.kind for n in result.notes] == ["conflict-copy"]


def test_a_delete_against_an_edit_keeps_the_edit() -> None:
    result = merge_file("task/plan.md", b"- one\n", None, b"- one, two\n")
    assert result.data == b"- one, two\n" and [n.kind for n in result.notes] == ["delete-edit"]


def test_two_body_edits_and_two_frontmatter_edits_give_one_valid_document() -> None:
    base = b"---\ntitle: n\nupdated: '2026-01-01T00:00:00Z'\n---\n# N\n\none\n\ntwo\n\nthree\n"
    ours = base.replace(b"one", b"ONE").replace(b"01T00", b"02T00")
    theirs = base.replace(b"three", b"THREE").replace(b"01T00", b"03T00")
    result = merge_file("project/n.md", base, ours, theirs)
    doc = parse(result.data.decode(), "project/n.md")
    assert (
        "ONE" in doc.body
        and "THREE" in doc.body
        and doc.metadata["updated"] == "2026-01-03T00:00:00Z"
    )
    assert result.data.count(b"---\n") == 2 and result.copy is None


def test_the_kinds_table() -> None:
    assert kind_of("sessions/s1.jsonl") == "log" and kind_of("topics/a/exchanges.jsonl") == "log"
    assert (
        kind_of("memory/facts.md") == "entries" and kind_of("topics/a/where-are-we.md") == "entries"
    )
    assert (
        kind_of("topics/a/decisions.md") == "numbered"
        and kind_of("topics/a/b/decisions.md") == "document"
    )
    assert (
        kind_of("memory/archive/2026-01-01-x.md") == "note" and kind_of(".gitignore") == "managed"
    )
    assert kind_of(".trash/x/files/a.md") == "trash" and kind_of("notes.txt") == "text"
    assert original_of("a/b.conflict-0123abcd.md") == "a/b.md" and original_of("a/b.md") is None
    assert original_of("Makefile.conflict-0123abcd") == "Makefile"
