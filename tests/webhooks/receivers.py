"""Receivers that misbehave on purpose, for the workflow-level delivery tests."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import SecretStr
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runtime.receivers import ReceiverConfig
from webhooks.signing import generate_secret


@dataclass
class Recorder:
    """Wraps a receiver app and notes, per request, the webhook id and the status answered."""

    app: ASGIApp
    seen: list[tuple[str, int]] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        msg_id = dict(scope["headers"]).get(b"webhook-id", b"").decode()

        async def note(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.seen.append((msg_id, message["status"]))
            await send(message)

        await self.app(scope, receive, note)

    def statuses(self, msg_id: str) -> list[int]:
        return [status for seen_id, status in self.seen if seen_id == msg_id]


def answering(status_for: dict[str, int], default: int) -> FastAPI:
    """A receiver that answers each event type with a fixed status (and stores nothing)."""
    app = FastAPI()

    @app.post("/webhooks")
    async def hook(request: Request) -> JSONResponse:
        event_type = json.loads(await request.body())["type"]
        status = status_for.get(event_type, default)
        return JSONResponse({"status": status}, status_code=status)

    return app


def receiver_config(
    url: str, waits: list[float], secret: str | None = None, **extra: object
) -> ReceiverConfig:
    return ReceiverConfig.model_validate(
        {
            "url": f"{url}/webhooks",
            "secrets": [SecretStr(secret or generate_secret())],
            "retry_schedule_seconds": waits,
            **extra,
        }
    )


def refused_url() -> str:
    """A loopback URL nobody listens on: every connection is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"
