"""Run the reference receiver: in-process (lab, tests) or as its own process.

    WEBHOOK_SECRETS="whsec_... whsec_..." python -m webhooks.serve --db events.sqlite --port 8088

Several secrets (space- or comma-separated) are all accepted, which is how a key rotates.
Requests are bounded (headers, body, idle keep-alive, connections: webhooks/bounded.py);
`--help` lists the options.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from .bounded import BodyDeadline, RequestLimits
from .receiver import create_receiver_app

SECRETS_ENV = "WEBHOOK_SECRETS"
_STARTUP_TIMEOUT_SECONDS = 10.0


class ServerStartError(RuntimeError):
    """An embedded server stopped, or never became ready, during start-up."""


class ServerStartTimeout(ServerStartError, TimeoutError):
    """An embedded server was not ready within its start-up timeout."""


class _SignalFreeServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # In-process servers must leave Ctrl-C to their host program.
        yield


class EmbeddedServer:
    """One ASGI app under uvicorn in the running loop, on a socket bound here.

    Port 0 picks a free port, known as soon as `start` returns. uvicorn's signal capture is
    off: the embedding program owns Ctrl-C. Keyword arguments beyond the listed ones go to
    `uvicorn.Config` (defaults: log_level="warning", lifespan="off"). One start per instance.
    """

    def __init__(
        self,
        app: ASGIApp,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        name: str = "the embedded server",
        startup_timeout: float = _STARTUP_TIMEOUT_SECONDS,
        **config: Any,
    ) -> None:
        self.host = host
        self.name = name
        self.startup_timeout = startup_timeout
        self._requested_port = port
        self._server = _SignalFreeServer(
            uvicorn.Config(app, **{"log_level": "warning", "lifespan": "off", **config})
        )
        self._task: asyncio.Task[None] | None = None
        self._address: tuple[str, int] | None = None

    @property
    def port(self) -> int:
        if self._address is None:
            raise RuntimeError(f"{self.name} is not started")
        return self._address[1]

    @property
    def url(self) -> str:
        if self._address is None:
            raise RuntimeError(f"{self.name} is not started")
        return f"http://{self._address[0]}:{self._address[1]}"

    @property
    def started(self) -> bool:
        return self._server.started

    async def start(self) -> str:
        """Bind, serve, and return the base URL once uvicorn is ready (bounded wait)."""
        if self._task is not None:
            raise RuntimeError(f"{self.name} was already started")
        # Named TCP, not left at 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
        # sockets whose protocol says TCP, and an accepted socket inherits the listener's. With
        # Nagle on, the second write of a response on a kept-alive connection (its body after
        # its headers) waits for the client's delayed ACK: 40 ms per answer on loopback.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self._requested_port))
        except BaseException:
            sock.close()
            raise
        bound_host, bound_port = sock.getsockname()[:2]
        self._task = asyncio.create_task(self._serve(sock))
        try:
            await self._wait_started(self._task)
        except BaseException:
            self._task.cancel()
            await asyncio.wait({self._task})
            raise
        self._address = (bound_host, bound_port)
        return self.url

    async def _serve(self, sock: socket.socket) -> None:
        try:
            await self._server.serve(sockets=[sock])
        finally:
            sock.close()

    async def _wait_started(self, task: asyncio.Task[None]) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.startup_timeout
        while not self._server.started:
            if task.done():
                task.result()  # surfaces the start-up error
                raise ServerStartError(f"{self.name} stopped during start-up")
            if loop.time() >= deadline:
                raise ServerStartTimeout(
                    f"{self.name} did not start within {self.startup_timeout:g} s"
                )
            await asyncio.sleep(0.005)

    def request_stop(self) -> None:
        """Ask uvicorn to exit (from the server's loop); `wait` or `stop` to see it done."""
        self._server.should_exit = True

    async def wait(self) -> None:
        """Until the server has exited (graceful shutdown included)."""
        if self._task is not None:
            await self._task

    async def stop(self) -> None:
        self.request_stop()
        await self.wait()


@contextlib.asynccontextmanager
async def serve_app(
    app: ASGIApp, host: str = "127.0.0.1", port: int = 0, **config: Any
) -> AsyncIterator[str]:
    """Serve `app` on the running loop; yields its base URL (port 0 picks a free port).
    `config` goes to `uvicorn.Config` (for instance `RequestLimits.uvicorn_options()`)."""
    server = EmbeddedServer(app, host, port, **config)
    url = await server.start()
    try:
        yield url
    finally:
        await server.stop()


def _secrets_from_env() -> list[str]:
    raw = os.environ.get(SECRETS_ENV, "")
    return [s for s in raw.replace(",", " ").split() if s]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="virtflow reference webhook receiver")
    parser.add_argument("--db", type=Path, default=Path(".virtflow/receiver.sqlite"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8088)
    default = RequestLimits()
    parser.add_argument("--header-timeout", type=float, default=default.header_seconds)
    parser.add_argument("--body-timeout", type=float, default=default.body_seconds)
    parser.add_argument("--keep-alive", type=float, default=default.keep_alive_seconds)
    parser.add_argument("--max-connections", type=int, default=default.max_connections)
    args = parser.parse_args(argv)
    limits = RequestLimits(
        header_seconds=args.header_timeout,
        body_seconds=args.body_timeout,
        keep_alive_seconds=args.keep_alive,
        max_connections=args.max_connections,
    )
    secrets = _secrets_from_env()
    if not secrets:
        parser.error(f"set {SECRETS_ENV} to the receiver's whsec_ secret(s)")
    app = BodyDeadline(create_receiver_app(secrets, args.db), limits.body_seconds)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", **limits.uvicorn_options())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
