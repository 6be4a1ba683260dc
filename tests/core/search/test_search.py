"""Search through ContextManager: ranking, query syntax, filters and read-your-writes.

Every test runs against a real Whoosh index in tmp_path, built from real files that
real git commits recorded.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from contextfs import ContextManager
from contextfs.errors import InvalidPathError, SearchIndexError
from contextfs.search import SearchHit


@pytest.fixture
def ctx(tmp_path: Path) -> ContextManager:
    manager = ContextManager(tmp_path / "ctx", actor="agent:test")
    yield manager
    manager.close()


def paths_of(hits: list[SearchHit]) -> list[str]:
    return [h.path for h in hits]


# ---------------------------------------------------------------- hits as pairs
def test_a_hand_written_search_tool_unpacks_hits_as_pairs(sample_ctx: ContextManager) -> None:
    ctx = sample_ctx

    def search_context(query: str) -> str:
        """Search all context files for relevant information."""
        results = ctx.search(query)
        return "\n".join(f"[{p}] ...{s}..." for p, s in results[:5]) or "No matches."

    out = search_context("dead letter queue")
    lines = out.splitlines()
    assert 1 <= len(lines) <= 5
    assert lines[0].startswith("[task/subtasks/dead-letter-queue.md] ...")
    assert all(line.startswith("[") and line.endswith("...") for line in lines)
    assert search_context("xylophone quokka") == "No matches."


def test_hit_unpacks_and_carries_metadata(sample_ctx: ContextManager) -> None:
    hit = sample_ctx.search("transactional outbox", limit=1)[0]
    path, snippet = hit
    assert path == hit.path == hit[0] and snippet == hit.snippet == hit[1] and len(hit) == 2
    assert hit.path == "project/decisions/0003-transactional-outbox.md"
    assert hit.title == "ADR 0003: Transactional outbox for webhook fan-out"
    assert "adr" in hit.tags and "webhooks" in hit.tags
    assert hit.score > 0 and hit.updated and hit.version
    assert hit.version == sample_ctx.get(hit.path).version
    assert "outbox" in hit.snippet.lower()
    assert "\n" not in hit.snippet and len(hit.snippet) <= 200


def test_natural_question_finds_the_note_that_answers_it(sample_ctx: ContextManager) -> None:
    hits = sample_ctx.search("why did we pick postgres row level security for tenants")
    assert hits[0].path == "project/decisions/0002-postgres-row-level-security.md"
    hits = sample_ctx.search("what is the retry schedule for webhooks backoff jitter")
    assert "task/subtasks/retry-policy.md" in paths_of(hits[:3])


def test_more_matching_words_rank_higher(ctx: ContextManager) -> None:
    ctx.write("a.md", "kafka " * 3 + "filler text about nothing")
    ctx.write("b.md", "kafka brokers partitions replication")
    ctx.write("c.md", "unrelated note on gardening")
    hits = ctx.search("kafka brokers partitions")
    assert paths_of(hits) == ["b.md", "a.md"]
    assert hits[0].score > hits[1].score


def test_title_outranks_body(ctx: ContextManager) -> None:
    ctx.write("body.md", "Some text that mentions lighthouse once among many other words " * 3)
    ctx.write("title.md", "Plain text body here.", {"title": "Lighthouse"})
    assert paths_of(ctx.search("lighthouse"))[0] == "title.md"


def test_stemming(ctx: ContextManager) -> None:
    ctx.write("n.md", "The worker retries failed deliveries.")
    assert paths_of(ctx.search("retry delivery")) == ["n.md"]


# ---------------------------------------------------------------- query syntax
def test_phrase_and_boolean_operators(ctx: ContextManager) -> None:
    ctx.write("one.md", "the dead letter queue holds failures")
    ctx.write("two.md", "a letter arrived; the plant is dead")
    ctx.write("three.md", "queue of letters for redis")
    assert paths_of(ctx.search('"dead letter"')) == ["one.md"]
    assert set(paths_of(ctx.search("dead AND letter"))) == {"one.md", "two.md"}
    assert paths_of(ctx.search("letter NOT dead")) == ["three.md"]
    assert set(paths_of(ctx.search("plant OR redis"))) == {"two.md", "three.md"}
    assert paths_of(ctx.search("(plant OR redis) AND queue")) == ["three.md"]


def test_phrase_needs_adjacent_words(ctx: ContextManager) -> None:
    """The body has no positions in the index: phrases are checked against the file text."""
    ctx.write("adjacent.md", "Failed deliveries go to the dead letters queue.")
    ctx.write("apart.md", "The letter arrived dead, a dead end for every letter.")
    ctx.write("reversed.md", "A letter, dead.")
    ctx.write("titled.md", "nothing here", {"title": "Dead letter handling"})
    assert set(paths_of(ctx.search('"dead letter"'))) == {"adjacent.md", "titled.md"}
    assert paths_of(ctx.search('body:"dead letter"')) == ["adjacent.md"]
    assert paths_of(ctx.search('"dead letter" AND queue')) == ["adjacent.md"]
    assert set(paths_of(ctx.search('letter NOT "dead letter"'))) == {"apart.md", "reversed.md"}
    assert set(paths_of(ctx.search('"dead letter" OR arrival'))) == {
        "adjacent.md",
        "titled.md",
        "apart.md",
    }
    assert paths_of(ctx.search('"letter dead"')) == ["reversed.md"]
    # The file is the truth: an edit made behind the store's back is seen by the phrase check.
    (ctx.root / "adjacent.md").write_text("Failed deliveries: dead, later a letter.\n", "utf-8")
    assert "adjacent.md" not in paths_of(ctx.search('"dead letter"'))


def test_tag_and_path_fields(ctx: ContextManager) -> None:
    ctx.write("topics/a/x.md", "shared word", {"tags": ["Billing", "ops"]})
    ctx.write("topics-old/y.md", "shared word", {"tags": ["ops"]})
    ctx.write("project/z.md", "shared word")
    assert paths_of(ctx.search("tag:billing")) == ["topics/a/x.md"]
    assert set(paths_of(ctx.search("tag:ops"))) == {"topics/a/x.md", "topics-old/y.md"}
    assert paths_of(ctx.search("shared tag:billing")) == ["topics/a/x.md"]
    assert set(paths_of(ctx.search("shared (tag:billing OR path:project)"))) == {
        "topics/a/x.md",
        "project/z.md",
    }
    assert paths_of(ctx.search("shared path:topics")) == ["topics/a/x.md"]
    assert paths_of(ctx.search("shared path:topics/a")) == ["topics/a/x.md"]
    assert paths_of(ctx.search("shared", path="topics")) == ["topics/a/x.md"]
    assert paths_of(ctx.search("shared", path="topics/")) == ["topics/a/x.md"]
    assert paths_of(ctx.search("shared", path="topics-old")) == ["topics-old/y.md"]
    assert paths_of(ctx.search("shared", path="topics/a/x.md")) == ["topics/a/x.md"]
    assert ctx.search("shared", path="top") == []


def test_date_ranges_on_updated(ctx: ContextManager, monkeypatch: pytest.MonkeyPatch) -> None:
    import contextfs.clock as clock

    for name, when in (
        ("old.md", datetime(2025, 3, 1, tzinfo=timezone.utc)),
        ("mid.md", datetime(2026, 6, 15, tzinfo=timezone.utc)),
        ("new.md", datetime(2026, 11, 2, tzinfo=timezone.utc)),
    ):
        monkeypatch.setattr(clock, "now", lambda when=when: when)
        ctx.write(name, "calendar entry")
    assert set(paths_of(ctx.search("calendar updated:2026"))) == {"mid.md", "new.md"}
    assert paths_of(ctx.search("calendar updated:2026-06")) == ["mid.md"]
    assert paths_of(ctx.search("calendar updated:>2026-06-15")) == ["new.md"]
    assert set(paths_of(ctx.search("calendar updated:>=2026-06-15"))) == {"mid.md", "new.md"}
    assert paths_of(ctx.search("calendar updated:<2026-01-01")) == ["old.md"]
    assert paths_of(ctx.search("updated:[2026-01-01 TO 2026-07-01]")) == ["mid.md"]
    assert paths_of(ctx.search("calendar", since="2026-06-01", until="2026-06-30")) == ["mid.md"]
    assert paths_of(ctx.search("calendar", since=datetime(2026, 10, 1))) == ["new.md"]
    # The date kept in the hit is the frontmatter's 'updated'.
    assert ctx.search("calendar updated:2025")[0].updated == "2025-03-01T00:00:00Z"


def test_star_returns_most_recent(ctx: ContextManager, monkeypatch: pytest.MonkeyPatch) -> None:
    import contextfs.clock as clock

    for day in range(1, 8):
        monkeypatch.setattr(
            clock, "now", lambda day=day: datetime(2026, 5, day, tzinfo=timezone.utc)
        )
        ctx.write(f"n{day}.md", f"note {day}")
    assert paths_of(ctx.search("*", limit=3)) == ["n7.md", "n6.md", "n5.md"]
    assert len(ctx.search("*", limit=100)) == 7
    assert paths_of(ctx.search("*", path="", limit=1)) == ["n7.md"]
    assert ctx.search("*", limit=2)[0].snippet == "note 7"


@pytest.mark.parametrize(
    "bad",
    [
        "foo AND",
        "AND foo",
        "(foo OR) bar",
        "foo NOT",
        "title:*",
        "a" * 1_000_000,
        "",
        "   ",
        "updated:[garbage TO 2026]",
        " OR ".join(f"word{i}" for i in range(200)),
    ],
)
def test_malformed_queries_raise_with_a_hint(sample_ctx: ContextManager, bad: str) -> None:
    with pytest.raises(SearchIndexError) as info:
        sample_ctx.search(bad)
    message = str(info.value)
    assert len(message) < 600
    assert any(
        word in message for word in ("use", "write", "search for", "keep", "put", "drop", "close")
    )


def test_wildcard_expansion_is_bounded(ctx: ContextManager) -> None:
    words = " ".join(f"pre{i:04d}" for i in range(700))
    ctx.write("many.md", words)
    ctx.write("few.md", "webhook webhooks webhooked")
    assert paths_of(ctx.search("webhoo*")) == ["few.md"]
    with pytest.raises(SearchIndexError, match="more specific"):
        ctx.search("pre*")


def test_non_string_query_and_bad_filters(ctx: ContextManager) -> None:
    with pytest.raises(SearchIndexError):
        ctx.search(42)  # type: ignore[arg-type]
    with pytest.raises(SearchIndexError, match="unknown search filter"):
        ctx.search("x", colour="red")
    with pytest.raises(SearchIndexError):
        ctx.search("x", since="yesterday-ish")
    with pytest.raises(InvalidPathError):
        ctx.search("x", path="../outside")
    with pytest.raises(InvalidPathError):
        ctx.search("x", path=".git")
    assert ctx.search("x", limit=0) == []


# ---------------------------------------------------------------- filters
def test_filters(ctx: ContextManager) -> None:
    ctx.write("project/a.md", "alpha topic", {"tags": ["x", "y"], "trust": "untrusted"})
    with ctx.provenance(actor="human"):
        ctx.write("memory/b.md", "alpha topic", {"tags": ["x"]})
    with ctx.provenance(actor="agent:scout"):
        ctx.write("memory/c.md", "alpha topic")
    assert set(paths_of(ctx.search("alpha", tag="x"))) == {"project/a.md", "memory/b.md"}
    assert paths_of(ctx.search("alpha", tags=["x", "y"])) == ["project/a.md"]
    assert set(paths_of(ctx.search("alpha", kind="memory"))) == {"memory/b.md", "memory/c.md"}
    assert set(paths_of(ctx.search("alpha", folder="memory"))) == {"memory/b.md", "memory/c.md"}
    assert paths_of(ctx.search("alpha", author="human")) == ["memory/b.md"]
    assert set(paths_of(ctx.search("alpha", author="agent"))) == {"project/a.md", "memory/c.md"}
    assert paths_of(ctx.search("alpha", author="agent:scout")) == ["memory/c.md"]
    assert paths_of(ctx.search("alpha", trust="untrusted")) == ["project/a.md"]
    assert set(paths_of(ctx.search("alpha", trust="trusted"))) == {"memory/b.md", "memory/c.md"}
    hit = ctx.search("alpha", author="agent:scout")[0]
    assert hit.author == "agent:scout" and hit.kind == "memory" and hit.trust == "trusted"


def test_trash_excluded_unless_asked(ctx: ContextManager) -> None:
    ctx.write("memory/gone.md", "ephemeral pelican")
    entry = ctx.delete("memory/gone.md")
    assert ctx.search("pelican") == []
    hits = ctx.search("pelican", include_trash=True)
    assert paths_of(hits) == [entry.stored_path]
    assert hits[0].kind == "memory"
    # The entry's bookkeeping file is never a hit, and .trash is never reachable as a plain path.
    assert all(
        not h.path.endswith("entry.json") for h in ctx.search("*", include_trash=True, limit=50)
    )
    with pytest.raises(InvalidPathError):
        ctx.search("pelican", path=".trash")


def test_internal_files_are_never_results(ctx: ContextManager) -> None:
    ctx.write("a.md", "findme")
    cfg = ctx.root / ".contextfs" / "notes.md"
    cfg.write_text("findme internal", "utf-8")
    (ctx.root / ".gitignore").read_text()
    ctx.close()
    again = ContextManager(ctx.root)
    assert paths_of(again.search("findme")) == ["a.md"]
    again.close()


# ---------------------------------------------------------------- read-your-writes
def test_read_your_writes_through_every_operation(ctx: ContextManager) -> None:
    ctx.write("memory/a.md", "first version mentions narwhal")
    assert paths_of(ctx.search("narwhal")) == ["memory/a.md"]

    ctx.edit("memory/a.md", "narwhal", "walrus")
    assert ctx.search("narwhal") == []
    assert paths_of(ctx.search("walrus")) == ["memory/a.md"]

    ctx.append("memory/a.md", "and a platypus")
    assert paths_of(ctx.search("platypus")) == ["memory/a.md"]

    ctx.update_metadata("memory/a.md", {"tags": ["mammals"]})
    assert paths_of(ctx.search("tag:mammals")) == ["memory/a.md"]

    ctx.move("memory/a.md", "archive/a.md")
    assert paths_of(ctx.search("walrus")) == ["archive/a.md"]

    ctx.delete("archive/a.md")
    assert ctx.search("walrus") == []

    ctx.restore("archive/a.md")
    assert paths_of(ctx.search("walrus")) == ["archive/a.md"]
    assert ctx.search("walrus", include_trash=True) == ctx.search("walrus")

    first = ctx.history("archive/a.md")[-1].commit
    ctx.write("archive/a.md", "rewritten about otters")
    assert paths_of(ctx.search("otters")) == ["archive/a.md"]
    ctx.revert("archive/a.md", ctx.history("archive/a.md")[1].commit)
    assert ctx.search("otters") == []
    assert paths_of(ctx.search("walrus")) == ["archive/a.md"]
    assert first

    with ctx.transaction("batch"):
        ctx.write("t/one.md", "transaction quokka")
        ctx.write("t/two.md", "transaction quokka too")
        ctx.delete("archive/a.md")
    assert set(paths_of(ctx.search("quokka"))) == {"t/one.md", "t/two.md"}
    assert ctx.search("walrus") == []

    with pytest.raises(RuntimeError), ctx.transaction("fails"):
        ctx.write("t/three.md", "rolled back capybara")
        raise RuntimeError("boom")
    assert ctx.search("capybara") == []


def test_revert_session_is_seen(ctx: ContextManager) -> None:
    with ctx.provenance(session="s-bad"):
        ctx.write("memory/x.md", "hallucinated axolotl fact")
    assert paths_of(ctx.search("axolotl")) == ["memory/x.md"]
    ctx.revert_session("s-bad")
    assert ctx.search("axolotl") == []


def test_writes_only_queue_and_one_commit_applies_them(ctx: ContextManager) -> None:
    ctx.search("warmup")
    index = ctx.index
    toc_before = sorted(p.name for p in index.dir.glob("*.toc"))
    for i in range(20):
        ctx.write(f"bulk/n{i}.md", f"bulk note {i} lemur")
    # Nothing reached Whoosh yet: same generation on disk, 20 paths queued.
    assert sorted(p.name for p in index.dir.glob("*.toc")) == toc_before
    assert len(index.pending) == 20
    assert len(ctx.search("lemur", limit=50)) == 20
    assert not index.pending
    report = index.verify(fix=False)
    assert report.ok, report


def test_no_duplicates_after_many_batches(ctx: ContextManager) -> None:
    for round_ in range(8):
        for i in range(3):
            ctx.write(f"d/n{i}.md", f"round {round_} ibex")
        hits = ctx.search("ibex", limit=50)
        assert sorted(paths_of(hits)) == ["d/n0.md", "d/n1.md", "d/n2.md"]
    assert ctx.index.verify(fix=False).duplicates == []


def test_segments_of_similar_size_are_merged_as_flushes_add_them(ctx: ContextManager) -> None:
    """Every flush writes a segment; similar-sized ones are merged so queries stay cheap.

    Whoosh's own policy would keep all ten 60-note segments here (it waits for about a dozen).
    Merges rewrite documents, so the index must still hold each note exactly once.
    """
    counts = []
    for round_ in range(10):
        with ctx.transaction(f"batch {round_}"):
            for i in range(60):
                ctx.write(f"flush/r{round_}/n{i}.md", f"note {i} of batch {round_} about the okapi")
        if round_ == 6:  # an edit deletes a document from an older segment
            ctx.edit("flush/r0/n0.md", "about the okapi", "about the okapi again")
        assert len(ctx.search("okapi", limit=1000)) == 60 * (round_ + 1)
        counts.append(len(ctx.index.searcher.reader().leaf_readers()))
    # Four per size class before a flush adds one (search.segments._SEGMENTS_PER_TIER): at most five.
    assert max(counts) <= 5, counts
    assert counts[-1] < counts[-2], counts  # the tenth flush merged the four before it
    assert ctx.index.verify(fix=False).ok


def test_broken_frontmatter_is_indexed_by_raw_text(ctx: ContextManager) -> None:
    ctx.write("good.md", "fine")
    bad = ctx.root / "bad.md"
    bad.write_text("---\ntitle: [unclosed\n---\nbody with a marmot\n", "utf-8")
    before = bad.read_bytes()
    ctx.sync()
    assert paths_of(ctx.search("marmot")) == ["bad.md"]
    assert bad.read_bytes() == before  # indexing never rewrites a file
