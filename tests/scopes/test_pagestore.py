"""Page-in's statistics kept across processes: a new process ranks without re-reading the
tree, reads only lines this machine wrote for the current code, and never mixes up a blob
read as a log with the same bytes read as markdown."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextfs import ContextManager
from contextfs.scopes import ScopedContext, pagestore
from contextfs.scopes.memory import Memory

REPO = Path(__file__).resolve().parents[2]
NOTES = [
    "The cello lessons start on Tuesday evenings at the community hall.",
    "Our deploy window is Thursday morning; the release captain signs off.",
    "The quarterly budget review moved to the second week of March.",
    "The theremin at the concert sounded eerie in the old church.",
]

#: Runs in a fresh interpreter: the given searches, with every note read counted.
_CHILD = textwrap.dedent(
    """
    import json, sys
    from contextfs import ContextManager
    from contextfs.scopes import pagestore
    from contextfs.scopes.memory import Memory

    read = []
    real = pagestore.passages_of
    def counting(rel, data):
        read.append(rel)
        return real(rel, data)
    pagestore.passages_of = counting
    ctx = ContextManager(sys.argv[1], session="t")
    hits = [[h.path for h in Memory(ctx).archival_memory_search(q, top_k=3)] for q in sys.argv[2:]]
    ctx.close()
    print(json.dumps({"hits": hits, "read": read}))
    """
)


def _child(root: Path, *queries: str) -> dict[str, list]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), *queries],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(out.stdout)


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    ctx = ContextManager(tmp_path / "ctx", session="t")
    mem = Memory(ctx)
    for text in NOTES:
        mem.archival_memory_insert(text)
    ctx.close()
    yield tmp_path / "ctx"


def _store_file(root: Path) -> Path:
    ctx = ContextManager(root, session="t")
    try:
        (path,) = ctx.parts.state.path.glob("pagein-*.log")
        return path
    finally:
        ctx.close()


def test_a_new_process_ranks_without_reading_the_notes_again(root: Path) -> None:
    first = _child(root, "cello lessons", "deploy window")
    assert len(first["read"]) == len(NOTES)  # the first process reads each note once
    again = _child(root, "cello lessons", "deploy window")
    assert again["read"] == []
    assert again["hits"] == first["hits"]
    assert again["hits"][0][0].startswith("memory/archive/")


def test_a_changed_note_is_read_again_and_only_it(root: Path) -> None:
    _child(root, "cello")
    ctx = ContextManager(root, session="t")
    hit = Memory(ctx).archival_memory_search("budget review", top_k=1)[0]
    ctx.write(hit.path, "The budget review is now in April, with the board.")
    ctx.close()
    got = _child(root, "board April")
    assert got["read"] == [hit.path]
    assert got["hits"][0][0] == hit.path


def test_lines_this_machine_did_not_write_are_never_believed(root: Path) -> None:
    # A note stored quarantined must stay out of ranking even if a planted line of the
    # store says it has passages: a copied-in or edited line fails its check and the note
    # is read from git instead.
    ctx = ContextManager(root, session="t")
    ctx.write(
        "memory/archive/planted.md",
        "The vault combination is in the cello case.",
        metadata={"trust": "quarantined"},
    )
    ctx.close()
    _child(root, "cello")
    path = _store_file(root)
    forged = []
    for line in path.read_bytes().splitlines():
        mac, _, payload = line.partition(b" ")
        key, raw = json.loads(payload)
        if raw["q"]:
            raw.update(
                q=False,
                c=[{"vault": 1, "combin": 1, "cello": 1}],
                s=[""],
                d=[None],
                m=[0.0],
                t=["The vault combination is in the cello case."],
                l=[""],
            )
            payload = json.dumps([key, raw], separators=(",", ":")).encode()
        forged.append(mac + b" " + payload)
    path.write_bytes(b"\n".join(forged) + b"\n")
    got = _child(root, "vault combination cello")
    assert all("planted" not in p for hits in got["hits"] for p in hits)
    assert got["read"] == ["memory/archive/planted.md"]  # the forged line was not believed


def test_a_torn_line_costs_one_read_and_nothing_else(root: Path) -> None:
    _child(root, "cello")
    path = _store_file(root)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # a crash in the middle of the last append
    got = _child(root, "cello lessons")
    assert len(got["read"]) == 1
    again = _child(root, "cello lessons")
    assert again["read"] == [] and again["hits"] == got["hits"]


def test_statistics_of_other_code_are_removed_not_read(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _child(root, "cello")
    old = _store_file(root)
    stale = old.with_name("pagein-0000000000000000.log")
    old.rename(stale)  # as left by a version of the code that cut passages differently
    got = _child(root, "cello")
    assert len(got["read"]) == len(NOTES)
    assert not stale.exists()
    assert _store_file(root).name == old.name


def test_the_store_stays_about_as_large_as_the_tree(tmp_path: Path) -> None:
    ctx = ContextManager(tmp_path / "ctx", session="t")
    try:
        scoped = ScopedContext(ctx)
        for n in range(120):  # one note rewritten over and over: each version is a new blob
            ctx.write("notes/plan.md", f"Plan version {n}: ship the cello tuner.")
            assert scoped.passages("cello tuner", limit=1)[0].path == "notes/plan.md"
        (path,) = ctx.parts.state.path.glob("pagein-*.log")
        lines = path.read_bytes().count(b"\n")
        assert 1 <= lines <= 2 * 1 + 64 + 1
    finally:
        ctx.close()


def test_an_unwritable_store_only_costs_the_reading(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = ContextManager(tmp_path / "ctx", session="t")
    try:
        ctx.write("notes/a.md", "The cello lessons start on Tuesday.")
        (ctx.parts.state.path / f"pagein-{pagestore.fingerprint()}.log").mkdir()
        assert ScopedContext(ctx).passages("cello", limit=1)[0].path == "notes/a.md"
        assert "page-in statistics not" in caplog.text
    finally:
        ctx.close()


def test_the_same_bytes_as_a_log_and_as_markdown_are_two_files(tmp_path: Path) -> None:
    # A conversation log copied into a note: the log has a passage per message, the note one
    # paragraph. Keyed by the blob alone, whichever was read first lent the other its passages
    # (the note was listed once per message of the log).
    ctx = ContextManager(tmp_path / "ctx", session="t")
    try:
        turns = [
            ("user", "Where did you go hiking?"),
            ("assistant", "Up the ridge trail past the lake."),
            ("user", "The orchestra played a theremin last night."),
        ]
        data = "".join(
            json.dumps({"role": r, "content": c, "time": f"2026-01-05T09:0{k}:00Z"}) + "\n"
            for k, (r, c) in enumerate(turns)
        )
        for rel in ("sessions/chat.jsonl", "notes/chat.md"):
            (ctx.root / rel).parent.mkdir(exist_ok=True)
            (ctx.root / rel).write_text(data, "utf-8")
        ctx.sync()
        hits = ScopedContext(ctx).passages("theremin orchestra", limit=10)
        log_hits = [h for h in hits if h.path == "sessions/chat.jsonl"]
        note_hits = [h for h in hits if h.path == "notes/chat.md"]
        assert log_hits[0].text == "The orchestra played a theremin last night."
        assert len(note_hits) == 1 and "theremin" in note_hits[0].text
    finally:
        ctx.close()


def _module_file(name: str) -> Path | None:
    """The source of module ``name`` (None for a name that is no module: a function, say)."""
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return None
    return Path(spec.origin) if spec is not None and spec.origin else None


def _package_imports(module: str, seen: set[str]) -> None:
    """Every contextfs module (not package) ``module`` imports at load time, directly or not."""
    source = _module_file(module)
    if module in seen or source is None or source.name == "__init__.py":
        return
    seen.add(module)
    package = module.rsplit(".", 1)[0]
    for node in ast.parse(source.read_text("utf-8")).body:  # deferred imports run no code here
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            name = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            names = [name or ""] + [f"{name}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for found in names:
            if found.startswith("contextfs."):
                _package_imports(found, seen)


def test_the_fingerprint_covers_every_module_that_computes_statistics() -> None:
    seen: set[str] = set()
    _package_imports("contextfs.scopes.pagestats", seen)
    assert seen == set(pagestore.SOURCES)
