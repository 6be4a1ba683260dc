"""Who may talk to the page, and what a request may do: the token, CSRF, hosts, headers.

The page is served on a loopback address only. Like a notebook server, it prints a URL
with a random token; the first request that carries it gets a cookie (HttpOnly,
SameSite=Strict, one name per port) and is redirected to the same page without the
token, so the token never stays in the address bar or a Referer. Every other request
without the token or that cookie is refused with 403.

A request whose ``Host`` is not the loopback address and port the server listens on is
refused (a DNS-rebinding page cannot reach it), and so is a state-changing request whose
``Origin`` is another site. Changes (approve, discard, undo, recover, restore) exist
only when the server was started with the write switch, and each form carries a CSRF
token bound to the server, the action and the session or entry it acts on.

Every response carries a Content-Security-Policy with no script source at all, so even
text that slipped through escaping could not run; the page itself has no JavaScript.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CSP", "Guard", "LOOPBACK_HOSTS", "SECURITY_HEADERS"]

#: The addresses the server may listen on.
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # "no-referrer" would make Chromium send "Origin: null" with a form, which is refused.
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class Guard:
    """The server's secrets and the checks made on every request."""

    def __init__(self, port: int, *, write: bool, token: str | None = None) -> None:
        self.port = port
        self.write = write
        self.token = token or secrets.token_urlsafe(32)
        self._csrf_key = secrets.token_bytes(32)
        self.cookie = f"contextfs-ui-{port}"
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    def url(self, host: str = "127.0.0.1") -> str:
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/?" + urlencode({"token": self.token})

    def csrf(self, action: str, target: str) -> str:
        """The form token for ``action`` on ``target`` (a session id or a trash entry)."""
        return hmac.new(self._csrf_key, f"{action}\0{target}".encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, action: str, target: str, given: object) -> bool:
        return isinstance(given, str) and hmac.compare_digest(self.csrf(action, target), given)

    def _token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """The ASGI middleware that applies the checks and the headers."""
        guard = self

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            request = Request(scope)
            refusal = guard.refuse(request)
            if refusal is not None:
                await guard.with_headers(refusal)(scope, receive, send)
                return
            if request.method == "GET" and "token" in request.query_params:
                # The token leaves the address bar: a cookie carries it from now on.
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = request.url.path + ("?" + urlencode(rest) if rest else "")
                response = RedirectResponse(target, status_code=303)
                response.set_cookie(
                    guard.cookie, guard.token, httponly=True, samesite="strict", path="/"
                )
                await guard.with_headers(response)(scope, receive, send)
                return

            async def send_with_headers(message: Message) -> None:
                if message["type"] == "http.response.start":
                    headers = list(message.get("headers", []))
                    names = {k.lower() for k, _ in headers}
                    for key, value in SECURITY_HEADERS.items():
                        if key.lower().encode() not in names:
                            headers.append((key.lower().encode(), value.encode()))
                    message["headers"] = headers
                await send(message)

            await app(scope, receive, send_with_headers)

        return guarded

    def refuse(self, request: Request) -> Response | None:
        """The refusal for a request that may not go on, or None."""
        host = request.headers.get("host", "")
        if host not in self.hosts:
            return PlainTextResponse(
                "refused: this server answers only on its loopback address\n", status_code=400
            )
        origin = request.headers.get("origin")
        if (
            request.method not in ("GET", "HEAD")
            and origin is not None
            and origin not in self.origins
        ):
            return PlainTextResponse("refused: a request from another site\n", status_code=403)
        given = request.query_params.get("token") if request.method == "GET" else None
        if not (self._token_ok(request.cookies.get(self.cookie)) or self._token_ok(given)):
            return PlainTextResponse(
                "refused: open the address that `contextfs ui` printed "
                "(it carries the access token)\n",
                status_code=403,
            )
        return None

    @staticmethod
    def with_headers(response: Response) -> Response:
        for key, value in SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        return response
