"""Everything that can enter git history passes the secret scan: names, messages, trailers, bytes.

A commit holds more than file bodies: tree entry names (paths, move and restore targets,
memory-tool paths, topic names, LangGraph keys and namespaces), the subject and body, the
``Contextfs-*`` trailers (session, turn, the caller's own), the author, and bytes that no
write gate saw (a person's uncommitted edit carried along by a move, an old version brought
back by a revert, a trash entry's record). Each channel below tries to carry a credential
into history; the call must be refused with a typed error that does not repeat it (or, for
edits made outside, the file held back), nothing may change on disk, and neither
``git log --all -p``, the names of any commit's tree, the messages, authors nor the reflog
may hold it. :data:`INTO_HISTORY` is the list ``docs/reliability.md`` keeps; a test checks
the two name the same channels.
"""

from __future__ import annotations

import random
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import REPO, commit_as_person
from secret_samples import SECRET_KINDS

from contextfs import ContentError, ContextFSError, ContextManager

# A GitHub token (mixed case) and a Slack token in lower case, which the LangGraph store
# keeps verbatim as a "plain" key or label.
GH = SECRET_KINDS["GitHub classic token"](random.Random(7)).payload
SLACK = SECRET_KINDS["Slack token"](random.Random(8)).payload.lower()
TOKENS = (GH, SLACK)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def history_text(root: Path) -> str:
    """Everything reachable that a clone or a push would carry, plus the local reflog."""
    parts = [
        _git(root, "log", "--all", "-p", "--format=fuller"),
        _git(root, "log", "--all", "--name-only", "--format=%an <%ae>%n%B"),
        _git(root, "reflog", "--format=%gs"),
    ]
    for line in _git(root, "rev-list", "--all").split():  # every branch: review branches too
        parts.append(_git(root, "ls-tree", "-r", "--name-only", line))
    return "\n".join(parts)


def _state(root: Path) -> tuple[str, str, dict[str, bytes]]:
    files = {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }
    head = _git(root, "rev-parse", "HEAD").strip()
    return head, _git(root, "status", "--porcelain", "--untracked-files=all"), files


def _not_echoed(message: str) -> None:
    for token in TOKENS:
        assert not any(token[i : i + 10] in message for i in range(len(token) - 9)), message


class HeldBack(ContentError):
    """What an edit made outside ends in: not committed, reported in ``last_sync`` (raised by the
    channel itself, so the walk checks every channel the same way)."""


def _machines(
    ctx: ContextManager, *, session: str | None = None
) -> tuple[ContextManager, ContextManager]:
    """Two machines sharing a bare remote beside the test's root; the second opened with ``session``."""
    from sync_support import bare_remote, first_machine, join_machine

    base = ctx.root.parent
    url = bare_remote(base / "remote.git").as_uri()
    laptop = first_machine(base / "laptop", url, "laptop")
    laptop.write("project/README.md", "# Shop\n")
    laptop.remote.sync()
    join_machine(base / "server", url, "server").close()
    server = ContextManager(base / "server", index=False, session=session)
    return laptop, server


def _merge_message(ctx: ContextManager) -> None:
    # A sync that merges writes a commit here: its message carries the session.
    laptop, server = _machines(ctx, session=GH)
    laptop.write("notes/laptop.md", "from the laptop\n")
    laptop.remote.sync()
    with server.provenance(session="s-clean"):
        server.write("notes/server.md", "from the server\n")
    try:
        server.remote.sync()
    finally:
        assert GH not in history_text(server.root)


