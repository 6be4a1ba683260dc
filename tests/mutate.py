"""Mutation testing of the promise modules: ``make mutate`` (``python tests/mutate.py``).

mutmut plants one small bug at a time (a flipped comparison, a changed constant, a dropped
argument, ...) in the modules listed in ``tests/mutation.toml`` and runs, against each
mutant, only the tests that reached the mutated function; a mutant no test notices
*survives*. This script:

1. lays the package out as installed in ``build/mutation/``: ``scopes/``, ``evolve/`` and
   ``integrations/`` are mapped into ``contextfs.`` by pyproject's ``package-dir``, and the
   editable install resolves ``contextfs.scopes`` to the source folder, so mutmut's own copy
   of the sources (``mutants/``) would never be imported for those three; in the staged
   tree every module lives under ``contextfs/`` and the copy shadows the editable install;
2. has mutmut make the mutants, sets aside (untested, counted as equivalent) those an
   equivalent entry of ``tests/mutation.toml`` explains (``--equivalents`` tests them too),
   then runs ``mutmut run`` there under ``nice`` (children that the tests spawn import the
   mutated copy too: ``PYTHONPATH`` points at it);
3. reads mutmut's results, shows each survivor's diff and matches it against the
   equivalent mutants written down in ``tests/mutation.toml`` (by function and by the text
   of the change, never by line or mutant number, so the list survives edits); prints the
   score per module and exits non-zero when a module is under the goal or a survivor is
   neither killed nor explained.

Usage: ``python tests/mutate.py [--group files ...] [--jobs N] [--nice 10]
[--report-only | --survivors | --equivalents]``;
a group is a set of modules with the tests that exercise them (``tests/mutation.toml``).
``--survivors`` tests again only the mutants the last run of a group let through (after
tests were added) or never reached (a stopped run), keeping the last run's other verdicts.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

if sys.version_info >= (3, 11):
    import tomllib
else:  # the dev extra installs tomli on 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
CONFIG = Path(__file__).with_name("mutation.toml")
STAGE = REPO / "build" / "mutation"
# Which test noticed which mutant, written by tests/mutant_order.py during a run, in the
# folder mutmut runs the tests from (beside its mutmut-stats.json).
KILLS = Path("mutants") / "mutmut-kills.tsv"
# Statements whose strings are messages, not behaviour: the wording of an error or a log
# line is not mutated (the typed error is what callers rely on, and tests/core/test_fixes.py
# checks that every message ends with its fix); the conditions around them still are.
# A `fix=` argument on a line of its own is the fix a check's error message ends with.
MESSAGE_LINES = [
    r"^\s*raise \w+\(",
    r"^\s*log\.\w+\(",
    r"^\s*warnings\.warn\(",
    r"^\s*fix=",
]


@dataclass
class Equivalent:
    module: str
    function: str
    was: str
    now: str
    reason: str
    used: int = 0


@dataclass
class Module:
    source: str
    staged: str
    group: str
    counts: Counter[str] = field(default_factory=Counter)
    survivors: list[tuple[str, str]] = field(default_factory=list)  # (mutant, diff)
    ran: bool = True  # False: no results of its group here

    @property
    def name(self) -> str:
        return self.staged.removesuffix(".py").replace("/", ".")

    def score(self) -> float:
        # A timeout counts as a kill: the mutant made a test hang, which a run notices.
        total = sum(self.counts.values()) - self.counts["equivalent"]
        done = self.counts["killed"] + self.counts["timeout"]
        return done / total if total else float(self.ran)


def package_dirs() -> dict[str, str]:
    """Import name -> source folder, from pyproject's [tool.setuptools.package-dir]."""
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    return dict(meta["tool"]["setuptools"]["package-dir"])


def staged_path(source: str, dirs: dict[str, str]) -> str:
    """Where a source file lives in the installed layout (scopes/x.py -> contextfs/scopes/x.py)."""
    best = max(
        (d for d in dirs.items() if source.startswith(d[1].rstrip("/") + "/")),
        key=lambda d: len(d[1]),
    )
    name, folder = best
    return name.replace(".", "/") + source[len(folder.rstrip("/")) :]


