"""Files a killed writer left behind (temporary objects, private lock files) are removed; a
live writer's never are."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from contextfs.versioning.locks import remove_leftover_scratch
from contextfs.versioning.objects import ObjectStore


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_temporary_objects_of_dead_writers_go_and_live_ones_stay(tmp_path: Path) -> None:
    objects = tmp_path / "objects"
    (objects / "pack").mkdir(parents=True)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            "dead": f"tmp_obj_cfs-{_dead_pid()}-0a1b",
            "mine": f"tmp_obj_cfs-{os.getpid()}-0a1b",
            "live": f"tmp_obj_cfs-{live.pid}-0a1b",
            "git's": "tmp_obj_Ab12Cd",
        }
        for name in names.values():
            (objects / name).write_bytes(b"partial")
        assert ObjectStore(str(objects)).remove_leftovers() == 1
        left = {p.name for p in objects.iterdir()} - {"pack"}
        assert left == {names["mine"], names["live"], names["git's"]}
    finally:
        live.kill()
        live.wait()


def test_lock_scratch_of_dead_writers_goes_and_live_ones_stay(tmp_path: Path) -> None:
    dead = tmp_path / f"cfs-lock-{_dead_pid()}-9f"
    mine = tmp_path / f"cfs-lock-{os.getpid()}-9f"
    other = tmp_path / "index.lock"
    for path in (dead, mine, other):
        path.write_bytes(b"")
    assert remove_leftover_scratch(tmp_path) == 1
    assert {p.name for p in tmp_path.iterdir()} == {mine.name, other.name}
