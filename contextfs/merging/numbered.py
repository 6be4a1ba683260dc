"""Files of numbered blocks (a topic's ``decisions.md``): ids that stay unique across machines.

A block starts at a ``## <P><n>: title`` heading (``## D3: Cut over in January``) and runs
to the next ``##`` heading. Two machines that each record a decision after the same base
both call it ``D<n+1>``. Merging renumbers every block that either side added, in time
order (the block's ``- time:`` field, then its text, so every machine computes the same
numbers), starting after the highest id the base knew; each side's references to its own
new ids (``depends_on``, ``supersedes``, ``superseded_by``, any ``D<n>`` in its lines) are
rewritten with that side's mapping before the blocks are merged. A side that added
nothing keeps its ids. Blocks both sides changed are merged line by line; where both
changed the same line differently, both lines are kept and the clash is reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .lines import merge_entries, merge_text, split_lines

__all__ = ["Blocks", "merge_numbered", "parse_blocks"]

_HEAD = re.compile(r"^##[ \t]+([A-Za-z]{1,8})(\d{1,6})[ \t]*:")
_TIME = re.compile(r"^-[ \t]+time[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


@dataclass
class Blocks:
    """A numbered file cut up: the text before the first block, and the blocks by id, in order."""

    preamble: str
    blocks: dict[str, str]
    prefix: str


def parse_blocks(text: str) -> Blocks | None:
    """The blocks of ``text``; None when it is not one id prefix throughout or ids repeat."""
    preamble: list[str] = []
    blocks: dict[str, str] = {}
    prefixes: set[str] = set()
    current: str | None = None
    for line in split_lines(text):
        head = _HEAD.match(line)
        if head:
            current = f"{head.group(1)}{int(head.group(2))}"
            if current in blocks:
                return None
            prefixes.add(head.group(1))
            blocks[current] = line
        elif line.startswith("## "):
            return None  # another kind of section: not a numbered file
        elif current is None:
            preamble.append(line)
        else:
            blocks[current] += line
    if len(prefixes) > 1:
        return None
    return Blocks("".join(preamble), blocks, prefixes.pop() if prefixes else "D")


def _number(block_id: str) -> int:
    return int(re.sub(r"\D", "", block_id) or 0)


def _remap(text: str, mapping: Mapping[str, str], prefix: str) -> str:
    if not mapping:
        return text
    pattern = re.compile(rf"\b{re.escape(prefix)}\d+\b")
    return pattern.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)


def _content(block: str) -> str:
    """A block without its id: what makes two added blocks the same one."""
    head, _, rest = block.partition("\n")
    return head.split(":", 1)[-1].strip() + "\n" + rest.strip()


def _time_of(block: str) -> str:
    found = _TIME.search(block)
    return found.group(1) if found else ""


def merge_numbered(
    base: str, ours: str, theirs: str, *, theirs_first: bool
) -> tuple[str, list[str]] | None:
    """The merged text and what was renumbered or clashed; None when a side is not numbered."""
    b, o, t = (parse_blocks(x) for x in (base, ours, theirs))
    if b is None or o is None or t is None:
        return None
    prefix = o.prefix if o.blocks else t.prefix
    notes: list[str] = []
    new_o = [k for k in o.blocks if k not in b.blocks]
    new_t = [k for k in t.blocks if k not in b.blocks]
    map_o: dict[str, str] = {}
    map_t: dict[str, str] = {}
    if set(new_o) & set(new_t):
        # Every added block gets a number after the base's, in time order (then by its
        # text); a block both sides added with the same text is one block.
        added = [
            (_time_of(blocks[name]), _content(blocks[name]), side, name)
            for side, names, blocks in (("ours", new_o, o.blocks), ("theirs", new_t, t.blocks))
            for name in names
        ]
        number = max([_number(k) for k in b.blocks] + [0])
        by_content: dict[str, str] = {}
        for _when, content, side, name in sorted(added, key=lambda a: (a[0], a[1])):
            if content not in by_content:
                number += 1
                by_content[content] = f"{prefix}{number}"
            (map_o if side == "ours" else map_t)[name] = by_content[content]
        for who, mapping in (("their", map_t), ("our", map_o)):
            for name, target in sorted(mapping.items(), key=lambda kv: _number(kv[0])):
                if target != name:
                    notes.append(
                        f"{who} {name} is now {target} (both machines added {prefix}-numbered blocks)"
                    )
    o_text = {map_o.get(k, k): _remap(v, map_o, prefix) for k, v in o.blocks.items()}
    t_text = {map_t.get(k, k): _remap(v, map_t, prefix) for k, v in t.blocks.items()}
    order = list(b.blocks) + sorted(
        (k for k in {*o_text, *t_text} if k not in b.blocks), key=_number
    )
    out = [merge_text(b.preamble, o.preamble, t.preamble) or o.preamble]
    for name in order:
        bb, ob, tb = b.blocks.get(name), o_text.get(name), t_text.get(name)
        if ob is None and tb is None:
            continue
        if ob is None or tb is None:
            # Removed on one side: kept as the other side has it, unless that side left it untouched.
            kept = tb if ob is None else ob
            if kept is None or (bb is not None and kept == bb):
                continue
            out.append(kept)
            continue
        merged = merge_text(bb or "", ob, tb)
        if merged is None:
            merged, _ = merge_entries(bb or "", ob, tb, log=True, theirs_first=theirs_first)
            notes.append(
                f"{name} was changed on both machines; both versions of the lines that differ are kept"
            )
        out.append(merged)
    # Blocks are separated by one blank line, as the topics layer writes them.
    parts = [part.rstrip("\n") + "\n" for part in out if part.strip()]
    return "\n".join(parts), notes
