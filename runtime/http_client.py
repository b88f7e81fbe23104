"""The activities' outbound HTTP: one pooled aiohttp session, answers read whole.

Webhook deliveries, hypervisor calls and inventory reads are most of a spare's HTTP requests.
Measured on loopback (docs/BENCHMARKS.md), httpx spends 0.7 ms of CPU per request, and
1.1-1.6 ms with twenty in flight, because its connection pool re-examines every pooled
connection on each request; aiohttp spends 0.1-0.2 ms. The answers are small JSON documents,
so they are read whole into a `Reply`, unless the caller bounds them: a webhook receiver's
answer is somebody else's, and only its first few KiB are worth keeping.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from opentelemetry import propagate

CONNECTIONS_PER_HOST = 100


class HttpUnreachable(Exception):
    """No answer came: the connection failed, broke, or the time ran out.

    The message names what happened and the cause's type, never the cause's text: a
    transport error's text can carry the URL, and a URL can carry credentials.
    """

    def __init__(self, cause: BaseException) -> None:
        self.timed_out = isinstance(cause, TimeoutError)
        if self.timed_out:
            what = "timed out"
        elif isinstance(cause, aiohttp.ClientConnectorError):
            what = "cannot connect"
        elif isinstance(cause, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError):
            what = "connection lost"
        else:
            what = "request failed"
        super().__init__(f"{what} ({type(cause).__name__})")


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Mapping[str, str]  # case-insensitive names, as aiohttp reads them
    body: bytes
    # The answer went on past the caller's `max_body_bytes`; the rest was never read.
    truncated: bool = False

    @property
    def is_success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; ValueError if it is not."""
        return json.loads(self.body)


async def _bounded_reply(response: aiohttp.ClientResponse, limit: int) -> Reply:
    body = bytearray()
    while len(body) < limit:
        chunk = await response.content.read(limit - len(body))
        if not chunk:
            break
        body += chunk
    truncated = not response.content.at_eof()
    if truncated:
        response.close()  # never reused: the rest of the answer is still on the wire
    return Reply(response.status, response.headers, bytes(body), truncated)


class HttpClient:
    """One connection pool shared by its users; created on first use, in the running loop."""

    def __init__(self, timeout_seconds: float = 60.0) -> None:
        self.timeout_seconds = timeout_seconds
        self._session: aiohttp.ClientSession | None = None

    async def request(
        self,
        method: str,
        url: str,
        *,
        json: object = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout_seconds: float | None = None,
        max_body_bytes: int | None = None,
    ) -> Reply:
        """Send one request and read its answer. Redirects are answers, not followed.

        With `max_body_bytes`, at most that much of the answer is read; the connection is then
        dropped rather than drained, so a huge or endless answer costs nothing more.
        """
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                # Bounded per destination, not in total: a slow webhook receiver cannot hold
                # the connections the hypervisor calls need.
                connector=aiohttp.TCPConnector(limit=0, limit_per_host=CONNECTIONS_PER_HOST),
                # The HTTP(S)_PROXY and NO_PROXY a site sets for its workers apply.
                trust_env=True,
            )
        timeout = aiohttp.ClientTimeout(total=timeout_seconds or self.timeout_seconds)
        # W3C traceparent (and baggage) of the current span, when tracing is on: a receiver's
        # or hypervisor's own traces join the spare's.
        headers = dict(headers or {})
        propagate.inject(headers)
        try:
            async with self._session.request(
                method,
                url,
                json=json,
                data=content,
                headers=headers,
                timeout=timeout,
                allow_redirects=False,
            ) as response:
                if max_body_bytes is None:
                    return Reply(response.status, response.headers, await response.read())
                return await _bounded_reply(response, max_body_bytes)
        except (aiohttp.ClientError, TimeoutError) as err:
            raise HttpUnreachable(err) from None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
