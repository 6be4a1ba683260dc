"""An agent process of the soak: tool calls on a shared root until it is done or killed.

Started by the soak through a fork server that has imported contextfs and its tools once
(``main``), or as ``python soak_agent.py ROOT LOG NAME SEED COUNT PAUSE``. It opens one
``ContextManager`` (as ``agent:NAME``) and makes COUNT tool calls through the LangChain
tools (``write_context``, ``append_context``, ``delete_context``) on the files the person
edits too and on files of its own. Each call's content carries a token nobody else uses.
Before a call it logs an ``intent`` line, after it an ``ack`` (the tool said it was saved)
or a ``refused`` line; lines are fsynced, so a SIGKILL leaves the log exact.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

from contextfs import ContextManager
from contextfs.integrations import make_tools

SHARED = [f"shared/{i:02d}.md" for i in range(6)]


def ready() -> None:
    """Nothing: started once so that the fork server has imported everything before the soak begins."""


def main(root: str, log_path: str, name: str, seed: int, count: int, pause: float) -> None:
    rng = random.Random(seed)
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def say(entry: dict[str, object]) -> None:
        os.write(log, (json.dumps({**entry, "t": round(time.time(), 3)}) + "\n").encode())
        os.fsync(log)

    ctx = ContextManager(root, actor=f"agent:{name}", index=False)
    tools = {t.name: t for t in make_tools(ctx, groups="store", allow_delete=True)}
    own = [f"agent-{name}/{i:02d}.md" for i in range(3)]
    for j in range(count):
        path = rng.choice(SHARED + own)
        token = f"agent-{name} save {seed}-{j}"
        kind = rng.choices(["write", "append", "delete"], weights=[5, 5, 1])[0]
        say({"intent": token, "party": f"agent:{name}", "op": kind, "path": path})
        if kind == "write":
            out = tools["write_context"].invoke({"path": path, "content": f"# {path}\n\n{token}\n"})
        elif kind == "append":
            out = tools["append_context"].invoke({"path": path, "text": f"{token}\n"})
        else:
            out = tools["delete_context"].invoke({"path": path})
        if str(out).startswith("Error"):
            say({"refused": token, "error": str(out)[:300]})
        else:
            say({"ack": token, "party": f"agent:{name}", "op": kind, "path": path})
        time.sleep(rng.uniform(0, pause))
    ctx.close()


if __name__ == "__main__":
    main(
        sys.argv[1],
        sys.argv[2],
        sys.argv[3],
        int(sys.argv[4]),
        int(sys.argv[5]),
        float(sys.argv[6]),
    )
