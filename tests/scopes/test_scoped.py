"""ScopedContext: the plain format without a budget, scope rules and config, page-in, as_of, the CLI."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import SAMPLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfs import ConfigError, ContextManager, TopicError
from contextfs.scopes.cli.context import context, demo
from contextfs.scopes.rules import default_rules, match, rules_from_config
from contextfs.scopes.scoped import ScopedContext
from contextfs.text.tokens import count_tokens


@pytest.fixture
def plain_ctx(tmp_path):
    ctx = ContextManager(tmp_path / "my-project-context", index=False)
    ctx.write("project/README.md", "# E-commerce Platform\nNext.js + Postgres + Stripe")
    ctx.write("memory/facts.md", "- Database: PostgreSQL 16\n- Auth: NextAuth with Google OAuth")
    ctx.write("memory/preferences.md", "- Use TypeScript strict mode\n- Prefer server components")
    ctx.write("skills/coding-style.md", "- camelCase variables\n- Zod for validation")
    yield ctx
    ctx.close()


@pytest.fixture
def sample(tmp_path):
    dest = tmp_path / "sample"
    shutil.copytree(SAMPLE, dest)
    ctx = ContextManager(dest, index=False)
    yield ctx
    ctx.close()


def test_plain_format_without_a_budget(plain_ctx: ContextManager) -> None:
    from contextfs import ScopedContext as Exported

    scoped = Exported(plain_ctx)
    text = scoped.get_context(scope="task")
    assert text == (
        "## project/README.md\n# E-commerce Platform\nNext.js + Postgres + Stripe\n\n---\n\n"
        "## memory/facts.md\n- Database: PostgreSQL 16\n- Auth: NextAuth with Google OAuth\n\n---\n\n"
        "## memory/preferences.md\n- Use TypeScript strict mode\n- Prefer server components\n\n---\n\n"
        "## skills/coding-style.md\n- camelCase variables\n- Zod for validation"
    )
    plain_ctx.write("task/current.md", "Ship checkout")
    plain_ctx.write("task/subtasks/pay.md", "Stripe webhooks")
    plain_ctx.write("memory/lessons.md", "Read the docs")
    sub = scoped.get_context(scope="subtask", subtask_id="pay")
    assert sub.endswith(
        "## task/current.md\nShip checkout\n\n---\n\n## Subtask: pay\nStripe webhooks\n\n---\n\n## Lessons Learned\nRead the docs"
    )
    assert "task/current.md" not in scoped.get_context(scope="project")


def test_core_memory_is_pinned_first(plain_ctx: ContextManager) -> None:
    plain_ctx.write("memory/core/persona.md", "I am the checkout agent.")
    text = ScopedContext(plain_ctx).get_context("project")
    assert text.startswith(
        "## memory/core/persona.md\nI am the checkout agent.\n\n---\n\n## project/README.md"
    )
    view = ScopedContext(plain_ctx, budget=60).assemble("task")
    assert view.items[0].path == "memory/core/persona.md" and view.items[0].pinned
    assert view.tokens <= 60


def test_budgeted_get_context_respects_budget(sample: ContextManager) -> None:
    text = ScopedContext(sample, budget=700).get_context("task")
    assert count_tokens(text) <= 700
    assert "## memory/core/persona.md [full]" in text


def test_three_budgets_change_tiers_not_truncate(sample: ContextManager) -> None:
    scoped = ScopedContext(sample)
    tiers = {}
    for budget in (8000, 2000, 500):
        view = scoped.assemble("task", budget=budget)
        assert view.tokens <= budget and view.tokens == count_tokens(view.text)
        tiers[budget] = {i.path: i.tier for i in view.items}
    assert tiers[8000]["task/current.md"] == "full"
    assert tiers[500]["task/current.md"] != "full"
    assert tiers[500]["memory/core/persona.md"] == "full"


def test_query_pages_in_matches_from_the_rest_of_the_tree(sample: ContextManager) -> None:
    view = ScopedContext(sample).assemble(
        "task", budget=1500, query="why did we choose arq over celery"
    )
    paged = [i for i in view.items if i.reason.startswith("paged in")]
    assert paged and paged[0].path == "project/decisions/0004-arq-over-celery.md"
    assert view.tokens <= 1500
    # without a query nothing outside the scope appears
    plain = ScopedContext(sample).assemble("task", budget=1500)
    assert not any(i.path.startswith("project/decisions/") for i in plain.items)


def test_page_in_uses_the_search_index_when_asked(tmp_path: Path) -> None:
    dest = tmp_path / "s"
    shutil.copytree(SAMPLE, dest)
    with ContextManager(dest, index=True) as ctx:
        view = ScopedContext(ctx, pager="search").assemble("task", budget=1500, query="arq celery")
        assert any(i.path == "project/decisions/0004-arq-over-celery.md" for i in view.items)


def test_as_of_is_byte_for_byte(sample: ContextManager) -> None:
    scoped = ScopedContext(sample)
    rev = sample.parts.git.head()
    before = scoped.assemble("subtask", "retry-policy", budget=1200, query="jitter schedule redis")
    sample.write("memory/facts.md", "- everything changed")
    sample.delete("project/decisions/0004-arq-over-celery.md")
    sample.write("notes/jitter.md", "# Jitter\nJitter schedule redis redis redis jitter.")
    after = scoped.assemble(
        "subtask", "retry-policy", budget=1200, query="jitter schedule redis", as_of=rev
    )
    assert after.text == before.text
    assert after.manifest == before.manifest
    assert after.as_of == rev
    now = scoped.assemble("subtask", "retry-policy", budget=1200, query="jitter schedule redis")
    assert now.manifest != before.manifest
    # the manifest versions are git's blob ids at that commit
    for path, version in before.manifest:
        assert sample.parts.git.git("rev-parse", f"{rev}:{path}").strip() == version


def test_config_overrides_rules_and_budgets(sample: ContextManager) -> None:
    cfg = sample.root / ".contextfs" / "config.toml"
    cfg.write_text(
        '[scopes]\npage_share = 0.2\npinned = ["skills/testing.md"]\n'
        "[scopes.budgets]\ntask = 900\n"
        '[[scopes.project]]\npath = "project/decisions/*.md"\npriority = 25\nmin_tier = "abstract"\n',
        "utf-8",
    )
    scoped = ScopedContext(sample)
    assert scoped.page_share == 0.2 and scoped.rules.budgets["task"] == 900
    view = scoped.assemble("task")
    assert view.budget == 900 and view.tokens <= 900
    paths = [i.path for i in view.items]
    assert "skills/testing.md" in paths and "project/README.md" not in paths
    assert next(i for i in view.items if i.path == "skills/testing.md").tier == "full"
    for item in view.items:
        if item.path.startswith("project/decisions/"):
            assert item.tier in ("full", "excerpt", "overview", "abstract")


@pytest.mark.parametrize(
    "section, word",
    [
        ({"scopes": {"bogus": 1}}, "bogus"),
        ({"scopes": {"budgets": {"task": -3}}}, "positive"),
        ({"scopes": {"project": [{"path": "../x.md"}]}}, "inside the root"),
        ({"scopes": {"project": [{"path": "a.md", "min_tier": "tiny"}]}}, "min_tier"),
        ({"scopes": {"page_share": 2}}, "page_share"),
    ],
)
def test_bad_config_names_the_key(section: dict, word: str) -> None:
    with pytest.raises(ConfigError) as err:
        rules_from_config(section)
    assert word in str(err.value)


def test_glob_matching() -> None:
    assert match("memory/core/*.md", ["memory/core/a.md", "memory/core/x/b.md"]) == [
        "memory/core/a.md"
    ]
    assert match("docs/**/*.md", ["docs/a.md", "docs/x/y.md", "other/z.md"]) == [
        "docs/a.md",
        "docs/x/y.md",
    ]
    assert default_rules().rules_for("subtask")[-1].path == "task/subtasks/{subtask}.md"


def test_topic_adds_topic_files(sample: ContextManager) -> None:
    view = ScopedContext(sample).assemble("task", budget=3000, topic="billing-migration")
    assert any(i.path == "topics/billing-migration/where-are-we.md" for i in view.items)
    with pytest.raises(TopicError):
        ScopedContext(sample).assemble("task", topic="no-such-topic")


def _cli() -> click.Group:
    @click.group()
    @click.option("--root")
    @click.pass_context
    def cli(c: click.Context, root: str) -> None:
        c.ensure_object(dict)["root"] = root

    cli.add_command(context)
    return cli


def test_cli_json_and_errors(sample: ContextManager) -> None:
    root = str(sample.root)
    runner = CliRunner()
    r = runner.invoke(
        _cli(), ["--root", root, "context", "--scope", "task", "--budget", "600", "--json"]
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["tokens"] <= 600 and data["budget"] == 600
    assert {"path", "version"} <= set(data["manifest"][0])
    r = runner.invoke(_cli(), ["--root", root, "context", "--budget", "10"])
    assert r.exit_code == 1 and "error: the budget of 10 tokens" in r.output
    r = runner.invoke(_cli(), ["--root", root, "context", "--help"])
    assert "Example" in r.output
    r = runner.invoke(_cli(), ["--root", root, "context", "--scope", "project"])
    assert r.output.startswith("## memory/core/")


def test_demo_runs_offline(sample: ContextManager) -> None:
    lines: list[str] = []
    demo(sample, lines.append)
    assert lines[0].startswith("budget 8000:")
    assert any("(was full)" in line for line in lines)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    budget=st.integers(min_value=230, max_value=3000),
    scope=st.sampled_from(["project", "task", "subtask"]),
    query=st.sampled_from([None, "retry backoff", "redis eviction policy", "who owns billing"]),
    files=st.lists(
        st.tuples(st.sampled_from(["notes", "project", "memory/archive"]), st.integers(0, 40)),
        max_size=4,
    ),
    share=st.sampled_from([0.0, 0.3, 0.6]),
)
def test_scope_budget_is_never_exceeded(
    sample: ContextManager, budget: int, scope: str, query, files, share: float
) -> None:
    for i, (folder, n) in enumerate(files):
        body = (
            "\n\n".join(f"Paragraph {k} on retry backoff and redis number {k}." for k in range(n))
            or "short"
        )
        sample.write(f"{folder}/gen-{i}.md", body)
    subtask = "retry-policy" if scope == "subtask" else None
    view = ScopedContext(sample, page_share=share).assemble(
        scope, subtask, budget=budget, query=query
    )
    assert view.tokens == count_tokens(view.text) <= budget


def test_page_in_never_mixes_in_another_topics_files(tmp_path) -> None:
    """A query that matches a topic's files pages nothing in from topics/ unless asked."""
    import shutil

    from helpers import SAMPLE

    from contextfs import ContextManager
    from contextfs.scopes.scoped import ScopedContext

    root = tmp_path / "iso"
    shutil.copytree(SAMPLE, root)
    ctx = ContextManager(root, index=False)
    scoped = ScopedContext(ctx)
    query = "Marisol Quintero-Hale acme onboarding go-live"
    view = scoped.assemble("task", budget=4000, query=query)
    assert not [i.path for i in view.items if i.path.startswith("topics/")]
    assert "Marisol Quintero-Hale" not in view.text
    with_topic = scoped.assemble("task", budget=4000, query=query, topic="customer-acme-onboarding")
    assert any(i.path.startswith("topics/customer-acme-onboarding/") for i in with_topic.items)
    assert not [
        i.path for i in with_topic.items if i.path.startswith("topics/") and "acme" not in i.path
    ]


