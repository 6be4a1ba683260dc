"""A save somebody makes while a change is writing a file, found just before the change's
staged bytes are put in place.

The change compares what is on disk with what it last saw there. A save that landed before
the write was staged (the staged file's time is later than the save's) is snapshotted and
committed first, attributed to the outside author, and the change's bytes replace it, unless
they were computed from what the change read: those are stale, :class:`StaleRead`, and
nothing of them is written. A save in the same tick of the file clock as the staging, or
later, supersedes the write: it stays on disk, as if the person had saved over the change's
bytes.

A person's save lands in a chosen step of the change in two ways: the fault point
``change.touched`` (after a snapshot is read, before the bytes are staged), and a wrapper
around the files' ``write`` (after the change's last look at the path, just before its bytes
are staged), the one window a read-modify-write leaves.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_clean, authors_and_bytes, git

from contextfs import ContextFSError, ContextManager, InvalidPathError, faults
from contextfs.changes.adoption import StaleRead

PERSON = b"- typed by the person in their editor\n"
NOTE = "notes/plan.md"


class _Failed(Exception):
    pass


def _person_saves(root: Path, rel: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(PERSON)
    # File times come from a coarse clock: the staging comes a tick later, so the save is
    # told to be before it.
    time.sleep(0.05)


def _save_as_staged(monkeypatch: pytest.MonkeyPatch, store: ContextManager, rel: str) -> list[str]:
    """The person saves ``rel`` once, after the change's last look at it and just before its
    bytes are staged; the list says whether that happened."""
    files = store.parts.files
    real = files.write
    saved: list[str] = []

    def write(path: str, data: bytes, **kwargs: Any) -> None:
        if path == rel and not saved:
            _person_saves(store.root, rel)
            saved.append(path)
        real(path, data, **kwargs)

    monkeypatch.setattr(files, "write", write)
    return saved


# ------------------------------------------------------------------ bytes computed from a read
def test_a_save_while_an_append_is_staged_is_committed_first_and_the_append_made_on_it(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The appended text was computed from the version before the save: the change stops
    (a stale read), the person's version is committed first, and the call, made again,
    appends to what they saved."""
    saved = _save_as_staged(monkeypatch, store, NOTE)
    store.append(NOTE, "- the agent's line\n")
    assert saved
    history = authors_and_bytes(store.root, NOTE)
    assert history[-2] == ("human", PERSON.decode())
    author, text = history[-1]
    assert author == "agent:planner"
    assert text is not None and text.endswith(PERSON.decode() + "- the agent's line\n")
    assert "first plan" not in text
    assert (store.root / NOTE).read_text("utf-8") == text


