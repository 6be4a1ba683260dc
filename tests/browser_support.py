"""A real browser for the page's tests and the docs' screenshots: Debian's Chromium, playwright.

playwright's own browser download (``playwright install``) is never used: the browser is
the system's package (``apt-get install -y chromium``), started headless and kept off
the network.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

from contextfs import ContextManager

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SAMPLE = Path(__file__).resolve().parent.parent / "sample-context"
AGENT_SESSION = "s-20261130T101500-a1b2c3"
PLANTED = (
    "# Retry notes\n\nThe dispatcher retries five times.\n\n"
    "<script>window.__pwned = 'script'; document.title = 'pwned'</script>\n\n"
    '<img src="probe-onerror.png" onerror="window.__pwned = \'onerror\'">\n\n'
    "[click me](javascript:window.__pwned='link')\n"
)


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed: pip install -e '.[dev]'"
    if not CHROMIUM.exists():
        return (
            "Chromium is not installed: apt-get install -y chromium "
            "(Debian's package; never playwright install)"
        )
    if importlib.util.find_spec("starlette") is None:
        return "the 'ui' extra is not installed: pip install 'contextfs-git[ui]'"
    return None


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)


def review_root(dest: Path) -> Path:
    """A copy of the sample context (with its topics and decisions) and some history: a
    person, an agent writing directly, and an agent in review mode whose session waits
    (one of its notes carries a planted script)."""
    shutil.copytree(SAMPLE, dest)
    person = ContextManager(dest, actor="human", index=False)
    with person.provenance(actor="agent:planner", session="s-20261129T161000-0f9e8d"):
        person.append(
            "memory/lessons.md", "- Check the dead-letter queue before replaying deliveries.\n"
        )
        person.write(
            "task/subtasks/alerting.md",
            "# Alerting\n\nPage when the dead-letter queue grows for 10 min.\n",
        )
    person.close()
    agent = ContextManager(
        dest, actor="agent:scout", session=AGENT_SESSION, review=True, index=False
    )
    agent.append(
        "memory/facts.md", "- Webhook retries: 5 attempts, exponential backoff from 30 s.\n"
    )
    agent.write("notes/retry-notes.md", PLANTED, {"title": "Retry notes"})
    agent.close()
    return dest
