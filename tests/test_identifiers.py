"""Names, ids and tokens are checked whole: a trailing newline is never accepted.

Python's ``$`` also matches just before a final newline, so ``^[a-z]+$`` accepts
``"alice\\n"``; every check of a whole string anchors with ``\\Z`` instead. A name that got
through that way became a folder LangGraph could not read back, a trailer with a stray
line, a git argument. The guard below keeps new checks from using ``$``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest

from conftest import REPO
from contextfs import ContextFSError
from contextfs.provenance import check_actor, check_token
from contextfs.remote.transport import check_name
from contextfs.scopes.memory.archive import check_tags
from contextfs.scopes.memory.conversation import check_speaker
from contextfs.scopes.rules import check_subtask_id
from contextfs.scopes.topics.files import check_slug
from contextfs.trash import is_entry_id
from contextfs.turns import is_log
from contextfs.versioning.branches import REF_NAME
from contextfs.versioning.gitcmd import check_rev

CHECKS: list[tuple[str, Callable[[str], object], str]] = [
    ("actor", check_actor, "agent:planner"),
    ("session token", lambda v: check_token("session", v), "s-20261130T101500-a1b2c3"),
    ("remote name", lambda v: check_name(v, "remote"), "origin"),
    ("branch name", lambda v: check_name(v, "branch"), "main"),
    ("subtask id", check_subtask_id, "TW-2291"),
    ("topic name", check_slug, "billing-migration"),
    ("revision", check_rev, "HEAD~2"),
]


@pytest.mark.parametrize(("what", "check", "valid"), CHECKS, ids=[c[0] for c in CHECKS])
def test_a_valid_name_with_a_trailing_newline_is_refused(what: str, check: Callable[[str], object],
                                                         valid: str) -> None:
    check(valid)
    with pytest.raises(ContextFSError):
        check(valid + "\n")


def test_checks_that_trim_whitespace_give_back_one_line() -> None:
    assert check_tags(["offer\n"]) == ("offer",) and check_speaker("Caroline\n") == "Caroline"


def test_predicates_say_no_to_a_trailing_newline() -> None:
    assert is_entry_id("20261130T101500Z-a1b2c3") and not is_entry_id("20261130T101500Z-a1b2c3\n")
    assert is_log("sessions/monday.jsonl") and not is_log("sessions/monday.jsonl\n")
    ref = "refs/heads/contextfs/review/s-1"  # a review branch contextfs makes
    assert REF_NAME.match(ref) and not REF_NAME.match(ref + "\n")


def test_the_core_block_label_and_store_names() -> None:
    from contextfs.integrations.store_names import decode, encode_key, encode_label

    assert encode_label("alice") == "alice" and encode_label("alice\n") != "alice\n"
    assert decode(encode_label("alice\n"), key=False) == "alice\n"
    assert encode_key("k\n").startswith("~")


# Patterns anchored at both ends that parse one line of text (a heading, a field, a
# bullet, a fence): there the text holds no newline, so $ and \Z agree.
LINE_PARSERS = {
    ("contextfs/document.py", "_FENCE"), ("contextfs/document.py", "_CLOSE"),
    ("scopes/passages.py", "_HEADING"), ("scopes/tiers.py", "_HEADING"),
    ("scopes/topics/files.py", "_HEADING"), ("scopes/topics/files.py", "_DECISION"),
    ("scopes/topics/files.py", "_FIELD"), ("scopes/memory/buffer.py", "_LINE"),
    ("evolve/entries.py", "_HEADING"), ("evolve/entries.py", "_FIELD"), ("evolve/entries.py", "_BULLET"),
    ("evolve/parsing.py", "_BULLET"), ("evolve/parsing.py", "_NONE"), ("evolve/hygiene.py", "_BECAUSE"),
    ("scopes/topics/vocabulary.py", "_PREFIX"), ("evolve/contradictions.py", "_LABEL"),
}


def test_whole_string_checks_anchor_with_backslash_z() -> None:
    found = []
    for base in ("contextfs", "scopes", "evolve", "integrations"):
        for path in sorted((REPO / base).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                    continue
                call = node.value
                if ast.unparse(call.func) != "re.compile" or not call.args:
                    continue
                pattern = call.args[0]
                flags = " ".join(ast.unparse(a) for a in call.args[1:]) + " ".join(ast.unparse(k) for k in call.keywords)
                if (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str) and pattern.value.endswith("$")
                        and "MULTILINE" not in flags and "re.M" not in flags.split("|")):
                    name = ast.unparse(node.targets[0])
                    if (rel, name) not in LINE_PARSERS:
                        found.append(f"{rel}: {name} ends with $; anchor a whole-string check with \\Z")
    assert found == [], found