def stage(where: Path, modules: list[Module], tests: list[str]) -> None:
    """A fresh folder: the package as installed, the tests, a pyproject for mutmut.

    Only the record of which test noticed which mutant is carried over from the last
    run (each pair once): the next run then starts every mutant with the test that
    noticed it, and a run of unchanged code tests each killed mutant with one test."""
    try:
        kills = (where / KILLS).read_text("utf-8").splitlines()
    except OSError:
        kills = []
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    if kills:
        (where / KILLS).parent.mkdir()
        (where / KILLS).write_text("".join(f"{k}\n" for k in dict.fromkeys(kills)), "utf-8")
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "benchmarks")
    for name, folder in sorted(package_dirs().items()):  # parents before children
        shutil.copytree(
            REPO / folder, where / name.replace(".", "/"), ignore=skip, dirs_exist_ok=True
        )
    shutil.copytree(REPO / "tests", where / "tests", ignore=skip)
    # Read by tests: the sample root, and the docs a few tests hold to what the code does.
    for extra in ("sample-context", "docs"):
        shutil.copytree(REPO / extra, where / extra, ignore=skip)
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    pytest_ini = dict(meta["tool"]["pytest"]["ini_options"])
    settings = {
        "source_paths": ["contextfs"],
        "only_mutate": [m.staged for m in modules],
        "do_not_mutate_patterns": MESSAGE_LINES,
        # A file, or one test in it ("file.py::test_name") where the rest of a slow file
        # reaches the modules only as the other tests do.
        "pytest_add_cli_args_test_selection": [
            t for t in tests if (REPO / t.partition("::")[0]).exists()
        ],
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-p", "no:xdist"],
        "also_copy": ["sample-context/", "docs/"],
        # A mutant that makes a loop endless is stopped after this much CPU time: four
        # times what its tests take clean, plus 20 s (mutmut's default, 30 times, let one
        # such mutant of the scanner run for twenty minutes). Less is too tight: a child
        # that loads the secret scanner's rule set spends about 5 s of CPU on that alone,
        # and twice plus 5 s stopped mutants that were only surviving (102 in the gate group).
        "timeout_multiplier": 4.0,
        "timeout_constant": 20.0,
        "use_git_change_detection": False,
        "track_dependencies": False,
    }
    (where / "pyproject.toml").write_text(
        tomli_w.dumps({"tool": {"pytest": {"ini_options": pytest_ini}, "mutmut": settings}})
    )


def run_mutmut(where: Path, jobs: int, niceness: int, names: list[str] | None = None) -> int:
    # Children the tests spawn import the mutated copy too. The folder must exist before
    # mutmut starts: Python caches a missing sys.path entry as "nothing here" for good.
    (where / "mutants").mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(where / "mutants"))
    mutmut = Path(sys.executable).with_name("mutmut")
    # A lower priority: a run takes an hour or more on a machine others share.
    cmd = ["nice", "-n", str(niceness), str(mutmut), "run", "--max-children", str(jobs)]
    cmd += names or []
    with open(where / "mutmut.log", "w") as out:  # its progress line is redrawn: a file, not a tty
        return subprocess.run(
            cmd, cwd=where, env=env, stdout=out, stderr=subprocess.STDOUT, check=False
        ).returncode


def generate(where: Path, jobs: int) -> None:
    """mutmut's first step alone: the mutated copy and each module's list of mutants (its
    ``.meta``), none tested yet, so that a fresh run can set the listed equivalents aside
    before it starts (see :func:`set_aside`). The steps are mutmut's own (3.8, pinned in
    ``pyproject.toml``), as ``mutmut run`` takes them before its tests."""
    code = (
        "from mutmut.__main__ import create_mutants\n"
        "from mutmut.mutation.trampoline import set_mutant_under_test\n"
        "from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths\n"
        "set_mutant_under_test('mutant_generation')\n"
        "copy_src_dir()\ncopy_also_copy_files()\nsetup_source_paths()\n"
        f"create_mutants({jobs})\n"
    )
    with open(where / "mutmut.log", "w") as out:
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=where,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=True,
        )


