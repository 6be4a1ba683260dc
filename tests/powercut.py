"""A power-cut model: what a write path flushed, and what a crash may leave on disk.

A SIGKILL stops a process but the kernel still writes out everything it was given, so
kill tests cannot see a missing ``fsync``. A power cut can lose every operation that no
completed flush covered. This harness, in the manner of ALICE and CrashMonkey:

1. **records** the file-system operations a workload issues, its git subprocesses
   included, with ``strace -f`` (every byte written, every create, rename, unlink,
   ``fsync`` and ``syncfs``; ``-y`` names each descriptor's file, so no descriptor
   table has to be rebuilt);
2. **models** the tree under one folder (the context root) as inodes and folder entries,
   replaying those operations from the tree as it was before the workload;
3. **builds crash states**: at a cut point, the operations before it are replayed, and
   any of them that no later flush (before the cut) covers may be dropped: a file's data
   is covered by an ``fsync`` of that file, a folder entry (create, link, unlink, rename)
   by an ``fsync`` of that folder, everything by ``syncfs``/``sync``. Dropping every
   uncovered operation gives the worst state a power cut can leave; dropping a random
   part of them gives the states in between; dropping none is a plain kill.

It judges by what is flushed, never by how many flush calls were made, so a write path
that flushes less often but still covers what it acknowledges passes.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Model", "Op", "Recording", "crash_states", "materialize", "record", "strace_missing"]

_CALLS = (
    "openat,open,creat,write,pwrite64,writev,pwritev,ftruncate,truncate,rename,renameat,"
    "renameat2,unlink,unlinkat,rmdir,mkdir,mkdirat,link,linkat,symlink,symlinkat,fsync,"
    "fdatasync,sync,syncfs,lseek,close"
)
_LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(?:<([^>]*)>)?(.*)$")
_HEX = re.compile(r'"((?:\\x[0-9a-f]{2})*)"(\.\.\.)?')


def strace_missing() -> str | None:
    """Why the harness cannot run here, or None."""
    if shutil.which("strace") is None:
        return "strace is not installed (Debian: apt-get install strace; .ci/run does)"
    probe = subprocess.run(["strace", "-f", "-qq", "-e", "trace=none", "true"], capture_output=True)
    if probe.returncode != 0:
        return f"strace cannot trace here: {probe.stderr.decode(errors='replace').strip()}"
    return None


@dataclass
class Recording:
    trace: Path
    returncode: int
    stderr: str


def record(
    cmd: Sequence[str], trace: Path, *, env: dict[str, str] | None = None, timeout: float = 300
) -> Recording:
    """Run ``cmd`` under ``strace -f``, every string in hex and never cut short."""
    args = [
        "strace",
        "-f",
        "-qq",
        "-y",
        "-xx",
        "-s",
        str(1 << 26),
        "-e",
        f"trace={_CALLS}",
        "-o",
        str(trace),
        *cmd,
    ]
    proc = subprocess.run(args, env=env, capture_output=True, timeout=timeout)
    return Recording(trace, proc.returncode, proc.stderr.decode(errors="replace"))


def _unhex(text: str) -> bytes:
    return bytes.fromhex(text.replace("\\x", ""))


def _split(args: str) -> list[str]:
    """Top-level comma-separated arguments (hex strings hold no commas, brackets nest)."""
    out, depth, cur = [], 0, []
    for ch in args:
        if ch in "[{<":
            depth += 1
        elif ch in "]}>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return out


def _path_of(arg: str) -> str | None:
    """The file named by a descriptor argument ``3<\\x2f...>`` or ``AT_FDCWD<...>``."""
    m = re.search(r"<((?:\\x[0-9a-f]{2})*)>$", arg)
    return _unhex(m.group(1)).decode("utf-8", "surrogateescape") if m else None


def _string(arg: str) -> bytes:
    m = _HEX.fullmatch(arg.strip())
    if m is None:
        raise ValueError(f"not a string argument: {arg[:80]}")
    if m.group(2):
        raise ValueError("strace cut a string short")
    return _unhex(m.group(1))


def _join(base: str | None, name: bytes) -> str:
    text = name.decode("utf-8", "surrogateescape")
    return os.path.normpath(
        text if text.startswith("/") or base is None else os.path.join(base, text)
    )


def calls(trace: Path) -> Iterator[tuple[int, str, list[str], int, str | None]]:
    """(pid, call, arguments, result, path of a returned descriptor) per completed call."""
    pending: dict[str, str] = {}
    for raw in trace.read_text("ascii").splitlines():
        pid, _, rest = raw.partition(" ")
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        m = re.match(r"<\.\.\. \w+ resumed>(.*)$", rest)
        if m:
            rest = pending.pop(pid, "") + m.group(1)
        if rest.startswith("+++") or rest.startswith("---"):
            continue
        line = _LINE.match(f"{pid} {rest}")
        if line is None or line.group(4) == "?":
            continue
        yield (
            int(line.group(1)),
            line.group(2),
            _split(line.group(3)),
            int(line.group(4)),
            _unhex(line.group(5)).decode("utf-8", "surrogateescape") if line.group(5) else None,
        )


@dataclass
class Node:
    is_dir: bool
    data: bytearray = field(default_factory=bytearray)
    entries: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Op:
    """One operation on the modelled tree, with the inodes the real run resolved."""

    kind: str  # new, write, trunc, link, unlink, rename, fsync, syncfs, mark
    node: int = -1  # the file written or flushed; the folder of link/unlink; rename's source folder
    name: str = ""
    target: int = -1  # link: the inode linked; rename: the destination folder
    name2: str = ""
    offset: int = 0
    data: bytes = b""
    moved: int = -1  # rename: the inode renamed


class Model:
    """The tree under ``top``: inodes by number, each folder's entries."""

    def __init__(self, top: Path) -> None:
        self.top = str(top)
        self.nodes: dict[int, Node] = {0: Node(True)}
        self._load(top, 0)

    def _load(self, folder: Path, number: int) -> None:
        for child in sorted(folder.iterdir()):
            if child.is_symlink():
                continue
            new = len(self.nodes)
            if child.is_dir():
                self.nodes[new] = Node(True)
                self._load(child, new)
            else:
                self.nodes[new] = Node(False, bytearray(child.read_bytes()))
            self.nodes[number].entries[child.name] = new

    def copy(self) -> Model:
        twin = Model.__new__(Model)
        twin.top = self.top
        twin.nodes = {
            n: Node(v.is_dir, bytearray(v.data), dict(v.entries)) for n, v in self.nodes.items()
        }
        return twin

    def inside(self, path: str | None) -> bool:
        return path is not None and (path == self.top or path.startswith(self.top + "/"))

    def lookup(self, path: str) -> int | None:
        number = 0
        for part in os.path.relpath(path, self.top).split("/"):
            if part in ("", "."):
                continue
            number = self.nodes[number].entries.get(part, -1)
            if number < 0:
                return None
        return number

    def parent(self, path: str) -> tuple[int | None, str]:
        return self.lookup(os.path.dirname(path)), os.path.basename(path)

    def apply(self, op: Op) -> None:
        if op.kind == "new":  # an inode comes into being; only a link makes it reachable
            self.nodes[op.node] = Node(op.name == "dir")
        elif op.kind == "write":
            data = self.nodes[op.node].data
            if len(data) < op.offset:
                data.extend(b"\0" * (op.offset - len(data)))
            data[op.offset : op.offset + len(op.data)] = op.data
        elif op.kind == "trunc":
            data = self.nodes[op.node].data
            del data[op.offset :]
            data.extend(b"\0" * (op.offset - len(data)))
        elif op.kind == "link":
            self.nodes[op.node].entries[op.name] = op.target
        elif op.kind == "unlink":
            self.nodes[op.node].entries.pop(op.name, None)
        elif op.kind == "rename":
            if self.nodes[op.node].entries.get(op.name) == op.moved:
                del self.nodes[op.node].entries[op.name]
            self.nodes[op.target].entries[op.name2] = op.moved