def _fetched_files(ctx: ContextManager) -> None:
    # What another machine committed is in its history already: the incoming gate reports it
    # (rotate the secret), and nothing this machine writes repeats it.
    laptop, server = _machines(ctx)
    with laptop.provenance(actor="human"):
        (laptop.root / "notes").mkdir()
        (laptop.root / "notes" / "keys.md").write_text("token: " + GH + "\n", "utf-8")
    _git(laptop.root, "add", "notes/keys.md")
    commit_as_person(laptop.root, "keys")
    laptop.remote.sync()
    server.write("notes/server.md", "from the server\n")
    result = server.remote.sync()
    assert any(note.kind == "secret" and note.path == "notes/keys.md" for note in result.notes), (
        result.notes
    )
    own = _git(server.root, "log", "--format=%B%n%an", "--author=remote", "-n", "1")
    assert GH not in own
    raise Reported("reported")


def _fetched_names(ctx: ContextManager) -> None:
    # A file another machine added, or renamed, under a name holding a token, with an innocent
    # body: the incoming gate runs the name check a local path passes, and reports it like
    # fetched text (rotate it); nothing this machine writes repeats it.
    laptop, server = _machines(ctx)
    (laptop.root / "notes").mkdir()
    (laptop.root / "notes" / f"{GH}.md").write_text("an innocent body\n", "utf-8")
    _git(laptop.root, "add", "notes")
    _git(laptop.root, "mv", "project/README.md", f"project/{SLACK}.md")
    commit_as_person(laptop.root, "names")
    laptop.remote.sync()
    server.write("notes/server.md", "from the server\n")
    result = server.remote.sync()
    reported = {n.path for n in result.notes if n.kind == "secret" and "its name" in n.detail}
    assert reported == {f"notes/{GH}.md", f"project/{SLACK}.md"}, result.notes
    for note in result.notes:
        _not_echoed(note.detail)
    own = _git(server.root, "log", "--format=%B%n%an", "--author=remote", "-n", "1")
    _not_echoed(own)
    raise Reported("reported")


class Reported(ContentError):
    """What a fetch brings holding a secret ends in: taken (it is in the remote's history) and reported."""


# ------------------------------------------------------------------ the channels
def _path(ctx: ContextManager) -> None:
    ctx.write(f"notes/{GH}.md", "a note with an innocent body\n")


def _txt_path(ctx: ContextManager) -> None:
    ctx.write(f"notes/deploy-{GH}.txt", "plain text\n")


def _move_target(ctx: ContextManager) -> None:
    ctx.move("notes/base.md", f"notes/{GH}.md")


def _folder_move_target(ctx: ContextManager) -> None:
    ctx.move("notes", f"archive/{GH}")


def _restore_target(ctx: ContextManager) -> None:
    ctx.delete("notes/base.md")
    ctx.restore("notes/base.md", to=f"notes/{GH}.md")


def _memory_tool_create(ctx: ContextManager) -> None:
    from contextfs.integrations import MemoryToolAdapter

    MemoryToolAdapter(ctx).execute(
        {"command": "create", "path": f"/memories/{GH}.md", "file_text": "x"}
    )


def _memory_tool_rename(ctx: ContextManager) -> None:
    from contextfs.integrations import MemoryToolAdapter

    tool = MemoryToolAdapter(ctx)
    tool.execute({"command": "create", "path": "/memories/a.md", "file_text": "x"})
    tool.execute(
        {"command": "rename", "old_path": "/memories/a.md", "new_path": f"/memories/{SLACK}.md"}
    )


def _store_key(ctx: ContextManager) -> None:
    from contextfs.integrations.langgraph.store import ContextStore

    ContextStore(ctx).put(("users",), SLACK, {"text": "hello"})


def _store_encoded_key(ctx: ContextManager) -> None:
    from contextfs.integrations.langgraph.store import ContextStore

    ContextStore(ctx).put(("users",), GH, {"text": "hello"})  # mixed case: base32 in the file name


def _store_namespace(ctx: ContextManager) -> None:
    from contextfs.integrations.langgraph.store import ContextStore

    ContextStore(ctx).put(("users", GH), "k", {"text": "hello"})


def _topic_name(ctx: ContextManager) -> None:
    from contextfs.scopes import Topics

    Topics(ctx).create(SLACK)


