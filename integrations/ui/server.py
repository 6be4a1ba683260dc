"""Serving the page: a socket on a loopback address, uvicorn, and the root's handle.

The socket is bound here (port 0 picks a free one), before anything is served, so the
URL printed — with its token — names the real port. Only loopback addresses are
accepted: the page shows and, with the write switch, changes a person's context, and
nothing beyond this machine may reach it.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import uvicorn

from contextfs.errors import ConfigError
from contextfs.manager import ContextManager

from .app import build_app
from .security import Guard

__all__ = ["UIServer"]


class UIServer:
    """The page for one root, served on a loopback address until :meth:`stop`."""

    def __init__(
        self,
        root: str | Path,
        *,
        write: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        ctx: ContextManager | None = None,
    ) -> None:
        if host not in ("127.0.0.1", "::1"):
            raise ConfigError(
                f"the page is served on a loopback address only (127.0.0.1 or ::1), not {host!r}"
            )
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))
        except OSError as exc:
            self.socket.close()
            raise ConfigError(
                f"cannot listen on {host} port {port} ({exc.strerror}); pick another --port, "
                "or 0 for a free one"
            ) from None
        self.socket.listen(64)
        self.port = int(self.socket.getsockname()[1])
        self.host = host
        self.guard = Guard(self.port, write=write, token=token)
        self.ctx = (
            ctx if ctx is not None else ContextManager(root, actor="human", read_only=not write)
        )
        config = uvicorn.Config(
            build_app(self.ctx, self.guard),
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The address to open, with the access token."""
        return self.guard.url(self.host)

    def serve(self) -> None:
        """Serve until interrupted (Ctrl-C) or stopped."""
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self.socket.close()

    def start(self) -> UIServer:
        """Serve from a background thread (for tests and embedding); returns self."""
        self._thread = threading.Thread(target=self.serve, name="contextfs-ui", daemon=True)
        self._thread.start()
        while not self._server.started and self._thread.is_alive():
            self._thread.join(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.socket.close()
        self.ctx.close()
