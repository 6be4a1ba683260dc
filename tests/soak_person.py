"""The person of the soak: saves files the way editors and shells do, and commits with git.

Run as ``python soak_person.py ROOT LOG SEED SECONDS TOOLS``. Until SECONDS have passed and
the harness has created ``TOOLS/enough`` (once the agents got calls through: on a slow machine
their start-up alone can take longer than SECONDS) it edits the shared files and files of its own, each save putting one line
``person-line: <token>`` in place of the previous one, by one of

* plain file I/O (open, truncate, write: what most editors do in place),
* ``sed -i`` (a temporary file renamed over the original),
* a rename-over save (write a temporary file, ``os.replace`` it over the original),

and now and then runs ``git commit -a`` with an editor that keeps git's ``index.lock``
held for a moment, checking all the while that nobody removed that lock under it.

Each save is logged (fsynced) with its token once the save returned. ``superseded`` marks
a save the person overwrote themselves: the next save of the path found exactly what the
person had read back after it, so nobody else saw it and it may never reach history.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

SHARED = [f"shared/{i:02d}.md" for i in range(6)]
OWN = [f"person/{i:02d}.md" for i in range(3)]
_LINE = re.compile(r"^person-line: .*$\n?", re.MULTILINE)

# Holds git's index.lock for a moment, and notes whether the lock it started with was still
# the same file when it finished (a lock removed under a live git is what must never happen),
# and what HEAD was once git held the lock (to tell the branch moving under the lock from
# the branch moving before git took it, a race between any two git commands).
EDITOR = """#!/bin/sh
lock="$GIT_DIR_FOR_SOAK/index.lock"
before=$(stat -c %i "$lock" 2>/dev/null)
git -C "$GIT_DIR_FOR_SOAK/.." rev-parse HEAD > "$SOAK_HEAD"
sleep "$SOAK_HOLD"
after=$(stat -c %i "$lock" 2>/dev/null)
if [ -z "$before" ] || [ "$before" != "$after" ]; then echo stolen >> "$SOAK_STOLEN"; fi
echo "the person's commit" > "$1"
"""


def edited(text: str, token: str) -> str:
    """``text`` with its person line replaced by one for ``token`` (appended when missing)."""
    body = _LINE.sub("", text)
    if body and not body.endswith("\n"):
        body += "\n"
    return body + f"person-line: {token}\n"


def main(root: str, log_path: str, seed: int, seconds: float, tools: str) -> None:
    rng = random.Random(seed)
    base = Path(root)
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    editor = Path(tools) / "editor.sh"
    editor.write_text(EDITOR)
    editor.chmod(0o755)
    env = {**os.environ, "GIT_EDITOR": str(editor), "GIT_DIR_FOR_SOAK": str(base / ".git"),
           "SOAK_STOLEN": str(Path(tools) / "stolen")}

    def say(entry: dict[str, object]) -> None:
        os.write(log, (json.dumps({**entry, "t": round(time.time(), 3)}) + "\n").encode())
        os.fsync(log)

    read_back: dict[str, tuple[str, bytes]] = {}  # path -> (last token, the bytes seen right after saving it)
    deadline = time.monotonic() + seconds
    enough = Path(tools) / "enough"  # the harness says when the agents have done some work too
    k = 0
    while time.monotonic() < deadline or not enough.exists():
        if rng.random() < 0.04:
            hold = rng.uniform(0.05, 0.6)
            head_file = Path(tools) / "head"
            head_file.unlink(missing_ok=True)
            proc = subprocess.run(["git", "-C", root, "-c", "user.name=human", "-c", "user.email=human@contextfs.invalid",
                                   "commit", "-a"], env={**env, "SOAK_HOLD": f"{hold:.2f}", "SOAK_HEAD": str(head_file)},
                                  capture_output=True, text=True, check=False)
            locked_head = head_file.read_text().strip() if head_file.exists() else None
            say({"git": proc.returncode, "error": " ".join(proc.stderr.split())[:400] if proc.returncode else "",
                 "head under the lock": locked_head})
            continue
        rel = rng.choice(SHARED + OWN)
        path = base / rel
        token = f"p{seed}-{k}"
        k += 1
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            current = b""
        if rel in read_back and read_back[rel][1] == current:
            say({"superseded": read_back[rel][0]})
        how = rng.choice(["plain", "sed", "rename"])
        new = edited(current.decode("utf-8", "replace"), token).encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        if how == "sed" and current.strip():
            # GNU sed: append the new person line after the last line, drop the old one (in
            # this order: a deleted last line would take the append with it).
            done = subprocess.run(["sed", "-i", "-e", f"$a person-line: {token}", "-e", "/^person-line: /d",
                                   str(path)], capture_output=True, check=False)
            if done.returncode != 0:  # an agent deleted the file since it was read: no save
                say({"failed": token, "path": rel, "error": done.stderr.decode(errors="replace")[:200]})
                continue
        elif how == "rename" or how == "sed":
            tmp = path.with_name(f"{path.name}___jb_tmp___")  # how JetBrains editors save
            tmp.write_bytes(new)
            os.replace(tmp, path)
        else:
            with open(path, "wb") as fh:
                fh.write(new)
        say({"saved": token, "path": rel, "how": how})
        try:
            read_back[rel] = (token, path.read_bytes())
        except FileNotFoundError:
            read_back.pop(rel, None)
        time.sleep(rng.uniform(0.01, 0.08))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