def _session(ctx: ContextManager) -> None:
    with ctx.provenance(session=GH):
        ctx.write("notes/plain.txt", "no frontmatter to carry the session\n")


def _session_on_delete(ctx: ContextManager) -> None:
    with ctx.provenance(session=GH):
        ctx.delete("notes/base.md")


def _manager_session(ctx: ContextManager) -> None:
    other = ContextManager(ctx.root, session=GH, index=False)
    other.move("notes/base.md", "notes/moved.md")


def _machine_name(ctx: ContextManager) -> None:
    subprocess.run(["git", "-C", str(ctx.root), "config", "contextfs.machine", GH], check=True)
    ContextManager(ctx.root, index=False).move("notes/base.md", "notes/moved.md")


def _turn(ctx: ContextManager) -> None:
    with ctx.provenance(turn=SLACK):
        ctx.move("notes/base.md", "notes/moved.md")


def _transaction_message(ctx: ContextManager) -> None:
    with ctx.transaction(f"deploy with {GH}"):
        ctx.write("notes/new.md", "fine\n")


def _trailers(ctx: ContextManager) -> None:
    ctx.write("notes/new.md", "fine\n", trailers={"Contextfs-Task": GH})


def _author(ctx: ContextManager) -> None:
    with ctx.provenance(actor=f"agent:{GH}"):
        ctx.move("notes/base.md", "notes/moved.md")


def _moved_bytes(ctx: ContextManager) -> None:
    # A person's edit that sync held back rides along when an agent moves the file.
    (ctx.root / "notes" / "base.md").write_text(f"token: {GH}\n", "utf-8")
    ctx.move("notes/base.md", "notes/moved.md")


def _deleted_bytes(ctx: ContextManager) -> None:
    (ctx.root / "notes" / "base.md").write_text(f"token: {GH}\n", "utf-8")
    ctx.delete("notes/base.md")


def _overwritten_bytes(ctx: ContextManager) -> None:
    # A person's unsaved-to-history edit under an agent's write: it would be committed first
    # (as the person's), so it is judged as their edit; the agent's write waits for it.
    (ctx.root / "notes" / "base.md").write_text(f"token: {GH}\n", "utf-8")
    try:
        ctx.write("notes/base.md", "# Base\n\nRewritten by the agent.\n")
    finally:
        assert GH in (ctx.root / "notes" / "base.md").read_text("utf-8")  # left as they saved it


def _undone_outside_version(ctx: ContextManager) -> None:
    # A person's unsaved-to-history edit under an agent's write; they save again while the
    # agent's transaction runs, and it fails: the version the change had found would be in no
    # commit, so the undo commits it on its own, through the same check as on the normal path.
    base = ctx.root / "notes" / "base.md"
    base.write_text(f"token: {GH}\n", "utf-8")
    with pytest.raises(RuntimeError), ctx.transaction("tidy the notes"):
        ctx.write("notes/base.md", "# Base\n\nRewritten by the agent.\n")
        base.write_text("# Base\n\nTheir next save.\n", "utf-8")
        raise RuntimeError("the agent's next step failed")
    assert base.read_text("utf-8") == "# Base\n\nTheir next save.\n"  # left as they saved it
    raise HeldBack("held back")


def _outside_name(ctx: ContextManager) -> None:
    (ctx.root / "notes" / f"{GH}.md").write_text("a person's note\n", "utf-8")
    committed = ctx.sync()
    assert committed == [] and any(GH in rel for rel in ctx.parts.last_sync.held)
    raise HeldBack("held back")


def _outside_content_at_init(ctx: ContextManager) -> None:
    fresh = ctx.root.parent / "adopted"
    fresh.mkdir()
    (fresh / "keys.md").write_text(f"deploy token {GH}\n", "utf-8")
    (fresh / f"{SLACK}.md").write_text("named after a token\n", "utf-8")
    (fresh / "fine.md").write_text("an ordinary note\n", "utf-8")
    adopted = ContextManager(fresh, index=False)
    assert adopted.exists("fine.md")
    text = history_text(fresh)
    assert "ordinary note" in text
    for token in TOKENS:
        assert token not in text
    raise HeldBack("held back")


