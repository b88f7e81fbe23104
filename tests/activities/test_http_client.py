"""The activities' HTTP client against small loopback servers that misbehave on purpose:
redirects are answers, and every way of not answering is told apart without the URL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from runtime.http_client import HttpClient, HttpUnreachable, Reply

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def raw_server(handler: Handler) -> AsyncIterator[str]:
    """A TCP server on a free loopback port; yields its base URL. Every connection it
    accepted is closed on the way out, whatever its handler was doing."""
    writers: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://user:hunter2@127.0.0.1:{port}"
    finally:
        for writer in writers:
            writer.close()
        server.close()
        await server.wait_closed()


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            await reader.readexactly(int(line.split(b":")[1]))
    return head


def _answer(
    writer: asyncio.StreamWriter, status: str, headers: str = "", body: bytes = b""
) -> None:
    writer.write(
        f"HTTP/1.1 {status}\r\ncontent-length: {len(body)}\r\n{headers}\r\n".encode() + body
    )


@pytest.fixture
async def http() -> AsyncIterator[HttpClient]:
    client = HttpClient(timeout_seconds=5)
    yield client
    await client.aclose()


async def test_a_redirect_is_the_answer_not_followed(http: HttpClient) -> None:
    served: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(await _read_request(reader))
        _answer(writer, "302 Found", "Location: /elsewhere\r\nRetry-After: 7\r\n")
        await writer.drain()
        writer.close()

    async with raw_server(handler) as url:
        reply = await http.request("POST", f"{url}/webhooks", content=b"{}")
    assert reply.status == 302 and not reply.is_success
    assert reply.headers["retry-after"] == "7"  # header names are case-insensitive
    assert len(served) == 1 and served[0].startswith(b"POST /webhooks ")


async def test_json_bodies_go_out_and_come_back(http: HttpClient) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await _read_request(reader)
        assert b"content-type: application/json" in head.lower()
        _answer(writer, "201 Created", "content-type: application/json\r\n", b'{"vmid": 7}')
        await writer.drain()
        writer.close()

    async with raw_server(handler) as url:
        reply = await http.request("POST", f"{url}/vms", json={"name": "vm-a"})
    assert reply.is_success and reply.json() == {"vmid": 7}
    with pytest.raises(ValueError):
        Reply(200, reply.headers, b"not json").json()


async def test_a_server_that_never_answers_times_out(http: HttpClient) -> None:
    release = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await release.wait()
        writer.close()

    async with raw_server(handler) as url:
        with pytest.raises(HttpUnreachable) as caught:
            await http.request("GET", f"{url}/inventory", timeout_seconds=0.3)
        release.set()
    assert caught.value.timed_out
    assert str(caught.value).startswith("timed out (")
    assert "hunter2" not in str(caught.value) and "127.0.0.1" not in str(caught.value)


async def test_a_connection_closed_before_the_answer_is_lost_not_timed_out(
    http: HttpClient,
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.close()

    async with raw_server(handler) as url:
        with pytest.raises(HttpUnreachable) as caught:
            await http.request("DELETE", f"{url}/vms/vm-a")
    assert not caught.value.timed_out
    assert str(caught.value).startswith("connection lost (")
    assert "hunter2" not in str(caught.value)


async def test_nothing_listening_is_cannot_connect_and_the_client_recovers(
    http: HttpClient,
) -> None:
    async with raw_server(lambda r, w: asyncio.sleep(0)) as url:
        pass  # closed: nothing listens on that port any more
    with pytest.raises(HttpUnreachable) as caught:
        await http.request("GET", f"{url}/inventory")
    assert str(caught.value).startswith("cannot connect (")
    assert "hunter2" not in str(caught.value)

    await http.aclose()  # a closed client opens a new pool on its next request

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        _answer(writer, "200 OK", body=b"ok")
        await writer.drain()
        writer.close()

    async with raw_server(handler) as url:
        reply = await http.request("GET", f"{url}/")
    assert reply.status == 200 and reply.text == "ok"


async def test_a_bounded_read_keeps_the_start_and_drops_the_connection(http: HttpClient) -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                head = await _read_request(reader)
                wants_big = head.startswith(b"GET /big")
                body = b"0123456789" * 1_000_000 if wants_big else b"small"
                _answer(writer, "200 OK", body=body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed this connection

    async with raw_server(handler) as url:
        big = await http.request("GET", f"{url}/big", max_body_bytes=64)
        small = await http.request("GET", f"{url}/small", max_body_bytes=64)
        again = await http.request("GET", f"{url}/small", max_body_bytes=64)
    assert (big.body, big.truncated) == (b"0123456789" * 6 + b"0123", True)
    assert (small.body, small.truncated) == (b"small", False)
    assert again.body == b"small"
    # The connection still carrying the rest of the big answer was dropped, not drained and
    # reused; the small answers' one was reused.
    assert connections == 2
