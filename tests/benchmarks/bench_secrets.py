"""Benchmark: the secret scanner's recall, false positives and cost, against the previous scanner.

    python tests/benchmarks/bench_secrets.py [--quick] [--noseyparker DIR] [--kingfisher DIR]
                                             [--trufflehog DIR] [--semgrep DIR]
                                             [--secretlint DIR] [--trivy DIR]
                                             [--whispers DIR] [--sonar DIR] [--kics DIR]
                                             [--ripsecrets DIR] [--veles DIR]
                                             [--credsweeper DIR] [--leaky-repo DIR]
                                             [--github-patterns DIR] [--locomo DIR]
                                             [--baseline-ref REF [--baseline-ref REF ...]]

Every table compares the scanner of this tree with **previous scanners** (contextfs as of each
``--baseline-ref``, default ``4a00d85``: detect-secrets' plugins and keyword detector plus a
few hand-written formats), run in the same process tree on the same texts (a subprocess per
ref imports the old package from ``git archive``), one column per ref.

1. **Public corpora the scanner was not tuned on** (``tests/secret_corpora.py``): the example
   strings of Nosey Parker's rules and of Kingfisher's earlier YAML rules, one file per vendor
   or family. Folders from ``--noseyparker`` / ``CONTEXTFS_NOSEYPARKER_RULES`` (the
   ``crates/noseyparker/data/default/builtin/rules`` folder of praetorian-inc/noseyparker) and
   ``--kingfisher`` / ``CONTEXTFS_KINGFISHER_RULES`` (``data/rules`` of mongodb/kingfisher,
   mid-2025, before its SDK bundled the Betterleaks catalogue); without them, the sample in
   ``tests/data/secret_corpus``. Counted: examples of credential rules (not ids, hosts or
   hashes) whose secret is not an evident placeholder, as written; and their secrets under a
   credential-like name in 14 syntaxes. The third corpus, ``--trufflehog`` /
   ``CONTEXTFS_TRUFFLEHOG`` (a checkout of trufflesecurity/trufflehog), is the positive
   entries of its detector tests, as written only (:func:`trufflehog`). The fourth,
   ``--semgrep`` / ``CONTEXTFS_SEMGREP_RULES`` (a checkout of semgrep/semgrep-rules) and
   ``--secretlint`` / ``CONTEXTFS_SECRETLINT`` (a checkout of secretlint/secretlint), is the
   positives of two other scanners' rule tests, as written only (:func:`annotated`). The
   fifth, ``--trivy`` / ``CONTEXTFS_TRIVY`` (a checkout of aquasecurity/trivy) and
   ``--whispers`` / ``CONTEXTFS_WHISPERS`` (a checkout of Skyscanner/whispers), is the
   positives of two more scanners' tests, as written and assigned (:func:`scanner_tests`).
   The sixth, ``--sonar`` / ``CONTEXTFS_SONAR`` (a checkout of SonarSource/sonar-text at
   ``da21f3d7``, the last commit with all its rules), is the examples of Sonar's secrets
   rules (``tests/secret_corpora_sonar.py``): positives as for the fifth, and its negatives
   among the false positives. The seventh, ``--kics`` / ``CONTEXTFS_KICS`` (a checkout of
   Checkmarx/kics at ``4186346b``, or of the DataDog/kics fork, which holds the same
   folder), is the positives of KICS's secrets query's tests
   (``tests/secret_corpora_kics.py``), and ``--ripsecrets`` / ``CONTEXTFS_RIPSECRETS`` (a
   checkout of sirwart/ripsecrets) the test inputs of ripsecrets
   (``tests/secret_corpora_ripsecrets.py``), both measured as the fifth. The eighth,
   ``--veles`` / ``CONTEXTFS_VELES`` (a checkout of google/osv-scalibr), is the positive
   entries of the detector tests of Veles, its secret scanner
   (``tests/secret_corpora_veles.py``), measured as the fifth; its covered families are
   also reported split by whether the catalogue's rule for them is taken from Veles. The
   ninth, ``--credsweeper`` / ``CONTEXTFS_CREDSWEEPER`` (a checkout of Samsung/CredSweeper), is
   the credentials CredSweeper's default run must report in its test samples
   (``tests/secret_corpora_credsweeper.py``), measured as the fifth; its samples in which
   CredSweeper reports nothing join the false positives. The tenth, ``--leaky-repo`` /
   ``CONTEXTFS_LEAKY_REPO`` (a checkout of Plazmaz/leaky-repo), is whole files as they leak
   (``tests/secret_corpora_leaky.py``): a file is found when writing it is refused
   (:func:`leaky_repo`). The eleventh, ``--github-patterns`` / ``CONTEXTFS_GITHUB_PATTERNS``
   (a checkout of advanced-security/secret-scanning-custom-patterns), is the positives of
   GitHub's custom secret patterns, their test inputs and expected findings
   (``tests/secret_corpora_github.py``), measured as the fifth.
   "Covered" vendor families are those a rule of the vendor rule set or a named kind of the
   scanner names; the "generic" family (passwords and keys of no vendor's format) has a row
   of its own. ``CONTEXTFS_BENCH_MISSES=1`` lists the missed inputs of covered families.
2. **Generated secrets** (``tests/secret_samples.py``): 28 kinds in 5 contexts.
3. **False positives**: ``sample-context/``, ``docs/``, generated notes, and LoCoMo's
   conversation turns (``--locomo``, default ``../shared/data/locomo``; snap-research/locomo).
4. **Cost**: one scan of a 7 KB note and of a 1 MB file, old and new, in this run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from secret_baselines import Baseline, Baselines, Texts, flags, pct, rate  # noqa: E402
from secret_corpora import (  # noqa: E402
    SAMPLE,
    assigned_notes,
    detector_cases,
    evident_placeholder,
    glued,
    rule_examples,
    values_of,
)
from secret_corpora_annotated import (  # noqa: E402
    AnnotatedCase,
    secretlint_cases,
    semgrep_cases,
)
from secret_corpora_credsweeper import credsweeper_cases, credsweeper_negatives  # noqa: E402
from secret_corpora_github import github_pattern_cases  # noqa: E402
from secret_corpora_kics import kics_cases  # noqa: E402
from secret_corpora_leaky import CREDENTIALS as LEAKY_CREDENTIALS  # noqa: E402
from secret_corpora_leaky import HASHES as LEAKY_HASHES  # noqa: E402
from secret_corpora_leaky import leaky_files  # noqa: E402
from secret_corpora_ripsecrets import ripsecrets_cases  # noqa: E402
from secret_corpora_scanners import trivy_cases, whispers_cases  # noqa: E402
from secret_corpora_sonar import sonar_cases  # noqa: E402
from secret_corpora_veles import veles_cases  # noqa: E402
from secret_samples import CONTEXTS, NOT_EXPECTED, SECRET_KINDS, ordinary_note  # noqa: E402

from contextfs.gate.secrets import KINDS, scan  # noqa: E402

DEFAULT_BASELINE = "4a00d85"
#: Families that are no vendor's format: values people chose, found only by the name they are
#: assigned to and their shape; reported on a row of their own.
GENERIC = frozenset({"generic"})
DEFAULT_LOCOMO = REPO / ".." / "shared" / "data" / "locomo"

# -- 1. public corpora ---------------------------------------------------------------------


def _covered_families() -> Callable[[str], bool]:
    """A family is covered when a rule of the vendor rule set or a named kind names it."""
    from contextfs.gate.secrets_rules import kind_of, load

    names = {
        re.sub(r"[^a-z0-9]", "", kind_of(m["id"]).removeprefix("rule ").lower())
        for m in load().rules.metadata()
        if m["visible"]
    }
    names |= {re.sub(r"[^a-z0-9]", "", k.lower()) for k in KINDS}

    def covered(family: str) -> bool:
        key = re.sub(r"[^a-z0-9]", "", family.lower())
        return key not in GENERIC and len(key) >= 3 and any(name.startswith(key) for name in names)

    return covered


def as_written(
    name: str,
    items: list[tuple[str, str]],
    baselines: Baselines,
    covered: Callable[[str], bool],
    total: str,
    stuck: set[tuple[str, str]] = frozenset(),
) -> list[bool]:
    """Recall on ``items`` (family, text), each text a note of its own; this scanner's
    verdicts, in order. ``stuck`` are the items whose secret is :func:`glued` to other text:
    a further row gives covered families without them, the usual contexts alone. With
    ``CONTEXTFS_BENCH_MISSES`` set, the missed texts of covered families are listed after
    the table (to read the misses by cause)."""
    texts = [(text, "notes/n.md") for _, text in items]
    new, olds = flags(texts), baselines.flags(texts)
    families = Counter(f for f, _ in items)
    print(
        f"### {name}: {total}, {len(items)} with a realistic secret, "
        f"{len(families)} families ({sum(1 for f in families if covered(f))} vendor families covered)\n"
    )
    print(f"| as written | examples | this scanner | {baselines.header()} |")
    print(f"|---|---:|---:|{baselines.rule()}|")
    generic = lambda f: f in GENERIC  # noqa: E731
    for label, keep in (
        ("all families", lambda f: True),
        ("vendor families covered", covered),
        ("generic (no vendor format)", generic),
        ("vendor families not covered", lambda f: not covered(f) and not generic(f)),
    ):
        idx = [i for i, (f, _) in enumerate(items) if keep(f)]
        print(
            f"| {label} | {len(idx)} | {pct(*rate(new[i] for i in idx))} | {baselines.cells(olds, idx)} |"
        )
    if stuck:
        idx = [i for i, item in enumerate(items) if covered(item[0]) and item not in stuck]
        print(
            f"| vendor families covered, secret apart from other text | {len(idx)} | "
            f"{pct(*rate(new[i] for i in idx))} | {baselines.cells(olds, idx)} |"
        )
    missed = Counter(f for (f, _), hit in zip(items, new, strict=True) if not hit and covered(f))
    if missed:
        print(
            f"\nMissed in covered families: {', '.join(f'{f} x{n}' for f, n in missed.most_common())}"
        )
    if os.environ.get("CONTEXTFS_BENCH_MISSES"):
        for (family, text), hit in zip(items, new, strict=True):
            if not hit and covered(family):
                print(f"- {family}: {json.dumps(text[:160])}")
    return new


def corpus(name: str, folder: Path, baselines: Baselines, quick: bool) -> None:
    examples = [e for e in rule_examples(folder) if e.credential]
    realistic = [e for e in examples if any(not evident_placeholder(v) for v in values_of(e))]
    covered = _covered_families()
    as_written(
        name,
        [(e.family, e.text) for e in realistic],
        baselines,
        covered,
        f"{len(examples)} examples of credential rules",
        glued((e.family, e.text, values_of(e)) for e in realistic),
    )

    values: dict[str, str] = {}
    for e in realistic:
        for value in values_of(e):
            if not evident_placeholder(value):
                values.setdefault(value, e.family)
    assigned(values, baselines, covered, quick)


def assigned(
    values: dict[str, str], baselines: Baselines, covered: Callable[[str], bool], quick: bool
) -> None:
    """Each secret (value -> family) under a credential-like name in the 14 syntaxes of
    :data:`secret_corpora.ASSIGNED`, each a note of its own."""
    items = sorted(values.items())
    if quick:
        items = items[::4]
    notes = [
        (family, template, note)
        for value, family in items
        for template, note in assigned_notes(family, value)
    ]
    texts = [(note, "notes/setup.md") for _, _, note in notes]
    new, olds = flags(texts), baselines.flags(texts)
    print(
        f"\n| assigned to a credential-like name ({len(items)} secrets) | notes | this scanner | {baselines.header()} |"
    )
    print(f"|---|---:|---:|{baselines.rule()}|")
    for label, keep in (
        ("all families", lambda f: True),
        ("vendor families covered", covered),
        ("generic (no vendor format)", lambda f: f in GENERIC),
    ):
        idx = [i for i, (f, _, _) in enumerate(notes) if keep(f)]
        print(
            f"| **{label}** | {len(idx)} | **{pct(*rate(new[i] for i in idx))}** | {baselines.cells(olds, idx)} |"
        )
    for template in dict.fromkeys(t for _, t, _ in notes):
        idx = [i for i, (_, t, _) in enumerate(notes) if t == template]
        print(
            f"| {template} | {len(idx)} | {pct(*rate(new[i] for i in idx))} | {baselines.cells(olds, idx)} |"
        )
    print()


def _vendor_families() -> Callable[[str], bool]:
    """Coverage of a TruffleHog detector. Its folder names a vendor and often a product or
    credential type after it (``azure_entra``, ``githuboauth2``, ``newreliclicensekey``), so
    a detector is covered when the benchmark's rule covers its folder name, or when the name
    begins with a vendor the rule set or a named kind names: the first word of the rule or
    kind (4 characters or more, so that ``new`` or ``age`` stands for no vendor) or its
    first two words joined (``new-relic`` -> ``newrelic``)."""
    from contextfs.gate.secrets_rules import kind_of, load

    covered = _covered_families()
    names = [
        kind_of(m["id"]).removeprefix("rule ") for m in load().rules.metadata() if m["visible"]
    ]
    vendors = set()
    for name in [*names, *KINDS]:
        words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
        if words and words[0] not in GENERIC:
            vendors |= {words[0]} if len(words[0]) >= 4 else set()
            vendors |= {"".join(words[:2])} if len(words) > 1 else set()

    def vendor(family: str) -> bool:
        key = re.sub(r"[^a-z0-9]", "", family.lower())
        return covered(family) or (key not in GENERIC and any(key.startswith(v) for v in vendors))

    return vendor


def trufflehog(folder: Path, baselines: Baselines) -> None:
    """TruffleHog's detector tests: each positive entry's input as written, one note each,
    kept when one of the secrets it expects is not an evident placeholder (inputs that
    repeat within a detector counted once). Their expected secrets are often several parts
    joined (id + secret + host), which no one assigns to a name, so there is no "assigned"
    table for this corpus."""
    cases, unresolved = detector_cases(folder)
    items = list(
        dict.fromkeys(
            (c.family, c.text) for c in cases if any(not evident_placeholder(s) for s in c.secrets)
        )
    )
    as_written(
        "TruffleHog detector tests",
        items,
        baselines,
        _vendor_families(),
        f"{len(cases)} positive test entries ({unresolved} more not built from literals, left out)",
        glued((c.family, c.text, c.secrets) for c in cases),
    )
    print()


def annotated(folders: dict[str, Path], baselines: Baselines) -> None:
    """Semgrep's and secretlint's rule tests (:mod:`secret_corpora_annotated`): each positive
    of a credential rule whose secret is not an evident placeholder, as written (inputs that
    repeat within a family counted once). Coverage as for TruffleHog's detectors, whose
    names are likewise a vendor and then a product (``aws-secret-access-key``)."""
    readers = {"semgrep": semgrep_cases, "secretlint": secretlint_cases}
    cases, left_out = [], 0
    for source, folder in folders.items():
        found, missing = readers[source](folder)
        cases += found
        left_out += missing
    credential = [c for c in cases if c.credential]
    kept = {
        (c.family, c.text): c.source
        for c in credential
        if any(not evident_placeholder(s) for s in c.secrets)
    }
    vendor = _vendor_families()
    new = as_written(
        " and ".join(f"{s.capitalize()}'s rule tests" for s in folders),
        list(kept),
        baselines,
        vendor,
        f"{len(cases) + left_out} positives ({len(credential)} of credential rules; "
        f"{left_out} with no value to judge, left out)",
        glued((c.family, c.text, c.secrets) for c in credential),
    )
    for source in folders:
        idx = [i for i, (key, s) in enumerate(kept.items()) if s == source and vendor(key[0])]
        print(f"\n{source}, vendor families covered: {pct(*rate(new[i] for i in idx))}")
    print()


def scanner_tests(
    title: str,
    read: Callable[[Path], tuple[list[AnnotatedCase], int]],
    folder: Path,
    baselines: Baselines,
    quick: bool,
) -> None:
    """Trivy's or Whispers' tests (:mod:`secret_corpora_scanners`): each positive of a
    credential rule whose secret is not an evident placeholder, as written (inputs that
    repeat within a family counted once), then those secrets under a credential-like name
    (values one line of configuration can carry: no space, quote or backslash). Coverage
    as for the fourth corpus."""
    cases, left_out = read(folder)
    credential = [c for c in cases if c.credential]
    realistic = [c for c in credential if any(not evident_placeholder(s) for s in c.secrets)]
    vendor = _vendor_families()
    as_written(
        title,
        list(dict.fromkeys((c.family, c.text) for c in realistic)),
        baselines,
        vendor,
        f"{len(cases) + left_out} positives ({len(credential)} of credential rules; "
        f"{left_out} not readable or with no value to judge, left out)",
        glued((c.family, c.text, c.secrets) for c in realistic),
    )
    values: dict[str, str] = {}
    for c in realistic:
        for value in c.secrets:
            if not evident_placeholder(value) and not re.search(r"[\s'\"\\`]", value):
                values.setdefault(value, c.family)
    assigned(values, baselines, vendor, quick)


def leaky_repo(folder: Path, baselines: Baselines) -> None:
    """Leaky Repo's files (:mod:`secret_corpora_leaky`): a file is found when writing it is
    refused, under its own name and pasted into a note; the missed files are listed."""
    files, unreadable = leaky_files(folder)
    print(
        f"### Leaky Repo: {len(files)} files with a risk line"
        f" ({unreadable} not UTF-8 text, left out)\n"
    )
    print(f"| files refused | files | this scanner | {baselines.header()} |")
    print(f"|---|---:|---:|{baselines.rule()}|")
    missed: dict[str, list[str]] = {}
    for reading, where in (
        ("under its own name", "notes/{}"),
        ("pasted into a note", "notes/n.md"),
    ):
        texts = [(f.text, where.format(f.path)) for f in files]
        new, olds = flags(texts), baselines.flags(texts)
        for kind in (LEAKY_CREDENTIALS, LEAKY_HASHES):
            idx = [i for i, f in enumerate(files) if f.kind == kind]
            print(
                f"| {kind}, {reading} | {len(idx)} | {pct(*rate(new[i] for i in idx))} | "
                f"{baselines.cells(olds, idx)} |"
            )
            missed[f"{kind}, {reading}"] = [files[i].path for i in idx if not new[i]]
    for label, paths in missed.items():
        print(f"\nMissed ({label}): {', '.join(paths) or '-'}")
    print()


def veles_apart(folder: Path, baselines: Baselines) -> None:
    """Veles' covered families split by where the catalogue's rule for them comes from: the
    catalogue bundles rules taken from Veles' own detectors, whose tests these are."""
    from contextfs.gate.secrets_rules import load

    sourced = [
        re.sub(r"[^a-z0-9]", "", m["id"].split("/", 1)[1].lower())
        for m in load().rules.metadata()
        if m["id"].startswith("veles.")
    ]
    root = folder / "veles" / "secrets" if (folder / "veles" / "secrets").is_dir() else folder

    def from_veles(family: str) -> bool:
        # a rule belongs to the detector folder it is named after, or to one of its parts
        # (`slackappleveltoken` to `slacktoken`, `bitbucketcredentials` to `gitbasicauth/bitbucket`)
        stems = {re.sub(r"[^a-z0-9]", "", family.lower())[:5]} | {
            re.sub(r"[^a-z0-9]", "", p.stem.lower())
            for p in (root / family).iterdir()
            if p.is_dir()
        }
        return any(rule.startswith(stem) for rule in sourced for stem in stems if len(stem) >= 3)

    vendor = _vendor_families()
    cases, _ = veles_cases(folder)
    realistic = [
        c for c in cases if vendor(c.family) and any(not evident_placeholder(s) for s in c.secrets)
    ]
    items = list(dict.fromkeys((c.family, c.text) for c in realistic))
    stuck = glued((c.family, c.text, c.secrets) for c in realistic)
    texts = [(text, "notes/n.md") for _, text in items]
    new, olds = flags(texts), baselines.flags(texts)
    print(f"| covered families, as written | examples | this scanner | {baselines.header()} |")
    print(f"|---|---:|---:|{baselines.rule()}|")
    for label, keep in (
        ("rule not taken from Veles", lambda f: not from_veles(f)),
        ("rule taken from Veles", from_veles),
    ):
        families = {f for f, _ in items if keep(f)}
        idx = [i for i, (f, _) in enumerate(items) if f in families]
        apart = [i for i in idx if items[i] not in stuck]
        for what, rows in (("", idx), (", secret apart from other text", apart)):
            print(
                f"| {label} ({len(families)} families){what} | {len(rows)} | "
                f"{pct(*rate(new[i] for i in rows))} | {baselines.cells(olds, rows)} |"
            )
    print()


