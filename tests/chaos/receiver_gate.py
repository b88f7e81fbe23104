"""A receiver that hangs: webhook POSTs about chosen spares wait until the gate opens.

Wraps the reference receiver (ASGI middleware), so what does get through is verified and
de-duplicated by the real thing. A held request keeps the worker's delivery activity in
flight, which is the moment a chaos test wants to kill the worker.
"""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class ReceiverGate:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.held_spares: set[str] = set()
        self.held_requests = 0
        self._open = asyncio.Event()
        self._open.set()

    def hold(self, spare_id: str) -> None:
        self.held_spares.add(spare_id)
        self._open.clear()

    def open(self) -> None:
        """Let every held and later request through."""
        self.held_spares.clear()
        self._open.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not self.held_spares:
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        body = b"".join(m.get("body", b"") for m in messages)
        try:
            spare_id = json.loads(body).get("data", {}).get("spare_id")
        except (ValueError, AttributeError):
            spare_id = None
        if spare_id in self.held_spares:
            self.held_requests += 1
            await self._open.wait()

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)
