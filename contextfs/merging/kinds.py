"""Which merge rule a file of a context root gets, by its path.

The store's on-disk layout (docs/store.md) gives files their jobs, and a job decides how
two machines' versions combine:

| kind | files | rule |
|---|---|---|
| ``log`` | ``*.jsonl`` (conversation logs, topic exchanges) | union of lines, each once, new lines in ``time`` order |
| ``entries`` | ``memory/facts.md``, ``memory/lessons.md``, ``memory/preferences.md``, ``topics/*/where-are-we.md`` | frontmatter key by key; body as a union of entries |
| ``numbered`` | ``topics/*/decisions.md`` | frontmatter key by key; blocks renumbered so ids stay unique |
| ``note`` | ``memory/archive/**`` | like ``document``; the same note saved on both machines is one note |
| ``managed`` | ``.gitignore``, ``.gitattributes`` at the root | rewritten by contextfs, never merged |
| ``trash`` | ``.trash/**`` | entries are written once; ids never collide |
| ``document`` | any other markdown | frontmatter key by key; body a three-way line merge, or a conflict copy |
| ``text`` | anything else | a three-way line merge, or a conflict copy |

A pattern's ``*`` matches within one path component, ``**`` any number of them.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

__all__ = ["KINDS", "kind_of"]

#: (kind, patterns) in the order they are tried.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("managed", (".gitignore", ".gitattributes")),
    ("trash", (".trash/**",)),
    ("log", ("**/*.jsonl",)),
    ("numbered", ("topics/*/decisions.md",)),
    (
        "entries",
        (
            "memory/facts.md",
            "memory/lessons.md",
            "memory/preferences.md",
            "topics/*/where-are-we.md",
        ),
    ),
    ("note", ("memory/archive/**/*.md",)),
)


def _match(parts: list[str], pattern: list[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_match(parts[i:], pattern[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _match(parts[1:], pattern[1:])


def kind_of(rel: str) -> str:
    """The merge kind of a root-relative path (see the table above)."""
    parts = rel.split("/")
    for kind, patterns in KINDS:
        if any(_match(parts, pattern.split("/")) for pattern in patterns):
            return kind
    return "document" if rel.lower().endswith((".md", ".markdown")) else "text"