# -- 2. generated secrets ------------------------------------------------------------------


def generated(baselines: Baselines, examples: int) -> None:
    texts: Texts = []
    for kind, make in SECRET_KINDS.items():
        for context_name, context in CONTEXTS.items():
            if context_name in NOT_EXPECTED.get(kind, set()):
                continue
            for seed in range(examples):
                rng = random.Random(f"bench/{kind}/{context_name}/{seed}")
                texts.append((context(make(rng), rng), "notes/n.md"))
    print(
        f"| generated secrets ({len(SECRET_KINDS)} kinds x {len(CONTEXTS)} contexts) | {len(texts)} | "
        f"{pct(*rate(flags(texts)))} | {baselines.cells(baselines.flags(texts), list(range(len(texts))))} |\n"
    )


# -- 3. false positives ----------------------------------------------------------------------


def locomo_turns(folder: Path) -> list[str]:
    turns = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        for key, session in data.items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [t["text"] for t in session if isinstance(t, dict) and t.get("text")]
    return turns


def false_positives(
    baselines: Baselines, notes: int, locomo: Path, sonar: str | None, credsweeper: str | None
) -> None:
    corpora: dict[str, Texts] = {
        "sample-context": [
            (p.read_text("utf-8"), p.relative_to(REPO).as_posix())
            for p in sorted((REPO / "sample-context").rglob("*.md"))
        ],
        "docs (README, docs/*.md)": [
            (p.read_text("utf-8"), "docs/" + p.name)
            for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        ],
        "generated notes": [
            (ordinary_note(random.Random(f"bench/ordinary/{i}")), "memory/n.md")
            for i in range(notes)
        ],
    }
    if sonar:
        corpora["Sonar's negative examples (no secret of their rule)"] = [
            (n.text, "notes/n.md") for n in sonar_cases(Path(sonar))[2]
        ]
    if credsweeper:
        corpora["CredSweeper's samples it reports nothing in"] = [
            (text, f"notes/{name}") for text, name in credsweeper_negatives(Path(credsweeper))
        ]
    turns = locomo_turns(locomo)
    if turns:
        corpora["LoCoMo turns"] = [(t, "memory/recall/turn.md") for t in turns]
    else:
        print(
            f"(no LoCoMo data in {locomo}: pass --locomo; from snap-research/locomo, data/locomo10.zip)\n"
        )
    print(f"| corpus | texts | flagged by this scanner | {baselines.header()} | kinds flagged |")
    print(f"|---|---:|---:|{baselines.rule()}|---|")
    for name, texts in corpora.items():
        kinds: Counter[str] = Counter()
        flagged = 0
        for text, path in texts:
            found = scan(text, path=path)
            flagged += bool(found)
            kinds.update(f.kind for f in found)
        olds = " | ".join(pct(sum(old), len(texts)) for old in baselines.flags(texts))
        shown = ", ".join(f"{k} x{n}" for k, n in kinds.most_common()) or "-"
        print(f"| {name} | {len(texts)} | {pct(flagged, len(texts))} | {olds} | {shown} |")
    print()


