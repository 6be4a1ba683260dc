"""A child process that changes a root until it is killed, logging what it planned and got.

Run as ``python crash_worker.py ROOT LOG SEED COUNT``. Before each operation it appends
an ``intent`` line (the bytes each path will have afterwards, None for gone) to LOG and
after the call returns an ``ack`` line; both are fsynced, so after a SIGKILL the parent
knows exactly which operations were acknowledged and which one was in flight.
"""

from __future__ import annotations

import json
import os
import random
import sys

from contextfs import ContextFSError, ContextManager

ACTOR = "agent:crash"
SESSION = "s-crash"


def main(root: str, log_path: str, seed: int, count: int) -> None:
    rng = random.Random(seed)
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def say(entry: dict) -> None:
        os.write(log, (json.dumps(entry) + "\n").encode())
        os.fsync(log)

    ctx = ContextManager(root, actor=ACTOR, session=SESSION)
    live: dict[str, str] = {rel: ctx.read(rel) or "" for rel in ctx.list() if rel.startswith("n/")}
    # (path, body) of each deletion, newest last: what a restore brings back.
    trashed: list[tuple[str, str]] = []
    for i in range(count):
        kind = rng.choice(
            ["write", "write", "append", "txn", "move", "delete", "restore", "reindex"]
        )
        name = f"n/{rng.randrange(12):02d}.md"
        plan: dict[str, str | None] = {}
        if kind == "write":
            plan = {name: f"version {i} of {name} " + "x" * rng.randrange(0, 3000)}
        elif kind == "append" and name in live:
            plan = {
                name: live[name]
                + ("\n" if live[name] and not live[name].endswith("\n") else "")
                + f"line {i}"
            }
        elif kind == "txn":
            names = sorted({f"n/{rng.randrange(12):02d}.md" for _ in range(rng.randrange(2, 6))})
            plan = {n: f"txn {i} wrote {n}" for n in names}
        elif kind == "move" and live:
            src = rng.choice(sorted(live))
            dst = f"n/{rng.randrange(12, 24):02d}.md"
            if dst not in live:
                plan = {src: None, dst: live[src]}
        elif kind == "delete" and live:
            victim = rng.choice(sorted(live))
            plan = {victim: None}
        elif kind == "restore" and trashed:
            back, body = trashed[-1]
            if back not in live and all(p != back for p, _ in trashed[:-1]):
                plan = {back: body}
        if not plan and kind != "reindex":
            continue
        say({"intent": i, "kind": kind, "plan": plan})
        try:
            if kind == "write":
                ctx.write(name, plan[name])  # type: ignore[arg-type]
            elif kind == "append":
                ctx.append(name, f"line {i}")
            elif kind == "txn":
                with ctx.transaction(f"txn {i}"):
                    for n, body in plan.items():
                        ctx.write(n, body)  # type: ignore[arg-type]
            elif kind == "move":
                (src, _), (dst, _) = sorted(plan.items(), key=lambda kv: kv[1] is not None)
                ctx.move(src, dst)
            elif kind == "delete":
                victim = next(iter(plan))
                ctx.delete(victim)
                trashed.append((victim, live[victim]))
            elif kind == "restore":
                ctx.restore(next(iter(plan)))
                trashed.pop()
            elif kind == "reindex":
                ctx.index.rebuild()
        except ContextFSError as exc:
            say({"refused": i, "error": str(exc)})
            continue
        for rel, body in plan.items():
            if body is None:
                live.pop(rel, None)
            else:
                live[rel] = body
        say({"ack": i, "kind": kind, "plan": plan, "head": ctx.parts.git.head()})
    ctx.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
