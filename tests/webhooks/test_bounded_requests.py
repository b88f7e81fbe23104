"""Bounded requests, attacked over real loopback sockets on the API and on the reference
receiver as `virtflow api` / `virtflow receiver` serve them (uvicorn with RequestLimits):
headers and bodies that trickle in at one byte a second, a connection that says nothing, an
idle kept-alive connection, and a flood past the connection cap. Each ends with the
connection closed by the server while the same process answers others. The attacks on one
server run at once. About 6 s.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp

from api.app import create_app
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.known_secrets import WEBHOOK_SECRET
from webhooks.bounded import BodyDeadline, RequestLimits
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app

# Deadlines between two trickled bytes, so that the server's close never crosses a write.
LIMITS = RequestLimits(header_seconds=1.5, body_seconds=1.5, keep_alive_seconds=1)
# A request that would take minutes at one byte a second: the server must cut it short.
HEAD = b"POST {path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
BODY = json.dumps({"padding": "x" * 200}).encode()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def api_app(tmp_path: Path) -> ASGIApp:
    settings = Settings(
        state_dir=tmp_path,
        temporal_address=f"127.0.0.1:{closed_port()}",  # /healthz needs no Temporal
        http_body_timeout_seconds=LIMITS.body_seconds,
    )
    return create_app(settings)


def receiver_app(tmp_path: Path) -> ASGIApp:
    return BodyDeadline(
        create_receiver_app([WEBHOOK_SECRET], tmp_path / "receiver.sqlite"), LIMITS.body_seconds
    )


# (app, the path attacked, a GET that answers 200)
SERVERS = {
    "api": (api_app, "/v1/spares", "/healthz"),
    "receiver": (receiver_app, "/webhooks", "/events"),
}


@pytest.fixture(params=sorted(SERVERS))
async def server(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, str, str]]:
    make, attacked, healthy = SERVERS[request.param]
    async with serve_app(make(tmp_path), **LIMITS.uvicorn_options()) as url:
        yield url, attacked, healthy


async def connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = httpx.URL(url).host, httpx.URL(url).port
    return await asyncio.open_connection(host, port)


async def trickle(url: str, data: bytes, ahead: bytes = b"") -> bytes:
    """Send `ahead` at once, then `data` one byte a second; what the server answered before it
    closed the connection. Fails if the whole request got through."""
    reader, writer = await connect(url)
    answer = asyncio.create_task(reader.read())  # until the server closes
    try:
        writer.write(ahead)
        for byte in data:
            try:
                writer.write(bytes([byte]))
                await writer.drain()
            except ConnectionError:
                break  # closed under the write: its answer is in `answer`
            done, _ = await asyncio.wait({answer}, timeout=1.0)
            if done:
                break
        else:
            pytest.fail(f"the server took all {len(data)} trickled bytes")
        return await answer
    finally:
        answer.cancel()
        writer.close()


async def still_answers(url: str, path: str) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        assert (await client.get(path)).status_code == 200


async def silent(url: str) -> bytes:
    """Connect and say nothing: what the server answers before it closes."""
    reader, writer = await connect(url)
    try:
        return await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


async def idle_after_one_answer(url: str, path: str) -> tuple[dict[str, str], bytes]:
    """One request on a kept-alive connection, then nothing: the answer's headers, and what
    came after it before the server closed the connection (b"" for a clean close)."""
    reader, writer = await connect(url)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nhost: test\r\n\r\n".encode())
        block = await reader.readuntil(b"\r\n\r\n")
        status, *lines = [line.decode() for line in block.split(b"\r\n") if line]
        assert status.startswith("HTTP/1.1 200 "), status
        headers = dict(line.lower().split(": ", 1) for line in lines)
        await reader.readexactly(int(headers["content-length"]))
        return headers, await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


async def test_trickling_silent_and_idle_clients_are_cut_off_while_others_are_answered(
    server: tuple[str, str, str],
) -> None:
    url, attacked, healthy = server
    head = HEAD.replace(b"{path}", attacked.encode())
    headers_trickle = asyncio.create_task(trickle(url, head + b"x-padding: " + b"y" * 200))
    body_trickle = asyncio.create_task(
        trickle(url, BODY, ahead=head + f"content-length: {len(BODY)}\r\n\r\n".encode())
    )
    says_nothing = asyncio.create_task(silent(url))
    idle = asyncio.create_task(idle_after_one_answer(url, healthy))

    await still_answers(url, healthy)
    assert (await headers_trickle).startswith(b"HTTP/1.1 408 ")
    body_answer = await body_trickle
    assert body_answer.startswith(b"HTTP/1.1 408 ") and b"connection: close" in body_answer.lower()
    assert b"not received within 1.5 s" in body_answer
    assert (await says_nothing).startswith(b"HTTP/1.1 408 ")
    kept_alive, after = await idle
    assert "close" not in kept_alive.get("connection", "")  # kept alive...
    assert after == b""  # ...until it idled too long
    await still_answers(url, healthy)


async def test_a_flood_past_the_connection_cap_is_answered_503_not_dropped(
    tmp_path: Path,
) -> None:
    limits = RequestLimits(header_seconds=30, max_connections=4)
    app: Any = receiver_app(tmp_path)
    async with serve_app(app, **limits.uvicorn_options()) as url:
        held = [await connect(url) for _ in range(limits.max_connections)]
        async with httpx.AsyncClient(base_url=url, timeout=10) as client:
            refused = await client.get("/events")
            assert refused.status_code == 503
            for _, writer in held:
                writer.close()

            async def answers_again() -> None:
                assert (await client.get("/events")).status_code == 200

            await assert_eventually(answers_again, timeout=10)
