"""People and agents on one root, with kills: every save that was acknowledged survives, truly authored.

Real processes share one root for a while:

* a person (``soak_person.py``) saving files with plain file I/O, ``sed -i`` and rename-over
  saves, and running ``git commit -a`` with an editor that holds git's ``index.lock``;
* two agents (``soak_agent.py``) making tool calls: one long-lived (one ``ContextManager``
  for as long as it lives), one started for a few calls at a time; both are SIGKILLed at
  random moments and started again;
* ``contextfs watch`` in a third process.

The oracle, once everything stopped and the root was opened again:

* every save the person made — save for those they overwrote themselves before anybody
  else touched the file — is in history, first brought in by a commit authored ``human``;
* every tool call an agent was told succeeded is in history, first brought in by that
  agent's own commit; a delete it was told succeeded is in the trash;
* nothing is in the trash that no agent set out to delete;
* no lock of a live git was removed, and the branch never moved while a person's ``git
  commit`` held the index (it can move in the moment before git takes the lock, as between
  any two git commands: such a commit fails, is reported, and nothing is lost); ``git fsck``
  is clean; the search index matches the files; ``git status`` is clean.

``make test`` runs a few seconds of it; ``make stress`` (``CONTEXTFS_STRESS``) runs minutes,
with hundreds of kills. ``CONTEXTFS_SOAK_REPORT=path`` writes the figures as JSON.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.context
import multiprocessing.process
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import soak_agent
from helpers import TESTS, git

from contextfs import ContextManager

HERE = TESTS
STRESS = int(os.environ.get("CONTEXTFS_STRESS", "0"))
SECONDS = max(8.0, 2.0 * STRESS) if STRESS else 8.0
SHARED = [f"shared/{i:02d}.md" for i in range(6)]
_TOKEN = re.compile(r"(person-line: (p\S+))|(agent-\S+ save \S+)")

pytestmark = pytest.mark.skipif(
    not (shutil.which("sed") and shutil.which("stat") and sys.platform == "linux"),
    reason="the person saves with GNU sed -i and checks git's lock with GNU stat",
)


def _python(*args: str, out: Path) -> subprocess.Popen[bytes]:
    with open(out, "ab") as fh:
        return subprocess.Popen([sys.executable, *args], stdout=fh, stderr=subprocess.STDOUT)


def _lines(path: Path) -> list[dict[str, object]]:
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # the line a kill cut short
    return out


def _first_commits(root: Path) -> dict[tuple[str, str], str]:
    """(path, token) -> author of the first commit that put a line with that token at that path."""
    out = git(root, "log", "--reverse", "--no-renames", "-p", "--format=%x00COMMIT %an", "--", ".")
    first: dict[tuple[str, str], str] = {}
    author, path = "", ""
    for line in out.splitlines():
        if line.startswith("\x00COMMIT "):
            author = line[len("\x00COMMIT ") :]
        elif line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
        elif line.startswith("+") and path:
            match = _TOKEN.search(line)
            if match:
                token = match.group(2) or match.group(3)
                first.setdefault((path, token), author)
    return first


def _acknowledged_since(log: Path, offset: int) -> bool:
    """True once the agent's log has an ``ack`` line after ``offset`` (its life so far)."""
    if not log.exists() or log.stat().st_size <= offset:
        return False
    with open(log, "rb") as fh:
        fh.seek(offset)
        return b'"ack"' in fh.read()


