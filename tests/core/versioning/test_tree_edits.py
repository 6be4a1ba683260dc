"""Trees built by editing the last tree this process built are the trees git builds."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from contextfs.versioning.objects import ObjectStore

_NAMES = st.sampled_from(
    ["a", "a.md", "a-b", "a/b", "a/c.md", "b/a", "b/a/x", "z", "é.md", "a0", "a/b/c"]
)
_CHANGE = st.tuples(_NAMES, st.booleans())


def _repo(tmp: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    return tmp


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(_CHANGE, min_size=1, max_size=6), min_size=1, max_size=6))
@example(
    steps=[[("a/b", True), ("a/b", False), ("a", True)]]
)  # a file in place of an emptied folder
def test_each_edited_tree_equals_one_built_from_scratch(tmp_path_factory, steps) -> None:  # type: ignore[no-untyped-def]
    root = _repo(tmp_path_factory.mktemp("repo"))
    store = ObjectStore(str(root / ".git" / "objects"), durable=False)
    fresh = ObjectStore(str(root / ".git" / "objects"), durable=False)
    blob = store.store(b"blob", b"x")
    files: dict[str, bytes] = {}
    tree = None
    for step in steps:
        changes: dict[str, tuple[bytes, int] | None] = {}
        for name, keep in step:
            # A path cannot be a file and a folder at once: drop what it would collide with.
            clash = [p for p in files if p.startswith(name + "/") or name.startswith(p + "/")]
            if keep and not clash:
                changes[name] = (blob, 0o100644)
                files[name] = blob
            elif not keep and name in files:
                changes[name] = None
                del files[name]
        tree = store.rewrite(tree, changes)
        whole = fresh.rewrite(None, {p: (b, 0o100644) for p, b in files.items()})
        assert tree == whole
        fresh._edited.clear()  # noqa: SLF001 - the reference build never edits
    if tree is not None:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-tree", "-r", "--name-only", "-z", tree.hex()],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\0")
        assert sorted(p for p in listed if p) == sorted(files)
        fsck = subprocess.run(
            ["git", "-C", str(root), "fsck", "--strict", "--no-dangling"],
            capture_output=True,
            text=True,
        )
        assert "error" not in fsck.stderr.lower(), fsck.stderr
