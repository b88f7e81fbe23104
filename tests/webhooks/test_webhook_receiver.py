"""The reference receiver over real HTTP: verifies, de-duplicates, stores durably."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from webhooks.events import EventType, SpareEvent, SpareEventData, webhook_id
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from webhooks.signing import InvalidSecretError, generate_secret, signed_headers
from webhooks.store import EventStore

SECRET = generate_secret()


def _event(spare_id: str = "spare-c1-r1", type: EventType = EventType.READY) -> SpareEvent:
    return SpareEvent(
        type=type,
        timestamp=datetime.now(UTC),
        data=SpareEventData(spare_id=spare_id, cluster="c1", reason="<b>x</b>"),
    )


def _delivery(
    event: SpareEvent, secrets: list[str] | None = None, msg_id: str | None = None
) -> tuple[bytes, dict[str, str]]:
    body = event.to_body()
    msg_id = msg_id or webhook_id(event.data.spare_id, "run-1", event.type)
    return body, signed_headers(secrets or [SECRET], msg_id, body)


class Receiver:
    def __init__(self, app: FastAPI, http: httpx.AsyncClient) -> None:
        self.app, self.http = app, http

    async def post(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return await self.http.post("/webhooks", content=body, headers=headers)

    async def events(self, **params: str) -> list[dict[str, object]]:
        response = await self.http.get("/events", params=params)
        response.raise_for_status()
        result: list[dict[str, object]] = response.json()
        return result


@pytest.fixture
async def receiver(tmp_path: Path) -> AsyncIterator[Receiver]:
    app = create_receiver_app([SECRET], tmp_path / "events.sqlite")
    async with serve_app(app) as url, httpx.AsyncClient(base_url=url) as http:
        yield Receiver(app, http)


async def test_a_signed_delivery_is_stored_and_listed(receiver: Receiver) -> None:
    event = _event()
    body, headers = _delivery(event)
    response = await receiver.post(body, headers)
    assert response.status_code == 200
    assert response.json() == {"webhook_id": headers["webhook-id"], "duplicate": False}
    [stored] = await receiver.events()
    assert stored["webhook_id"] == headers["webhook-id"]
    assert stored["deliveries"] == 1
    assert SpareEvent.model_validate(stored["event"]) == event


async def test_a_retried_webhook_id_is_acknowledged_but_stored_once(receiver: Receiver) -> None:
    event = _event()
    first = await receiver.post(*_delivery(event))
    second = await receiver.post(*_delivery(event))  # fresh timestamp, same id
    assert first.json()["duplicate"] is False
    assert second.status_code == 200 and second.json()["duplicate"] is True
    [stored] = await receiver.events()
    assert stored["deliveries"] == 2


async def test_concurrent_retries_of_one_id_are_stored_once(receiver: Receiver) -> None:
    body, headers = _delivery(_event())
    responses = await asyncio.gather(*(receiver.post(body, headers) for _ in range(8)))
    assert [r.status_code for r in responses] == [200] * 8
    assert sorted(r.json()["duplicate"] for r in responses) == [False] + [True] * 7
    [stored] = await receiver.events()
    assert stored["deliveries"] == 8


async def test_a_bad_signature_gets_401_with_the_reason_and_is_not_stored(
    receiver: Receiver,
) -> None:
    body, headers = _delivery(_event(), secrets=[generate_secret()])
    response = await receiver.post(body, headers)
    assert response.status_code == 401
    assert response.json() == {"error": "no matching signature"}
    assert await receiver.events() == []


async def test_a_missing_header_gets_401(receiver: Receiver) -> None:
    body, headers = _delivery(_event())
    del headers["webhook-timestamp"]
    response = await receiver.post(body, headers)
    assert (response.status_code, response.json()) == (
        401,
        {"error": "missing header webhook-timestamp"},
    )


async def test_a_signed_body_that_is_not_an_event_gets_400(receiver: Receiver) -> None:
    body = b"[1, 2, 3]"
    response = await receiver.post(body, signed_headers([SECRET], "msg_x", body))
    assert response.status_code == 400
    assert await receiver.events() == []


async def test_unknown_event_types_are_kept_for_forward_compatibility(receiver: Receiver) -> None:
    body = b'{"type":"spare.future","timestamp":"2030-01-01T00:00:00Z","data":{"spare_id":"s1"}}'
    response = await receiver.post(body, signed_headers([SECRET], "msg_future", body))
    assert response.status_code == 200
    assert [e["type"] for e in await receiver.events()] == ["spare.future"]


async def test_a_body_of_the_old_flat_shape_gets_400(receiver: Receiver) -> None:
    body = b'{"type":"spare.ready","spare_id":"s1","cluster":"c1","data":{}}'
    response = await receiver.post(body, signed_headers([SECRET], "msg_flat", body))
    assert response.status_code == 400 and "data.spare_id" in response.json()["error"]


async def _post_streaming(url: str, chunked: bool, total: int) -> tuple[bytes, int]:
    """POST `total` bytes with a bad signature; (status line, bytes sent before the answer)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}"
    writer.write(
        f"POST /webhooks HTTP/1.1\r\nHost: {host}\r\n{framing}\r\n"
        "webhook-id: msg_big\r\nwebhook-timestamp: 1\r\nwebhook-signature: v1,AAAA\r\n\r\n".encode()
    )
    sent = 0

    async def send() -> None:
        nonlocal sent
        chunk = b"x" * 65536
        while sent < total:
            writer.write(b"10000\r\n" + chunk + b"\r\n" if chunked else chunk)
            await writer.drain()
            await asyncio.sleep(0)  # drain() does not yield while the peer keeps up
            sent += len(chunk)

    sender = asyncio.create_task(send())
    status = await reader.readline()
    sent_before_answer = sent
    sender.cancel()
    await asyncio.gather(sender, return_exceptions=True)  # the server may have closed on us
    writer.close()
    return status, sent_before_answer


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_an_oversize_body_is_refused_while_it_streams_in(
    tmp_path: Path, chunked: bool
) -> None:
    # 256 MiB announced or streamed: the 413 comes before the sender is anywhere near done,
    # so the receiver never held the body (bench/receiver_memory.py measures the memory).
    total = 256 * 1024 * 1024
    app = create_receiver_app([SECRET], tmp_path / "events.sqlite")
    async with serve_app(app) as url:
        status, sent = await _post_streaming(url, chunked, total)
    assert status.startswith(b"HTTP/1.1 413")
    assert sent < total // 4
    assert app.state.store.query() == []


