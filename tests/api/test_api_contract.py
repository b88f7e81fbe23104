"""The contract a generated client codes against: the checked-in OpenAPI document is current,
versioned paths have stable operation ids, every error is a declared problem, webhooks are in."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from api.errors import Code
from api.openapi import OPENAPI_FILE, current_schema, render
from api.problems import PROBLEM_JSON, PROBLEMS
from api.versions import LEGACY_PATHS
from webhooks.events import EventType


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return current_schema()


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    ]


def test_the_checked_in_openapi_document_is_current(schema: dict[str, Any]) -> None:
    assert OPENAPI_FILE.read_text(encoding="utf-8") == render(schema), (
        f"{OPENAPI_FILE.name} is stale: run `make openapi`"
    )


def test_every_operation_has_a_unique_stable_id(schema: dict[str, Any]) -> None:
    ids = [operation["operationId"] for _, _, operation in _operations(schema)]
    assert len(ids) == len(set(ids))
    by_route = {(m, p): o["operationId"] for m, p, o in _operations(schema)}
    assert by_route[("POST", "/v1/spares")] == "prepareSpare"
    assert by_route[("GET", "/v1/spares/{spare_id}")] == "getSpare"
    assert by_route[("POST", "/v1/spares/{spare_id}/release")] == "releaseSpare"
    assert by_route[("DELETE", "/v1/spares/{spare_id}")] == "cancelSpare"
    assert by_route[("GET", "/v1/spares")] == "listSpares"
    assert by_route[("POST", "/v1/placement/explain")] == "explainPlacement"


def test_old_paths_are_deprecated_aliases_and_the_scheduler_api_stays(
    schema: dict[str, Any],
) -> None:
    operations = {(m, p): o for m, p, o in _operations(schema)}
    for (method, new), old in LEGACY_PATHS.items():
        assert operations[(method, old)]["deprecated"] is True
        assert "deprecated" not in operations[(method, new)]
    for route in (("POST", "/schedule"), ("GET", "/result/{task_id}")):
        assert "deprecated" not in operations[route]
    unversioned = {p for _, p, _ in _operations(schema) if not p.startswith("/v1/")}
    assert unversioned == set(LEGACY_PATHS.values()) | {
        "/schedule",
        "/result/{task_id}",
        "/schedule/{task_id}",
        "/healthz",
        "/readyz",
    }


def test_every_error_response_is_a_declared_problem(schema: dict[str, Any]) -> None:
    for method, path, operation in _operations(schema):
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            where = f"{method} {path} {status}"
            assert list(response["content"]) == [PROBLEM_JSON], where
            ref = response["content"][PROBLEM_JSON]["schema"]["$ref"]
            assert ref == "#/components/schemas/Problem", where
            if status == "503":
                assert "Retry-After" in response["headers"], where
            for code in response.get("x-problem-codes", []):
                assert PROBLEMS[Code(code)][0] == int(status), where
    prepare = schema["paths"]["/v1/spares"]["post"]["responses"]
    assert set(prepare["409"]["x-problem-codes"]) == {
        "request_conflict",
        "no_capacity",
        "cluster_budget_exceeded",
    }
    assert "Location" in prepare["202"]["headers"]
    assert schema["components"]["schemas"]["Code"]["enum"] == [c.value for c in Code]


def test_the_webhook_events_are_in_the_webhooks_section(schema: dict[str, Any]) -> None:
    assert set(schema["webhooks"]) == {e.value for e in EventType}
    ready = schema["webhooks"]["spare.ready"]["post"]
    body = ready["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/SpareEvent"}
    headers = {p["name"] for p in ready["parameters"] if p["in"] == "header"}
    assert headers == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    assert set(schema["components"]["schemas"]["SpareEvent"]["properties"]) == {
        "type",
        "timestamp",
        "data",
    }


async def test_the_served_document_is_the_checked_in_one(api: httpx.AsyncClient) -> None:
    served = (await api.get("/openapi.json")).json()
    assert served == json.loads(OPENAPI_FILE.read_text(encoding="utf-8"))


async def test_an_unknown_path_is_a_problem_too(api: httpx.AsyncClient) -> None:
    answer = await api.get("/v1/nothing-here")
    assert answer.status_code == 404
    assert answer.headers["content-type"] == PROBLEM_JSON
    assert answer.json()["code"] == "not_found"
