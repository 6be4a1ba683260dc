"""Scope rules: which files belong to the project, task and subtask scopes, and how much they matter.

The built-in rules: project: README, facts, preferences, coding style; task:
``task/current.md``; subtask: ``task/subtasks/<id>.md``; lessons in every scope; plus pinned core
memory (``memory/core/*.md``) in every scope. Scopes nest: a task scope holds the project
items, a subtask scope holds the task items. A root can replace any level in
``.contextfs/config.toml``::

    [scopes]
    page_share = 0.5              # share of the budget kept for query page-in (the default)
    pinned = ["memory/core/*.md"] # always shown in full

    [scopes.budgets]              # default budget per scope (tokens)
    task = 4000

    [[scopes.project]]            # replaces the built-in project rules
    path = "project/*.md"         # a glob; {subtask} is the subtask id
    priority = 20                 # lower = more important
    min_tier = "abstract"         # lowest tier before it is dropped

Validation raises :class:`ConfigError` naming the key that is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from contextfs.errors import ConfigError

from .tiers import TIERS

__all__ = ["DEFAULT_PAGE_SHARE", "LEVELS", "SCOPES", "Rule", "ScopeRules", "default_rules", "rules_from_config"]

#: Scope names, and the rule levels each includes (scopes nest).
SCOPES: dict[str, tuple[str, ...]] = {
    "project": ("always", "project"),
    "task": ("always", "project", "task"),
    "subtask": ("always", "project", "task", "subtask"),
}
LEVELS = ("always", "project", "task", "subtask")
#: Chosen by measurement (docs/bench-scopes.md): the smallest share that reaches recall
#: 0.85 at 1,000 tokens and 0.95 at 2,000 on both benchmark trees (facts among filler, and
#: long design notes and runbooks), leaving the most room for the scope's own items.
DEFAULT_PAGE_SHARE = 0.5
_GLOB = re.compile(r"[*?\[]")
_SUBTASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")


@dataclass(frozen=True)
class Rule:
    """One path or glob in a scope level."""

    path: str
    priority: int
    pinned: bool = False
    min_tier: str = "cue"
    reason: str = ""

    def expand(self, subtask_id: str | None) -> str | None:
        if "{subtask}" in self.path:
            if not subtask_id:
                return None
            return self.path.replace("{subtask}", subtask_id)
        return self.path

    @property
    def is_glob(self) -> bool:
        return bool(_GLOB.search(self.path))

    def subtask_ids(self, paths: list[str]) -> set[str]:
        """The subtask ids whose files this rule names among ``paths`` (none without ``{subtask}``)."""
        if "{subtask}" not in self.path:
            return set()
        parts = [_glob_rx(part)[1:-1] for part in self.path.split("{subtask}")]
        subtask = _SUBTASK_ID.pattern.removeprefix("^").removesuffix(r"\Z")  # the id, unanchored
        rx = re.compile("^" + f"({subtask})".join(parts) + r"\Z")
        return {m.group(1) for p in paths if (m := rx.match(p)) and all(g == m.group(1) for g in m.groups())}


@dataclass(frozen=True)
class ScopeRules:
    """Rules per level, default budgets per scope, and the page-in share."""

    levels: Mapping[str, tuple[Rule, ...]]
    budgets: Mapping[str, int] = field(default_factory=dict)
    page_share: float = DEFAULT_PAGE_SHARE
    encoding: str | None = None

    def rules_for(self, scope: str) -> list[Rule]:
        if scope not in SCOPES:
            raise ConfigError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
        out: list[Rule] = []
        for level in SCOPES[scope]:
            out.extend(self.levels.get(level, ()))
        return out


def default_rules() -> ScopeRules:
    """The built-in rules: core memory pinned, then the scope's own item, the project files and lessons."""
    return ScopeRules(levels={
        "always": (
            Rule("memory/core/*.md", 0, pinned=True, reason="core memory (pinned)"),
            Rule("memory/lessons.md", 60, reason="lessons learned (every scope)"),
        ),
        "project": (
            Rule("project/README.md", 20, reason="project scope: README"),
            Rule("memory/facts.md", 30, reason="project scope: facts"),
            Rule("memory/preferences.md", 40, reason="project scope: preferences"),
            Rule("skills/coding-style.md", 50, reason="project scope: coding style"),
        ),
        "task": (Rule("task/current.md", 10, reason="task scope: the current task"),),
        "subtask": (Rule("task/subtasks/{subtask}.md", 5, reason="subtask scope: the subtask"),),
    })


