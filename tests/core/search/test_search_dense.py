"""Optional dense ranking: a caller's LangChain Embeddings fused with the lexical ranking.

The model here is a real LangChain ``Embeddings`` implementation that is deterministic
and needs no download: it embeds a text as counts of a few topic words, so which texts
are "close" is known. What is tested is the mechanism (fusion in every ranker, vectors as
derived state, nothing loaded without embeddings), not a model's quality (measured with a
real model in docs/bench-locomo.md).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from contextfs import ContextManager, ScopedContext
from contextfs.errors import ConfigError, SearchIndexError
from contextfs.scopes.memory import Memory

_TOPICS = (
    ("camping", "tent", "hike", "outdoors", "forest"),
    ("music", "song", "violin", "concert", "vivaldi"),
)


class TopicEmbeddings(Embeddings):
    """Counts of each topic's words: 'a violin concert' and 'classical music' are close."""

    def __init__(self) -> None:
        self.calls = 0

    def _one(self, text: str) -> list[float]:
        words = text.lower().split()
        return [float(sum(w.strip(".,?!") in topic for w in words)) + 0.01 for topic in _TOPICS]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += len(texts)
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


@pytest.fixture
def chat(tmp_path: Path) -> ContextManager:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:test", session="s1")
    turns = [
        ("Ana", "We pitched the tent by the forest and went on a long hike."),
        ("Ben", "Sounds great, what else did you do?"),
        ("Ana", "I finally went to a violin concert, all Vivaldi."),
        ("Ben", "Nice, I love a good song."),
    ]
    turns += [("Ben", f"Did you enjoy the weekend {i}?") for i in range(8)]
    Memory(ctx).import_transcript(
        [(w, t, f"2024-01-0{1 + i % 9}T10:00:00Z") for i, (w, t) in enumerate(turns)], session="s1"
    )
    yield ctx
    ctx.index.use_embeddings(None)
    ctx.close()


def test_vectors_lift_what_the_words_miss_in_every_ranker(chat: ContextManager) -> None:
    question = (
        "Would Ana enjoy classical music?"  # no word of the answer: "violin concert, all Vivaldi"
    )
    rankers = {
        "ctx.search": lambda: [h.line for h in chat.search(question, path="sessions", limit=3)],
        "conversation_search": lambda: [
            int(h.path.split("#L")[1]) for h in Memory(chat).conversation_search(question, limit=3)
        ],
        "passages": lambda: [p.first for p in ScopedContext(chat).passages(question, limit=3)],
    }
    before = {name: run() for name, run in rankers.items()}
    model = TopicEmbeddings()
    chat.index.use_embeddings(model)
    after = {name: run() for name, run in rankers.items()}
    for name in rankers:
        assert 3 in after[name][:2], (name, before[name], after[name])
    assert model.calls  # the documents were embedded once ...
    calls = model.calls
    chat.search(question, path="sessions")
    assert model.calls == calls  # ... and not again for the next question
    # Vectors are derived state in the state folder, never in the tree or its history.
    assert list(chat.parts.state.file("vectors").glob("*.npz"))
    assert (
        "vectors"
        not in subprocess.run(
            ["git", "-C", str(chat.root), "ls-files"], capture_output=True, text=True, check=True
        ).stdout
    )
    # The first k hits stay the first k of a larger search.
    big = [h.ref for h in chat.search(question, path="sessions", limit=12)]
    assert [h.ref for h in chat.search(question, path="sessions", limit=4)] == big[:4]


def test_a_named_period_counts_for_the_vectors_as_for_the_words(tmp_path: Path) -> None:
    """A message's text never holds the day it was sent, so its vector cannot match "in June
    2024": the period rule lifts what is dated inside it in the dense order too. No word of
    the question is in either outing, so only the vectors rank them; the March one is the
    closer by vector (camping words only), the June one is the one the question dates."""
    ctx = ContextManager(tmp_path / "ctx", actor="agent:test", session="s1")
    turns = [
        ("Ben", f"Did you enjoy the weekend {i}?", f"2024-01-{10 + i}T10:00:00Z") for i in range(8)
    ]
    turns += [
        ("Ana", "We pitched the tent by the forest.", "2024-03-05T10:00:00Z"),
        ("Ana", "A hike through the forest, humming a song.", "2024-06-10T10:00:00Z"),
    ]
    Memory(ctx).import_transcript(turns, session="s1")
    march, june = 9, 10
    question = "Which outdoors outing happened in June 2024?"
    rankers = {
        "ctx.search": lambda q: [h.line for h in ctx.search(q, path="sessions", limit=2)],
        "conversation_search": lambda q: [
            int(h.path.split("#L")[1]) for h in Memory(ctx).conversation_search(q, limit=2)
        ],
        "passages": lambda q: [p.first for p in ScopedContext(ctx).passages(q, limit=2)],
    }
    ctx.index.use_embeddings(TopicEmbeddings())
    try:
        for name, run in rankers.items():
            assert run("Which outdoors outing happened?")[0] == march, name  # no period named
            assert run(question)[0] == june, name
    finally:
        ctx.index.use_embeddings(None)
        ctx.close()


