"""Fuzz the HTTP API from its own OpenAPI schema (schemathesis), over real HTTP on loopback.

Valid and invalid bodies, paths and query strings for every operation: nothing may answer 5xx
or hang, and every refusal is a 4xx problem (RFC 9457) with a stable code. The app runs in
the session's loop with the real Temporal server behind it (no worker: accepted spares just
wait); the fuzzing itself runs in a thread, as schemathesis calls are blocking.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import hypothesis
import schemathesis
from hypothesis import HealthCheck, given
from schemathesis.core.result import Err
from schemathesis.generation import GenerationMode
from temporalio.client import Client

from api.app import create_app
from runtime.settings import Settings
from webhooks.serve import serve_app

EXAMPLES_PER_MODE = 25
CALL_TIMEOUT_SECONDS = 20.0
# Hypothesis settings: bounded, no deadline (the engine's latency is not under test).
FUZZ = hypothesis.settings(
    max_examples=EXAMPLES_PER_MODE,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


def _check(status: int, content_type: str, body: bytes, where: str) -> None:
    assert status < 500, f"{where}: {status} {body[:300]!r}"
    if status >= 400:
        assert content_type == "application/problem+json", f"{where}: {content_type}"
        problem = json.loads(body)
        assert problem["status"] == status and problem["code"], f"{where}: {body[:300]!r}"


def fuzz_operation(operation: Any, mode: GenerationMode, base_url: str) -> Counter[int]:
    seen: Counter[int] = Counter()

    @FUZZ
    @given(case=operation.as_strategy(generation_mode=mode))
    def one(case: Any) -> None:
        response = case.call(base_url=base_url, timeout=CALL_TIMEOUT_SECONDS)
        seen[response.status_code] += 1
        _check(
            response.status_code,
            response.headers.get("content-type", [""])[0],
            response.content,
            f"{case.method} {case.formatted_path} ({mode.value})",
        )

    try:
        one()
    except hypothesis.errors.Unsatisfiable:
        # No inputs to get wrong (GET /healthz): only the positive mode applies.
        assert mode is GenerationMode.NEGATIVE, operation.label
    return seen


def fuzz(schema_doc: dict[str, Any], base_url: str) -> Counter[int]:
    schema = schemathesis.openapi.from_dict(schema_doc)
    seen: Counter[int] = Counter()
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()  # the app's own schema is invalid
        operation = result.ok()
        for mode in GenerationMode:
            seen += fuzz_operation(operation, mode, base_url)
    return seen


async def test_no_generated_request_gets_a_5xx_or_a_non_json_refusal(
    api_settings: Settings, client: Client
) -> None:
    async def same_client() -> Client:
        return client

    app = create_app(api_settings, client_factory=same_client)
    async with serve_app(app) as url:
        statuses = await asyncio.to_thread(fuzz, app.openapi(), url)
    assert sum(statuses.values()) > 100
    assert not [code for code in statuses if code >= 500]
    print(f"fuzz statuses: {dict(sorted(statuses.items()))}")