def _agents() -> multiprocessing.context.ForkServerContext:
    """Agents start from a fork server that imported contextfs and its tools once.

    Importing the integrations costs seconds on a busy machine; paid at every restart, it
    would leave the agents no time to work between kills. Each agent is still a process
    of its own, killed with SIGKILL like any other.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(
        [
            "contextfs.integrations",
            "contextfs.changes.writing",
            "contextfs.changes.transaction",
            "contextfs.gate.secrets_detectors",
            "soak_agent",
        ]
    )
    warm = context.Process(
        target=soak_agent.ready
    )  # the server starts (and imports) before the clock does
    warm.start()
    warm.join(timeout=300)
    return context


def _run(tmp_path: Path, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    root, logs, tools = tmp_path / "ctx", tmp_path / "logs", tmp_path / "tools"
    logs.mkdir()
    tools.mkdir()
    with ContextManager(root, actor="agent:setup", index=False) as ctx:
        for rel in SHARED:
            ctx.write(rel, f"# {rel}\n")
    context = _agents()
    watcher = _python(
        "-X",
        "faulthandler",  # a watcher that does not stop is aborted with every thread's stack
        "-c",
        # SIGINT as a terminal delivers it, even under a shell's background job (ignored there)
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from contextfs.cli import main; main(sys.argv[1:])",
        "--root",
        str(root),
        "watch",
        "--debounce",
        "0.3",
        out=logs / "watch.out",
    )
    # name -> (calls per life, pause between calls, longest life once at work): 'a' is the
    # long-lived one (an MCP server, say); 'b' makes a few calls and exits, when not killed first.
    plans = {"a": (100_000, 0.05, 4.0), "b": (4, 0.02, 1.0)}
    agents: dict[str, multiprocessing.process.BaseProcess] = {}
    started: dict[str, int] = {}  # the size of the agent's log when its current life began
    doom: dict[
        str, float | None
    ] = {}  # when the agent's current life ends (set once it is at work)
    lives: Counter[str] = Counter()
    kills = 0
    person = _python(
        str(HERE / "soak_person.py"),
        str(root),
        str(logs / "person.jsonl"),
        str(seed),
        str(SECONDS),
        str(tools),
        out=logs / "person.out",
    )
    # The person goes on past SECONDS until each agent has had calls acknowledged, so a slow
    # machine shortens nobody's work; the bound only turns a stuck agent into a failure.
    give_up = time.monotonic() + 30 * SECONDS
    while person.poll() is None:
        now = time.monotonic()
        if not (tools / "enough").exists() and (
            now > give_up or all(_acknowledged_since(logs / f"agent-{n}.jsonl", 0) for n in plans)
        ):
            (tools / "enough").touch()
        for name, (count, pause, longest) in plans.items():
            log = logs / f"agent-{name}.jsonl"
            proc = agents.get(name)
            if proc is None or not proc.is_alive():
                started[name], doom[name] = (log.stat().st_size if log.exists() else 0), None
                lives[name] += 1
                agents[name] = context.Process(
                    target=soak_agent.main,
                    daemon=True,
                    args=(str(root), str(log), name, rng.randrange(1 << 30), count, pause),
                )
                agents[name].start()
            elif doom[name] is None and _acknowledged_since(log, started[name]):
                # At work (one call through, so a slow machine still sees every life do something):
                # killed at a random moment of what follows.
                doom[name] = now + rng.uniform(0.0, longest)
            elif doom[name] is not None and now >= doom[name]:  # type: ignore[operator]
                proc.kill()
                kills += 1
                doom[name] = float("inf")
        time.sleep(0.01)
    assert person.returncode == 0, (logs / "person.out").read_text()[-2000:]
    for proc in agents.values():
        proc.kill()
        proc.join(timeout=60)
    watcher.send_signal(signal.SIGINT)
    try:
        watcher.wait(timeout=120)
    except subprocess.TimeoutExpired:
        # Stopping flushes what waits for its quiet period; say where it stood, not just that
        # it was slow (the temporary folder is gone by the time anyone reads the failure).
        watcher.send_signal(signal.SIGABRT)  # faulthandler writes each thread's stack
        watcher.wait(timeout=30)
        raise AssertionError(
            "contextfs watch did not stop within 120 s of Ctrl-C; its output ends:\n"
            + (logs / "watch.out").read_text("utf-8", errors="replace")[-3000:]
        ) from None
    return {"root": root, "logs": logs, "tools": tools, "kills": kills, "lives": dict(lives)}


def _outcome(entry: dict[str, object]) -> str:
    """How one of the person's ``git commit -a`` ended."""
    error = str(entry["error"])
    if entry["git"] == 0:
        return "committed"
    if entry["git"] == 1:
        return "nothing to commit"
    if "but expected" in error:
        return "the branch moved before git took its lock (two git commands racing)"
    if "index.lock" in error or ".lock': File exists" in error:
        return "found a lock taken (git's message: another git process seems to be running)"
    return error[:80]


