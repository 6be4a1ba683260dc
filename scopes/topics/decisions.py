"""Decision chains: what was decided in a topic, why, and what each decision rests on.

Reached as ``topics.decisions``. Ids (``D<n>``) are stable and never reused; a
superseded decision stays in ``decisions.md`` marked ``superseded_by``, so nothing a
topic decided is ever removed, only replaced visibly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from contextfs import clock
from contextfs.errors import TopicError

from ..arguments import check_strings, check_text
from .catalog import Catalog
from .files import (
    DECISIONS_FILE,
    Decision,
    compress,
    new_decisions_body,
    parse_decisions,
    render_decisions,
)

__all__ = ["Decisions"]


def _decision_lines(d: Decision, level: int, items: Mapping[str, Decision]) -> list[str]:
    pad = "    " * level
    arrow = "└─► " if level else ""
    tags = []
    if d.superseded_by:
        tags.append(f"SUPERSEDED by {d.superseded_by}")
    if d.supersedes:
        old = items.get(d.supersedes)
        tags.append(f"supersedes {d.supersedes}" + (f" ({old.title})" if old else ""))
    if len(d.depends_on) > 1:
        tags.append("depends on " + ", ".join(d.depends_on))
    suffix = f" [{'; '.join(tags)}]" if tags else ""
    out = [f"{pad}{arrow}{d.id}: {d.title}{suffix}"]
    inner = pad + ("    " if level else "") + "  "
    if d.text and d.text != d.title:
        out.append(f"{inner}{d.text}")
    out.append(f"{inner}because: {d.reason or '(no reason recorded)'}")
    return out


def _refuse_ambiguous(topic: str, decision_id: str, items: Sequence[Decision]) -> None:
    """Two decisions with one id (a merge made without contextfs kept both): never guess which."""
    if sum(1 for d in items if d.id == decision_id) > 1:
        raise TopicError(
            f"{topic} has {sum(1 for d in items if d.id == decision_id)} decisions with the id {decision_id} "
            "(a merge made without contextfs kept both); give one of them a new id in its decisions.md "
            "(contextfs sync renumbers them when it merges), then use the right id"
        )


class Decisions:
    """Record, read and render a topic's decisions (``topics.decisions``)."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def of(self, name: str) -> list[Decision]:
        """A topic's decisions in file order."""
        topic = self._catalog.get(name)
        body = self._catalog.ctx.read(topic.path(DECISIONS_FILE)) or ""
        return parse_decisions(body)[1]

    def decide(
        self,
        topic: str,
        text: str,
        depends_on: str | Sequence[str] | None = None,
        supersedes: str | None = None,
        reason: str | None = None,
        *,
        title: str | None = None,
    ) -> str:
        """Record a decision with why it was taken and what it rests on; returns its id (``D<n>``).

        A superseded decision stays in the file, marked ``superseded_by``; nothing is removed.
        """
        t = self._catalog.get(topic)
        if not isinstance(text, str) or not text.strip():
            raise TopicError("a decision needs its text; pass what was decided")
        deps = (
            []
            if depends_on is None
            else check_strings(depends_on, "depends_on", fix="pass decision ids such as ['D2']")
        )
        check_text(
            supersedes,
            "supersedes",
            optional=True,
            fix="pass the id of the decision this replaces, e.g. 'D3'",
        )
        check_text(reason, "reason", optional=True, fix="pass why it was decided, as text")
        check_text(
            title,
            "title",
            optional=True,
            fix="pass a short heading, or None for the first line of the text",
        )
        ctx = self._catalog.ctx
        rel = t.path(DECISIONS_FILE)
        raw = ctx.read(rel)
        preamble, items = parse_decisions(raw if raw is not None else new_decisions_body(t.title))
        by_id = {d.id: d for d in items}
        deps = [d.strip() for d in deps if d and d.strip()]
        for ref in [*deps, *([supersedes] if supersedes else [])]:
            _refuse_ambiguous(t.name, ref, items)
        for dep in deps:
            if dep not in by_id:
                raise TopicError(
                    f"{t.name} has no decision {dep!r} to depend on (ids: {', '.join(by_id) or 'none'}); "
                    "record that reason as a decision first and depend on its id"
                )
        if supersedes is not None:
            old = by_id.get(supersedes)
            if old is None:
                raise TopicError(
                    f"{t.name} has no decision {supersedes!r} to supersede; check the id with chain or show"
                )
            if old.superseded_by:
                raise TopicError(
                    f"{supersedes} is already superseded by {old.superseded_by}; supersede {old.superseded_by} instead"
                )
        new_id = f"D{max((d.number for d in items), default=0) + 1}"
        heading = title or compress(text.strip().split("\n")[0], 80)
        decision = Decision(
            id=new_id,
            title=heading,
            text=text.strip(),
            reason=(reason or "").strip(),
            depends_on=deps,
            supersedes=supersedes,
            time=clock.iso(),
        )
        if supersedes is not None:
            by_id[supersedes].superseded_by = new_id
        items.append(decision)
        meta = None if raw is not None else {"title": f"{t.title}: decisions"}
        with self._catalog.transaction(
            "decide", f"{t.name} {new_id}", t.name, {"Contextfs-Decision": new_id}
        ):
            ctx.write(rel, render_decisions(preamble, items), meta)
        return new_id

    def chain_of(self, topic: str, decision_id: str) -> list[Decision]:
        """The decision and everything it rests on, roots first (a topological order)."""
        check_text(decision_id, "decision_id", fix="pass a decision id such as 'D3'")
        listed = self.of(topic)
        _refuse_ambiguous(topic, decision_id, listed)
        items = {d.id: d for d in listed}
        if decision_id not in items:
            raise TopicError(
                f"{topic} has no decision {decision_id!r} (ids: {', '.join(items) or 'none'}); check the id"
            )
        seen: dict[str, Decision] = {}

        def visit(did: str, path: tuple[str, ...]) -> None:
            if did in seen or did in path or did not in items:
                return
            for dep in items[did].depends_on:
                visit(dep, (*path, did))
            seen[did] = items[did]

        visit(decision_id, ())
        return list(seen.values())

    def chain(self, topic: str, decision_id: str) -> str:
        """The dependency chain of a decision from its root, each step with its reason."""
        chain = self.chain_of(topic, decision_id)
        all_items = {d.id: d for d in self.of(topic)}
        depth: dict[str, int] = {}
        for d in chain:
            depth[d.id] = 1 + max((depth[p] for p in d.depends_on if p in depth), default=-1)
        lines = [
            f"Decision chain for {decision_id} in {self._catalog.get(topic).name} (root first):"
        ]
        for d in chain:
            lines.extend(_decision_lines(d, depth[d.id], all_items))
        return "\n".join(lines) + "\n"

    def render(self, name: str) -> str:
        """All decisions as chains from their roots, with reasons; superseded ones marked, not hidden."""
        items = self.of(name)
        if not items:
            return ""
        by_id = {d.id: d for d in items}
        children: dict[str, list[Decision]] = {d.id: [] for d in items}
        roots = []
        for d in items:
            parents = [p for p in d.depends_on if p in by_id]
            if parents:
                children[parents[0]].append(
                    d
                )  # shown under its first parent; others named in a tag
            else:
                roots.append(d)
        lines: list[str] = []
        shown: set[str] = set()

        def walk(d: Decision, level: int) -> None:
            if d.id in shown:
                return
            shown.add(d.id)
            lines.extend(_decision_lines(d, level, by_id))
            for child in children[d.id]:
                walk(child, level + 1)

        for root in roots:
            walk(root, 0)
        for d in items:  # cycles a hand edit may have made: still shown, never lost
            walk(d, 0)
        return "\n".join(lines) + "\n"