def set_aside(
    where: Path,
    group: list[Module],
    equivalents: list[Equivalent],
    diff_of: Callable[[str, str], str],
) -> int:
    """Give every untested mutant an equivalent entry explains the verdict "survived" (which
    the report counts as equivalent), so ``mutmut run`` passes over it: it could only survive,
    after every test that reaches its function (a minute or more in the changes group).
    Returns how many were set aside."""
    count = 0
    for module in group:
        meta = where / "mutants" / (module.staged + ".meta")
        data = json.loads(meta.read_text())
        codes = data["exit_code_by_key"]
        for mutant, code in sorted(codes.items()):
            if code is None and explain(
                module, mutant, diff_of(mutant, module.staged), equivalents
            ):
                codes[mutant] = 0
                count += 1
        meta.write_text(json.dumps(data, indent=4))
    return count


# mutmut's exit codes of a mutant no test noticed: survived, no tests (pytest's and mutmut's).
NOT_NOTICED = {0, 5, 33}
# mutmut's exit codes of a mutant whose tests ran out of time (counted as killed: a hang is
# noticed). On a loaded machine a slow test can run out of time with no hang at all, so
# ``--timeouts`` tests those again.
TIMED_OUT = {36, -24, 24, 152, 255}


@dataclass
class LastRun:
    """One module's verdicts from the last run: mutant -> exit code, and the hash mutmut
    took of each function's source (a changed function's mutants are new ones)."""

    codes: dict[str, int | None]
    hashes: dict[str, str]


def last_results(where: Path, modules: list[Module]) -> dict[str, LastRun]:
    """Each module's last run in ``where`` (none when it has not run there)."""
    out = {}
    for m in modules:
        meta = where / "mutants" / (m.staged + ".meta")
        if meta.exists():
            data = json.loads(meta.read_text())
            out[m.staged] = LastRun(data["exit_code_by_key"], data.get("hash_by_function_name", {}))
    return out


def function_of(mutant: str) -> str:
    """The key mutmut hashes a mutant's function under (``xǁ_Slotǁplace``, ``x_pack``)."""
    return mutant.rpartition(".")[2].rsplit("__mutmut_", 1)[0]


def defined(where: Path, mutant: str) -> bool:
    """Whether the function ``mutant`` was made from is still in the staged source (a
    survivor of a function since removed is not asked for: mutmut would stop on it)."""
    module, _, _ = mutant.rpartition(".")
    path = where / (module.replace(".", "/") + ".py")
    name = function_of(mutant).replace("\u01c1", ".").strip(".").removeprefix("x_")
    name = name.rpartition(".")[2]
    return path.exists() and f"def {name}(" in path.read_text()


def keep_results(where: Path, previous: dict[str, LastRun]) -> None:
    """Put back the last run's verdicts of the mutants this run did not test again.

    A run of the survivors only tests those; a mutant the last run killed stays killed,
    because tests are only ever added to a group's list, never taken away. A function
    whose source changed since has new mutants under the old numbers: none of its old
    verdicts is kept, so mutmut's own reset of them stands and they are tested afresh.
    """
    for staged, old in previous.items():
        meta = where / "mutants" / (staged + ".meta")
        data = json.loads(meta.read_text())
        codes = data["exit_code_by_key"]
        hashes = data.get("hash_by_function_name", {})
        for key, code in old.codes.items():
            function = function_of(key)
            same = function in hashes and hashes[function] == old.hashes.get(function)
            if same and key in codes and codes[key] is None:
                codes[key] = code
        meta.write_text(json.dumps(data, indent=4))


def to_test_again(previous: dict[str, LastRun], *, timeouts: bool) -> list[str]:
    """The mutants a run of the survivors asks for: the survivors, the mutants a stopped
    run never reached (no exit code yet) and, with ``timeouts``, those that ran out of time."""
    return sorted(
        k
        for old in previous.values()
        for k, c in old.codes.items()
        if c is None or c in NOT_NOTICED or (timeouts and c in TIMED_OUT)
    )


def listed_equivalent(
    group: list[Module],
    previous: dict[str, LastRun],
    equivalents: list[Equivalent],
    diff_of: Callable[[str, str], str],
) -> set[str]:
    """The last run's survivors and unreached mutants that an equivalent entry explains, by
    ``diff_of(mutant, staged path)``, the diff of the mutated copy that run made; each gets
    the verdict "survived" in ``previous``, which the run keeps (a function changed since
    gets new mutants under the old numbers: its verdicts are not kept, and the second pass
    tests them afresh)."""
    out = set()
    for module in group:
        old = previous.get(module.staged)
        for mutant, code in (old.codes if old else {}).items():
            if code is not None and code not in NOT_NOTICED:
                continue  # noticed: killed, or out of time
            if explain(module, mutant, diff_of(mutant, module.staged), equivalents):
                old.codes[mutant] = 0
                out.add(mutant)
    return out


