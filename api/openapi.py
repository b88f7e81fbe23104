"""The API's OpenAPI document, with problem details and webhooks, and its checked-in copy.

FastAPI writes error responses as `application/json` and its own 422 shape; here they become
`application/problem+json` with the `Problem` schema, each 503 declares `Retry-After`, and the
`webhooks` section describes every event virtflow POSTs to a receiver.

Regenerate the checked-in copy (a test fails when it is stale):  python -m api.openapi
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Header
from fastapi.openapi.utils import get_openapi

from webhooks.events import EVENT_DESCRIPTIONS, EVENT_SCHEMA_VERSION, EventType, SpareEvent

from .problems import PROBLEM_JSON

OPENAPI_FILE = Path(__file__).resolve().parents[1] / "openapi.json"
_FASTAPI_422_SCHEMAS = ("HTTPValidationError", "ValidationError")


def _problem_ref() -> dict[str, Any]:
    return {"schema": {"$ref": "#/components/schemas/Problem"}}


def _as_problems(schema: dict[str, Any]) -> None:
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if not status.isdigit() or int(status) < 400:
                    continue
                response["content"] = {PROBLEM_JSON: _problem_ref()}
                if status == "422" and response.get("description") == "Validation Error":
                    response["description"] = (
                        "Problem details; `code` is `invalid_request`, `errors` lists each field"
                    )
                if status == "503":
                    response["headers"] = {
                        "Retry-After": {
                            "description": "Seconds to wait before trying again",
                            "schema": {"type": "integer"},
                        }
                    }
    for operations in schema.get("webhooks", {}).values():
        for operation in operations.values():
            # FastAPI's 422 is about our own validation; a receiver answers what it likes.
            operation.get("responses", {}).pop("422", None)
    components = schema.get("components", {}).get("schemas", {})
    for name in _FASTAPI_422_SCHEMAS:
        components.pop(name, None)
    text = json.dumps(schema)
    for name in _FASTAPI_422_SCHEMAS:
        if f'"#/components/schemas/{name}"' in text:
            raise RuntimeError(f"the schema still refers to FastAPI's {name}")


def _declare_webhooks(app: FastAPI) -> None:
    async def delivery(
        event: SpareEvent,
        webhook_id: Annotated[str, Header(description="Same on every retry: de-duplicate on it")],
        webhook_timestamp: Annotated[int, Header(description="Unix seconds of this attempt")],
        webhook_signature: Annotated[
            str, Header(description="Space-separated `v1,<base64 HMAC-SHA256>` signatures")
        ],
    ) -> None:
        """Never called: it describes a delivery."""

    for event in EventType:
        app.webhooks.add_api_route(
            event.value,
            delivery,
            methods=["POST"],
            summary=EVENT_DESCRIPTIONS[event],
            description=(
                f"A `{event.value}` event, Standard Webhooks signed (body schema version "
                f"{EVENT_SCHEMA_VERSION}: `type`, `timestamp`, and the spare under `data`). "
                "Answer 2xx once stored; 410 stops deliveries to this receiver; 408, 429 and "
                "5xx are retried (`Retry-After` honoured); any other answer drops the event."
            ),
            operation_id=f"webhook_{event.name.lower()}",
            responses={
                200: {"description": "Stored (any 2xx)"},
                410: {"description": "Receiver retired: stop sending"},
            },
            status_code=200,
        )


def install_openapi(app: FastAPI) -> None:
    """Replace FastAPI's generator with one that adds problem details and the webhooks."""
    _declare_webhooks(app)

    def generate() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
                webhooks=app.webhooks.routes,
            )
            _as_problems(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = generate  # type: ignore[method-assign]


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def current_schema() -> dict[str, Any]:
    from runtime.settings import Settings

    from .app import create_app

    return create_app(Settings()).openapi()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else OPENAPI_FILE
    target.write_text(render(current_schema()), encoding="utf-8")
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