async def test_fail_next_answers_503_that_many_times_then_recovers(receiver: Receiver) -> None:
    receiver.app.state.fail_next = 2
    body, headers = _delivery(_event())
    codes = [(await receiver.post(body, headers)).status_code for _ in range(3)]
    assert codes == [503, 503, 200]
    assert len(await receiver.events()) == 1


async def test_a_retired_receiver_answers_410(receiver: Receiver) -> None:
    receiver.app.state.gone = True
    response = await receiver.post(*_delivery(_event()))
    assert response.status_code == 410
    assert await receiver.events() == []


async def test_events_filter_by_spare_and_type_newest_last(receiver: Receiver) -> None:
    sequence = [
        _event("spare-a", EventType.RESERVED),
        _event("spare-b", EventType.RESERVED),
        _event("spare-a", EventType.READY),
        _event("spare-a", EventType.RELEASED),
    ]
    for event in sequence:
        assert (await receiver.post(*_delivery(event))).status_code == 200
    spare_a = await receiver.events(spare_id="spare-a")
    assert [e["type"] for e in spare_a] == ["spare.reserved", "spare.ready", "spare.released"]
    reserved = await receiver.events(type="spare.reserved")
    assert [e["spare_id"] for e in reserved] == ["spare-a", "spare-b"]
    assert await receiver.events(spare_id="spare-b", type="spare.ready") == []


async def test_the_index_page_shows_latest_events_escaped(receiver: Receiver) -> None:
    await receiver.post(*_delivery(_event("spare-html")))
    page = await receiver.http.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "spare-html" in page.text and "&lt;b&gt;x&lt;/b&gt;" in page.text
    assert "<b>x</b>" not in page.text


async def test_events_and_dedup_survive_a_receiver_restart(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite"
    body, headers = _delivery(_event())
    for expected_duplicate in (False, True):
        app = create_receiver_app([SECRET], db)
        async with serve_app(app) as url, httpx.AsyncClient(base_url=url) as http:
            response = await http.post("/webhooks", content=body, headers=headers)
            assert response.json()["duplicate"] is expected_duplicate
            assert len((await http.get("/events")).json()) == 1


def test_the_dedup_window_bounds_how_long_an_id_is_remembered(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "events.sqlite", dedup_window_seconds=100)
    assert store.record("msg_1", "spare.ready", "s1", b"{}", now=1000.0) is True
    assert store.record("msg_1", "spare.ready", "s1", b"{}", now=1100.0) is False
    assert store.record("msg_1", "spare.ready", "s1", b"{}", now=1101.0) is True
    assert [e.deliveries for e in store.query()] == [2, 1]


@pytest.mark.parametrize("secrets", [[], ["whsec_change-me"], [SECRET, "not-a-secret"]])
def test_the_receiver_refuses_to_start_with_bad_secrets(tmp_path: Path, secrets: list[str]) -> None:
    with pytest.raises((InvalidSecretError, ValueError)):
        create_receiver_app(secrets, tmp_path / "events.sqlite")
