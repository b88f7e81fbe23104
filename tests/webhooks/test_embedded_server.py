"""The in-process uvicorn runner shared by the receiver and the lab servers."""

from __future__ import annotations

import socket

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from webhooks.serve import EmbeddedServer, ServerStartTimeout


async def _hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


def _app() -> Starlette:
    return Starlette(routes=[Route("/", _hello)])


async def test_serves_on_a_free_port_and_stops() -> None:
    server = EmbeddedServer(_app())
    url = await server.start()
    assert server.port > 0
    assert url == server.url == f"http://127.0.0.1:{server.port}"
    async with httpx.AsyncClient() as http:
        assert (await http.get(url)).text == "hello"
    await server.stop()
    await server.stop()  # idempotent
    with socket.socket() as probe:  # the port is free again
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", server.port))


async def test_start_up_wait_is_bounded() -> None:
    server = EmbeddedServer(_app(), name="the test server", startup_timeout=0)
    with pytest.raises(ServerStartTimeout, match="the test server did not start") as err:
        await server.start()
    assert isinstance(err.value, RuntimeError) and isinstance(err.value, TimeoutError)


async def test_busy_port_fails_at_once() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            await EmbeddedServer(_app(), port=taken.getsockname()[1]).start()


async def test_answers_are_not_held_back_by_nagle() -> None:
    # With Nagle's algorithm on, a response's body written after its headers on a kept-alive
    # connection waits for the client's delayed ACK (40 ms on loopback): every connection the
    # server accepts has TCP_NODELAY set.
    server = EmbeddedServer(_app())
    url = await server.start()
    try:
        async with httpx.AsyncClient() as http:
            assert (await http.get(url)).text == "hello"
            connections = server._server.server_state.connections
            assert connections
            for protocol in connections:
                sock = protocol.transport.get_extra_info("socket")
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        await server.stop()
