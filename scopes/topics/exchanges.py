"""Recent exchanges: one compressed line of JSON per turn in ``exchanges.jsonl``.

Reached as ``topics.exchanges``; the per-turn write is :meth:`Topics.record`. Lines are
kept verbatim so that a spawn moves exactly what was there, including a line a person
broke by hand.
"""

from __future__ import annotations

from collections.abc import Callable

from contextfs import clock
from contextfs.gate.poisoning import assess, render_untrusted

from ..arguments import check_int
from .catalog import Catalog
from .config import TopicsConfig
from .files import (
    EXCHANGES_FILE,
    Exchange,
    compress,
    parse_exchanges,
    render_exchange_line,
    topic_path,
)
from .records import Topic

__all__ = ["Exchanges"]


class Exchanges:
    """Read, render and append a topic's exchanges (``topics.exchanges``)."""

    def __init__(self, catalog: Catalog, config: TopicsConfig) -> None:
        self._catalog = catalog
        self._config = config

    def lines(self, name: str) -> list[tuple[str, Exchange | None]]:
        """Every line of a topic's exchanges file with its parsed exchange (None: not one)."""
        data = self._catalog.ctx.parts.read_raw(topic_path(name, EXCHANGES_FILE))
        return parse_exchanges(data.decode("utf-8", "replace")) if data else []

    def of(self, name: str) -> list[Exchange]:
        """A topic's exchanges, oldest first (unreadable lines left out)."""
        return [ex for _, ex in self.lines(self._catalog.get(name).name) if ex is not None]

    def record(self, topic: Topic, user: str, agent: str) -> Exchange:
        """Append one exchange, each side compressed to ``[topics] exchange_chars``; one commit."""
        ctx = self._catalog.ctx
        limit = self._config.exchange_chars
        prov = ctx.parts.current_provenance
        exchange = Exchange(
            time=clock.iso(),
            user=compress(user, limit),
            agent=compress(agent, limit),
            session=prov.session,
        )
        if prov.turn is not None:
            exchange.extra["turn"] = (
                prov.turn
            )  # which turn of its session: an agent loop hides the ones still in its window
        verdict = assess(f"{exchange.user}\n{exchange.agent}")
        if verdict.suspicious:
            # The log records what was said, so it never refuses a line; a flagged one is
            # marked, and every rendering fences it as data.
            exchange.extra["trust"] = "untrusted"
        with self._catalog.transaction("exchange", topic.name, topic.name):
            ctx.append(topic.path(EXCHANGES_FILE), render_exchange_line(exchange) + "\n")
        return exchange

    def render(
        self,
        name: str,
        limit: int | None = None,
        *,
        shown: Callable[[Exchange], bool] | None = None,
    ) -> str:
        """The newest ``limit`` exchanges (``[topics] boot_exchanges``) as numbered lines.

        ``shown`` keeps only the exchanges it returns True for (before the newest are taken),
        e.g. to leave out those an agent's conversation window still holds verbatim.
        """
        if limit is None:
            limit = self._config.boot_exchanges
        else:
            check_int(limit, "limit", fix="pass how many recent exchanges to show, e.g. 20")
        if limit <= 0:
            return ""
        data = self._catalog.ctx.parts.read_raw(topic_path(name, EXCHANGES_FILE))
        if not data:
            return ""
        raw_lines = [ln for ln in data.decode("utf-8", "replace").split("\n") if ln.strip()]
        if shown is None:
            start = max(0, len(raw_lines) - limit)
            lines = parse_exchanges("\n".join(raw_lines[start:]))  # parse only the tail shown
            numbered = list(enumerate(lines, start + 1))
        else:
            numbered = [
                (n, pair)
                for n, pair in enumerate(parse_exchanges("\n".join(raw_lines)), 1)
                if pair[1] is None or shown(pair[1])
            ][-limit:]
        out = []
        for number, (raw, ex) in numbered:
            if ex is None:
                out.append(f"{number}. (unreadable line) {compress(raw, 200)}")
            elif (
                ex.extra.get("trust", "trusted") != "trusted"
                or assess(f"{ex.user}\n{ex.agent}").suspicious
            ):
                said = f"user: {ex.user}\nagent: {ex.agent}"
                out.append(
                    f"{number}. [{ex.time[:16]}]\n"
                    + render_untrusted(said, f"{topic_path(name, EXCHANGES_FILE)} line {number}")
                )
            else:
                out.append(f"{number}. [{ex.time[:16]}] user: {ex.user}\n   agent: {ex.agent}")
        return "\n".join(out) + "\n" if out else ""
