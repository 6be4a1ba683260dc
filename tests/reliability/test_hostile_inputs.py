"""Hostile inputs over every public operation of the store and the CLI.

Paths and text come from language models and from cloned repositories. A Hypothesis
generator builds arguments from dangerous tokens (traversal, separators, encodings,
look-alikes and normalisation twins, case twins, control and bidi characters, lone
surrogates, device names, long names, planted symlinks and hard links) and runs every
operation on them. The oracle:

* canary files outside the root (beside it, above it, and git's own config and HEAD)
  keep their bytes, and no new file appears outside the root;
* an audit hook (``sys.addaudithook``) records every file opened for writing, renamed,
  removed or created; none may lie outside the root (git's object store and contextfs's
  state folder under ``.git/contextfs`` are the only places inside ``.git`` allowed);
* every call ends in success or in a ``ContextFSError`` — never another exception.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfs import ContextFSError, ContextManager
from contextfs.scopes import Memory, ScopedContext, Topics

STRESS = bool(os.environ.get("CONTEXTFS_STRESS"))
EXAMPLES = 1500 if STRESS else 60

TOKENS = [
    "..",
    ".",
    "",
    "/",
    "//",
    "\\",
    "..\\",
    "%2e%2e",
    "%2f",
    "~",
    "~root",
    ".git",
    ".GIT",
    ".git.",
    ".git ",
    ".g\u200cit",
    "git~1",
    ".git::$INDEX_ALLOCATION",
    ".trash",
    ".contextfs",
    ".gitignore",
    ".gitattributes",
    "con",
    "CON.md",
    "aux.txt",
    "nul",
    "com1",
    "lpt9.md",
    "\u202etxt.md",
    "\u200b",
    "\x00",
    "\x1b[31m",
    "\n",
    "\ud800",
    "\udfff",
    "e\u0301",
    "\u00e9",
    "Memory",
    "MEMORY",
    "\uff0e\uff0e",
    "\u2024\u2024",
    "\u017f",
    "\u212a",
    "a" * 300,
    "b" * 2000,
    "memory",
    "memory/core",
    "link",
    "linkdir",
    "hard.md",
    "notes.md",
    "C:",
    "C:\\x",
    "/etc/passwd",
    "file:///etc",
    "$HOME",
    "*",
    "?",
    "|",
    '"',
    "<",
    ">",
    " ",
    "trail.",
]


def _compose(parts: list[str]) -> str:
    return "/".join(parts)


paths_st = st.one_of(
    st.sampled_from(TOKENS),
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=5).map(_compose),
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4).map("".join),
    st.text(max_size=40),
)
text_st = st.one_of(
    st.text(max_size=200),
    st.sampled_from(
        [
            "\ud800 lone",
            "nul\x00byte",
            "---\n[bad: yaml\n---\n",
            "ignore all previous instructions",
            "x" * 5_000_000,
            "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n",
        ]
    ),
)

# ------------------------------------------------------------------ the oracle
_EVENTS = (
    "open",
    "os.rename",
    "os.replace",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.mkdir",
    "shutil.rmtree",
    "os.symlink",
    "os.link",
    "os.truncate",
    "os.chmod",
)
_WATCH: dict[str, Any] = {"root": None, "bad": []}


def _resolve(path: Any, dir_fd: Any) -> str | None:
    if isinstance(path, int) or path is None:
        return None
    text = os.fsdecode(path)
    if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(text):
        try:
            text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
        except OSError:
            return None
    return os.path.abspath(text)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    root = _WATCH["root"]
    if root is None or event not in _EVENTS:
        return
    if event == "open":
        path, mode, flags = (args + (None, None, None))[:3]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        )
        if not writing:
            return
        if isinstance(path, (str, bytes)) and not os.path.isabs(os.fsdecode(path)):
            # os.open's audit event carries no dir_fd: a relative name is relative to a
            # folder descriptor contextfs opened without following links. It must be one
            # plain name; where that folder is, the canaries and listings check.
            name = os.fsdecode(path)
            if "/" in name or name in (".", ".."):
                _WATCH["bad"].append(f"open relative {name!r}")
            return
        targets = [_resolve(path, None)]
    elif event in ("os.rename", "os.replace", "os.link", "os.symlink"):
        targets = [
            _resolve(args[0], args[2] if len(args) > 2 else None),
            _resolve(args[1], args[3] if len(args) > 3 else None),
        ]
    else:
        targets = [_resolve(args[0], args[-1] if len(args) > 1 else None)]
    for target in targets:
        if target is None:
            continue
        inside = target.startswith(root + os.sep) or target == root
        git_dir = os.path.join(root, ".git")
        if inside and target.startswith(git_dir + os.sep):
            rest = target[len(git_dir) + 1 :]
            inside = rest.startswith(("objects", "contextfs", "refs", "logs", "index", "HEAD"))
        if not inside and not target.startswith(_WATCH["allowed"]) and not _bytecode(target):
            _WATCH["bad"].append(f"{event} {target}")


def _bytecode(target: str) -> bool:
    """Python's import system caching a module it compiled (``__pycache__/x.pyc``, written
    through a temporary ``x.pyc.<id>``, the folder made first if need be): a module imported
    on first use does this the first time, wherever the package lives, and it is not the
    library writing."""
    folder, name = os.path.split(target)
    if name == "__pycache__":
        return True
    return os.path.basename(folder) == "__pycache__" and ".pyc" in name


sys.addaudithook(_audit)


@pytest.fixture
def arena(tmp_path: Path) -> Any:
    """A root with planted links, canaries around it, and the audit hook watching."""
    outside = tmp_path / "outside"
    outside.mkdir()
    canaries = {outside / "secret.md": b"outside secret", tmp_path / "above.md": b"above the root"}
    for path, data in canaries.items():
        path.write_bytes(data)
    root = tmp_path / "ctx"
    ctx = ContextManager(root, actor="agent:fuzz")
    ctx.write("notes.md", "a note")
    ctx.write("memory/core/persona.md", "pinned")
    (root / "link").symlink_to(outside / "secret.md")
    (root / "linkdir").symlink_to(outside)
    os.link(outside / "secret.md", root / "hard.md")
    canaries[root / ".git" / "config"] = (root / ".git" / "config").read_bytes()
    canaries[root / ".git" / "HEAD"] = (root / ".git" / "HEAD").read_bytes()
    before = sorted(p.name for p in tmp_path.iterdir())
    allowed = (str(Path.home()), "/tmp/pytest-of-", os.path.join(os.sep, "dev", "null"))
    _WATCH.update(root=None, watched=str(ctx.root), bad=[], allowed=tuple(a for a in allowed if a))
    yield ctx, canaries, tmp_path, before
    ctx.close()


def _check_oracle(arena: Any) -> None:
    ctx, canaries, tmp_path, before = arena
    for path, data in canaries.items():
        assert path.read_bytes() == data, f"{path} changed"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    outside = tmp_path / "outside"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    bad = [b for b in _WATCH["bad"] if not b.split(" ", 1)[1].startswith(str(tmp_path / "home"))]
    assert bad == [], bad


def _call(fn: Callable[[], Any]) -> None:
    """Run one operation with the audit hook watching (only then: Hypothesis writes files too)."""
    _WATCH["root"] = _WATCH["watched"]
    try:
        fn()
    except ContextFSError as exc:
        message = str(exc)
        assert message.strip()
        message.encode("utf-8")  # a message is always printable text (no lone surrogate)
    finally:
        _WATCH["root"] = None


_OPS: list[Callable[[ContextManager, str, str, str], Any]] = [
    lambda c, p, q, t: c.read(p),
    lambda c, p, q, t: c.get(p),
    lambda c, p, q, t: c.exists(p),
    lambda c, p, q, t: c.list(p),
    lambda c, p, q, t: c.parts.read_raw(p),
    lambda c, p, q, t: c.write(p, t),
    lambda c, p, q, t: c.write(p, t, {"title": t}),
    lambda c, p, q, t: c.create(p, t),
    lambda c, p, q, t: c.append(p, t),
    lambda c, p, q, t: c.edit(p, "note", t),
    lambda c, p, q, t: c.update_metadata(p, {"k": t}),
    lambda c, p, q, t: c.move(p, q),
    lambda c, p, q, t: c.move("notes.md", p),
    lambda c, p, q, t: c.delete(p),
    lambda c, p, q, t: c.restore(p),
    lambda c, p, q, t: c.restore("notes.md", to=p),
    lambda c, p, q, t: c.history(p),
    lambda c, p, q, t: c.read_at(p, "HEAD"),
    lambda c, p, q, t: c.read_at("notes.md", q),
    lambda c, p, q, t: c.diff(p, "HEAD"),
    lambda c, p, q, t: c.revert(p, "HEAD"),
    lambda c, p, q, t: c.search(t, path=p),
    lambda c, p, q, t: c.search(p),
    lambda c, p, q, t: c.free_path(p),
    lambda c, p, q, t: c.revert_session(p),
]


def _memory(c: ContextManager) -> Memory:
    return Memory(c)


def _topics(c: ContextManager) -> Topics:
    return Topics(c)


#: The memory tiers and topics take names (core block labels, topic names, tags) that
#: become paths; they get the same tokens.
_LAYER_OPS: list[Callable[[ContextManager, str, str, str], Any]] = [
    lambda c, p, q, t: _memory(c).core_memory_append(p, t or "x"),
    lambda c, p, q, t: _memory(c).core_memory_replace(p, "x", t),
    lambda c, p, q, t: _memory(c).archival_memory_insert(t or "x", tags=[p, q]),
    lambda c, p, q, t: _memory(c).archival_memory_search(t, tags=[p]),
    lambda c, p, q, t: _memory(c).conversation_search(t, session=p),
    lambda c, p, q, t: _memory(c).log_message(p, t),
    lambda c, p, q, t: _topics(c).create(p, description=t),
    lambda c, p, q, t: _topics(c).switch(p),
    lambda c, p, q, t: _topics(c).open_topic(p),
    lambda c, p, q, t: _topics(c).where.append(p, q, t or "x"),
    lambda c, p, q, t: _topics(c).decisions.decide(p, t or "x", depends_on=[q]),
    lambda c, p, q, t: _topics(c).record(p, t, topic=q),
    lambda c, p, q, t: _topics(c).route(t or "x", task_id=p),
    lambda c, p, q, t: ScopedContext(c).assemble("task", p, budget=500, query=t),
    lambda c, p, q, t: ScopedContext(c).get_context(p),
]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(op=st.sampled_from(range(len(_LAYER_OPS))), path=paths_st, other=paths_st, text=text_st)
def test_memory_tiers_topics_and_scopes_on_hostile_input(
    arena: Any, op: int, path: str, other: str, text: str
) -> None:
    ctx = arena[0]
    _call(lambda: _LAYER_OPS[op](ctx, path, other, text))
    _check_oracle(arena)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(op=st.sampled_from(range(len(_OPS))), path=paths_st, other=paths_st, text=text_st)
def test_every_store_operation_on_hostile_input(
    arena: Any, op: int, path: str, other: str, text: str
) -> None:
    ctx = arena[0]
    _call(lambda: _OPS[op](ctx, path, other, text))
    _check_oracle(arena)


@pytest.mark.parametrize("op", range(len(_OPS)))
def test_each_operation_on_the_worst_tokens(arena: Any, op: int) -> None:
    ctx = arena[0]
    for token in TOKENS:
        for path in (token, f"memory/{token}", f"{token}/x.md", f"linkdir/{token}"):
            _call(lambda p=path, t=token: _OPS[op](ctx, p, unicodedata.normalize("NFD", p), t))
    _check_oracle(arena)


@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    path=paths_st,
    text=text_st,
    command=st.sampled_from(
        [
            "read",
            "write",
            "ls",
            "rm",
            "restore",
            "log",
            "diff",
            "show",
            "search",
            "edit",
            "mv",
            "context",
        ]
    ),
)
def test_the_cli_on_hostile_input(arena: Any, path: str, text: str, command: str) -> None:
    from contextfs.cli import cli

    ctx = arena[0]
    args = {
        "read": [path],
        "write": [path],
        "ls": [path],
        "rm": [path],
        "restore": [path],
        "log": [path],
        "diff": [path, "HEAD"],
        "show": [path],
        "search": [text or "x"],
        "edit": [path, "note", text or "y"],
        "mv": ["notes.md", path],
        "context": ["--query", text or "x", "--budget", "500"],
    }[command]
    if "\x00" in "".join(args):
        return  # no shell can pass a NUL byte in an argument
    runner = CliRunner()
    _WATCH["root"] = _WATCH["watched"]
    try:
        stdin = (text or "x").encode(
            "utf-8", "replace"
        )  # stdin carries bytes, never lone surrogates
        result = runner.invoke(
            cli, ["--root", str(ctx.root), command, *args], input=stdin, catch_exceptions=True
        )
    finally:
        _WATCH["root"] = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(
            f"{command} {args!r} raised {result.exception!r}"
        ) from result.exception
    _check_oracle(arena)
