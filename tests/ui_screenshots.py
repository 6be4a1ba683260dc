"""The screenshots in docs/review.md, taken by the browser the page's tests use.

    python tests/ui_screenshots.py [docs/images]     (or: make screenshots)

Builds the review root of ``browser_support`` in a temporary folder, serves it with the
write switch, and saves one PNG per main screen.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from browser_support import AGENT_SESSION, launch, missing, review_root

SCREENS = [
    ("review-inbox.png", "/", None),
    ("review-session.png", f"/sessions/{AGENT_SESSION}", None),
    ("review-sessions.png", "/sessions", None),
    ("review-view.png", "/view?scope=task&budget=2000&query=webhook+retry+backoff", None),
    ("review-file.png", "/file/memory/facts.md", None),
    ("review-topic.png", "/topics/billing-migration", None),
    ("review-approved.png", "/", "approve"),
]


def take(out: Path) -> list[Path]:
    reason = missing()
    if reason is not None:
        raise SystemExit(f"cannot take screenshots: {reason}")
    from playwright.sync_api import sync_playwright  # the dev extra: the browser's client

    from contextfs.integrations.ui.server import UIServer  # the 'ui' extra

    out.mkdir(parents=True, exist_ok=True)
    saved = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        server = UIServer(review_root(Path(tmp) / "context"), write=True).start()
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
        page.goto(server.url)
        base = server.url.split("/?")[0]
        for name, path, click in SCREENS:
            page.goto(base + path)
            if click:
                page.locator(f"button[data-action='{click}']").first.click()
            target = out / name
            page.screenshot(path=str(target))
            saved.append(target)
        browser.close()
        server.stop()
    return saved


if __name__ == "__main__":
    for path in take(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")):
        print(path)