def check_subtask_id(subtask_id: str | None) -> str | None:
    if subtask_id is None:
        return None
    if not isinstance(subtask_id, str) or not _SUBTASK_ID.match(subtask_id):
        raise ConfigError(f"subtask id {subtask_id!r} is not accepted; use letters, digits, '.', '_' or '-'")
    return subtask_id


def _rule(level: str, i: int, raw: Any) -> Rule:
    where = f"[scopes.{level}] item {i + 1}"
    if isinstance(raw, str):
        raw = {"path": raw}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a path string or a table with path = ...; fix .contextfs/config.toml")
    unknown = set(raw) - {"path", "priority", "pinned", "min_tier", "reason"}
    if unknown:
        raise ConfigError(f"{where} has unknown key(s) {', '.join(sorted(unknown))}; use path, priority, pinned, min_tier, reason")
    path = raw.get("path")
    if not isinstance(path, str) or not path.strip() or path.startswith("/") or ".." in path.split("/"):
        raise ConfigError(f"{where}: path must be a relative path or glob inside the root; fix .contextfs/config.toml")
    priority = raw.get("priority", 100 + i)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise ConfigError(f"{where}: priority must be a whole number (lower = more important)")
    pinned = raw.get("pinned", False)
    if not isinstance(pinned, bool):
        raise ConfigError(f"{where}: pinned must be true or false")
    min_tier = raw.get("min_tier", "cue")
    if min_tier not in TIERS:
        raise ConfigError(f"{where}: min_tier must be one of {', '.join(TIERS)}")
    reason = raw.get("reason") or f"{level} scope: {path}"
    return Rule(path.strip(), priority, pinned, min_tier, str(reason))


def rules_from_config(config: Mapping[str, Any] | None, base: ScopeRules | None = None) -> ScopeRules:
    """Built-in rules overridden by the ``[scopes]`` table of a parsed config.toml."""
    rules = base or default_rules()
    section = (config or {}).get("scopes")
    if section is None:
        return rules
    if not isinstance(section, Mapping):
        raise ConfigError("[scopes] must be a table; fix .contextfs/config.toml")
    known = {"page_share", "pinned", "budgets", "encoding", *LEVELS}
    unknown = set(section) - known
    if unknown:
        raise ConfigError(f"[scopes] has unknown key(s) {', '.join(sorted(unknown))}; use {', '.join(sorted(known))}")
    levels = dict(rules.levels)
    for level in LEVELS:
        if level in section:
            items = section[level]
            if not isinstance(items, list):
                raise ConfigError(f"[scopes.{level}] must be an array of tables ([[scopes.{level}]]) or of paths")
            levels[level] = tuple(_rule(level, i, raw) for i, raw in enumerate(items))
    pinned = section.get("pinned")
    if pinned is not None:
        if not isinstance(pinned, list) or not all(isinstance(p, str) and p.strip() for p in pinned):
            raise ConfigError("[scopes] pinned must be a list of paths or globs")
        extra = tuple(Rule(p.strip(), 0, pinned=True, reason="pinned by config") for p in pinned)
        levels["always"] = extra + tuple(r for r in levels.get("always", ()) if r.path not in pinned)
    budgets = dict(rules.budgets)
    raw_budgets = section.get("budgets", {})
    if not isinstance(raw_budgets, Mapping):
        raise ConfigError("[scopes.budgets] must be a table like task = 4000")
    for scope, value in raw_budgets.items():
        if scope not in SCOPES:
            raise ConfigError(f"[scopes.budgets] {scope!r} is not a scope; use {', '.join(SCOPES)}")
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"[scopes.budgets] {scope} must be a positive number of tokens")
        budgets[scope] = value
    share = section.get("page_share", rules.page_share)
    if not isinstance(share, (int, float)) or isinstance(share, bool) or not 0 <= share <= 0.9:
        raise ConfigError("[scopes] page_share must be a number from 0 to 0.9 (e.g. 0.5)")
    encoding = section.get("encoding", rules.encoding)
    if encoding is not None and not isinstance(encoding, str):
        raise ConfigError("[scopes] encoding must be a tiktoken encoding name like 'cl100k_base'")
    return replace(rules, levels=levels, budgets=budgets, page_share=float(share), encoding=encoding)


def match(pattern: str, paths: list[str]) -> list[str]:
    """Paths matching a glob (``*`` stays within one folder; ``**`` crosses folders)."""
    rx = re.compile(_glob_rx(pattern))
    return sorted(p for p in paths if rx.match(p))


def _glob_rx(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2:]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "^" + "".join(out) + "$"


def glob_base(pattern: str) -> str:
    """The folder before the first wildcard, to list as little as possible."""
    m = _GLOB.search(pattern)
    head = pattern[: m.start()] if m else pattern
    return head.rsplit("/", 1)[0] if "/" in head else ""