def _check(run: dict[str, object]) -> dict[str, object]:
    root, logs, tools = Path(str(run["root"])), Path(str(run["logs"])), Path(str(run["tools"]))
    with ContextManager(root) as ctx:  # recovery and the last sync, as any next process does
        assert ctx.parts.last_sync.held == {}, ctx.parts.last_sync.held
        index_ok = ctx.index.verify(fix=False).ok
        trash = [(e.original_path, e.actor) for e in ctx.trash()]
    first = _first_commits(root)
    person = _lines(logs / "person.jsonl")
    saved = {str(e["saved"]): str(e["path"]) for e in person if "saved" in e}
    superseded = {str(e["superseded"]) for e in person if "superseded" in e}
    gits = [e for e in person if "git" in e]
    lost, wrong = [], []
    for token, rel in saved.items():
        author = first.get((rel, token))
        if author is None and token not in superseded:
            lost.append((rel, token))
        elif author is not None and author != "human":
            wrong.append((rel, token, author))
    acked: Counter[str] = Counter()
    deletes_meant: Counter[tuple[str, str]] = Counter()
    deletes_acked: Counter[tuple[str, str]] = Counter()
    for name in ("a", "b"):
        for e in _lines(logs / f"agent-{name}.jsonl"):
            if "intent" in e and e["op"] == "delete":
                deletes_meant[(str(e["path"]), str(e["party"]))] += 1
            if "ack" not in e:
                continue
            acked[str(e["op"])] += 1
            if e["op"] == "delete":
                deletes_acked[(str(e["path"]), str(e["party"]))] += 1
                continue
            author = first.get((str(e["path"]), str(e["ack"])))
            if author is None:
                lost.append((e["path"], e["ack"]))
            elif author != e["party"]:
                wrong.append((e["path"], e["ack"], author))
    in_trash = Counter(trash)
    unasked = {key: n for key, n in in_trash.items() if n > deletes_meant[key]}
    missing = {key: n for key, n in deletes_acked.items() if in_trash[key] < n}
    stolen = len((tools / "stolen").read_text().split()) if (tools / "stolen").exists() else 0
    # The branch moved while the person's git held the index (contextfs committing under a
    # live git), as opposed to before git took it (two git commands racing, as any two do).
    expected = [re.search(r"but expected ([0-9a-f]{40})", str(e["error"])) for e in gits]
    moved_under_git = [
        e
        for e, m in zip(gits, expected, strict=True)
        if m and e.get("head under the lock") == m.group(1)
    ]
    fsck = subprocess.run(
        ["git", "-C", str(root), "fsck", "--strict", "--no-progress"],
        capture_output=True,
        text=True,
    )
    status = git(root, "status", "--porcelain", "--untracked-files=all")
    figures = {
        "seconds": SECONDS,
        "kills": run["kills"],
        "agent lives": run["lives"],
        "person saves": len(saved),
        "person saves overwritten by the person": len(superseded & set(saved)),
        "person git commits": Counter(_outcome(e) for e in gits),
        "agent calls acknowledged": dict(acked),
        "lost saves": len(lost),
        "wrong authors": len(wrong),
        "trash entries nobody asked for": len(unasked),
        "acknowledged deletes missing from the trash": len(missing),
        "locks of live gits removed": stolen,
        "git commits whose branch moved under their lock": len(moved_under_git),
        "git fsck": fsck.returncode,
        "index matches the files": index_ok,
        "git status clean": status == "",
    }
    report = os.environ.get("CONTEXTFS_SOAK_REPORT")
    if report:
        Path(report).write_text(json.dumps(figures, indent=2, default=str) + "\n")
    assert lost == [] and wrong == [], (lost[:10], wrong[:10], figures)
    assert unasked == {} and missing == {}, (unasked, missing)
    assert stolen == 0 and moved_under_git == [], figures
    assert fsck.returncode == 0 and "error" not in fsck.stderr.lower(), fsck.stderr
    assert index_ok and status == "", status
    return figures


def test_a_person_two_agents_and_the_watcher_on_one_root(tmp_path: Path) -> None:
    figures = _check(_run(tmp_path, seed=int(os.environ.get("CONTEXTFS_SOAK_SEED", "7"))))
    assert (
        figures["person saves"] and figures["agent calls acknowledged"]
    )  # everybody got work done
