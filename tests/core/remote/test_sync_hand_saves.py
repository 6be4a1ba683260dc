"""A person's save while ``sync`` resolves a merge they started with git stays theirs.

``sync`` reads each conflicted file, merges its sides and writes the result. A save made
between that look and the write (or the removal of a file the merge deletes) is the person
resolving it by hand: it stays as saved, the path is left unstaged with a note, and the
merge is not finished for them. The save is placed there by a wrapper around the file
layer's call, so it comes after sync's last look whatever sync does inside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import git
from sync_support import pulled_into_conflict

NOTE = "memory/notes.md"
BY_HAND = b"# Notes\n\nThe cache is Valkey, decided by hand.\n"


def test_a_save_while_sync_resolves_the_file_stays_and_is_not_staged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    laptop, server, _remote = pulled_into_conflict(tmp_path, NOTE)
    files = server.parts.files
    real = files.write
    saved: list[str] = []

    def write(path: str, data: bytes, **kwargs: Any) -> None:
        if path == NOTE and not saved:
            (server.root / NOTE).write_bytes(BY_HAND)
            saved.append(path)
        real(path, data, **kwargs)

    monkeypatch.setattr(files, "write", write)
    result = server.remote.sync()
    monkeypatch.undo()
    assert saved and (server.root / NOTE).read_bytes() == BY_HAND
    assert any(n.path == NOTE and "saved by hand" in n.detail for n in result.notes)
    assert NOTE in git(server.root, "diff", "--name-only", "--diff-filter=U")  # still unmerged
    assert "still unmerged" in str(result.push_skipped)
    server.close()
    laptop.close()