def _reverted_bytes(ctx: ContextManager) -> None:
    # A version committed with plain git (before the gate, or by a clone) is not brought back.
    (ctx.root / "notes" / "keys.txt").write_text(f"token: {GH}\n", "utf-8")
    _git(ctx.root, "add", "notes/keys.txt")
    commit_as_person(ctx.root, "old keys")
    old = _git(ctx.root, "rev-parse", "HEAD").strip()
    ctx.write("notes/keys.txt", "rotated\n")
    try:
        ctx.revert("notes/keys.txt", old)
    finally:
        assert GH not in _git(ctx.root, "show", "HEAD:notes/keys.txt")


def _review_branch(ctx: ContextManager) -> None:
    # A session in review mode gets a branch named after its id, before its first commit.
    ContextManager(ctx.root, actor="agent", session=GH, review=True, index=False)


def _review_refs(root: Path) -> str:
    """Every ref name, with review branches' encoded session ids decoded back."""
    from contextfs.review.branch import decode_session

    names = _git(root, "for-each-ref", "--format=%(refname)").split()
    return "\n".join(names + [decode_session(n.rsplit("/", 1)[-1]) or "" for n in names])


#: channel id -> how a caller would push a credential through it (docs/reliability.md lists the same ids).
INTO_HISTORY: dict[str, Callable[[ContextManager], None]] = {
    "path": _path,
    "path-no-frontmatter": _txt_path,
    "move-target": _move_target,
    "folder-move-target": _folder_move_target,
    "restore-target": _restore_target,
    "memory-tool-create": _memory_tool_create,
    "memory-tool-rename": _memory_tool_rename,
    "store-key": _store_key,
    "store-encoded-key": _store_encoded_key,
    "store-namespace": _store_namespace,
    "topic-name": _topic_name,
    "session": _session,
    "session-on-delete": _session_on_delete,
    "manager-session": _manager_session,
    "machine-name": _machine_name,
    "turn": _turn,
    "transaction-message": _transaction_message,
    "trailers": _trailers,
    "author": _author,
    "moved-bytes": _moved_bytes,
    "deleted-bytes": _deleted_bytes,
    "overwritten-bytes": _overwritten_bytes,
    "undone-outside-version": _undone_outside_version,
    "outside-edit-name": _outside_name,
    "adopted-files": _outside_content_at_init,
    "reverted-bytes": _reverted_bytes,
    "merge-message": _merge_message,
    "review-branch": _review_branch,
    "fetched-files": _fetched_files,
    "fetched-names": _fetched_names,
}
#: Channels whose test commits the token with plain git first (what is checked is that it is not brought back).
_ALLOWED_ON_PURPOSE = {"reverted-bytes", "fetched-files", "fetched-names"}


@pytest.fixture
def root(tmp_path: Path) -> ContextManager:
    ctx = ContextManager(tmp_path / "ctx", index=False)
    ctx.write("notes/base.md", "# Base\n\nAn ordinary note.\n")
    return ctx


@pytest.mark.parametrize("channel", sorted(INTO_HISTORY))
def test_a_credential_cannot_enter_history_through(root: ContextManager, channel: str) -> None:
    head, status, files = _state(root.root)
    with pytest.raises(ContextFSError) as caught:
        INTO_HISTORY[channel](root)
    _not_echoed(str(caught.value))
    if channel not in _ALLOWED_ON_PURPOSE:
        text = history_text(root.root) + _review_refs(root.root)
        for token in TOKENS:
            assert token not in text, f"{channel}: the token is in history"
    if channel in (
        "moved-bytes",
        "deleted-bytes",
        "overwritten-bytes",
        "undone-outside-version",
        "outside-edit-name",
        "reverted-bytes",
        "restore-target",
        "memory-tool-rename",
    ):
        return  # the channel changed files (or made a commit) on purpose before the step that is refused
    assert _state(root.root) == (head, status, files), f"{channel}: something changed"