def test_a_stale_append_in_a_transaction_writes_nothing_and_keeps_the_save(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a transaction the stale read reaches the caller, not to be retried, with the
    whole transaction undone: nothing is committed, none of its files are written, and the
    person's version is on disk, for the next look to commit as theirs."""
    head = git(store.root, "rev-parse", "HEAD").strip()
    saved = _save_as_staged(monkeypatch, store, NOTE)
    with (
        pytest.raises(StaleRead, match=f"^{NOTE} was saved") as caught,
        store.transaction("plan and log"),
    ):
        store.write("notes/log.md", "- planned\n")
        store.append(NOTE, "- the agent's line\n")
    assert saved and not caught.value.retryable
    assert git(store.root, "rev-parse", "HEAD").strip() == head
    assert (store.root / NOTE).read_bytes() == PERSON
    assert not (store.root / "notes" / "log.md").exists()
    store.sync()
    assert authors_and_bytes(store.root, NOTE)[-1] == ("human", PERSON.decode())
    assert git(store.root, "ls-tree", "HEAD", "notes/log.md").strip() == ""


def test_a_change_to_a_file_saved_since_the_change_read_it_is_a_stale_read(
    store: ContextManager,
) -> None:
    """The change read the file (an edit that found nothing to replace, caught), somebody
    saved it, and the change goes on to append to it: it looks again first, finds the save
    after its own read, and stops, naming the file, with nothing written."""
    head = git(store.root, "rev-parse", "HEAD").strip()
    with pytest.raises(StaleRead, match=f"^{NOTE} was saved"), store.transaction("edit, append"):
        with pytest.raises(ContextFSError):
            store.edit(NOTE, "a line that is not there", "anything")
        _person_saves(store.root, NOTE)
        store.append(NOTE, "- the agent's line\n")
    assert git(store.root, "rev-parse", "HEAD").strip() == head
    assert (store.root / NOTE).read_bytes() == PERSON


@pytest.mark.parametrize("looked", [True, False], ids=["appended-in-place", "appended-staged"])
def test_a_write_not_computed_from_a_read_replaces_a_save_made_before_it_was_staged(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch, looked: bool
) -> None:
    """A transaction appends, then reverts the file to HEAD, bytes it did not compute from
    the file: a save made before that write was staged is committed first, as the person's,
    and the revert replaces it. The append's read does not make the later write stale,
    whether the append's bytes were put in place before it (a listing looks at them) or were
    still staged and replaced by the revert's: nothing in the change can tell the two apart."""
    first = (store.root / NOTE).read_text("utf-8")
    with store.transaction("append, then take it back"):
        store.append(NOTE, "- a line taken back\n")
        if looked:
            assert store.list() == [NOTE]
        saved = _save_as_staged(monkeypatch, store, NOTE)
        store.revert(NOTE, "HEAD")
    assert saved
    history = authors_and_bytes(store.root, NOTE)
    assert history[-2] == ("human", PERSON.decode())
    assert history[-1] == ("agent:planner", first)
    assert (store.root / NOTE).read_text("utf-8") == first


# ------------------------------------------------------------------ bytes not computed from a read
def test_undoing_a_change_keeps_a_deletion_made_after_its_bytes_replaced_a_save(
    store: ContextManager,
) -> None:
    """A person saves a new file while the change creates it; the change's bytes replace
    their save when they are put in place, and then the person deletes the file. Undoing the
    change leaves the file deleted (nobody's version is put back over the deletion) and
    commits their save, which no commit held."""
    faults.arm("change.touched", lambda: _person_saves(store.root, "notes/new.md"))
    with pytest.raises(_Failed), store.transaction("a new note"):
        store.create("notes/new.md", "- the agent's note\n")
        assert store.list() == ["notes/new.md", NOTE]
        assert "the agent's note" in (store.root / "notes" / "new.md").read_text("utf-8")
        (store.root / "notes" / "new.md").unlink()
        raise _Failed
    assert not (store.root / "notes" / "new.md").exists()
    assert authors_and_bytes(store.root, "notes/new.md")[-1] == ("human", PERSON.decode())


def test_a_file_the_change_put_in_place_over_a_save_is_its_own_for_the_rest_of_the_change(
    store: ContextManager,
) -> None:
    """After the change's bytes replaced a save, the change knows the file holds them: an
    append later in the transaction finds no other save there, and the commits are the
    person's version, then the change's (its note and the appended line), not the change's
    first bytes attributed to the person."""
    faults.arm("change.touched", lambda: _person_saves(store.root, "notes/new.md"))
    with store.transaction("a new note"):
        store.create("notes/new.md", "- the agent's note\n")
        assert store.list() == ["notes/new.md", NOTE]
        store.append("notes/new.md", "- one more line\n")
    history = authors_and_bytes(store.root, "notes/new.md")
    assert history[-3][1] is None
    assert history[-2] == ("human", PERSON.decode())
    author, text = history[-1]
    assert author == "agent:planner"
    assert text is not None and text.endswith("- the agent's note\n- one more line\n")
    assert (store.root / "notes" / "new.md").read_text("utf-8") == text


# ------------------------------------------------------------------ a save in the staging's tick
def test_a_save_in_the_same_tick_as_the_staging_supersedes_the_write(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a coarse file clock a save just after the staging can carry the staged file's own
    time; it cannot be told from a save just before, and counts as after: the person's bytes
    stay on disk over the change's, which the change's commit holds, and the next look
    commits the person's version on top."""
    real_fstat = os.fstat
    tick = time.time_ns()

    notes = store.root / "notes"

    def coarse_fstat(fd: int) -> os.stat_result:
        """A file's status, with the change time of every file in the notes folder (the note
        and the change's staged files beside it) read as one tick."""
        st = real_fstat(fd)
        if st.st_ino not in {os.lstat(entry).st_ino for entry in notes.iterdir()}:
            return st
        fields = {name: getattr(st, name) for name in dir(st) if name.startswith("st_")}
        fields.update(st_ctime_ns=tick, st_ctime=tick / 1e9)
        values = list(st)
        values[9] = tick // 10**9
        return os.stat_result(values, fields)

    def person_saves() -> None:
        (store.root / NOTE).write_bytes(PERSON)  # right after the staging: no sleep

    monkeypatch.setattr(os, "fstat", coarse_fstat)
    faults.arm("change.written", person_saves)
    store.write(NOTE, "- the agent's second plan\n")
    monkeypatch.undo()
    assert (store.root / NOTE).read_bytes() == PERSON
    author, text = authors_and_bytes(store.root, NOTE)[-1]
    assert author == "agent:planner"
    assert text is not None and text.endswith("---\n- the agent's second plan\n")
    _saved_after_the_commit(store.root, NOTE)
    store.sync()
    assert authors_and_bytes(store.root, NOTE)[-1] == ("human", PERSON.decode())
    assert_clean(store.root)


# ------------------------------------------------- a save in the moment before the rename
def _saved_after_the_commit(root: Path, rel: str) -> None:
    """What git shows of a save that superseded the change's write, before contextfs commits
    it: a change not staged (the index holds what the change committed, an object git has;
    never the save's bytes, which it has no object for)."""
    assert git(root, "status", "--porcelain") == f" M {rel}\n"
    assert git(root, "diff", "--cached", "--name-only") == ""
    fsck = subprocess.run(["git", "-C", str(root), "fsck", "--no-progress"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


# The fault point ``change.judged`` comes after the change's last look at a path and before
# the rename that replaces, moves or removes it: the moment a busy machine can stretch to
# milliseconds. The rename is a swap (``renameat2``) that brings out what it replaced, so a
# save made there is never destroyed unseen.
def _save_in_the_moment(root: Path, how: str, data: bytes = PERSON) -> None:
    path = root / NOTE
    if how == "rename":  # an editor's safe save: a new file renamed over the old one
        scratch = path.with_name(path.name + "___jb_tmp___")
        scratch.write_bytes(data)
        os.replace(scratch, path)
    else:
        path.write_bytes(data)


@pytest.mark.parametrize("how", ["in place", "rename"])
@pytest.mark.parametrize("call", ["write", "append"])
def test_a_save_between_the_last_look_and_the_rename_stays_and_is_committed_as_theirs(
    store: ContextManager, how: str, call: str
) -> None:
    """The swap brings the save out; it goes back in place, and the change treats it as a save
    made after its bytes were staged: the person's bytes stay on disk, over the change's."""
    faults.arm("change.judged", lambda: _save_in_the_moment(store.root, how))
    if call == "write":
        store.write(NOTE, "- the agent's second plan\n")
    else:
        store.append(NOTE, "- and one more step\n")
    faults.disarm()
    assert (store.root / NOTE).read_bytes() == PERSON
    _saved_after_the_commit(store.root, NOTE)
    store.sync()
    assert authors_and_bytes(store.root, NOTE)[-1] == ("human", PERSON.decode())
    assert list((store.root / "notes").iterdir()) == [store.root / NOTE]  # nothing left beside
    assert_clean(store.root)


def test_a_file_created_between_the_last_look_and_the_rename_is_not_replaced(
    store: ContextManager,
) -> None:
    """A new file goes in place only while its name is free (``RENAME_NOREPLACE``)."""
    new = "notes/new.md"
    faults.arm("change.judged", lambda: (store.root / new).write_bytes(PERSON))
    store.write(new, "- the agent's new note\n")
    faults.disarm()
    assert (store.root / new).read_bytes() == PERSON
    store.sync()
    assert authors_and_bytes(store.root, new)[-1] == ("human", PERSON.decode())


def test_a_folder_made_where_a_new_file_goes_is_a_typed_refusal(store: ContextManager) -> None:
    """Somebody makes a folder under the new file's name in that moment: the write is refused
    as any write onto a folder is, and the folder stays."""
    new = "notes/new.md"
    head = store.parts.head()
    faults.arm("change.judged", lambda: (store.root / new).mkdir())
    with pytest.raises(InvalidPathError, match="is a folder"):
        store.write(new, "- the agent's new note\n")
    faults.disarm()
    assert (store.root / new).is_dir() and store.parts.head() == head


@pytest.mark.parametrize("how", ["in place", "rename"])
@pytest.mark.parametrize("call", ["delete", "move"])
def test_a_save_between_the_last_look_and_a_delete_or_move_is_committed_first_as_theirs(
    store: ContextManager, how: str, call: str
) -> None:
    """What a delete or move took away is compared with what the change last saw: a save made
    in the moment is committed first, at its own path, by its author; the change then moves
    it (to the trash, or to its new name)."""
    faults.arm("change.judged", lambda: _save_in_the_moment(store.root, how))
    if call == "delete":
        store.delete(NOTE)
        [entry] = store.trash()
        moved_to = entry.stored_path
    else:
        store.move(NOTE, "notes/moved.md")
        moved_to = "notes/moved.md"
    faults.disarm()
    history = authors_and_bytes(store.root, NOTE)
    assert history[-2] == ("human", PERSON.decode())  # first, at the path the person saved
    assert history[-1] == ("agent:planner", None)
    assert (store.root / moved_to).read_bytes() == PERSON
    assert authors_and_bytes(store.root, moved_to)[-1] == ("agent:planner", PERSON.decode())
    assert git(store.root, "status", "--porcelain") == ""


def _write_with_a_second_event_in_the_swap(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch, then: Any
) -> None:
    """The agent writes NOTE; a person's save lands just before the swap, and ``then`` runs
    right after the swap brought that save out, before it can go back in place."""
    from contextfs.files import swapping

    real_read = swapping.read

    def read_then(fd: int, name: str) -> bytes | None:
        out = real_read(fd, name)  # what the swap brought out: the first save
        then()
        return out

    faults.arm("change.judged", lambda: _save_in_the_moment(store.root, "rename"))
    monkeypatch.setattr(swapping, "read", read_then)
    store.write(NOTE, "- the agent's second plan\n")
    monkeypatch.undo()
    faults.disarm()


@pytest.mark.parametrize(
    "second",
    ["a save over the change's file", "the change's file removed"],
)
def test_a_second_event_in_the_moment_of_the_swap_keeps_the_newest_save(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch, second: str
) -> None:
    """Before the save the swap brought out can go back, somebody saves over the change's
    file (that newer save takes the place) or removes it (the first save goes back into the
    empty place). Either way the newest save is kept and committed as theirs, and the
    change's bytes are dropped as superseded."""
    later = b"- saved again a moment later\n"
    if second == "a save over the change's file":
        newest = later

        def then() -> None:
            _save_in_the_moment(store.root, "rename")
            (store.root / NOTE).write_bytes(later)
    else:
        newest = PERSON

        def then() -> None:
            (store.root / NOTE).unlink()  # the change's file, just swapped in

    _write_with_a_second_event_in_the_swap(store, monkeypatch, then)
    assert (store.root / NOTE).read_bytes() == newest
    _saved_after_the_commit(store.root, NOTE)
    store.sync()
    assert authors_and_bytes(store.root, NOTE)[-1] == ("human", newest.decode())
    assert list((store.root / "notes").iterdir()) == [store.root / NOTE]


def test_a_file_deleted_between_the_last_look_and_the_rename_is_judged_as_a_deletion(
    store: ContextManager,
) -> None:
    """The swap finds no file: the change looks again, sees the deletion (an outside version,
    committed first as theirs), and puts its bytes in place as a new file."""
    faults.arm("change.judged", lambda: (store.root / NOTE).unlink())
    store.write(NOTE, "- the agent's second plan\n")
    faults.disarm()
    assert (store.root / NOTE).read_text().endswith("- the agent's second plan\n")
    history = authors_and_bytes(store.root, NOTE)
    assert history[-2] == ("human", None)
    assert history[-1][0] == "agent:planner"


def test_a_save_in_the_moment_a_purge_removes_a_file_is_committed_first_as_theirs(
    store: ContextManager,
) -> None:
    """Purging the trash removes files for good: a save made in the moment before one is
    removed is what the removal takes, so it is committed first, as theirs (history keeps
    it), and then removed."""
    entry = store.delete(NOTE)
    trashed = store.root / entry.stored_path
    faults.arm("change.judged", lambda: trashed.write_bytes(PERSON))
    assert store.purge_trash() == 1
    faults.disarm()
    history = authors_and_bytes(store.root, entry.stored_path)
    assert history[-2] == ("human", PERSON.decode())
    assert history[-1] == ("agent:planner", None)
    assert_clean(store.root)


def test_the_version_a_change_judges_is_the_one_it_commits_first_as_theirs(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save lands before a revert's bytes are staged (bytes not computed from a read, so
    not stale), and another just after the change read the file to judge it: the change
    commits first the version it judged (the first save), and the second, which the swap
    brings out, stays on disk over its bytes, for the next look."""
    later = b"- saved again, just after the change looked\n"
    saved = _save_as_staged(monkeypatch, store, NOTE)
    files = store.parts.files
    real_read_stat = files.read_stat
    again: list[bool] = []

    def read_stat(rel: str, **kwargs: Any) -> Any:
        found = real_read_stat(rel, **kwargs)
        if saved and not again and rel == NOTE and kwargs.get("staged") is False:
            again.append(True)
            _save_in_the_moment(store.root, "rename", later)
        return found

    monkeypatch.setattr(files, "read_stat", read_stat)
    store.revert(NOTE, "HEAD")
    monkeypatch.undo()
    assert saved and again and (store.root / NOTE).read_bytes() == later
    history = authors_and_bytes(store.root, NOTE)
    assert history[-2] == ("human", PERSON.decode())  # the version the change judged
    assert history[-1][0] == "agent:planner"
    store.sync()
    assert authors_and_bytes(store.root, NOTE)[-1] == ("human", later.decode())
