"""Bounded requests for virtflow's HTTP servers (the API and the reference receiver): how long a
request's headers and body may take to arrive, how long an idle kept-alive connection stays,
and how many connections one process holds at once.

uvicorn bounds two of them itself: `timeout_keep_alive` closes an idle kept-alive connection,
and `limit_concurrency` answers 503 (never a dropped connection) to requests past that many
connections or requests in flight. It bounds neither the headers nor the body in time: a
client that connects and says nothing, or sends one byte a second, holds its connection for
ever. Hence two small pieces here, each the narrowest place that sees the phase:

- the headers are parsed inside uvicorn's protocol, before any ASGI app runs, so
  `header_deadline_protocol` subclasses uvicorn's own HTTP protocol: a timer armed when a
  connection opens, and when the first byte of a kept-alive connection's next request
  arrives, disarmed once a request's headers are complete; when it fires, 408 and close.
  It relies on two attributes both uvicorn protocols share (`cycle`, `transport`);
  tests/webhooks/test_bounded_requests.py fails if a uvicorn release changes them.
- the body is read by the app through ASGI `receive`, so `BodyDeadline` is ASGI middleware:
  once the headers are in, the whole body must arrive within its deadline, or the caller
  gets 408 with `Connection: close` and the app sees the client leave.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)
# Descriptors the process keeps beyond its connections (logs, sqlite, Temporal, listeners).
_RESERVED_FDS = 128
_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
)


class RequestLimits(BaseModel):
    """Defaults a public-facing server can live with: a spare request is a few hundred bytes,
    an explain body at most 1 MiB, and a burst of 1,000 concurrent POSTs stays under the cap."""

    header_seconds: float = Field(default=10.0, gt=0)
    body_seconds: float = Field(default=30.0, gt=0)
    # Above a load balancer's usual 60 s idle timeout, so that it closes first (nginx: 75 s).
    keep_alive_seconds: float = Field(default=75.0, gt=0)
    max_connections: int = Field(default=2048, ge=1)

    def uvicorn_options(self) -> dict[str, Any]:
        """What `uvicorn.Config` takes for these limits (the body's is `BodyDeadline`)."""
        return {
            "http": header_deadline_protocol(self.header_seconds),
            "timeout_keep_alive": self.keep_alive_seconds,
            "limit_concurrency": connection_cap(self.max_connections),
        }


def connection_cap(wanted: int) -> int:
    """`wanted`, raising the soft descriptor limit to fit it where the hard one allows; less
    (with a warning) where it does not, so the cap answers 503 before accept() fails."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + _RESERVED_FDS
    if soft != resource.RLIM_INFINITY and soft < needed:
        raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft != resource.RLIM_INFINITY and soft < needed:
        fitted = max(soft - _RESERVED_FDS, 1)
        log.warning(
            "max connections %d lowered to %d: open files limited to %d", wanted, fitted, soft
        )
        return fitted
    return wanted


class _HeaderDeadline(HttpToolsProtocol):
    header_seconds: float = 10.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        super().data_received(data)
        if self.cycle is not before:
            self._disarm()  # a request's headers are complete
        elif self._header_timer is None and (before is None or before.response_complete):
            self._arm()  # the first bytes of a kept-alive connection's next request

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        loop = asyncio.get_running_loop()
        self._header_timer = loop.call_later(self.header_seconds, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.write(_TIMEOUT_RESPONSE)
            self.transport.close()


def header_deadline_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools) with the request headers bounded to `seconds`."""
    return type("HeaderDeadlineProtocol", (_HeaderDeadline,), {"header_seconds": seconds})


def _plain_timeout(detail: str) -> Response:
    return JSONResponse({"detail": detail}, status_code=408)


class BodyDeadline:
    """ASGI middleware: the request body must arrive within `seconds` of its headers."""

    def __init__(
        self,
        app: ASGIApp,
        seconds: float,
        timeout_response: Callable[[str], Response] = _plain_timeout,
    ) -> None:
        self.app = app
        self.seconds = seconds
        self.timeout_response = timeout_response

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        body_done = False
        timed_out = False
        started = False

        async def bounded_receive() -> Message:
            nonlocal body_done, timed_out
            if timed_out:
                return {"type": "http.disconnect"}
            if body_done:  # past the body: waiting for a disconnect is not bounded here
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                timed_out = True
                if not started:
                    detail = f"request body not received within {self.seconds:g} s"
                    response = self.timeout_response(detail)
                    response.headers["connection"] = "close"
                    await response(scope, receive, send)
                return {"type": "http.disconnect"}
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if timed_out:
                return  # the 408 was the answer
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except Exception:
            if not timed_out:
                raise
            # The app's own reaction to the client cut off (Starlette's ClientDisconnect, say):
            # the 408 has answered it, and an attack is no server error to log.