def ops_of(trace: Path, before: Model, *, mark: Callable[[str, bytes], str | None]) -> list[Op]:
    """Replay a trace on a copy of ``before``, resolving every path to the inode it named.

    ``mark(path, data)`` sees every write outside the tree and returns a label for the
    ones that are milestones of the workload (its acknowledgements), kept as ``mark`` ops.
    """
    model = before.copy()
    offsets: dict[tuple[int, int], int] = {}
    appending: set[tuple[int, int]] = set()
    ops: list[Op] = []

    def emit(op: Op) -> None:
        model.apply(op)
        ops.append(op)

    def create(path: str, is_dir: bool) -> int | None:
        folder, name = model.parent(path)
        if folder is None:
            return None
        number = len(model.nodes)
        emit(Op("new", number, "dir" if is_dir else "file"))
        emit(Op("link", folder, name, number))
        return number

    for pid, call, args, result, _returned in calls(trace):
        if result < 0 and call not in ("sync",):
            continue
        if call in ("openat", "open", "creat"):
            base = _path_of(args[0]) if call == "openat" else None
            path = _join(base, _string(args[1] if call == "openat" else args[0]))
            flags = (
                args[2] if call == "openat" else (args[1] if call == "open" else "O_CREAT|O_TRUNC")
            )
            if not model.inside(path):
                continue
            number = model.lookup(path)
            if number is None and "O_CREAT" in flags:
                number = create(path, False)
            if number is None:
                continue
            if "O_TRUNC" in flags and not model.nodes[number].is_dir:
                emit(Op("trunc", number, offset=0))
            offsets[(pid, result)] = 0
            (appending.add if "O_APPEND" in flags else appending.discard)((pid, result))
        elif call in ("write", "pwrite64", "writev", "pwritev"):
            path = _path_of(args[0])
            fd = int(args[0].split("<", 1)[0])
            if call in ("writev", "pwritev"):
                data = b"".join(
                    _string(s) for s in re.findall(r'iov_base=("[^"]*"(?:\.\.\.)?)', args[1])
                )
            else:
                data = _string(args[1])
            data = data[:result]
            if not model.inside(path):
                label = mark(path or "", data)
                if label is not None:
                    ops.append(Op("mark", name=label))
                continue
            number = model.lookup(path or "")
            if number is None:
                continue  # a file already unlinked: no name can bring its bytes back
            if call in ("pwrite64", "pwritev"):
                at = int(args[-1])
            elif (pid, fd) in appending:
                at = len(model.nodes[number].data)
            else:
                at = offsets.get((pid, fd), 0)
                offsets[(pid, fd)] = at + len(data)
            emit(Op("write", number, offset=at, data=data))
        elif call == "lseek":
            fd = int(args[0].split("<", 1)[0])
            offsets[(pid, fd)] = result
        elif call in ("ftruncate", "truncate"):
            path = _path_of(args[0]) if call == "ftruncate" else _join(None, _string(args[0]))
            number = model.lookup(path) if model.inside(path) else None
            if number is not None:
                emit(Op("trunc", number, offset=int(args[1])))
        elif call in ("mkdir", "mkdirat"):
            base = _path_of(args[0]) if call == "mkdirat" else None
            path = _join(base, _string(args[1] if call == "mkdirat" else args[0]))
            if model.inside(path):
                create(path, True)
        elif call in ("unlink", "unlinkat", "rmdir"):
            base = _path_of(args[0]) if call == "unlinkat" else None
            path = _join(base, _string(args[1] if call == "unlinkat" else args[0]))
            folder, name = model.parent(path) if model.inside(path) else (None, "")
            if folder is not None:
                emit(Op("unlink", folder, name))
        elif call in ("link", "linkat"):
            if call == "linkat":
                src = _join(_path_of(args[0]), _string(args[1]))
                dst = _join(_path_of(args[2]), _string(args[3]))
            else:
                src, dst = _join(None, _string(args[0])), _join(None, _string(args[1]))
            number = model.lookup(src) if model.inside(src) else None
            folder, name = model.parent(dst) if model.inside(dst) else (None, "")
            if number is not None and folder is not None:
                emit(Op("link", folder, name, number))
        elif call in ("rename", "renameat", "renameat2"):
            if call == "rename":
                src, dst = _join(None, _string(args[0])), _join(None, _string(args[1]))
            else:
                src = _join(_path_of(args[0]), _string(args[1]))
                dst = _join(_path_of(args[2]), _string(args[3]))
            if not (model.inside(src) and model.inside(dst)):
                continue
            (sfolder, sname), (dfolder, dname) = model.parent(src), model.parent(dst)
            moved = model.lookup(src)
            if sfolder is not None and dfolder is not None and moved is not None:
                emit(Op("rename", sfolder, sname, dfolder, dname, moved=moved))
        elif call in ("fsync", "fdatasync"):
            path = _path_of(args[0])
            number = model.lookup(path) if model.inside(path) else None
            if number is not None:
                ops.append(Op("fsync", number))
        elif call in ("syncfs", "sync"):
            ops.append(Op("syncfs"))
    return ops


