"""A save somebody makes while a failed change is being undone stays on disk.

The undo looks at each path it touched, then puts the old bytes back (or removes what the
change created, or moves a file back from where the change moved it). A person's save that
lands between that look and the undo's write, removal or move is theirs: the undo leaves it
and the next look at the root commits it as their edit. The save is placed there by a
wrapper around the file layer's call, so it comes after the undo's last look whatever the
undo does inside.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers import authors_and_bytes, git

from contextfs import ContextManager
from contextfs.files.confined import RootFiles

PERSON = b"- typed by the person while the change was undone\n"
NOTE = "notes/plan.md"


class _Failed(Exception):
    pass


def _save_before(
    monkeypatch: pytest.MonkeyPatch, files: RootFiles, call: str, rel: str
) -> tuple[list[bool], list[str]]:
    """Once armed, the person saves ``rel`` just before the files' ``call`` reaches it."""
    armed: list[bool] = []
    saved: list[str] = []
    real: Callable[..., Any] = getattr(files, call)

    def wrapped(path: str, *args: Any, **kwargs: Any) -> Any:
        if armed and rel in (path, *args) and not saved:
            (files.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (files.root / rel).write_bytes(PERSON)
            saved.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files, call, wrapped)
    return armed, saved


@pytest.mark.parametrize(
    ("change", "call", "rel"),
    [
        ("write", "write", NOTE),  # the undo writes the old bytes back
        ("create", "remove", "notes/new.md"),  # the undo removes the file the change made
        ("delete", "rename", NOTE),  # the undo moves the file back from the trash
        ("move", "rename", NOTE),  # the undo moves the file back from its new name
    ],
)
def test_a_save_while_a_failed_change_is_undone_stays_and_is_committed_as_theirs(
    store: ContextManager, monkeypatch: pytest.MonkeyPatch, change: str, call: str, rel: str
) -> None:
    armed, saved = _save_before(monkeypatch, store.parts.files, call, rel)
    with pytest.raises(_Failed), store.transaction("a change that fails"):
        if change == "write":
            store.write(NOTE, "- the agent's second plan\n")
        elif change == "create":
            store.write(rel, "- the agent's new note\n")
        elif change == "delete":
            store.delete(NOTE)
        else:
            store.move(NOTE, "notes/moved.md")
        # A listing puts what the change staged in place: the undo has bytes to take back.
        listed = store.list("notes")
        assert (rel in listed) == (change in ("write", "create"))
        armed.append(True)
        raise _Failed
    monkeypatch.undo()
    assert saved, "the person's save was never placed"
    assert (store.root / rel).read_bytes() == PERSON
    store.sync()
    assert authors_and_bytes(store.root, rel)[-1] == ("human", PERSON.decode())
    assert git(store.root, "status", "--porcelain") == ""
