"""``tests/mutate.py``'s bookkeeping: which verdicts of the last run it keeps, which mutants
it asks mutmut for, and which a fresh run sets aside as explained before testing any."""

from __future__ import annotations

import json
from pathlib import Path

import mutate  # tests/mutate.py, on the path like the suite's other helpers
import pytest

KEPT = "contextfs.scopes.packing.x_kept__mutmut_1"
CHANGED = "contextfs.scopes.packing.x_changed__mutmut_1"


def _meta(where: Path, codes: dict[str, int | None], hashes: dict[str, str]) -> Path:
    meta = where / "mutants" / "contextfs" / "scopes" / "packing.py.meta"
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps({"exit_code_by_key": codes, "hash_by_function_name": hashes}))
    return meta


def test_a_changed_functions_old_verdicts_are_not_kept(tmp_path: Path) -> None:
    """A function whose source changed has new mutants under the old numbers: its last
    verdicts would score mutants nobody tested; an unchanged function's are kept."""
    module = mutate.Module("scopes/packing.py", "contextfs/scopes/packing.py", "views")
    _meta(tmp_path, {KEPT: 1, CHANGED: 1}, {"x_kept": "aaaa", "x_changed": "bbbb"})
    previous = mutate.last_results(tmp_path, [module])
    meta = _meta(tmp_path, {KEPT: None, CHANGED: None}, {"x_kept": "aaaa", "x_changed": "cccc"})
    mutate.keep_results(tmp_path, previous)
    assert json.loads(meta.read_text())["exit_code_by_key"] == {KEPT: 1, CHANGED: None}


def test_a_verdict_of_this_run_is_never_overwritten(tmp_path: Path) -> None:
    module = mutate.Module("scopes/packing.py", "contextfs/scopes/packing.py", "views")
    _meta(tmp_path, {KEPT: 0}, {"x_kept": "aaaa"})
    previous = mutate.last_results(tmp_path, [module])
    meta = _meta(tmp_path, {KEPT: 1}, {"x_kept": "aaaa"})
    mutate.keep_results(tmp_path, previous)
    assert json.loads(meta.read_text())["exit_code_by_key"] == {KEPT: 1}


@pytest.mark.parametrize(
    ("mutant", "found"),
    [
        ("contextfs.scopes.packing.x_pack__mutmut_3", True),
        ("contextfs.scopes.packing.x__make_slot__mutmut_10", True),
        ("contextfs.scopes.packing.x\u01c1_Packer\u01c1fit__mutmut_30", True),
        ("contextfs.scopes.packing.x\u01c1_Slot\u01c1__init____mutmut_2", True),
        ("contextfs.scopes.packing.x_removed__mutmut_1", False),
        ("contextfs.scopes.gone.x_pack__mutmut_1", False),
    ],
)
def test_only_survivors_of_functions_still_there_are_asked_for(
    tmp_path: Path, mutant: str, found: bool
) -> None:
    staged = tmp_path / "contextfs" / "scopes" / "packing.py"
    staged.parent.mkdir(parents=True)
    staged.write_text(
        "class _Slot:\n    def __init__(self): ...\n\n"
        "class _Packer:\n    def fit(self): ...\n\n"
        "def _make_slot(): ...\n\ndef pack(): ...\n"
    )
    assert mutate.defined(tmp_path, mutant) is found


def test_a_run_of_the_survivors_asks_for_timeouts_only_when_told(tmp_path: Path) -> None:
    """A timeout is kept as a kill unless ``--timeouts`` asks for it again (a slow test on a
    loaded machine runs out of time without any hang); a kill is never asked for."""
    module = mutate.Module("scopes/packing.py", "contextfs/scopes/packing.py", "views")
    names = [f"contextfs.scopes.packing.x_pack__mutmut_{k}" for k in range(5)]
    killed, survived, unreached, timed_out, no_tests = names
    _meta(
        tmp_path,
        {killed: 1, survived: 0, unreached: None, timed_out: 36, no_tests: 33},
        {"x_pack": "aaaa"},
    )
    previous = mutate.last_results(tmp_path, [module])
    assert mutate.to_test_again(previous, timeouts=False) == sorted([survived, unreached, no_tests])
    assert mutate.to_test_again(previous, timeouts=True) == sorted(
        [survived, unreached, timed_out, no_tests]
    )


