"""Request body size limit for the HTTP API.

A spare request is a few hundred bytes; a multi-megabyte body is a mistake or an attack, and
refusing it before it is read keeps one caller from exhausting the API's memory.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import Code
from .problems import problem

# Room for an explain body with a few thousand inline hosts; far above any spare request.
MAX_BODY_BYTES = 1024 * 1024


class BodySizeLimit:
    """Answer 413 when the declared or the streamed body exceeds `max_bytes`."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await self._refuse(scope, receive, send, Code.BAD_REQUEST, "invalid content-length")
                return
            if int(declared) > self.max_bytes:
                await self._refuse(scope, receive, send, Code.BODY_TOO_LARGE, self._too_large())
                return
        # A chunked body declares nothing: count what actually arrives. Past the limit, answer
        # 413 here and tell the app the client left, so it stops reading and answers nothing.
        seen = 0
        refused = False

        async def counting_receive() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    refused = True
                    await self._refuse(scope, receive, send, Code.BODY_TOO_LARGE, self._too_large())
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counting_receive, guarded_send)

    def _too_large(self) -> str:
        return f"request body larger than {self.max_bytes} bytes"

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, code: Code, detail: str) -> None:
        await problem(code, detail, scope.get("path"))(scope, receive, send)
