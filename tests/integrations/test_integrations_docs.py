"""docs/integrations.md: every ```python example runs as written, and the tools table is the tool table."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest
from helpers import REPO

from contextfs.integrations import all_specs

DOC = (REPO / "docs" / "integrations.md").read_text("utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)


@pytest.mark.parametrize("n", range(len(BLOCKS)))
def test_python_examples_run_in_a_fresh_folder(
    n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    script = tmp_path / f"example_{n}.py"
    script.write_text(BLOCKS[n], "utf-8")
    runpy.run_path(str(script), run_name="__main__")


def test_the_tools_table_matches_the_specs() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| (\w+) \| ([^|]+) \|", DOC, flags=re.M)
    assert [name for name, _, _ in rows] == [s.name for s in all_specs()]
    for (name, group, kind), spec in zip(rows, all_specs(), strict=True):
        assert group == spec.group, name
        expected = (
            "read-only" if spec.read_only else ("destructive" if spec.destructive else "writes")
        )
        assert kind.strip().startswith(expected), name
        assert ("allow_delete" in kind) == (spec.access == "delete"), name
