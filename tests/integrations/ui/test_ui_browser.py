"""The page in a real headless browser (Debian's Chromium driven by playwright) on a real root.

It renders the tree and a session's diff, approves a session, never runs a planted
``<script>`` or ``onerror=`` (the test watches for both), refuses a browser without the
token, and shows no write action unless started with the write switch.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import AGENT_SESSION, launch, missing, review_root
from contextfs import ContextManager

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

if missing() is None:
    from playwright.sync_api import sync_playwright

    from contextfs.integrations.ui.server import UIServer


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIServer]:
    server = UIServer(review_root(tmp_path_factory.mktemp("read") / "ctx")).start()
    yield server
    server.stop()


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[UIServer]:
    server = UIServer(review_root(tmp_path / "ctx"), write=True).start()
    yield server
    server.stop()


class Watched:
    """A page whose scripts, dialogs and requests are recorded."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, server: UIServer, path: str = "/") -> Any:
        base = server.url.split("/?")[0]
        if not self.requests:  # the first visit carries the token, as the printed address does
            self.page.goto(server.url)
        return self.page.goto(base + path)

    def assert_nothing_ran(self) -> None:
        assert self.page.evaluate("window.__pwned") is None
        assert self.page.title() != "pwned" and not self.dialogs and not self.errors
        assert self.page.locator("script").count() == 0
        assert self.page.locator("[onerror], [onload], [onclick]").count() == 0
        assert not [u for u in self.requests if "probe-onerror" in u or u.startswith("javascript:")]


def test_the_tree_renders_and_a_note_opens(browser: Any, reader: UIServer) -> None:
    w = Watched(browser)
    w.open(reader, "/tree")
    assert w.page.locator("h1").inner_text() == "Files"
    core = w.page.locator("summary", has_text="core/")  # nested folders start closed
    assert not w.page.get_by_role("link", name="human.md").is_visible()
    core.click()
    assert w.page.get_by_role("link", name="human.md").is_visible()
    w.page.locator("a.file[href='/file/memory/facts.md']").click()
    assert w.page.locator("article.note h1").inner_text() == "Facts"
    assert (
        w.page.locator("table.frontmatter").is_visible()
        and w.page.locator(".pill-trusted").is_visible()
    )
    assert w.page.locator("ol.timeline li").count() >= 1
    # The review branch is not what people read: the pending agent line is not here.
    assert "Webhook retries: 5 attempts" not in w.page.locator("article.note").inner_text()
    w.context.close()


def test_a_sessions_diff_shows(browser: Any, reader: UIServer) -> None:
    w = Watched(browser)
    w.open(reader, "/sessions")
    w.page.get_by_role("link", name=AGENT_SESSION).first.click()
    assert w.page.locator(".pill-pending").first.is_visible()
    added = w.page.locator("tr.d-add td.code", has_text="Webhook retries: 5 attempts")
    assert added.count() == 1 and added.is_visible()
    assert w.page.locator("details.file-diff summary", has_text="notes/retry-notes.md").is_visible()
    w.context.close()


def test_planted_script_and_onerror_never_execute(browser: Any, reader: UIServer) -> None:
    w = Watched(browser)
    for path in ("/", f"/sessions/{AGENT_SESSION}", "/search?q=retry", "/tree"):
        w.open(reader, path)
        w.assert_nothing_ran()
    w.open(reader, f"/sessions/{AGENT_SESSION}")
    body = w.page.locator("main").inner_text()
    assert "<script>window.__pwned = 'script'" in body and 'onerror="window.__pwned' in body
    w.assert_nothing_ran()
    w.context.close()


def test_approve_merges_and_the_note_renders_inert(browser: Any, writer: UIServer) -> None:
    w = Watched(browser)
    w.open(writer, "/")
    card = w.page.locator("section.card", has_text=AGENT_SESSION)
    card.locator("button[data-action='approve']").click()
    assert w.page.locator("h1").inner_text() == "Approved"
    assert "is on the main branch" in w.page.locator("p.ok").inner_text()
    facts = ContextManager(writer.ctx.root, read_only=True, index=False).read("memory/facts.md")
    assert "Webhook retries: 5 attempts" in (facts or "")
    w.open(writer, "/file/notes/retry-notes.md")
    w.assert_nothing_ran()
    assert w.page.locator("article.note h1").inner_text() == "Retry notes"
    assert "<script>" in w.page.locator("article.note").inner_text()
    w.open(writer, f"/sessions/{AGENT_SESSION}")
    assert w.page.locator(".pill-approved").first.is_visible()
    w.context.close()


def test_a_browser_without_the_token_is_refused(browser: Any, reader: UIServer) -> None:
    context = browser.new_context()
    page = context.new_page()
    response = page.goto(reader.url.split("/?")[0] + "/tree")
    assert response.status == 403 and "access token" in page.content()
    response = page.goto(reader.url.split("?")[0] + "?token=not-the-token")
    assert response.status == 403
    context.close()


def test_write_actions_are_absent_without_the_switch(browser: Any, reader: UIServer) -> None:
    w = Watched(browser)
    for path in ("/", f"/sessions/{AGENT_SESSION}", "/trash"):
        w.open(reader, path)
        assert w.page.locator("button[data-action], form[method='post']").count() == 0
    w.open(reader, "/")
    assert "contextfs ui --write" in w.page.locator("section.card").first.inner_text()
    # Even a hand-made request with the browser's cookie finds no such action.
    response = w.context.request.post(
        reader.url.split("/?")[0] + f"/sessions/{AGENT_SESSION}/approve", form={"csrf": "0" * 64}
    )
    assert response.status in (404, 405)
    w.context.close()
