"""The page's routes: Starlette endpoints over :mod:`.pages`, rendered by Jinja2.

Reading routes answer GET only. The decisions — approve, discard, recover and undo a
session, restore a trash entry — are POST routes that exist only when the server was
started with the write switch, and each checks its form's CSRF token
(:class:`.security.Guard`) before it touches anything. One lock serialises the requests
on the root's handle: the page is for one person, and the manager's caches are not
meant for concurrent callers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp

from contextfs.errors import ContextFSError, NotFoundError
from contextfs.review.sessions import Sessions

from . import pages
from .render import diff_lines, file_url
from .security import Guard

if TYPE_CHECKING:
    from contextfs import ContextManager

__all__ = ["ACTIONS", "build_app"]

#: The decisions a session page offers (with the write switch), and what each says when done.
ACTIONS = {"approve": "Approved", "discard": "Discarded", "recover": "Recovered", "undo": "Undone"}
_PACKAGE = files("contextfs.integrations.ui")
_MAX_FORM = 16 * 1024


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(_PACKAGE / "templates")),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["file_url"] = file_url
    env.filters["short"] = lambda sha: str(sha or "")[:10]
    env.filters["when"] = lambda iso: str(iso or "").replace("T", " ").replace("Z", "")[:16]
    env.filters["isotime"] = lambda unix: datetime.fromtimestamp(
        int(unix), tz=timezone.utc
    ).strftime("%Y-%m-%d %H:%M")
    env.filters["diff_rows"] = diff_lines
    env.filters["pretty"] = _pretty
    return env


def _pretty(value: Any) -> str:
    """A frontmatter value as one line of text (the template escapes it)."""
    if isinstance(value, (list, tuple)):
        return ", ".join(_pretty(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def build_app(ctx: ContextManager, guard: Guard) -> ASGIApp:
    """The page for one root; ``guard`` holds the token, the write switch and the CSRF key."""
    templates = Jinja2Templates(env=_environment())
    lock = threading.Lock()
    css = (_PACKAGE / "static" / "ui.css").read_bytes()

    def render(request: Request, name: str, data: dict[str, Any], status: int = 200) -> Response:
        values = {
            "write": guard.write,
            "csrf": guard.csrf,
            "root": str(ctx.root),
            "section": name.split(".")[0],
            **data,
        }
        return templates.TemplateResponse(request, name, values, status_code=status)

    def failure(request: Request, exc: Exception, status: int) -> Response:
        return render(request, "error.html", {"message": str(exc)}, status)

    def reading(name: str, gather: Callable[[Request], dict[str, Any]]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            def run() -> dict[str, Any]:
                with lock:
                    return gather(request)

            try:
                data = await run_in_threadpool(run)
            except NotFoundError as exc:
                return failure(request, exc, 404)
            except ContextFSError as exc:
                return failure(request, exc, 400)
            return render(request, name, data)

        return endpoint

    def arg(request: Request, key: str, default: str = "") -> str:
        return request.query_params.get(key, default)[:400]

    def number(request: Request, key: str, default: int) -> int:
        text = arg(request, key)
        return int(text) if text.isdigit() else default

    async def decide(request: Request) -> Response:
        if not guard.write:
            return failure(
                request,
                PermissionError("this page is read-only; start it with `contextfs ui --write`"),
                403,
            )
        body = await request.body()
        form = parse_qs(body[:_MAX_FORM].decode("utf-8", "replace"))
        action, target = request.path_params["action"], request.path_params["target"]
        kind = "restore" if request.url.path.startswith("/trash/") else action
        if (kind == "restore" and action != "restore") or (
            kind != "restore" and action not in ACTIONS
        ):
            return failure(request, NotFoundError(f"unknown action {action!r}"), 404)
        if not guard.csrf_ok(kind, target, (form.get("csrf") or [""])[0]):
            return failure(
                request,
                PermissionError("the form's token does not match; reload the page and retry"),
                403,
            )

        def run() -> dict[str, Any]:
            with lock:
                if kind == "restore":
                    return {
                        "title": "Restored",
                        "target": target,
                        "report": ctx.restore(target),
                        "kind": kind,
                    }
                report = getattr(Sessions(ctx), action)(target)
                return {"title": ACTIONS[action], "target": target, "report": report, "kind": kind}

        try:
            data = await run_in_threadpool(run)
        except NotFoundError as exc:
            return failure(request, exc, 404)
        except ContextFSError as exc:
            return failure(request, exc, 409)
        return render(request, "done.html", data)

    async def stylesheet(request: Request) -> Response:
        return Response(css, media_type="text/css", headers={"Cache-Control": "no-store"})

    async def not_found(request: Request, exc: Exception) -> Response:
        return guard.with_headers(HTMLResponse("not found", status_code=404))

    routes = [
        Route("/", reading("home.html", lambda r: pages.home_page(ctx))),
        Route("/tree", reading("tree.html", lambda r: pages.tree_page(ctx))),
        Route(
            "/file/{path:path}",
            reading(
                "file.html",
                lambda r: pages.file_page(ctx, r.path_params["path"], arg(r, "at") or None),
            ),
        ),
        Route(
            "/sessions",
            reading("sessions.html", lambda r: pages.sessions_page(ctx, arg(r, "status"))),
        ),
        Route(
            "/sessions/{session}",
            reading("session.html", lambda r: pages.session_page(ctx, r.path_params["session"])),
        ),
        Route(
            "/view",
            reading(
                "view.html",
                lambda r: pages.view_page(
                    ctx,
                    scope=arg(r, "scope"),
                    budget=number(r, "budget", 2000),
                    query=arg(r, "query"),
                    at=arg(r, "at"),
                    subtask=arg(r, "subtask"),
                    topic=arg(r, "topic"),
                ),
            ),
        ),
        Route("/topics", reading("topics.html", lambda r: pages.topics_page(ctx))),
        Route(
            "/topics/{name}",
            reading("topic.html", lambda r: pages.topic_page(ctx, r.path_params["name"])),
        ),
        Route("/search", reading("search.html", lambda r: pages.search_page(ctx, arg(r, "q")))),
        Route("/trash", reading("trash.html", lambda r: pages.trash_page(ctx))),
        Route("/static/ui.css", stylesheet),
    ]
    if guard.write:
        routes += [
            Route("/sessions/{target}/{action}", decide, methods=["POST"]),
            Route("/trash/{target}/{action}", decide, methods=["POST"]),
        ]
    # The guard wraps the whole application, error pages included.
    return guard.middleware(Starlette(routes=routes, exception_handlers={404: not_found}))
