"""The reference webhook receiver: verify, de-duplicate, store durably, answer fast.

Upgrade-controller authors can copy this or run it (`python -m webhooks.serve`). It answers
2xx only once the event is committed to SQLite, so an acknowledged event is never lost, and
it stores a retried webhook id once. `GET /events` and `GET /` are unauthenticated reads for
the lab and tests; put them behind your own auth before exposing them.

Test knobs on `app.state`: `fail_next = n` answers 503 to the next n deliveries (a receiver
outage), `gone = True` answers 410 (a decommissioned receiver: senders stop).
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool

from .signing import DEFAULT_TOLERANCE_SECONDS, WebhookVerificationError, secret_key, verify
from .store import EventStore, StoredEvent

MAX_BODY_BYTES = 1024 * 1024


class BodyTooLarge(Exception):
    """The request announced or sent more than the receiver accepts."""


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, read as it streams in and refused past `limit` bytes before it is all held.

    A declared Content-Length over the limit is refused without reading anything; a chunked
    or lying sender is cut off as soon as it crosses the limit.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _envelope(body: bytes) -> tuple[str, str] | None:
    """(type, data.spare_id) of a delivery, or None; unknown event types are kept, not refused."""
    try:
        payload: Any = json.loads(body)
    except ValueError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), dict):
        return None
    event_type, spare_id = payload.get("type"), payload["data"].get("spare_id")
    if not isinstance(event_type, str) or not isinstance(spare_id, str):
        return None
    return event_type, spare_id


def _reason(event: StoredEvent) -> str:
    data = event.event.get("data")
    return str(data.get("reason") or "") if isinstance(data, dict) else ""


def create_receiver_app(
    secrets: Sequence[str],
    db_path: Path,
    dedup_window_seconds: int = 7 * 24 * 3600,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
) -> FastAPI:
    if not secrets:
        raise ValueError("the receiver needs at least one webhook secret")
    for secret in secrets:
        secret_key(secret)  # a bad secret fails at start-up, not on the first delivery
    accepted = list(secrets)
    store = EventStore(db_path, dedup_window_seconds)

    app = FastAPI(title="virtflow reference webhook receiver")
    app.state.store = store
    app.state.fail_next = 0
    app.state.gone = False
    app.state.attempts = 0

    @app.post("/webhooks")
    async def receive(request: Request) -> JSONResponse:
        app.state.attempts += 1
        if app.state.fail_next > 0:
            app.state.fail_next -= 1
            return _error(503, "receiver temporarily unavailable")
        if app.state.gone:
            return _error(410, "receiver retired: stop sending")
        try:
            body = await _read_body(request, MAX_BODY_BYTES)
        except BodyTooLarge:
            # The server reads on and discards the rest, so the sender sees this answer
            # (closing now would reset the connection under it and lose the answer).
            return _error(413, f"body larger than {MAX_BODY_BYTES} bytes")
        try:
            verify(request.headers, body, accepted, tolerance_seconds=tolerance_seconds)
        except WebhookVerificationError as exc:
            return _error(401, exc.reason)
        envelope = _envelope(body)
        if envelope is None:
            return _error(
                400, "body must be a JSON object with a string 'type' and 'data.spare_id'"
            )
        msg_id = request.headers["webhook-id"]
        event_type, spare_id = envelope
        new = await run_in_threadpool(store.record, msg_id, event_type, spare_id, body)
        return JSONResponse({"webhook_id": msg_id, "duplicate": not new})

    @app.get("/events")
    async def events(
        spare_id: str | None = None, type: str | None = None, limit: int = 1000
    ) -> list[StoredEvent]:
        return await run_in_threadpool(store.query, spare_id, type, max(1, min(limit, 10000)))

    @app.get("/", response_class=HTMLResponse)
    async def latest() -> str:
        rows = await run_in_threadpool(store.query, None, None, 50)
        lines = [
            f"<tr><td>{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(e.received_at))}</td>"
            f"<td>{html.escape(e.type)}</td><td>{html.escape(e.spare_id)}</td>"
            f"<td>{e.deliveries}</td><td>{html.escape(_reason(e))}</td></tr>"
            for e in reversed(rows)
        ]
        return (
            "<!doctype html><title>virtflow webhooks</title><h1>Latest webhooks</h1>"
            "<table><tr><th>received (UTC)</th><th>type</th><th>spare</th>"
            "<th>deliveries</th><th>reason</th></tr>" + "".join(lines) + "</table>"
        )

    return app
