"""Topics on a real root: isolation of boot contexts, switch/spawn/close, state, decisions, routing."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from helpers import assert_clean, commit_count, git

from contextfs import ConfigError, ContextManager, TopicError
from contextfs.scopes.topics import Topics, WhereAreWe, parse_decisions

DISTINCT = {
    "billing-migration": "INV-2026-008841",
    "k8s-cost-cuts": "tw-spot-graviton-burst",
    "customer-acme-onboarding": "Marisol Quintero-Hale",
}


@pytest.fixture
def sample(sample_root: Path) -> ContextManager:
    manager = ContextManager(sample_root, actor="agent:test", index=False)
    yield manager
    manager.close()


@pytest.fixture
def topics(sample: ContextManager) -> Topics:
    return Topics(sample)


@pytest.fixture(scope="module")
def read_only_topics(tmp_path_factory: pytest.TempPathFactory) -> Topics:
    """One sample root shared by tests that only read (detection, boot views)."""
    import shutil

    from helpers import SAMPLE

    root = tmp_path_factory.mktemp("ro") / "sample"
    shutil.copytree(SAMPLE, root)
    manager = ContextManager(root, actor="agent:test", index=False)
    yield Topics(manager)
    manager.close()


def _last_commit(root: Path) -> tuple[str, str]:
    subject = git(root, "log", "-1", "--format=%s").strip()
    body = git(root, "log", "-1", "--format=%B")
    return subject, body


# ---------------------------------------------------------------- isolation
@pytest.mark.parametrize("target", sorted(DISTINCT))
def test_boot_context_never_contains_another_topics_facts(topics: Topics, target: str) -> None:
    view = topics.switch(target, budget=20_000)
    assert DISTINCT[target] in view.text  # its own fact is there (big budget: nothing degraded)
    for other, fact in DISTINCT.items():
        if other != target:
            assert fact not in view.text, f"{fact} from {other} leaked into {target}"
            assert not any(i.path.startswith(f"topics/{other}/") for i in view.items)
    # only the target folder, the shared layer and the synthetic index are in the view
    for item in view.items:
        assert item.path.startswith((f"topics/{target}/", "memory/")) or item.path == "topics/index"


@pytest.mark.parametrize("budget", [600, 1500, 3000, 6000])
def test_isolation_holds_at_every_budget(read_only_topics: Topics, budget: int) -> None:
    for target in DISTINCT:
        view = read_only_topics.boot(target, budget=budget)
        assert view.tokens <= budget
        for other, fact in DISTINCT.items():
            if other != target:
                assert fact not in view.text


def test_boot_orders_state_first_and_carries_decisions_exchanges_facts_index(
    topics: Topics,
) -> None:
    topics.record(
        "Is INV-2026-008841 fixed?", "Not yet; day vs second proration.", topic="billing-migration"
    )
    view = topics.switch("billing-migration", budget=20_000)
    topic_paths = [i.path for i in view.items if not i.pinned]
    assert topic_paths[0] == "topics/billing-migration/where-are-we.md"
    assert "topics/billing-migration/decisions.md" in topic_paths
    assert "topics/billing-migration/exchanges.jsonl" in topic_paths
    assert "memory/facts.md" in topic_paths and "topics/index" in topic_paths
    assert "because: The December change freeze" in view.text  # decision reasons
    assert "day vs second proration" in view.text  # recent exchange
    # the index lists other topics by title/summary only
    assert "k8s-cost-cuts" in view.text and "Kubernetes cost reduction" in view.text


def test_shared_config_may_not_reach_into_topics(sample_root: Path) -> None:
    cfg = sample_root / ".contextfs" / "config.toml"
    cfg.parent.mkdir(exist_ok=True)
    cfg.write_text('[topics]\nshared = ["topics/*/where-are-we.md"]\n')
    ctx = ContextManager(sample_root, index=False)
    with pytest.raises(ConfigError, match=r"\[topics\] shared entry .* leak"):
        Topics(ctx)


# ---------------------------------------------------------------- switch
def test_switch_pages_out_saves_and_commits_once(
    topics: Topics, sample: ContextManager, caplog
) -> None:
    root = sample.root
    before = commit_count(root)
    assert topics.active().name == "customer-acme-onboarding"
    with caplog.at_level(logging.INFO, logger="contextfs.scopes.topics"):
        topics.switch("billing-migration")
    assert commit_count(root) == before + 1
    subject, body = _last_commit(root)
    assert subject == "topic-switch: customer-acme-onboarding -> billing-migration"
    assert "Contextfs-Topic: billing-migration" in body
    assert "Contextfs-Op: topic-switch" in body
    acme = sample.get("topics/customer-acme-onboarding/topic.md").metadata
    billing = sample.get("topics/billing-migration/topic.md").metadata
    # Which topic is active is this machine's own state; the shared files both say paged.
    assert acme["status"] == "paged" and billing["status"] == "paged"
    assert topics.active().name == "billing-migration"
    assert [t.name for t in topics.list() if t.status == "active"] == ["billing-migration"]
    assert acme["last_active"] > "2026-11-10T15:45:00Z"
    assert "topic switch: customer-acme-onboarding -> billing-migration" in caplog.text
    # git log of the topic folder is its audit trail
    log = git(root, "log", "--format=%s", "--", "topics/billing-migration")
    assert log.splitlines()[0] == subject
    assert_clean(root)


def test_switch_writes_active_vocabulary(topics: Topics, sample: ContextManager) -> None:
    topics.switch("billing-migration")
    vocab = sample.parts.state.file("active-vocabulary.txt").read_text()
    assert "proration" in vocab and "Graviton" not in vocab
    topics.switch("k8s-cost-cuts")
    vocab = sample.parts.state.file("active-vocabulary.txt").read_text()
    assert "Graviton" in vocab and "proration" not in vocab
    # git-ignored derived state
    assert git(sample.root, "status", "--porcelain").strip() == ""
    topics.close("k8s-cost-cuts")
    assert sample.parts.state.file("active-vocabulary.txt").read_text() == ""


def test_vocabulary_merges_frontmatter_and_key_facts(topics: Topics) -> None:
    topics.where.append(
        "billing-migration",
        "Key Facts",
        'Whisper prompt: "Chargebee, acct_tidewater_eu, proration"',
    )
    terms = topics.vocabulary.of("billing-migration")
    assert terms[0] == "proration" and "Chargebee" in terms and "acct_tidewater_eu" in terms
    assert [t.casefold() for t in terms].count("proration") == 1


def test_unknown_topic_is_a_topic_error_with_a_fix(topics: Topics) -> None:
    with pytest.raises(TopicError, match="no topic named 'nope'.*create it"):
        topics.switch("nope")


def test_get_resolves_titles_and_slugs(topics: Topics) -> None:
    assert topics.get("Kubernetes cost reduction").name == "k8s-cost-cuts"
    assert topics.get("Billing Migration").name == "billing-migration"


# ---------------------------------------------------------------- create / spawn / close
def test_create_writes_four_plain_files_in_one_commit(ctx: ContextManager) -> None:
    topics = Topics(ctx)
    before = commit_count(ctx.root)
    t = topics.create(
        "Family logistics",
        "School runs and holidays; relevant when the family calendar comes up",
        summary="Two kids, two schools. Holidays booked for August.",
        vocabulary=["rota"],
    )
    assert commit_count(ctx.root) == before + 1
    folder = ctx.root / "topics" / "family-logistics"
    assert sorted(p.name for p in folder.iterdir()) == [
        "decisions.md",
        "exchanges.jsonl",
        "topic.md",
        "where-are-we.md",
    ]
    meta = ctx.get("topics/family-logistics/topic.md").metadata
    assert meta["name"] == "family-logistics" and meta["status"] == "paged" and meta["open"] is True
    assert meta["summary"] == "Two kids, two schools."
    assert t.body.startswith("Two kids")
    where = (folder / "where-are-we.md").read_text()
    for section in (
        "Key Facts",
        "In Progress",
        "Pending Notifications",
        "Recently Completed",
        "Next Actions",
    ):
        assert f"## {section}" in where
    with pytest.raises(TopicError, match="already exists"):
        topics.create("Family logistics")
    with pytest.raises(TopicError, match="not valid"):
        topics.create("x", name="../escape")
    assert_clean(ctx.root)


def test_spawn_moves_exchanges_and_switches(topics: Topics, sample: ContextManager) -> None:
    topics.switch("customer-acme-onboarding")
    for i in range(1, 7):
        topics.record(f"question {i}", f"answer {i}")
    before = commit_count(sample.root)
    done = topics.spawn("GPU troubleshooting", from_line=4)
    assert commit_count(sample.root) == before + 1
    assert done.moved == 3 and done.topic.name == "gpu-troubleshooting"
    assert topics.active().name == "gpu-troubleshooting"
    assert sample.get("topics/customer-acme-onboarding/topic.md").metadata["status"] == "paged"
    old = [e.user for e in topics.exchanges.of("customer-acme-onboarding")]
    new = [e.user for e in topics.exchanges.of("gpu-troubleshooting")]
    assert old == ["question 1", "question 2", "question 3"]
    assert new == ["question 4", "question 5", "question 6"]
    # every line is valid JSON, no frontmatter in a .jsonl file
    for line in (
        (sample.root / "topics/gpu-troubleshooting/exchanges.jsonl").read_text().splitlines()
    ):
        json.loads(line)
    assert "question 4" in done.view.text and "question 1" not in done.view.text
    assert "Marisol" not in done.view.text
    subject, body = _last_commit(sample.root)
    assert subject == "topic-spawn: customer-acme-onboarding -> gpu-troubleshooting"
    assert "Contextfs-Topic: gpu-troubleshooting" in body
    with pytest.raises(TopicError, match="outside"):
        topics.spawn("Again", from_line=99)
    assert_clean(sample.root)


def test_spawn_without_active_topic_says_what_to_do(ctx: ContextManager) -> None:
    with pytest.raises(TopicError, match="no active topic"):
        Topics(ctx).spawn("x", 1)


def test_close_archive_reopen(topics: Topics, sample: ContextManager, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="contextfs.scopes.topics"):
        t = topics.close("billing-migration")
    assert t.status == "closed" and t.open is False
    assert "topic close: billing-migration" in caplog.text
    assert "Contextfs-Topic: billing-migration" in _last_commit(sample.root)[1]
    topics.archive("billing-migration")
    assert "billing-migration" not in topics.block.render()
    assert "1 archived topic" in topics.render_index()
    assert topics.detect("proration mismatch on the invoice and dunning") is None
    t = topics.reopen("billing-migration")
    assert t.status == "paged" and t.open


# ---------------------------------------------------------------- state
def test_state_append_complete_finalize_clear(topics: Topics, sample: ContextManager) -> None:
    rel = "topics/billing-migration/where-are-we.md"
    topics.where.append("billing-migration", "in progress", "- [ ] Write the cutover runbook draft")
    assert "- [ ] Write the cutover runbook draft" in sample.read(rel)
    done = topics.where.complete("billing-migration", "cutover runbook draft")
    assert done == "- [x] Write the cutover runbook draft"
    state = WhereAreWe.parse(sample.read(rel))
    assert not any("runbook draft" in i for i in state.section("In Progress"))
    assert state.section("Recently Completed")[-1] == done
    with pytest.raises(TopicError, match="no item in 'In Progress'"):
        topics.where.complete("billing-migration", "nothing like this")
    # the other sections survive byte-for-byte
    assert "INV-2026-008841 (Growth to Enterprise upgrade on\n  2026-10-17)" in sample.read(rel)
    for i in range(12):
        topics.where.append("billing-migration", "Recently Completed", f"old item {i}")
    dropped = topics.where.finalize("billing-migration", keep=5)
    assert (
        len(dropped) == 10
        and len(topics.where.state("billing-migration").section("Recently Completed")) == 5
    )
    cleared = topics.where.clear_notifications("billing-migration")
    assert len(cleared) == 1 and "Ines Albrecht" in cleared[0]
    assert topics.where.state("billing-migration").section("Pending Notifications") == []
    log = git(sample.root, "log", "--format=%s", "--", rel).splitlines()
    assert log[:3] == [
        "topic-clear-notifications: billing-migration",
        "topic-finalize: billing-migration",
        "topic-state: billing-migration",
    ]


# ---------------------------------------------------------------- decisions
def test_decide_chain_and_supersede(topics: Topics, sample: ContextManager) -> None:
    name = "billing-migration"
    d5 = topics.decisions.decide(
        name,
        "Accept second-level proration",
        reason="Finance accepts rounding within EUR 1",
        depends_on=["D4", "D3"],
    )
    assert d5 == "D5"
    d6 = topics.decisions.decide(
        name,
        "Round proration to the day via billing cycle anchor",
        reason="Finance changed its mind",
        supersedes="D5",
        depends_on="D4",
    )
    assert d6 == "D6"
    _, items = parse_decisions(sample.read(f"topics/{name}/decisions.md"))
    by_id = {d.id: d for d in items}
    assert by_id["D5"].superseded_by == "D6"  # kept, marked, never removed
    assert by_id["D6"].supersedes == "D5" and by_id["D6"].depends_on == ["D4"]
    chain = topics.decisions.chain(name, "D5")
    order = [
        line.split(":")[0].strip("└─► ").strip()
        for line in chain.splitlines()[1:]
        if ":" in line and "because" not in line
    ]
    assert order.index("D1") < order.index("D2") < order.index("D4") < order.index("D5")
    assert order.index("D3") < order.index("D5")
    assert "because: Native metered pricing" in chain and "SUPERSEDED by D6" in chain
    full = topics.decisions.render(name)
    assert "D5" in full and "SUPERSEDED by D6" in full
    with pytest.raises(TopicError, match="already superseded by D6"):
        topics.decisions.decide(name, "x", supersedes="D5")
    with pytest.raises(TopicError, match="no decision 'D99' to depend on"):
        topics.decisions.decide(name, "x", depends_on=["D99"])
    with pytest.raises(TopicError, match="no decision 'D42'"):
        topics.decisions.chain(name, "D42")
    subject, body = _last_commit(sample.root)
    assert (
        subject == "topic-decide: billing-migration D6"
        and "Contextfs-Topic: billing-migration" in body
    )


def test_decisions_file_round_trips_hand_edits(topics: Topics, sample: ContextManager) -> None:
    rel = "topics/k8s-cost-cuts/decisions.md"
    before = sample.read(rel)
    topics.decisions.decide(
        "k8s-cost-cuts", "Review spend monthly", reason="Drift creeps back", depends_on=["D5"]
    )
    after = sample.read(rel)
    assert after.startswith(before.rstrip("\n"))  # existing decisions untouched
    assert "## D6: Review spend monthly" in after


# ---------------------------------------------------------------- routing
def test_route_to_paged_topic_files_a_notification(topics: Topics, sample: ContextManager) -> None:
    topics.routing.tag_task("billing-migration", "TW-3001")
    before = commit_count(sample.root)
    result = topics.route("[task:TW-3001] reconcile.py now reports per-line differences")
    assert result.action == "filed" and result.topic == "billing-migration" and result.via == "task"
    assert commit_count(sample.root) == before + 1
    pending = topics.where.state("billing-migration").section("Pending Notifications")
    assert any("[task:TW-3001] reconcile.py now reports" in p for p in pending)
    assert "Contextfs-Task: TW-3001" in _last_commit(sample.root)[1]
    # the notification is waiting in the boot context when the user comes back
    assert (
        "reconcile.py now reports per-line differences" in topics.switch("billing-migration").text
    )


def test_route_to_active_topic_hands_it_back_without_writing(
    topics: Topics, sample: ContextManager
) -> None:
    before = commit_count(sample.root)
    result = topics.route("Acme Freight Logistics onboarding: SFTP replay passed", task_id=None)
    assert (
        result.action == "delivered"
        and result.topic == "customer-acme-onboarding"
        and result.via == "keyword"
    )
    assert commit_count(sample.root) == before


def test_route_by_subtask_topic_and_unmatched(topics: Topics, sample: ContextManager) -> None:
    sample.update_metadata("task/subtasks/retry-policy.md", {"topic": "k8s-cost-cuts"})
    result = topics.route("retry policy done", task_id="retry-policy")
    assert result.action == "filed" and result.topic == "k8s-cost-cuts"
    assert any(
        "[task:retry-policy] retry policy done" in p
        for p in topics.where.state("k8s-cost-cuts").section("Pending Notifications")
    )
    nothing = topics.route("the weather in Lisbon is sunny")
    assert (
        nothing.action == "unmatched"
        and nothing.topic is None
        and nothing.text == "the weather in Lisbon is sunny"
    )


# ---------------------------------------------------------------- detection
@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("switch to the biling migraton", "billing-migration"),
        ("what is the proration difference on that invoice?", "billing-migration"),
        ("did the spot interruption rate go up on Graviton nodes?", "k8s-cost-cuts"),
        ("Is the SFTP EDI feed working yet?", "customer-acme-onboarding"),
        ("what did finance say about month-end close?", "billing-migration"),
        ("what is the weather like today?", None),
        ("fix the failing CI build", None),
        ("the plan upgrade for the tenant", None),
    ],
)
def test_detect_is_deterministic(
    read_only_topics: Topics, message: str, expected: str | None
) -> None:
    found = read_only_topics.detect(message)
    assert (found.name if found else None) == expected
    assert read_only_topics.routing.explain(message) == read_only_topics.routing.explain(message)


def test_detect_uses_aliases_first(topics: Topics) -> None:
    topics.create("Family logistics", "School runs", aliases=["kids"])
    found = topics.routing.explain("what about the kids this week")
    assert found.name == "family-logistics" and found.method == "name"