def test_a_survivor_an_equivalent_entry_explains_is_not_tested_again(tmp_path: Path) -> None:
    """Running an explained survivor again only runs every test of its function to see it
    survive: its verdict is kept, and an unreached mutant the entry explains gets the same
    one. A survivor the entry does not explain and a killed mutant are not set aside."""
    module = mutate.Module("scopes/packing.py", "contextfs/scopes/packing.py", "views")
    names = [f"contextfs.scopes.packing.x_pack__mutmut_{k}" for k in range(5)]
    explained, unexplained, killed, unreached, unreached_other = names
    _meta(
        tmp_path,
        {explained: 0, unexplained: 0, killed: 1, unreached: None, unreached_other: None},
        {"x_pack": "aaaa"},
    )
    previous = mutate.last_results(tmp_path, [module])
    entry = mutate.Equivalent("scopes/packing.py", "pack", "step = 0", "step = 1", "no effect")
    diffs = {
        explained: "--- a\n+++ b\n-    step = 0\n+    step = 1\n",
        unexplained: "--- a\n+++ b\n-    step = 0\n+    step = 2\n",
        killed: "--- a\n+++ b\n-    step = 0\n+    step = 1\n",
        unreached: "--- a\n+++ b\n-    step = 0\n+    step = 1\n",
        unreached_other: "--- a\n+++ b\n-    step = 0\n+    step = 3\n",
    }
    asked: list[str] = []

    def diff_of(mutant: str, staged: str) -> str:
        assert staged == "contextfs/scopes/packing.py"
        asked.append(mutant)
        return diffs[mutant]

    listed = mutate.listed_equivalent([module], previous, [entry], diff_of)
    assert listed == {explained, unreached}
    assert sorted(asked) == sorted([explained, unexplained, unreached, unreached_other])
    codes = previous[module.staged].codes
    assert (codes[unreached], codes[unreached_other], codes[killed]) == (0, None, 1)
    asked_for = [n for n in mutate.to_test_again(previous, timeouts=False) if n not in listed]
    assert asked_for == sorted([unexplained, unreached_other])


def test_a_fresh_run_sets_aside_the_untested_mutants_an_entry_explains(tmp_path: Path) -> None:
    """Before a fresh run tests anything, a mutant an equivalent entry explains gets the
    verdict "survived" (the report counts it as equivalent), so mutmut passes over it; the
    others stay untested, and a verdict already there is left as it is."""
    module = mutate.Module("scopes/packing.py", "contextfs/scopes/packing.py", "views")
    names = [f"contextfs.scopes.packing.x_pack__mutmut_{k}" for k in range(3)]
    explained, unexplained, decided = names
    meta = _meta(tmp_path, {explained: None, unexplained: None, decided: 1}, {"x_pack": "aaaa"})
    entry = mutate.Equivalent("scopes/packing.py", "pack", "step = 0", "step = 1", "no effect")
    diffs = {
        explained: "--- a\n+++ b\n-    step = 0\n+    step = 1\n",
        unexplained: "--- a\n+++ b\n-    step = 0\n+    step = 2\n",
    }
    assert mutate.set_aside(tmp_path, [module], [entry], lambda m, _staged: diffs[m]) == 1
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    assert codes == {explained: 0, unexplained: None, decided: 1}
    assert entry.used == 1


def test_staging_afresh_keeps_only_the_record_of_which_test_noticed_which_mutant(
    tmp_path: Path,
) -> None:
    """A fresh run replaces the staged copy, mutants and verdicts alike, but carries over
    tests/mutant_order.py's record (each pair once), so each mutant starts with its killer."""
    where = tmp_path / "views"
    module = mutate.Module("scopes/packing.py", "contextfs/scopes/packing.py", "views")
    tests = ["tests/project/test_mutant_order.py"]
    mutate.stage(where, [module], tests)
    assert not (where / mutate.KILLS).exists()  # nothing to carry over the first time
    assert (where / "contextfs" / "scopes" / "packing.py").is_file()
    pair, other = f"{KEPT}\ttests/a.py::test_a\n", f"{CHANGED}\ttests/b.py::test_b\n"
    (where / "mutants" / "contextfs").mkdir(parents=True)  # a mutant of the last run
    (where / mutate.KILLS).write_text(pair + other + pair, "utf-8")
    mutate.stage(where, [module], tests)
    assert (where / mutate.KILLS).read_text("utf-8") == pair + other
    assert list((where / "mutants").iterdir()) == [where / mutate.KILLS]
