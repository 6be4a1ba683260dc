"""Retrieval as an agent uses it: natural questions, pseudo-titles, passages, conversations in views.

Each test states one behaviour end to end, through the public calls the docs show, on a
real root (git, Whoosh, files).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contextfs import ContextManager, ScopedContext, SearchIndexError
from contextfs.scopes.memory import Memory
from contextfs.scopes.passages import blocks, chunks_of
from contextfs.text.tokens import count_tokens


@pytest.fixture
def root(tmp_path: Path) -> ContextManager:
    ctx = ContextManager(tmp_path / "ctx", actor="agent:test", session="s1")
    yield ctx
    ctx.close()


# ------------------------------------------------------------------ natural questions
NOTES = {
    "notes/group.md": "Caroline went to an LGBTQ support group on 7 May 2023.",
    "notes/csgo.md": "We play CS:GO, a team shooter, on Fridays.",
    "notes/plan.md": "She said the plan was to move the release to June.",
    "notes/meeting.md": "The stand-up is at 10:30; the review at 11:00.",
    "notes/colour.md": "The logo colour is red; the border is blue.",
    "notes/retro.md": "See the notes from the retro before the planning.",
    "notes/lang.md": "The services are written in C++ and C#.",
    "notes/offer.md": "Send an e-mail to sales for 50% off the first year.",
    "notes/android.md": "The Android build has an OR-gate simulator and a note field.",
    "notes/title.md": "A title is the first heading of the note.",
    "notes/path.md": "The path to the config: where is it kept? In the repo root.",
}
_SINGLE_LETTERS = pytest.mark.xfail(
    strict=True, reason="C++ and C# index as the letter c, which is dropped"
)
# (question, what comes back): "first" the top hit, "only" every hit in any order,
# "all" the hits are k notes of the root (a lone wildcard).
NATURAL = [
    ("When did Caroline go to the LGBTQ support group?", "first", {"notes/group.md"}),
    ("What is CS:GO?", "only", {"notes/csgo.md"}),
    ('What did she mean by "the plan?', "only", {"notes/plan.md", "notes/retro.md"}),  # planning
    ("Is it 10:30 or 11:00?", "only", {"notes/meeting.md"}),
    ("colour:red or blue?", "only", {"notes/colour.md"}),
    ("(see the notes", "first", {"notes/retro.md"}),
    ("what about this) then", "only", set()),  # question and stop words only
    ("*", "all", set()),
    ("a)", "only", set()),
    ("who? what? why?", "only", set()),
    pytest.param("C++ vs C#?", "only", {"notes/lang.md"}, marks=_SINGLE_LETTERS),
    ("e-mail: x@y.z, 50% off!", "only", {"notes/offer.md"}),
    ("ANDROID OR-gate NOTE", "first", {"notes/android.md"}),
    ("title: the note", "first", {"notes/title.md"}),
    ("path: where is it", "only", {"notes/path.md"}),
]


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> ContextManager:
    ctx = ContextManager(
        tmp_path_factory.mktemp("natural") / "ctx", actor="agent:test", session="s1"
    )
    for rel, body in NOTES.items():
        ctx.write(rel, body)
    yield ctx
    ctx.close()


@pytest.mark.parametrize(("question", "how", "expected"), NATURAL)
def test_natural_text_finds_what_it_names(
    notes: ContextManager, question: str, how: str, expected: set[str]
) -> None:
    """Punctuation in a question never raises, and the question finds what its words name."""
    found = [h.path for h in notes.search(question)]
    if how == "first":
        assert found and found[0] in expected, found
    elif how == "only":
        assert set(found) == expected and len(found) == len(set(found)), found
    else:
        assert len(found) == min(10, len(NOTES)) and set(found) <= set(NOTES), found


def test_a_question_ranks_as_its_plain_words(root: ContextManager) -> None:
    root.write("notes/group.md", "Caroline went to an LGBTQ support group on 7 May 2023.")
    root.write("notes/other.md", "Support for the group chat ends soon.")
    hits = root.search("When did Caroline go to the LGBTQ support group?")
    assert hits and hits[0].path == "notes/group.md"
    # The trailing '?' is punctuation, not a wildcard: the last word is matched as a word.
    assert [h.path for h in root.search("group?")] == [h.path for h in root.search("group")]


def test_cs_go_is_two_words_not_a_field(root: ContextManager) -> None:
    root.write("games.md", "We played CS:GO all night.")
    assert [h.path for h in root.search("Do you play CS:GO?")] == ["games.md"]


def test_an_unbalanced_quote_is_literal_and_balanced_quotes_are_a_phrase(
    root: ContextManager,
) -> None:
    root.write("a.md", "the dead letter queue drains")
    root.write("b.md", "a letter that is dead")
    assert {h.path for h in root.search('dead "letter')} == {"a.md", "b.md"}
    assert [h.path for h in root.search('"dead letter"')] == ["a.md"]


def test_question_words_do_not_rank(root: ContextManager) -> None:
    root.write("chat.md", "What did you do? How was it? When did you go? What did he say, and how?")
    root.write("paint.md", "Melanie painted a sunrise over the lake last year.")
    hits = root.search("What did Melanie paint?")
    assert hits[0].path == "paint.md"
    assert all(h.path != "chat.md" for h in hits)


def test_a_dangling_operator_names_the_problem(root: ContextManager) -> None:
    root.write("a.md", "foo bar")
    for bad in ("foo AND", "AND foo", "foo OR", "foo NOT", "foo AND OR bar"):
        with pytest.raises(SearchIndexError, match="AND|OR|NOT"):
            root.search(bad)
    # Lower-case operators are words.
    assert root.search("foo and bar")


def test_unambiguous_operators_still_work(root: ContextManager) -> None:
    root.write("k.md", "kafka brokers")
    root.write("p.md", "plant queue")
    root.write("r.md", "redis queue", {"tags": ["adr"]})
    assert [h.path for h in root.search("kafka AND brokers")] == ["k.md"]
    assert {h.path for h in root.search("(plant OR redis) AND queue")} == {"p.md", "r.md"}
    assert [h.path for h in root.search("queue NOT plant")] == ["r.md"]
    assert [h.path for h in root.search("queue tag:adr")] == ["r.md"]
    assert [h.path for h in root.search("kaf*")] == ["k.md"]


# ------------------------------------------------------------------ pseudo-titles
def test_a_note_without_a_title_is_not_ranked_by_its_file_name(root: ContextManager) -> None:
    mem = Memory(root)
    # The first note's file name is a slug of its first words ("mel-good").
    chat = " ".join(f"word{i}" for i in range(40))
    filler = mem.archival_memory_insert(f"Mel: good to see you! {chat}")
    fact = mem.archival_memory_insert("Mel says pottery is good.")
    assert "-mel-good-" in filler.path
    hits = root.search("Mel good", path="memory/archive")
    assert [h.path for h in hits] == [fact.path, filler.path]


# ------------------------------------------------------------------ page-in
def _long_paragraph(sentences: int, fact: str, at: int) -> str:
    body = [
        f"The ledger cargo vessel manifest harbor crane number {i} moves pallets."
        for i in range(sentences)
    ]
    body.insert(at, fact)
    return " ".join(body)


def test_page_in_finds_a_sentence_inside_a_long_paragraph(root: ContextManager) -> None:
    fact = "The Orca importer writes its nightly snapshots to the bucket s3://tw-123-snap."
    root.write("project/design/orca.md", "# Orca design\n\n" + _long_paragraph(60, fact, 31) + "\n")
    view = ScopedContext(root).assemble(
        "project", budget=1000, query="Where does Orca write its snapshots?"
    )
    assert fact in " ".join(view.text.split())
    assert view.tokens <= 1000


def test_page_in_uses_the_budget_the_scope_leaves(root: ContextManager) -> None:
    for i in range(80):
        root.write(
            f"notes/n{i}.md",
            f"# Note {i}\n\nThe harbor crane {i} lifts containers onto the barge at berth {i}.\n",
        )
    view = ScopedContext(root).assemble(
        "project", budget=2000, query="harbor crane containers barge"
    )
    assert view.tokens <= 2000
    assert view.tokens >= 1500, (
        view.tokens
    )  # relevant material exists: the view comes close to the cap


def test_a_query_orders_the_scopes_own_items(root: ContextManager) -> None:
    big = "\n\n".join(
        f"Paragraph {i} about the deployment process and its many steps." for i in range(80)
    )
    root.write("project/README.md", "# Project\n\n" + big)
    root.write(
        "memory/facts.md",
        "# Facts\n\n"
        + big.replace("deployment", "billing")
        + "\n\nThe payroll cutoff is the 25th.",
    )
    view = ScopedContext(root).assemble("project", budget=600, query="payroll cutoff")
    assert "The payroll cutoff is the 25th." in view.text


# ------------------------------------------------------------------ conversations
def test_conversation_turns_are_paged_into_a_view_with_date_and_speaker(
    root: ContextManager,
) -> None:
    mem = Memory(root)
    mem.import_transcript(
        [
            {
                "speaker": "Caroline",
                "text": "I went to a LGBTQ support group yesterday.",
                "time": "2023-05-08T13:56:00Z",
            },
            {
                "speaker": "Melanie",
                "text": "That sounds powerful! I painted a sunrise.",
                "time": "2023-05-08T13:57:00Z",
            },
        ],
        session="s-2023-05-08",
    )
    hits = root.search("When did Caroline go to the support group?")
    assert hits and hits[0].path == "sessions/s-2023-05-08.jsonl"
    assert hits[0].speaker == "Caroline" and hits[0].line == 1
    view = ScopedContext(root).assemble(
        "project", budget=500, query="When did Caroline go to the support group?"
    )
    assert "I went to a LGBTQ support group yesterday." in view.text
    assert "Caroline" in view.text and "2023-05-08" in view.text
    recalled = mem.conversation_search("support group", speakers=["Caroline"])
    assert recalled[0].text == "I went to a LGBTQ support group yesterday."
    assert recalled[0].speaker == "Caroline" and recalled[0].updated.startswith("2023-05-08")


def test_a_turn_label_leaves_out_the_day_the_label_above_it_showed(root: ContextManager) -> None:
    # Each message's label costs tokens a view could spend on messages: within a section the
    # day is shown when it changes, not repeated for every turn of that day.
    mem = Memory(root)
    said = [
        ("Caroline", "The pottery class starts at nine.", "2023-05-08T13:56:00Z"),
        ("Melanie", "Pottery at nine suits me.", "2023-05-08T13:57:00Z"),
        ("Caroline", "Pottery class moved to ten.", "2023-05-09T09:00:00Z"),
        ("Melanie", "Then pottery at ten it is.", "2023-05-09T09:01:00Z"),
    ]
    mem.import_transcript(
        [{"speaker": who, "text": text, "time": when} for who, text, when in said],
        session="s-pottery",
    )
    view = ScopedContext(root).assemble("project", budget=500, query="pottery class")
    assert (
        "[line 1 · 2023-05-08 13:56 · Caroline]\nThe pottery class starts at nine.\n"
        "[line 2 · 13:57 · Melanie]\nPottery at nine suits me.\n"
        "[line 3 · 2023-05-09 09:00 · Caroline]\nPottery class moved to ten.\n"
        "[line 4 · 09:01 · Melanie]\nThen pottery at ten it is."
    ) in view.text


def test_a_label_leaves_out_the_heading_the_label_above_it_showed() -> None:
    body = (
        "# Runbook\n\n## Storage\n\nThe volume is encrypted.\n\nSnapshots run nightly.\n\n"
        "Restores take an hour.\n\n## Network\n\nThe VPC peers with billing.\n"
    )
    chunks = chunks_of(body)
    assert blocks(chunks, [2, 4, 6]) == [
        "[line 5 · Storage]\nThe volume is encrypted.",
        "[…]",
        "[line 9]\nRestores take an hour.",  # still under "Storage", said just above
        "[…]",
        "[line 13 · Network]\nThe VPC peers with billing.",
    ]
    # A heading shown as text says it too.
    assert blocks(chunks, [1, 2])[1] == "[line 5]\nThe volume is encrypted."


def test_make_message_takes_a_time_and_a_speaker(root: ContextManager) -> None:
    mem = Memory(root)
    msg = mem.make_message("user", "hello", speaker="Caroline", time="2023-05-08T13:56:00Z")
    assert msg.time == "2023-05-08T13:56:00Z" and msg.speaker == "Caroline"
    assert msg.render().startswith("Caroline")


# ------------------------------------------------------------------ dedupe
def test_archival_insert_reads_a_bounded_number_of_notes(root: ContextManager) -> None:
    mem = Memory(root)
    with root.transaction("many notes"):
        for i in range(120):
            mem.archival_memory_insert(
                f"Fact number {i}: the crane at berth {i} lifts {i * 3} tons of cargo."
            )
    reads: list[str] = []
    root.parts.add_read_listener(reads.append)
    fresh = Memory(root)  # a new process-like object: no warm in-memory word index
    fresh.archival_memory_insert("The harbor master retires in June.")
    assert len([r for r in reads if r.startswith("memory/archive/")]) <= 12
    again = fresh.archival_memory_insert("The harbour master retires in June!")
    assert (
        again.duplicate is False or again.path
    )  # a spelling variant may or may not be a duplicate
    same = fresh.archival_memory_insert("the harbor master retires in june")
    assert same.duplicate


def test_budget_is_a_hard_cap_for_conversation_views(root: ContextManager) -> None:
    mem = Memory(root)
    turns = [
        {
            "speaker": "A" if i % 2 else "B",
            "text": f"Turn {i} about the crane and the barge.",
            "time": f"2023-05-08T13:{i % 60:02d}:00Z",
        }
        for i in range(200)
    ]
    mem.import_transcript(turns, session="long")
    for budget in (120, 300, 1000):
        view = ScopedContext(root).assemble("project", budget=budget, query="crane barge")
        assert view.tokens <= budget
        assert count_tokens(view.text) == view.tokens
