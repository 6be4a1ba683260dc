"""The workload the power-cut tests record: one change of each kind, each acknowledged.

Run as ``python powercut_worker.py ROOT LOG``. Before each operation it appends an
``intent`` line (the bytes each path will have afterwards, None for gone) to LOG, outside
the root, and an ``ack`` line after the call returns; the harness finds those writes in
the trace and cuts the power around them.

``POWERCUT_SKIP=<what>`` turns the process's own flushes of one kind of file into no-ops
(``file``, ``folder``, ``journal``, ``objects``, ``branch``; syncfs is then off, so each
kind is flushed on its own), or makes every ``syncfs`` claim success without flushing
(``syncfs``), so a test can check that the harness notices each missing flush.
"""

from __future__ import annotations

import json
import os
import sys

from contextfs import ContextManager

ACTOR = "agent:power"
SESSION = "s-power"

#: (kind, arguments, the bytes each path has afterwards)
PLAN: list[tuple[str, dict[str, object], dict[str, str | None]]] = [
    ("write", {"rel": "notes/a.md", "body": "alpha"}, {"notes/a.md": "alpha"}),
    (
        "write",
        {"rel": "notes/a.md", "body": "alpha, second version"},
        {"notes/a.md": "alpha, second version"},
    ),
    (
        "append",
        {"rel": "notes/a.md", "line": "one more line"},
        {"notes/a.md": "alpha, second version\none more line"},
    ),
    (
        "txn",
        {"bodies": {"deep/x/b.md": "bravo", "notes/c.md": "charlie"}},
        {"deep/x/b.md": "bravo", "notes/c.md": "charlie"},
    ),
    (
        "move",
        {"src": "notes/c.md", "dst": "moved/c.md"},
        {"notes/c.md": None, "moved/c.md": "charlie"},
    ),
    ("delete", {"rel": "deep/x/b.md"}, {"deep/x/b.md": None}),
]


def _skip_flushes(root: str, what: str) -> None:
    """Make this process's fsync a no-op for one kind of file (the harness's self-test)."""
    from contextfs.files import durability

    if what == "syncfs":
        durability._SYNCFS = lambda fd: 0  # type: ignore[assignment]
        return
    # Without syncfs a change flushes each file, folder, object and lock it wrote by itself.
    durability._SYNCFS = None
    real = os.fsync
    git = os.path.join(root, ".git")

    def kind(path: str) -> str | None:
        if not path.startswith(root + "/"):
            return None
        if path.startswith(git + "/"):
            rel = path[len(git) + 1 :]
            if "/journal" in rel:
                return "journal"
            if rel.startswith("objects"):
                return "objects"
            if rel.startswith("refs") or rel.startswith("HEAD"):
                return "branch"
            return None
        return "folder" if os.path.isdir(path) else "file"

    def fsync(fd: int) -> None:
        if kind(os.readlink(f"/proc/self/fd/{fd}")) != what:
            real(fd)

    os.fsync = fsync
    if what == "objects":  # a large batch is flushed with one syncfs instead
        from contextfs.versioning import objects

        objects.sync_filesystem = lambda path: False  # type: ignore[assignment]


def main(root: str, log_path: str) -> None:
    if os.environ.get("POWERCUT_SKIP"):
        _skip_flushes(os.path.realpath(root), os.environ["POWERCUT_SKIP"])
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def say(entry: dict[str, object]) -> None:
        os.write(log, (json.dumps(entry) + "\n").encode())

    with ContextManager(root, actor=ACTOR, session=SESSION, index=False, sync=False) as ctx:
        for i, (kind, args, after) in enumerate(PLAN):
            say({"intent": i, "plan": after})
            if kind == "write":
                ctx.write(str(args["rel"]), str(args["body"]))
            elif kind == "append":
                ctx.append(str(args["rel"]), str(args["line"]))
            elif kind == "txn":
                with ctx.transaction(f"txn {i}"):
                    for rel, body in dict(args["bodies"]).items():  # type: ignore[call-overload]
                        ctx.write(rel, body)
            elif kind == "move":
                ctx.move(str(args["src"]), str(args["dst"]))
            elif kind == "delete":
                ctx.delete(str(args["rel"]))
            say({"ack": i})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