@pytest.fixture
def unreadable(tmp_path: Path) -> ContextManager:
    """The sample tree with three files no view can read: UTF-16, Latin-1 and binary (a pinned block)."""
    root = tmp_path / "bad"
    shutil.copytree(SAMPLE, root)
    (root / "memory/facts.md").write_bytes("# Facts\n- Postgres 16\n".encode("utf-16"))
    (root / "memory/preferences.md").write_bytes(
        "# Preferences\n- caf\xe9 au lait\n".encode("latin-1")
    )
    (root / "memory/core/blob.md").write_bytes(b"\x00\x01binary\xff")
    ctx = ContextManager(root, index=False)
    yield ctx
    ctx.close()


UNREADABLE = ("memory/facts.md", "memory/preferences.md", "memory/core/blob.md")


def test_an_unreadable_file_is_left_out_of_the_plain_view_and_logged(
    unreadable: ContextManager, caplog
) -> None:
    with caplog.at_level(logging.WARNING, logger="contextfs.scopes"):
        text = ScopedContext(unreadable).get_context("task")
    assert text.startswith("## memory/core/")  # the readable pinned blocks still lead
    assert "## project/README.md" in text and "## task/current.md" in text
    for rel in UNREADABLE:
        assert f"## {rel}" not in text and rel in caplog.text


