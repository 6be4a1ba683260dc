"""The page's request rules at the HTTP level: the token, hosts, origins, CSRF, the write switch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip(
    "starlette", reason="the 'ui' extra is not installed: pip install 'contextfs-git[ui]'"
)

from starlette.testclient import TestClient  # noqa: E402 - after the extra's check

from contextfs import ConfigError, ContextManager  # noqa: E402
from contextfs.integrations.ui.app import build_app  # noqa: E402
from contextfs.integrations.ui.security import CSP, Guard  # noqa: E402
from contextfs.integrations.ui.server import UIServer  # noqa: E402

PORT = 48123
BASE = f"http://127.0.0.1:{PORT}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    person = ContextManager(tmp_path / "ctx", actor="human", index=False)
    person.write("memory/facts.md", "- one\n")
    scout = ContextManager(
        person.root, actor="agent:scout", session="s-scout", review=True, index=False
    )
    scout.write("notes/new.md", "# New\n")
    return person.root


def client(root: Path, *, write: bool) -> tuple[TestClient, Guard]:
    guard = Guard(PORT, write=write)
    ctx = ContextManager(root, actor="human", read_only=not write)
    return TestClient(build_app(ctx, guard), base_url=BASE, follow_redirects=False), guard


def test_the_token_is_needed_once_then_a_cookie_carries_it(root: Path) -> None:
    web, guard = client(root, write=False)
    refused = web.get("/")
    assert refused.status_code == 403 and "access token" in refused.text
    assert refused.headers["content-security-policy"] == CSP
    assert web.get("/", params={"token": "x" * 43}).status_code == 403
    entered = web.get("/sessions", params={"token": guard.token, "status": "pending"})
    assert entered.status_code == 303 and entered.headers["location"] == "/sessions?status=pending"
    cookie = entered.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and guard.token in cookie
    page = web.get("/sessions?status=pending")  # the client keeps the cookie
    assert page.status_code == 200 and "s-scout" in page.text
    for header in (
        "content-security-policy",
        "x-frame-options",
        "referrer-policy",
        "x-content-type-options",
    ):
        assert header in page.headers
    assert "script-src" not in CSP and "default-src 'none'" in CSP


def test_other_hosts_and_sites_are_refused(root: Path) -> None:
    web, guard = client(root, write=True)
    web.get("/", params={"token": guard.token})
    assert web.get("/", headers={"host": f"evil.invalid:{PORT}"}).status_code == 400
    assert web.get("/", headers={"host": "127.0.0.1:1"}).status_code == 400
    token = guard.csrf("approve", "s-scout")
    hostile = web.post(
        "/sessions/s-scout/approve", data={"csrf": token}, headers={"origin": "http://evil.invalid"}
    )
    assert hostile.status_code == 403


def test_a_change_needs_the_write_switch_and_the_forms_token(root: Path) -> None:
    reader, guard = client(root, write=False)
    reader.get("/", params={"token": guard.token})
    home = reader.get("/").text
    assert 'method="post"' not in home and "contextfs ui --write" in home
    assert reader.post(
        "/sessions/s-scout/approve", data={"csrf": guard.csrf("approve", "s-scout")}
    ).status_code in (404, 405)

    writer, guard = client(root, write=True)
    writer.get("/", params={"token": guard.token})
    page = writer.get("/").text
    assert 'data-action="approve"' in page and 'data-action="discard"' in page
    form_token = re.search(
        r'action="/sessions/s-scout/approve".*?name="csrf" value="([0-9a-f]+)"', page, re.S
    )
    assert form_token is not None
    for bad in (
        {},
        {"csrf": "0" * 64},
        {"csrf": guard.csrf("discard", "s-scout")},
        {"csrf": guard.csrf("approve", "s-other")},
    ):
        assert writer.post("/sessions/s-scout/approve", data=bad).status_code == 403
    assert not ContextManager(root, read_only=True, index=False).exists("notes/new.md")
    done = writer.post("/sessions/s-scout/approve", data={"csrf": form_token.group(1)})
    assert done.status_code == 200 and "is on the main branch" in done.text
    assert ContextManager(root, read_only=True, index=False).exists("notes/new.md")
    assert (
        writer.post(
            "/sessions/s-scout/launch", data={"csrf": guard.csrf("launch", "s-scout")}
        ).status_code
        == 404
    )


def test_only_loopback_addresses(root: Path) -> None:
    for host in ("0.0.0.0", "192.0.2.1", "localhost.evil"):
        with pytest.raises(ConfigError, match="loopback"):
            UIServer(root, host=host)


def test_hostile_paths_and_revisions_never_leave_the_root(root: Path) -> None:
    web, guard = client(root, write=False)
    web.get("/", params={"token": guard.token})
    for path in (
        "/file/..%2F..%2F..%2Fetc%2Fpasswd",
        "/file/.git/config",
        "/file/%2Fetc%2Fpasswd",
        "/file/memory/facts.md?at=--output=/tmp/x",
        "/file/memory/facts.md?at=HEAD@{1}",
        "/topics/..%2F..%2Fetc",
        "/sessions/..%2F..%2Fetc",
    ):
        page = web.get(path)
        assert page.status_code in (400, 404), (path, page.status_code)
        assert "root:x:0:0" not in page.text and "[core]" not in page.text
    view = web.get("/view", params={"at": "--output=/tmp/x"})  # the view page says what was wrong
    assert view.status_code == 200 and 'class="warn"' in view.text and "not accepted" in view.text
    assert web.get("/search", params={"q": 'a AND ("'}).status_code == 200
