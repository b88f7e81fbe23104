"""The codec server: Temporal's remote codec protocol over the payload encryption codec.

The web UI (its "Codec Server" setting, or the UI server's `codec.endpoint`) and the CLI
(`temporal workflow show --codec-endpoint URL --codec-auth "Bearer TOKEN"`) POST the payloads
they hold to `/decode` (and `/encode`) as the JSON form of `temporal.api.common.v1.Payloads`
and show what comes back. It has its own bearer tokens (`codec_server_tokens`), separate from
the API's, because decoding shows every spare's data; CORS admits only the UI's origin.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence

from google.protobuf import json_format
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from temporalio.api.common.v1 import Payload, Payloads

from runtime.encryption import EncryptionCodec, PayloadKeyError

log = logging.getLogger(__name__)

Transform = Callable[[Sequence[Payload]], Awaitable[list[Payload]]]


def _problem(status: int, code: str, detail: str) -> JSONResponse:
    return JSONResponse({"code": code, "detail": detail}, status_code=status)


def _authorised(tokens: Sequence[SecretStr], header: str | None) -> bool:
    if not tokens:
        return True
    scheme, _, given = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not given:
        return False
    found = False
    for token in tokens:  # every one compared, in constant time
        found |= hmac.compare_digest(token.get_secret_value().encode(), given.encode())
    return found


def create_codec_app(
    codec: EncryptionCodec, tokens: Sequence[SecretStr], origins: Sequence[str]
) -> Starlette:
    if not tokens:
        log.warning("codec server without tokens: anyone who reaches it can decode payloads")

    def endpoint(transform: Transform) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            if not _authorised(tokens, request.headers.get("authorization")):
                return _problem(401, "unauthenticated", "a valid bearer token is required")
            try:
                payloads = json_format.Parse(await request.body(), Payloads())
            except (json_format.ParseError, UnicodeDecodeError) as error:
                return _problem(422, "bad_payloads", f"payloads: {error}")
            try:
                done = await transform(payloads.payloads)
            except PayloadKeyError as error:
                return _problem(422, "undecodable", str(error))
            body = json_format.MessageToJson(Payloads(payloads=done))
            return Response(body, media_type="application/json")

        return handle

    async def alive(request: Request) -> Response:
        # The keys were read and parsed at start: nothing else to wait for.
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/encode", endpoint(codec.encode), methods=["POST"]),
            Route("/decode", endpoint(codec.decode), methods=["POST"]),
            Route("/healthz", alive),
            Route("/readyz", alive),
        ],
        middleware=[
            Middleware(
                CORSMiddleware,
                allow_origins=list(origins),
                allow_methods=["POST"],
                # The UI names the namespace; with "pass access token" it sends Authorization.
                allow_headers=["Authorization", "Content-Type", "X-Namespace"],
                allow_credentials=True,
            )
        ],
    )
