"""Open/closed topics: open_topic's exact answers, the block, config validation, the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import commit_count, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfs import ConfigError, ContextManager
from contextfs.scopes.cli.topics import topic
from contextfs.scopes.topics import (
    ALREADY_VISIBLE,
    DOES_NOT_EXIST,
    Topics,
    WhereAreWe,
    item_text,
    load_topics_config,
)
from contextfs.text.tokens import get_counter


@pytest.fixture
def sample(sample_root: Path) -> ContextManager:
    manager = ContextManager(sample_root, actor="agent:test", index=False)
    yield manager
    manager.close()


def _config(root: Path, text: str) -> None:
    path = root / ".contextfs" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# ---------------------------------------------------------------- open_topic
def test_open_topic_answers_exactly(sample: ContextManager) -> None:
    topics = Topics(sample)
    assert ALREADY_VISIBLE == "already visible" and DOES_NOT_EXIST == "doesn't exist"
    # billing-migration is open in the block
    assert topics.open_topic("billing-migration") == "already visible"
    assert topics.open_topic("lisa") == "doesn't exist"
    assert topics.open_topic("") == "doesn't exist"
    before = commit_count(sample.root)
    answer = topics.open_topic("k8s-cost-cuts")  # closed: answers with its summary
    assert answer.startswith("In Q3 2026 the EKS compute bill")
    assert commit_count(sample.root) == before + 1  # the open is remembered, committed
    assert topics.block.opened_since_compaction() == ["k8s-cost-cuts"]
    assert topics.open_topic("k8s-cost-cuts") == "already visible"
    assert commit_count(sample.root) == before + 1
    # the compactor resets the memory of opens
    topics.block.mark_compacted()
    assert topics.block.opened_since_compaction() == [] and topics.block.last_compaction()
    assert topics.open_topic("k8s-cost-cuts").startswith("In Q3 2026")
    log = git(sample.root, "log", "--format=%s%n%b", "--", "topics/_state.md")
    assert "topic-open-topic: k8s-cost-cuts" in log and "Contextfs-Topic: k8s-cost-cuts" in log


def test_render_block_sections_and_budget(sample_root: Path) -> None:
    _config(sample_root, "[topics]\nmax_open_tokens = 400\n")
    ctx = ContextManager(sample_root, index=False)
    topics = Topics(ctx)
    topics.block.set_general_summary("Dana and the agent are working on webhook retries.")
    block = topics.block.render()
    assert (
        block.index("## Summary of earlier conversation")
        < block.index("## Open topics")
        < block.index("## Closed topics")
    )
    assert "webhook retries" in block
    assert "- k8s-cost-cuts — Lukas Brenner's effort" in block  # closed: name and cue only
    assert "USD 38,900" not in block  # its summary is not shown
    # two open topics of ~250 tokens each do not both fit 400: the fresher one stays open
    open_part = block[block.index("## Open topics") : block.index("## Closed topics")]
    assert get_counter().count(open_part) <= 400 + 20
    assert "### customer-acme-onboarding" in open_part and "### billing-migration" not in open_part
    assert "- billing-migration — Moving Tidewater" in block
    # "already visible" means visible in the block: billing-migration is not, so it opens
    assert topics.open_topic("billing-migration").startswith("Tidewater bills tenants")
    assert topics.open_topic("customer-acme-onboarding") == "already visible"


def test_compactor_api(sample: ContextManager) -> None:
    topics = Topics(sample)
    t = topics.block.update_summary(
        "k8s-cost-cuts", "Spend is stable at USD 23,600. Review monthly."
    )
    assert t.summary == "Spend is stable at USD 23,600." and t.body.startswith("Spend is stable")
    assert sample.get("topics/k8s-cost-cuts/topic.md").metadata["vocabulary"]  # other keys kept
    topics.set_open("k8s-cost-cuts", True)
    assert topics.get("k8s-cost-cuts").status == "closed" and topics.get("k8s-cost-cuts").open
    assert "### k8s-cost-cuts" in topics.block.render()
    topics.set_open("k8s-cost-cuts", False)
    assert "- k8s-cost-cuts" in topics.block.render()


# ---------------------------------------------------------------- config validation
@pytest.mark.parametrize(
    ("toml", "pattern"),
    [
        (
            "[topics]\nmax_open_tokens = 4000\ncompaction_budget = 8000\n",
            r"max_open_tokens = 4000 is not below half of \[topics\] compaction_budget \(8000 / 2 = 4000\)",
        ),
        (
            "[topics]\n[compaction]\nmax_tokens = 8000\n",
            r"not below half of \[compaction\] max_tokens",
        ),
        ("[topics]\nmax_open_tokens = 0\n", r"\[topics\] max_open_tokens = 0 is not valid"),
        ("[topics]\nmax_open_tokens = 'lots'\n", r"max_open_tokens = 'lots' is not valid"),
        (
            "[topics]\nmax_open_tokens = 30000\ncompaction_budget = 100000\n",
            r"keep it at most 28672",
        ),
        ("[topics]\nmax_opn_tokens = 10\n", r"max_opn_tokens is not a known key"),
        ('[[topics.initial]]\nname = ""\ndescription = "x"\n', r"#1 has an empty name"),
        (
            '[[topics.initial]]\nname = "lisa"\n[[topics.initial]]\nname = "lisa"\n',
            r"'lisa' is used twice",
        ),
        (
            '[[topics.initial]]\nname = "Lisa Smith"\n',
            r"name: topic name 'Lisa Smith' is not valid",
        ),
    ],
)
def test_config_errors_name_the_key_and_the_fix(toml: str, pattern: str) -> None:
    import tomllib

    with pytest.raises(ConfigError, match=pattern):
        load_topics_config(tomllib.loads(toml))


def test_open_initial_topics_must_fit_the_budget() -> None:
    big = "word " * 300
    cfg = {
        "topics": {
            "max_open_tokens": 200,
            "initial": [
                {
                    "name": "mara",
                    "description": "Mara, the player character",
                    "summary": big,
                    "open": True,
                },
            ],
        }
    }
    with pytest.raises(
        ConfigError,
        match=r"open topics' summaries take \d+ tokens, over \[topics\] max_open_tokens = 200",
    ):
        load_topics_config(cfg)
    cfg["topics"]["initial"][0]["open"] = False
    assert load_topics_config(cfg).initial[0].name == "mara"  # closed topics do not count


def test_too_many_initial_topics_for_the_first_compaction() -> None:
    initial = [
        {"name": f"npc-{i}", "description": f"NPC {i}", "summary": "one line"} for i in range(60)
    ]
    with pytest.raises(ConfigError, match="60 topics need about"):
        load_topics_config({"topics": {"initial": initial}})
    assert len(load_topics_config({"topics": {"initial": initial[:40]}}).initial) == 40


def test_create_initial_makes_topics_once(tmp_path: Path) -> None:
    root = tmp_path / "game"
    _config(
        root,
        """
