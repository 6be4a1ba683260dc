"""Benchmark: what the context middleware adds to each model call of a LangChain agent.

The same agent — LangChain's ``create_agent``, a scripted chat model that calls one tool
and then answers, so two model calls a turn — runs turns with and without
``ContextMiddleware`` on a context root of 10,000 generated notes plus the sample context
(three topics, core memory, a task). Turns of the two agents alternate, so both see the
same machine. Reported, per model call:

* **overhead, end to end**: (time of a turn with the middleware - time of the same turn
  without it) / model calls, median over the warm turns;
* **in the middleware's hooks**: the time spent inside ``before_model``,
  ``wrap_model_call`` (excluding the model), ``wrap_tool_call`` (excluding the tool) and
  ``after_agent``, per model call: what the middleware itself costs;
* the baselines of the same run: a model call of the plain agent, and one
  ``ContextManager.write`` (a single committed write) on the same root.

Each turn logs its messages (one commit per hook that has something to log), so a turn of
two model calls makes three commits. The first turn after a change of the topic files
re-packs the context; later calls reuse it.

    python tests/benchmarks/bench_middleware.py [--quick] [--page-in]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from contextfs import ContextManager
from contextfs.integrations.middleware import ContextMiddleware

SAMPLE = Path(__file__).resolve().parents[2] / "sample-context"
WORDS = [
    "ledger",
    "cargo",
    "vessel",
    "manifest",
    "harbor",
    "crane",
    "pallet",
    "invoice",
    "tariff",
    "customs",
    "route",
    "depot",
    "berth",
    "barge",
    "lane",
    "quay",
    "freight",
    "broker",
    "container",
    "schedule",
]
GOAL_MS = 20.0


class Scripted(BaseChatModel):
    """Calls the ``lookup`` tool once per question, then answers."""

    n: int = 0

    @property
    def _llm_type(self) -> str:
        return "bench-script"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:  # noqa: ARG002 - LangChain's signature
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.n += 1
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(
                content=f"Answer {self.n}: the retry schedule doubles with full jitter, capped at six "
                "hours; after twelve attempts the delivery goes to the dead-letter queue."
            )
        else:
            reply = AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "lookup",
                        "args": {"key": f"k{self.n}"},
                        "id": f"c{self.n}",
                        "type": "tool_call",
                    }
                ],
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"{key}: the delivery worker retries on 5xx and timeouts only"


class Timed(ContextMiddleware):
    """The middleware with a stopwatch around each hook (the model's and the tools' own time excluded)."""

    spent: float = 0.0

    def before_model(self, state: Any, runtime: Any) -> Any:
        t = time.perf_counter()
        try:
            return super().before_model(state, runtime)
        finally:
            self.spent += time.perf_counter() - t

    def _request(self, request: Any) -> Any:
        t = time.perf_counter()
        try:
            return super()._request(request)
        finally:
            self.spent += time.perf_counter() - t

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        inner = 0.0

        def timed_handler(req: Any) -> Any:
            nonlocal inner
            t0 = time.perf_counter()
            try:
                return handler(req)
            finally:
                inner += time.perf_counter() - t0

        t = time.perf_counter()
        try:
            return super().wrap_tool_call(request, timed_handler)
        finally:
            self.spent += time.perf_counter() - t - inner

    def after_agent(self, state: Any, runtime: Any) -> Any:
        t = time.perf_counter()
        try:
            return super().after_agent(state, runtime)
        finally:
            self.spent += time.perf_counter() - t


def build_root(base: Path, n_files: int) -> Path:
    root = base / "ctx"
    shutil.copytree(SAMPLE, root)
    rng = random.Random(5)
    for i in range(n_files):
        folder = root / "notes" / f"d{i % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = " ".join(rng.choice(WORDS) for _ in range(120))
        (folder / f"n{i:05d}.md").write_text(f"# Note {i}\n\n{text}.\n", "utf-8")
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 files and fewer turns")
    parser.add_argument(
        "--page-in", action="store_true", help="page in passages matching each question too"
    )
    args = parser.parse_args()
    n_files, turns, warm_up = (2_000, 12, 3) if args.quick else (10_000, 40, 5)
    base = Path(tempfile.mkdtemp(prefix="bench-middleware-"))
    try:
        root = build_root(base, n_files)
        t = time.perf_counter()
        ctx = ContextManager(root, actor="human", session="bench", index=False)
        setup = time.perf_counter() - t
        plain = create_agent(Scripted(), [lookup])
        middleware = Timed(
            ctx, actor="agent:bench", session="bench-run", budget=16_000, page_in=args.page_in
        )
        agent = create_agent(Scripted(), [lookup], middleware=[middleware])
        rows: list[tuple[float, float, float]] = []
        questions = [
            "Where are we with the webhook retries?",
            "What about the dead-letter queue?",
            "And the signing scheme?",
            "Which customers are affected by the change?",
        ]
        for i in range(turns):
            q = f"{questions[i % len(questions)]} (question {i})"
            t0 = time.perf_counter()
            plain.invoke({"messages": [HumanMessage(q)]})
            base_ms = (time.perf_counter() - t0) * 1000
            before = middleware.spent
            t0 = time.perf_counter()
            agent.invoke({"messages": [HumanMessage(q)]})
            with_ms = (time.perf_counter() - t0) * 1000
            rows.append(
                (base_ms / 2, (with_ms - base_ms) / 2, (middleware.spent - before) * 1000 / 2)
            )
        warm = rows[warm_up:]
        write_ms = []
        for i in range(15):
            t0 = time.perf_counter()
            ctx.write("notes/bench-write.md", f"one committed write, number {i}\n")
            write_ms.append((time.perf_counter() - t0) * 1000)
        ctx.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)

    def med(i: int) -> float:
        return statistics.median(r[i] for r in warm)

    def p95(i: int) -> float:
        values = sorted(r[i] for r in warm)
        return values[min(len(values) - 1, int(len(values) * 0.95))]

    hooks = med(2)
    print(
        f"Context root: the sample context + {n_files:,} generated notes (opened in {setup:.1f} s); "
        f"{turns} turns of 2 model calls each ({turns - warm_up} warm), page-in {'on' if args.page_in else 'off'}; "
        f"Python {sys.version.split()[0]}.\n"
    )
    print("| per model call | median ms | p95 ms | vs plain model call | vs one committed write |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| plain agent (no middleware): the model call itself | {med(0):.2f} | {p95(0):.2f} | 1.00x | |"
    )
    print(
        f"| middleware overhead, end to end | {med(1):.2f} | {p95(1):.2f} | {med(1) / med(0):.2f}x | "
        f"{med(1) / statistics.median(write_ms):.2f}x |"
    )
    print(
        f"| middleware overhead, inside its hooks | {hooks:.2f} | {p95(2):.2f} | {hooks / med(0):.2f}x | "
        f"{hooks / statistics.median(write_ms):.2f}x |"
    )
    print(
        f"| baseline: one ContextManager.write (one commit) | {statistics.median(write_ms):.2f} | "
        f"{sorted(write_ms)[int(len(write_ms) * 0.95)]:.2f} | | 1.00x |"
    )
    status = "met" if hooks < GOAL_MS else "not met"
    print(
        f"\nGoal: under {GOAL_MS:.0f} ms per model call warm (inside the hooks) at {n_files:,} files: "
        f"**{status}** ({hooks:.1f} ms)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
