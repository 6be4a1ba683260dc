"""One machine of a fleet: an agent process that writes and syncs continuously.

``python sync_worker.py ROOT LOG SEED OPS SYNC_EVERY`` opens the clone at ROOT and runs
OPS operations chosen by SEED — an append to a shared note, a new file of its own, an
append to the shared facts file, a delete or an edit of one of a few shared task files —
syncing every SYNC_EVERY operations. Every operation that returned is logged to LOG as
one JSON line with the commit it made (an *acknowledged* write), every sync with its
latency and rejected pushes; the fleet's oracle reads the log. A sync that gives up
after its bounded retries is logged and tried again later: nothing is lost by it.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

from contextfs import ContextFSError, ContextManager

SHARED = "project/shared.md"
FACTS = "memory/facts.md"
TASKS = [f"task/t{k}.md" for k in range(4)]


def main() -> None:
    root, log_path, seed, ops, every = (
        Path(sys.argv[1]),
        Path(sys.argv[2]),
        int(sys.argv[3]),
        int(sys.argv[4]),
        int(sys.argv[5]),
    )
    rng = random.Random(seed)
    name = root.name
    ctx = ContextManager(root, actor=f"agent:{name}", index=False)
    log = log_path.open("a", buffering=1)

    def ack(op: str, path: str, token: str) -> None:
        log.write(
            json.dumps(
                {
                    "op": op,
                    "path": path,
                    "token": token,
                    "commit": ctx.parts.git.head(),
                    "t": time.time(),
                }
            )
            + "\n"
        )

    for i in range(ops):
        token = f"{name}-{seed}-{i}"
        kind = rng.choice(["shared", "own", "facts", "facts", "task"])
        try:
            if kind == "shared":
                ctx.append(SHARED, f"- {token}\n")
                ack("shared", SHARED, token)
            elif kind == "own":
                path = f"notes/{name}/{i}.md"
                ctx.write(path, f"# Note {token}\n\n{token}\n")
                ack("own", path, token)
            elif kind == "facts":
                ctx.append(FACTS, f"- fact {token}\n")
                ack("facts", FACTS, token)
            else:
                path = rng.choice(TASKS)
                if ctx.exists(path) and rng.random() < 0.4:
                    ctx.delete(path)
                    ack("delete", path, token)
                else:
                    ctx.append(path, f"- step {token}\n")
                    ack("task", path, token)
        except (
            ContextFSError
        ) as exc:  # e.g. an edit racing a delete on this machine: not acknowledged
            log.write(json.dumps({"op": "refused", "kind": kind, "error": str(exc)[:200]}) + "\n")
        if (i + 1) % every == 0 or i == ops - 1:
            started = time.perf_counter()
            try:
                result = ctx.remote.sync()
                log.write(
                    json.dumps(
                        {
                            "op": "sync",
                            "latency": time.perf_counter() - started,
                            "rejected": result.rejected_pushes,
                            "state": result.state,
                            "pushed": result.pushed,
                            "copies": len(result.conflict_copies),
                        }
                    )
                    + "\n"
                )
            except ContextFSError as exc:
                log.write(
                    json.dumps(
                        {
                            "op": "sync-failed",
                            "latency": time.perf_counter() - started,
                            "error": str(exc)[:300],
                        }
                    )
                    + "\n"
                )
    log.write(json.dumps({"op": "done", "pid": os.getpid()}) + "\n")
    log.close()
    ctx.close()


if __name__ == "__main__":
    main()