@pytest.mark.parametrize("query", [None, "webhook retry backoff"])
def test_an_unreadable_file_is_dropped_from_budgeted_views_with_the_reason(
    unreadable: ContextManager, query
) -> None:
    view = ScopedContext(unreadable, budget=3000).assemble("task", query=query)
    assert view.tokens <= 3000
    dropped = {d.path: d.reason for d in view.dropped}
    assert (
        dropped["memory/facts.md"].startswith("unreadable:")
        and "UTF-8" in dropped["memory/facts.md"]
    )
    assert (
        dropped["memory/preferences.md"].startswith("unreadable:")
        and "not valid UTF-8" in dropped["memory/preferences.md"]
    )
    assert (
        dropped["memory/core/blob.md"].startswith("unreadable:")
        and "binary" in dropped["memory/core/blob.md"]
    )
    assert (
        view.tier_of("memory/core/persona.md") == "full"
        and view.tier_of("task/current.md") is not None
    )
    assert not any(item.path in UNREADABLE for item in view.items)


def test_an_unreadable_pinned_block_leaves_topic_boot_views_working(
    unreadable: ContextManager,
) -> None:
    from contextfs.scopes.topics import Topics

    view = Topics(unreadable).boot("billing-migration", budget=4000)
    assert "INV-2026-008841" in view.text
    assert {"memory/facts.md", "memory/core/blob.md"} <= {d.path for d in view.dropped}