def test_the_refusal_is_typed_and_says_what_to_do(root: ContextManager) -> None:
    with pytest.raises(ContentError) as caught:
        _path(root)
    message = str(caught.value)
    assert "GitHub token" in message and "name" in message
    assert re.search(r"fingerprint [0-9a-f]{16}", message)


def test_a_clean_name_and_message_still_commit(root: ContextManager) -> None:
    with (
        root.provenance(session="s-1", turn="3"),
        root.transaction("rename the base note", trailers={"Contextfs-Task": "tidy-up"}),
    ):
        root.move("notes/base.md", "notes/renamed.md")
        root.write("notes/other.md", "the staging host is db-2 on port 5433\n")
    entry = root.history(limit=1)[0]
    assert entry.message.startswith("rename the base note") and entry.session == "s-1"


def test_an_allow_listed_fingerprint_lets_a_name_through(root: ContextManager) -> None:
    from contextfs.gate.secrets import scan

    mark = scan(GH)[0].fingerprint
    (root.root / ".contextfs" / "config.toml").write_text(
        f'[secrets]\nallow = ["{mark}"]\n', "utf-8"
    )
    root.write(f"notes/{GH}.md", "allowed by its fingerprint\n")
    assert GH in history_text(root.root)


def test_the_docs_list_the_same_channels_into_history() -> None:
    text = (REPO / "docs" / "reliability.md").read_text("utf-8")
    section = re.split(r"\n##+ ", text.split("### Channels into history", 1)[1], maxsplit=1)[0]
    listed = set(re.findall(r"^\| `([a-z-]+)` \|", section, re.MULTILINE))
    assert listed == set(INTO_HISTORY)


def test_a_merge_message_never_repeats_a_secret_bearing_incoming_name(root: ContextManager) -> None:
    # Another machine committed a file named after a token (with plain git: no gate there),
    # with a note to report about it. The merge written here lists its notes without that
    # name, so the commit gate passes it and the two machines stay in step.
    laptop, server = _machines(root)
    (laptop.root / "notes").mkdir()
    (laptop.root / "notes" / f"{GH}.md").write_text("token: " + GH + "\n", "utf-8")
    _git(laptop.root, "add", "notes")
    commit_as_person(laptop.root, "keys")
    laptop.remote.sync()
    server.write("notes/server.md", "from the server\n")
    result = server.remote.sync()
    assert any(note.kind == "secret" and note.path == f"notes/{GH}.md" for note in result.notes), (
        result.notes
    )
    merge = _git(server.root, "log", "--format=%B", "-n", "1", "--author=remote")
    assert "Contextfs-Op: merge" in merge and "secret" in merge
    assert GH not in merge
    _git(
        server.root, "merge-base", "--is-ancestor", str(laptop.parts.git.head()), "HEAD"
    )  # merged: in step


def test_a_save_made_while_the_write_is_under_way_is_judged(root: ContextManager) -> None:
    """A person's save made after an agent's write looked at the file is found before the
    write's commit, to be committed first as theirs: the commit gate judges it as their edit."""
    from contextfs import faults

    base = root.root / "notes" / "base.md"
    head = root.parts.head()

    def person_saves() -> None:
        base.write_text(f"token: {GH}\n", "utf-8")
        time.sleep(
            0.05
        )  # the save is older than the staged write by more than the file clock's tick

    faults.arm("change.touched", person_saves)  # right after the write's first snapshot
    try:
        with pytest.raises(ContentError) as caught:
            root.write("notes/base.md", "# Base\n\nRewritten by the agent.\n")
    finally:
        faults.disarm()
    _not_echoed(str(caught.value))
    assert root.parts.head() == head
    assert GH not in history_text(root.root)
    assert base.read_text("utf-8") == f"token: {GH}\n"  # left as they saved it, uncommitted