def _covered(ops: Sequence[Op], cut: int) -> list[bool]:
    """For each op before ``cut``: would it survive a power cut at ``cut`` for certain?"""
    synced_after: dict[int, int] = {}  # inode -> index of its last fsync before the cut
    last_syncfs = -1
    for i, op in enumerate(ops[:cut]):
        if op.kind == "fsync":
            synced_after[op.node] = i
        elif op.kind == "syncfs":
            last_syncfs = i

    def flushed(node: int, i: int) -> bool:
        return synced_after.get(node, -1) > i or last_syncfs > i

    out = []
    for i, op in enumerate(ops[:cut]):
        if op.kind in ("write", "trunc", "link", "unlink"):
            out.append(flushed(op.node, i))
        elif op.kind == "rename":
            out.append(flushed(op.node, i) and flushed(op.target, i))
        else:
            out.append(True)
    return out


def crash_states(
    before: Model, ops: Sequence[Op], cut: int, *, drop: float, rng: random.Random | None = None
) -> Model:
    """The tree a power cut just before ``ops[cut]`` may leave: each uncovered operation
    is dropped with probability ``drop`` (1.0: every one, the worst case)."""
    rng = rng or random.Random(0)
    covered = _covered(ops, cut)
    model = before.copy()
    for op, safe in zip(ops[:cut], covered, strict=True):
        if op.kind in ("fsync", "syncfs", "mark"):
            continue
        if not safe and op.kind != "new" and (drop >= 1.0 or rng.random() < drop):
            continue
        model.apply(op)
    return model


def materialize(model: Model, dest: Path, *, mtime: float | None = None) -> None:
    """Write the modelled tree to ``dest`` (a folder that does not exist yet).

    ``mtime`` gives every file and folder that modification time: after a power cut,
    everything on the disk was last changed before the machine booted again.
    """

    def put(number: int, where: Path) -> None:
        where.mkdir()
        for name, child in sorted(model.nodes[number].entries.items()):
            node = model.nodes[child]
            if node.is_dir:
                put(child, where / name)
            else:
                (where / name).write_bytes(bytes(node.data))
                if mtime is not None:
                    os.utime(where / name, (mtime, mtime))
        if mtime is not None:
            os.utime(where, (mtime, mtime))

    put(0, dest)