def mutmut_diffs(where: Path) -> Callable[[str, str], str]:
    """The diff of a mutant of the mutated copy in ``where``, as mutmut shows it."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    def diff_of(mutant: str, staged: str) -> str:
        here = Path.cwd()
        os.chdir(where)  # mutmut reads its settings and the mutated copy from here
        try:
            reset_config()
            return get_diff_for_mutant(mutant, path=staged)
        finally:
            os.chdir(here)

    return diff_of


def load_equivalents() -> list[Equivalent]:
    entries = [Equivalent(**e) for e in tomllib.loads(CONFIG.read_text()).get("equivalent", [])]
    for e in entries:
        if not e.was or not e.reason.strip():
            raise SystemExit(
                f"{CONFIG.name}: equivalent {e.module} {e.function} needs was and reason"
            )
    return entries


def explain(module: Module, mutant: str, diff: str, equivalents: list[Equivalent]) -> bool:
    function = mutant.rpartition(".")[2].rsplit("__mutmut_", 1)[0]
    function = function.removeprefix("x_").replace("\u01c1", ".").strip(".").removeprefix("x.")
    removed = [
        line[1:]
        for line in diff.splitlines()
        if line.startswith("-") and not line.startswith("---")
    ]
    added = [
        line[1:]
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    if len(removed) == len(added):
        pairs = list(zip(removed, added, strict=True))
    else:  # a dropped argument of a call written over several lines: compare the statement
        pairs = [("".join(x.strip() for x in removed), "".join(x.strip() for x in added))]
    for entry in equivalents:
        if not fnmatch.fnmatch(module.source, entry.module) or not fnmatch.fnmatch(
            function, entry.function
        ):
            continue
        if any(replaces(entry.was, entry.now, r, a) for r, a in pairs):
            entry.used += 1
            return True
    return False


def replaces(was: str, now: str, before: str, after: str) -> bool:
    """Whether ``after`` is ``before`` with one occurrence of ``was`` written as ``now``.

    The whole change must be that replacement: an entry for ``end=False`` -> ``end=None``
    never explains a mutant that changed something else on a line holding both texts.
    """
    at = before.find(was)
    while at >= 0:
        if before[:at] + now + before[at + len(was) :] == after:
            return True
        at = before.find(was, at + 1)
    return False


def collect(modules: list[Module], equivalents: list[Equivalent]) -> None:
    # mutmut is the optional tool of this script: imported only once there are results
    from mutmut.configuration import reset_config
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    for module in modules:
        meta = STAGE / module.group / "mutants" / (module.staged + ".meta")
        if not meta.exists():  # a group never run here
            module.ran = False
            continue
        os.chdir(STAGE / module.group)  # mutmut reads its settings and results from here
        reset_config()
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        for mutant, code in sorted(codes.items()):
            status = status_by_exit_code[code]
            if status == "segfault":
                status = "killed"  # a mutant that kills its own process was noticed
            if status == "survived" or status == "no tests":
                diff = get_diff_for_mutant(mutant, path=module.staged)
                if explain(module, mutant, diff, equivalents):
                    status = "equivalent"
                else:
                    module.survivors.append((mutant, diff))
            module.counts[status] += 1


def report(modules: list[Module], equivalents: list[Equivalent], goal: float) -> str:
    lines = [
        "| module | mutants | killed | equivalent | survived | no tests | not checked | score |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total = Counter[str]()
    for m in modules:
        c = m.counts
        total.update(c)
        lines.append(
            f"| `{m.source}` | {sum(c.values())} | {c['killed'] + c['timeout']} | "
            f"{c['equivalent']} | {c['survived']} | {c['no tests']} | {c['not checked']} | "
            f"{m.score():.1%} |"
        )
    everything = Module("all", "all", "", total)
    lines.append(
        f"| **all** | {sum(total.values())} | {total['killed'] + total['timeout']} | "
        f"{total['equivalent']} | {total['survived']} | {total['no tests']} | "
        f"{total['not checked']} | **{everything.score():.1%}** |"
    )
    stale = [e for e in equivalents if e.used == 0 and any(e.module == m.source for m in modules)]
    for e in stale:
        lines.append(
            f"\nequivalent entry matches no survivor any more: {e.module} {e.function} "
            f"{e.was!r} -> {e.now!r}"
        )
    never = [m.source for m in modules if not m.ran]
    if never:
        lines.append(f"\nnever run here (scored 0): {', '.join(never)}")
    if total["not checked"]:
        lines.append(
            f"\n{total['not checked']} mutants were not checked (a run stopped early): the score "
            "counts them as not killed"
        )
    lines.append(f"\ngoal: {goal:.0%} of non-equivalent mutants killed on every module")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--group", action="append", help="only this group (repeatable)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="mutants tested at once (default: one per core; the run is niced, see --nice)",
    )
    parser.add_argument(
        "--nice", type=int, default=10, help="niceness of the run (default 10; 19 yields to all)"
    )
    parser.add_argument("--report-only", action="store_true", help="read the last run's results")
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="test again only the last run's survivors and unchecked mutants, keep the rest",
    )
    parser.add_argument(
        "--timeouts",
        action="store_true",
        help="with --survivors: test again the mutants that ran out of time too",
    )
    parser.add_argument(
        "--equivalents",
        action="store_true",
        help="a fresh run tests the mutants the equivalent entries explain too (to check the entries)",
    )
    args = parser.parse_args(argv)
    if args.timeouts and not args.survivors:
        parser.error("--timeouts goes with --survivors")
    config = tomllib.loads(CONFIG.read_text())
    dirs = package_dirs()
    groups = {g["name"]: g for g in config["group"]}
    chosen = args.group or list(groups)
    unknown = sorted(set(chosen) - set(groups))
    if unknown:
        parser.error(
            f"no such group in {CONFIG.name}: {', '.join(unknown)}; choose from {', '.join(groups)}"
        )
    modules: list[Module] = []
    for name in chosen:
        group = [Module(s, staged_path(s, dirs), name) for s in groups[name]["modules"]]
        modules += group
        if args.report_only:
            continue
        where = STAGE / name
        previous = last_results(where, group) if args.survivors else {}
        names = to_test_again(previous, timeouts=args.timeouts)
        # A survivor an equivalent entry explains would only survive again, after running
        # every test that reaches its function: its verdict is kept instead.
        listed = listed_equivalent(group, previous, load_equivalents(), mutmut_diffs(where))
        names = [n for n in names if n not in listed]
        if listed:
            print(f"{name}: {len(listed)} listed equivalent mutant(s) kept untested", flush=True)
        if args.survivors and not names:
            print(f"{name}: no survivors of a last run to test again", flush=True)
            continue
        stage(where, group, groups[name]["tests"])
        names = [n for n in names if defined(where, n)]
        print(f"mutating {name}: {', '.join(m.source for m in group)}", flush=True)
        if not args.survivors and not args.equivalents:
            generate(where, args.jobs)
            aside = set_aside(where, group, load_equivalents(), mutmut_diffs(where))
            print(f"{name}: {aside} listed equivalent mutant(s) set aside untested", flush=True)
        code = run_mutmut(where, args.jobs, args.nice, names)
        keep_results(where, previous)
        if code == 0 and args.survivors:
            # Functions changed since the last run have new mutants: test those too.
            fresh = sorted(
                k
                for old in last_results(where, group).values()
                for k, c in old.codes.items()
                if c is None
            )
            if fresh:
                code = run_mutmut(where, args.jobs, args.nice, fresh)
        if code != 0:
            print((where / "mutmut.log").read_text()[-3000:], file=sys.stderr)
            print(f"mutmut exited with {code} on {name}", file=sys.stderr)
            return code
    equivalents = load_equivalents()
    collect(modules, equivalents)
    for module in modules:
        for mutant, diff in module.survivors:
            print(f"\n## survived: {mutant}\n{diff}")
    table = report(modules, equivalents, config["run"]["goal"])
    print("\n" + table)
    (STAGE / "report.md").write_text(table + "\n")
    below = [m.source for m in modules if m.score() < config["run"]["goal"]]
    unexplained = sum(len(m.survivors) for m in modules)
    if below or unexplained:
        print(
            f"\n{unexplained} survivor(s) neither killed nor explained; under the goal: "
            f"{', '.join(below) or 'none'}"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