[topics]
[[topics.initial]]
name = "mara"
description = "Mara, the player character"
summary = "Mara is a ferrywoman looking for her sister."
open = true
[[topics.initial]]
name = "ashmere"
description = "Mara's home town; relevant when the story returns there"
summary = "A drowned market town."
""",
    )
    ctx = ContextManager(root, index=False)
    topics = Topics(ctx)
    assert topics.block.create_initial() == ["mara", "ashmere"]
    assert topics.block.create_initial() == []
    block = topics.block.render()
    assert "### mara — Mara, the player character\nMara is a ferrywoman" in block
    assert "- ashmere — Mara's home town; relevant when the story returns there" in block
    assert "Summary of earlier conversation" not in block  # no general summary yet
    assert git(root, "log", "-1", "--format=%s").strip() == "topic-initial: 2 topic(s)"


def test_bad_config_fails_at_construction(sample_root: Path) -> None:
    _config(sample_root, "[topics]\nmax_open_tokens = 9000\n")
    ctx = ContextManager(sample_root, index=False)
    with pytest.raises(
        ConfigError, match="raise the compaction budget above 18000 or lower max_open_tokens"
    ):
        Topics(ctx)


# ---------------------------------------------------------------- where-are-we round trip
_line = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\n\r#"),
    min_size=1,
    max_size=40,
)
_item_text = _line.map(lambda s: " ".join(s.split())).filter(bool)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "Key Facts",
                "In Progress",
                "Pending Notifications",
                "Recently Completed",
                "Next Actions",
                "Links",
            ]
        ),
        st.lists(_item_text, max_size=4),
        max_size=6,
    )
)
def test_where_are_we_round_trips(sections: dict[str, list[str]]) -> None:
    state = WhereAreWe.parse("# Where are we\n")
    for name, items in sections.items():
        for text in items:
            state.append(name, text, new_section=True)
    rendered = state.render()
    again = WhereAreWe.parse(rendered)
    assert again.render() == rendered
    for name, items in sections.items():
        # append() takes a bullet the caller already wrote ("- 0") as that bullet, so an
        # item reads back as its text read as one line of a bullet list.
        assert [item_text(r) for r in again.section(name)] == [item_text(t) for t in items]


# ---------------------------------------------------------------- CLI
def _run(root: Path, *args: str) -> str:
    from contextfs.cli import cli

    cli.add_command(topic)
    result = CliRunner().invoke(
        cli, ["--root", str(root), "--actor", "agent:cli", "topic", *args], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_round_trip(sample_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "contextfs.cli.common.ContextManager",
        lambda root, **kw: ContextManager(root, **{**kw, "index": False}),
    )
    out = _run(
        sample_root,
        "new",
        "Family logistics",
        "--description",
        "School runs; relevant when kids come up",
    )
    assert "created topic family-logistics" in out
    assert "family-logistics" in _run(sample_root, "list")
    out = _run(sample_root, "switch", "billing-migration", "--budget", "3000")
    assert (
        "INV-2026-008841" in out and "Marisol Quintero-Hale" not in out and "of 3000 tokens" in out
    )
    assert (
        _run(
            sample_root,
            "decide",
            "billing-migration",
            "Cut over on 4 January",
            "--depends-on",
            "D4",
            "--reason",
            "First working day",
        ).strip()
        == "D5"
    )
    assert "because: First working day" in _run(sample_root, "chain", "billing-migration", "D5")
    assert _run(sample_root, "open", "nope").strip() == "doesn't exist"
    assert "filed" in _run(sample_root, "route", "Acme Freight Logistics onboarding: replay passed")
    assert "billing-migration (by" in _run(sample_root, "detect", "the proration on that invoice")
    assert "k8s-cost-cuts is closed" in _run(sample_root, "close", "k8s-cost-cuts")
    _run(sample_root, "state", "billing-migration", "append", "Next Actions", "Tell Ines")
    assert "Tell Ines" in _run(
        sample_root, "show", "billing-migration", "--section", "next actions"
    )


def test_cli_errors_are_one_line(sample_root: Path) -> None:
    from contextfs.cli import cli

    cli.add_command(topic)
    result = CliRunner().invoke(cli, ["--root", str(sample_root), "topic", "switch", "nope"])
    assert result.exit_code == 1
    assert result.output.strip().startswith("error: no topic named 'nope'")
    assert len(result.output.strip().splitlines()) == 1


def test_every_command_help_has_an_example() -> None:
    runner = CliRunner()
    for name in topic.commands:
        out = runner.invoke(topic, [name, "--help"]).output
        assert "Example" in out and "contextfs topic" in out, name
