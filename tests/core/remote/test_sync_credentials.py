"""A token people put in a remote's URL never leaves through contextfs's own words.

``git remote add origin https://deploy:<token>@host/repo.git`` is how many people give a CI
job or a server access. git itself leaves the user information out of what it prints;
contextfs's messages, its sync result and its CLI output show the remote the same way
(``contextfs.remote.transport.without_credentials``). The remote here is a real one over
HTTP: a bare repository served as plain files on loopback, which git fetches with its
"dumb" protocol and cannot push to.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from sync_support import bare_remote, first_machine, run_git

from contextfs import ContextManager, VersioningError
from contextfs.cli import cli
from contextfs.remote.transport import Target, quoted, without_credentials

TOKEN = "ghp_R2x8Kq4LmZ7pN3vT9wY6sB1cF5hJ0dGaEuXi"
USER = "deploy-bot"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A bare remote holding one root, served over HTTP as plain files on loopback."""
    remote = bare_remote(tmp_path / "site" / "r.git")
    first = first_machine(tmp_path / "first", remote.as_uri(), "first")
    first.write("project/README.md", "# Tidewater\n\nA billing service.\n")
    first.remote.sync()
    run_git("-C", str(remote), "update-server-info")  # what git's dumb protocol reads
    handler = functools.partial(_Quiet, directory=str(tmp_path / "site"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield remote, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _machine(root: Path, url: str) -> ContextManager:
    run_git("init", "-q", "-b", "main", str(root))
    run_git("-C", str(root), "config", "contextfs.machine", "ci")
    run_git("-C", str(root), "remote", "add", "origin", url)
    return ContextManager(root, index=False)


def test_a_sync_over_http_reports_the_remote_without_its_credentials(
    tmp_path: Path, served: tuple[Path, int]
) -> None:
    _, port = served
    ctx = _machine(tmp_path / "ci", f"http://{USER}:{TOKEN}@127.0.0.1:{port}/r.git")
    result = ctx.remote.sync(push=False)
    assert ctx.read("project/README.md").startswith("# Tidewater")  # it did fetch
    assert result.url == f"http://127.0.0.1:{port}/r.git"
    out = CliRunner().invoke(cli, ["--root", str(ctx.root), "sync", "--no-push", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["url"] == f"http://127.0.0.1:{port}/r.git"
    out = CliRunner().invoke(cli, ["--root", str(ctx.root), "sync", "--no-push"])
    assert out.exit_code == 0 and TOKEN not in out.output and USER not in out.output
    assert TOKEN not in repr(ctx.remote.target())


def test_a_refused_push_names_the_remote_without_its_credentials(
    tmp_path: Path, served: tuple[Path, int]
) -> None:
    _, port = served
    ctx = _machine(tmp_path / "ci", f"http://{USER}:{TOKEN}@127.0.0.1:{port}/r.git")
    ctx.remote.sync(push=False)
    ctx.write("notes/ci.md", "# CI\n\nThe nightly job syncs this root.\n")
    with pytest.raises(VersioningError) as refused:
        ctx.remote.sync()  # plain files over HTTP take no push
    assert "git push to origin" in str(refused.value)
    assert TOKEN not in str(refused.value) and USER not in str(refused.value)


def test_an_unreachable_remote_is_named_without_its_credentials(tmp_path: Path) -> None:
    ctx = _machine(tmp_path / "ci", f"https://{USER}:{TOKEN}@127.0.0.1:9/r.git")
    with pytest.raises(VersioningError) as refused:
        ctx.remote.sync()
    assert "https://127.0.0.1:9/r.git" in str(refused.value)
    assert TOKEN not in str(refused.value) and USER not in str(refused.value)
    for args in (["sync"], ["sync", "--json"]):
        out = CliRunner().invoke(cli, ["--root", str(ctx.root), *args])
        assert out.exit_code != 0
        assert TOKEN not in out.output and USER not in out.output


def test_a_url_contextfs_does_not_use_is_named_without_its_credentials(tmp_path: Path) -> None:
    ctx = _machine(tmp_path / "ci", "https://host/r.git")
    # git's own `remote add` refuses a URL starting with `-`; its config does not
    run_git("-C", str(ctx.root), "config", "remote.origin.url", f"-https://{USER}:{TOKEN}@h/r")
    with pytest.raises(VersioningError) as refused:
        ctx.remote.sync()
    assert "does not use" in str(refused.value) and TOKEN not in str(refused.value)


_INFO = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:%@!$&()*+,;=-", min_size=1)


@given(
    scheme=st.sampled_from(["http", "https", "ssh", "git", "HTTPS"]),
    info=_INFO,
    host=st.from_regex(r"[a-z0-9.-]{1,20}(:[0-9]{1,5})?", fullmatch=True),
    path=st.from_regex(r"(/[a-z0-9._@-]{0,12}){0,3}", fullmatch=True),
)
def test_no_user_information_survives_in_any_url(
    scheme: str, info: str, host: str, path: str
) -> None:
    url = f"{scheme}://{info}@{host}{path}"
    shown = without_credentials(url)
    assert shown == f"{scheme}://{host}{path}"
    assert without_credentials(f"fatal: unable to access '{url}/': 403") == (
        f"fatal: unable to access '{shown}/': 403"
    )
    assert Target("origin", url, "main").shown == shown


def test_urls_without_user_information_are_shown_as_written() -> None:
    for url in (
        "https://github.com/acme/context.git",
        "git@github.com:acme/context.git",  # a user name, never a password, in scp form
        "file:///srv/context.git",
        "/srv/context.git",
        "https://host/people/ann@example.com/context.git",
    ):
        assert without_credentials(url) == url


def test_quoted_git_output_loses_credentials_before_it_is_cut() -> None:
    # Cut first, the URL would lose its `@` at the 300th character and keep the password.
    output = "x" * 240 + f" fatal: unable to access 'https://{USER}:{TOKEN}@host/r.git/'"
    assert TOKEN[:8] not in quoted(output) and len(quoted(output)) <= 300
    assert quoted(output).startswith("x" * 240)