def test_damaged_vectors_are_rebuilt_and_a_failing_model_is_named(chat: ContextManager) -> None:
    chat.index.use_embeddings(TopicEmbeddings())
    chat.search("violin", path="sessions")
    for f in chat.parts.state.file("vectors").glob("*.npz"):
        f.write_bytes(b"not a numpy file")
    model = TopicEmbeddings()
    chat.index.use_embeddings(model)
    assert chat.search("Would Ana enjoy classical music?", path="sessions", limit=2)
    assert model.calls >= 12  # rebuilt from the files

    class Broken(TopicEmbeddings):
        def embed_query(self, text: str) -> list[float]:
            raise RuntimeError("model server down")

    chat.index.use_embeddings(Broken())
    with pytest.raises(SearchIndexError, match="the embeddings failed.*use_embeddings\\(None\\)"):
        chat.search("Would Ana enjoy classical music?", path="sessions")
    with pytest.raises(ConfigError, match="LangChain Embeddings"):
        chat.index.use_embeddings("all-MiniLM-L6-v2")


def test_without_embeddings_nothing_heavy_is_loaded(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from contextfs import ContextManager, ScopedContext\n"
        f"ctx = ContextManager({str(tmp_path / 'ctx')!r}, actor='agent:t')\n"
        "ctx.write('a.md', '# A\\n\\nviolin concert')\n"
        "ctx.search('violin concert')\n"
        "ScopedContext(ctx).passages('violin concert')\n"
        "print(sorted(m for m in ('contextfs.search.dense', 'torch', 'sentence_transformers') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


class RecordingEmbeddings(TopicEmbeddings):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return super().embed_documents(texts)


def _reply_after_question(tmp_path: Path) -> ContextManager:
    """A reply that names nothing of what it answers, after the question that does."""
    ctx = ContextManager(tmp_path / "ctx", actor="agent:test", session="s1")
    turns = [("Ben", f"Did you enjoy the weekend {i}?") for i in range(6)]
    turns += [
        ("Ben", "Was the violin concert good?"),
        ("Ana", "Yes! They played for hours and I stayed until the end."),
        ("Ben", "Lucky you."),
    ]
    turns += [("Ben", f"A song on the hike {i}, maybe?") for i in range(4)]
    Memory(ctx).import_transcript(
        [(w, t, f"2024-01-0{1 + i % 9}T10:00:00Z") for i, (w, t) in enumerate(turns)],
        session="s1",
    )
    return ctx


def test_page_in_also_reads_each_passage_with_its_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextfs.search import dense

    ctx = _reply_after_question(tmp_path)
    model = RecordingEmbeddings()
    ctx.index.use_embeddings(model)
    question = "How long did the Vivaldi evening last?"  # no word of the reply, nor its speaker
    try:
        ranked = [p.first for p in ScopedContext(ctx).passages(question, limit=13)]
        # The reply was embedded alone and between the question it answers and the next turn.
        alone = [t for t in model.texts if "stayed until the end" in t and "\n" not in t]
        around = [t.split("\n") for t in model.texts if t.count("\n") == 2]
        read = [lines for lines in around if lines[1] == alone[0]]
        assert len(alone) == 1 and len(read) == 1
        before, _, after = read[0]
        assert "violin concert" in before and "Lucky you" in after
        # The first k passages stay the first k of a larger page-in.
        assert [p.first for p in ScopedContext(ctx).passages(question, limit=4)] == ranked[:4]
        # Read with the question it answers, the reply ranks higher than on its own vector.
        log = ScopedContext(ctx).passages(question, limit=1)[0].path
        reply_line = next(
            n for n, line in enumerate(ctx.read(log).splitlines(), 1) if "until the end" in line
        )
        monkeypatch.setattr(dense, "CONTEXT_WEIGHT", 0.0)
        alone_ranked = [p.first for p in ScopedContext(ctx).passages(question, limit=13)]
        assert ranked.index(reply_line) < alone_ranked.index(reply_line)
    finally:
        ctx.index.use_embeddings(None)
        ctx.close()


def test_three_orders_fuse_each_with_its_weight() -> None:
    from contextfs.search.dense import CONTEXT_WEIGHT, DENSE_K, DENSE_WEIGHT, fuse

    def rrf(rank: int) -> float:
        return 1.0 / (DENSE_K + rank + 1)

    two = fuse(["a", "b", "c"], ["c", "b", "a"])
    assert two["a"] == rrf(0) + DENSE_WEIGHT * rrf(2)
    three = fuse(["a", "b", "c"], ["c", "b", "a"], ["b", "c", "a"])
    assert three["b"] == rrf(1) + DENSE_WEIGHT * rrf(1) + CONTEXT_WEIGHT * rrf(0)
    assert three["a"] == two["a"] + CONTEXT_WEIGHT * rrf(2)
    assert max(three, key=three.__getitem__) == "b"
