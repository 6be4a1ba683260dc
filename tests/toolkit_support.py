"""A context root on which every tool's example arguments succeed (shared by the toolkit tests)."""

from __future__ import annotations

from pathlib import Path

from contextfs import ContextManager
from contextfs.scopes import Memory, Topics


def example_root(root: Path) -> ContextManager:
    """A fresh root with facts (two versions), a core block, a topic with D1, a note, a log, a trashed file, a conflict copy."""
    ctx = ContextManager(root, session="examples")
    ctx.write("project/README.md", "# Tidewater\n\nA billing service for marinas.\n")
    ctx.write("memory/facts.md", "- Database: PostgreSQL 15\n")
    ctx.write("memory/facts.md", "- Database: PostgreSQL 16\n")
    memory = Memory(ctx)
    memory.core_memory_append("user_profile", "Lives in Pune")
    memory.archival_memory_insert(
        "The staging database is refreshed every Monday at 06:00", tags=["ops"]
    )
    memory.log_message("user", "The deadline for the invoice export is Friday")
    topics = Topics(ctx)
    topics.create(
        "Billing migration",
        "Moving invoices off the old system; relevant when billing comes up",
        name="billing-migration",
        summary="Invoices move to Postgres in two steps.",
        open=False,
    )
    topics.decisions.decide(
        "billing-migration",
        "Keep the old system read-only during the move",
        reason="Auditors need it",
    )
    ctx.write("memory/notes.md", "- The release train leaves on Thursdays\n")
    ctx.write(
        "memory/notes.conflict-0123abcd.md", "- The release train leaves on Fridays\n"
    )  # as a sync leaves it
    ctx.write("memory/old.md", "- An outdated fact\n")
    ctx.delete("memory/old.md")
    return ctx