# -- 4. cost -----------------------------------------------------------------------------------


def _mean_ms(fn: Callable[[], object], repeat: int) -> float:
    """The mean of ``repeat`` runs, measured as the previous scanner's worker measures it."""
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1000


def cost(baselines: Baselines, repeat: int) -> None:
    sample = "\n".join(
        p.read_text("utf-8") for p in sorted((REPO / "sample-context").rglob("*.md"))
    )
    rng = random.Random("bench/cost")
    generated = ""
    while len(generated) < 1_100_000:
        generated += ordinary_note(rng) + "\n"
    scan("warm up")
    columns = " | ".join(f"at {b.ref} (mean, ratio)" for b in baselines)
    print(f"| text | this scanner (mean) | {columns} |")
    print(f"|---|---:|{baselines.rule()}|")
    for name, text, n in (
        ("7 KB note (sample-context)", sample[:7000], repeat * 20),
        ("7 KB note (generated)", generated[:7000], repeat * 20),
        ("1 MB file (generated)", generated[:1_000_000], repeat),
    ):
        new = _mean_ms(lambda text=text: scan(text, path="notes/n.md"), n)
        olds = [b.scan_ms(text, n) for b in baselines]
        cells = " | ".join(f"{old:.2f} ms, {new / old:.2f}x" for old in olds)
        print(f"| {name} | {new:.2f} ms | {cells} |")
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from contextfs.gate.secrets import scan; scan('x')"], check=True
    )
    print(
        f"\nFirst scan in a fresh process (imports and rule set load, cache warm): "
        f"{time.perf_counter() - start:.2f} s including interpreter start.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer texts and repeats")
    # Each corpus: its option, the environment variable that can give it, and what to pass.
    for option, variable, help_text in (
        (
            "noseyparker",
            "CONTEXTFS_NOSEYPARKER_RULES",
            "Nosey Parker's rules folder (default: the sample in tests/data/secret_corpus)",
        ),
        (
            "kingfisher",
            "CONTEXTFS_KINGFISHER_RULES",
            "Kingfisher's earlier data/rules folder (skipped without it)",
        ),
        (
            "trufflehog",
            "CONTEXTFS_TRUFFLEHOG",
            "a checkout of trufflesecurity/trufflehog, for its detector tests (skipped without it)",
        ),
        (
            "semgrep",
            "CONTEXTFS_SEMGREP_RULES",
            "a checkout of semgrep/semgrep-rules, for its secrets rules' tests (skipped without it)",
        ),
        (
            "secretlint",
            "CONTEXTFS_SECRETLINT",
            "a checkout of secretlint/secretlint, for its rules' snapshots (skipped without it)",
        ),
        (
            "trivy",
            "CONTEXTFS_TRIVY",
            "a checkout of aquasecurity/trivy, for its secret scanner's tests (skipped without it)",
        ),
        (
            "whispers",
            "CONTEXTFS_WHISPERS",
            "a checkout of Skyscanner/whispers, for its test fixtures (skipped without it)",
        ),
        (
            "sonar",
            "CONTEXTFS_SONAR",
            "a checkout of SonarSource/sonar-text at da21f3d7, for its rules' examples (skipped without it)",
        ),
        (
            "kics",
            "CONTEXTFS_KICS",
            "a checkout of Checkmarx/kics at 4186346b, for its secrets query's tests (skipped without it)",
        ),
        (
            "ripsecrets",
            "CONTEXTFS_RIPSECRETS",
            "a checkout of sirwart/ripsecrets, for its test inputs (skipped without it)",
        ),
        (
            "veles",
            "CONTEXTFS_VELES",
            "a checkout of google/osv-scalibr, for Veles' detector tests (skipped without it)",
        ),
        (
            "credsweeper",
            "CONTEXTFS_CREDSWEEPER",
            "a checkout of Samsung/CredSweeper, for its test samples (skipped without it)",
        ),
        (
            "leaky-repo",
            "CONTEXTFS_LEAKY_REPO",
            "a checkout of Plazmaz/leaky-repo, for its leaked files (skipped without it)",
        ),
        (
            "github-patterns",
            "CONTEXTFS_GITHUB_PATTERNS",
            "a checkout of advanced-security/secret-scanning-custom-patterns (skipped without it)",
        ),
    ):
        parser.add_argument(f"--{option}", default=os.environ.get(variable), help=help_text)
    parser.add_argument(
        "--locomo", default=str(DEFAULT_LOCOMO), help="folder of LoCoMo's JSON files"
    )
    parser.add_argument(
        "--baseline-ref",
        action="append",
        help=f"git ref of a previous scanner, one column each (default {DEFAULT_BASELINE})",
    )
    args = parser.parse_args()
    quick = args.quick
    refs = list(dict.fromkeys(args.baseline_ref or [DEFAULT_BASELINE]))
    print(f"# Secret scanner benchmark, {datetime.date.today().isoformat()}")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"previous scanners: contextfs at {', '.join(refs)}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        baselines = Baselines(Baseline(ref, Path(tmp)) for ref in refs)
        try:
            print("## 1. Public corpora (not tuned on)\n")
            corpus(
                "Nosey Parker rules" + ("" if args.noseyparker else " (committed sample)"),
                Path(args.noseyparker) if args.noseyparker else SAMPLE,
                baselines,
                quick,
            )
            if args.kingfisher:
                corpus("Kingfisher's earlier YAML rules", Path(args.kingfisher), baselines, quick)
            else:
                print(
                    "(Kingfisher's earlier rules skipped: pass --kingfisher DIR, data/rules of mongodb/kingfisher)\n"
                )
            if args.trufflehog:
                trufflehog(Path(args.trufflehog), baselines)
            else:
                print(
                    "(TruffleHog's detector tests skipped: pass --trufflehog DIR, a checkout of trufflesecurity/trufflehog)\n"
                )
            folders = {
                source: Path(folder)
                for source, folder in (("semgrep", args.semgrep), ("secretlint", args.secretlint))
                if folder
            }
            if folders:
                annotated(folders, baselines)
            else:
                print(
                    "(Semgrep's and secretlint's rule tests skipped: pass --semgrep DIR and "
                    "--secretlint DIR, checkouts of semgrep/semgrep-rules and secretlint/secretlint)\n"
                )
            for title, folder, read, skipped in (
                (
                    "Trivy's secret scanner tests",
                    args.trivy,
                    trivy_cases,
                    "--trivy DIR, a checkout of aquasecurity/trivy",
                ),
                (
                    "Whispers' fixtures",
                    args.whispers,
                    whispers_cases,
                    "--whispers DIR, a checkout of Skyscanner/whispers",
                ),
                (
                    "Sonar's secrets rules' examples",
                    args.sonar,
                    lambda folder: sonar_cases(folder)[:2],
                    "--sonar DIR, a checkout of SonarSource/sonar-text at da21f3d7",
                ),
                (
                    "KICS's secrets query's tests",
                    args.kics,
                    kics_cases,
                    "--kics DIR, a checkout of Checkmarx/kics at 4186346b",
                ),
                (
                    "ripsecrets' test inputs",
                    args.ripsecrets,
                    ripsecrets_cases,
                    "--ripsecrets DIR, a checkout of sirwart/ripsecrets",
                ),
                (
                    "Veles' detector tests",
                    args.veles,
                    veles_cases,
                    "--veles DIR, a checkout of google/osv-scalibr",
                ),
                (
                    "CredSweeper's test samples",
                    args.credsweeper,
                    credsweeper_cases,
                    "--credsweeper DIR, a checkout of Samsung/CredSweeper",
                ),
                (
                    "GitHub's custom secret patterns",
                    args.github_patterns,
                    github_pattern_cases,
                    "--github-patterns DIR, a checkout of "
                    "advanced-security/secret-scanning-custom-patterns",
                ),
            ):
                if folder:
                    scanner_tests(title, read, Path(folder), baselines, quick)
                else:
                    print(f"({title} skipped: pass {skipped})\n")
            if args.veles:
                veles_apart(Path(args.veles), baselines)
            if args.leaky_repo:
                leaky_repo(Path(args.leaky_repo), baselines)
            else:
                print(
                    "(Leaky Repo skipped: pass --leaky-repo DIR, a checkout of Plazmaz/leaky-repo)\n"
                )
            print("## 2. Generated secrets\n")
            print(f"| corpus | texts | this scanner | {baselines.header()} |")
            print(f"|---|---:|---:|{baselines.rule()}|")
            generated(baselines, 1 if quick else 4)
            print("## 3. False positives (texts flagged; none holds a secret)\n")
            false_positives(
                baselines, 200 if quick else 1000, Path(args.locomo), args.sonar, args.credsweeper
            )
            print("## 4. Cost per scan\n")
            cost(baselines, 3 if quick else 10)
        finally:
            for baseline in baselines:
                baseline.close()


if __name__ == "__main__":
    main()
