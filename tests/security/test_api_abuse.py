"""Hostile or careless bodies: each is refused with a 4xx JSON answer that names the problem.

The real app over ASGI on the session's real Temporal server (no worker: nothing may start).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from api.limits import MAX_BODY_BYTES
from tests.api.api_helpers import spare_body

TEMPLATE = "{{ lookup('pipe','touch /tmp/x') }}"


def rejected_field(answer: httpx.Response) -> list[str]:
    """The fields a 422 names (the last element of each error's location)."""
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    return [str(error["loc"][-1]) for error in answer.json()["errors"]]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"cpu": 10**400}, "cpu"),
        ({"cpu": 4097}, "cpu"),
        ({"memory_mb": 2**70}, "memory_mb"),
        ({"cpu": 1.5}, "cpu"),
        ({"cpu": -1}, "cpu"),
        ({"memory_mb": 0}, "memory_mb"),
        ({"gpu": -2}, "gpu"),
        ({"ttl_seconds": -60}, "ttl_seconds"),
        ({"surprise": True}, "surprise"),
        ({"request_id": "nödé-1"}, "request_id"),
        ({"cluster": "läb"}, "cluster"),
        ({"request_id": "Upper_Case"}, "request_id"),
        ({"request_id": TEMPLATE}, "request_id"),
        ({"request_id": "a" * 41}, "request_id"),
        ({"pool": "général"}, "pool"),
        ({"pool": TEMPLATE}, "pool"),
        ({"anti_affinity_group": "grp/../../etc"}, "anti_affinity_group"),
        ({"receivers": ["http://attacker.example/hook"]}, "receivers"),
        ({"inventory": "no-such-inventory"}, "inventory"),
        ({"node_selector": {f"k{i}": "v" for i in range(65)}}, "node_selector"),
    ],
    ids=lambda v: str(v)[:40] if isinstance(v, dict) else v,
)
async def test_a_bad_field_is_a_422_naming_it(
    api: httpx.AsyncClient, fields: dict[str, Any], field: str
) -> None:
    answer = await api.post("/spare/prepare", json=spare_body(**fields))
    assert field in rejected_field(answer)


async def test_a_spare_id_too_long_for_a_node_name_is_refused(api: httpx.AsyncClient) -> None:
    # Each part is valid alone; together they exceed one DNS label (63 characters).
    answer = await api.post(
        "/spare/prepare", json=spare_body(request_id="r" * 40, cluster="c" * 40)
    )
    assert rejected_field(answer) == ["cluster"]
    message = answer.json()["errors"][0]["message"]
    assert "at most 63" in message and "shorten request_id or cluster" in message


async def test_a_float_that_overflows_is_refused(api: httpx.AsyncClient) -> None:
    body = '{"request_id": "r1", "cluster": "lab", "cpu": 1e999, "memory_mb": 1}'
    answer = await api.post(
        "/spare/prepare", content=body, headers={"content-type": "application/json"}
    )
    assert rejected_field(answer) == ["cpu"]


@pytest.mark.parametrize("depth", [1_000, 100_000])
async def test_deeply_nested_json_is_a_client_error(api: httpx.AsyncClient, depth: int) -> None:
    body = '{"request_id": ' * depth + '"r"' + "}" * depth
    answer = await api.post(
        "/spare/prepare", content=body, headers={"content-type": "application/json"}
    )
    assert 400 <= answer.status_code < 500, answer.text
    assert isinstance(answer.json()["detail"], str) and answer.json()["code"]


async def test_a_body_declared_too_large_is_refused_before_it_is_read(
    api: httpx.AsyncClient,
) -> None:
    padding = "x" * (MAX_BODY_BYTES + 1)
    answer = await api.post("/spare/prepare", json=spare_body(pool=padding))
    assert answer.status_code == 413
    assert answer.json()["code"] == "body_too_large"
    assert answer.json()["detail"] == f"request body larger than {MAX_BODY_BYTES} bytes"


async def test_a_streamed_body_is_cut_off_at_the_limit(api: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield json.dumps(spare_body())[:-1].encode()
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536
        yield b"}"

    # No content-length: the body arrives in chunks and is counted as it comes.
    answer = await api.post(
        "/spare/prepare", content=chunks(), headers={"content-type": "application/json"}
    )
    assert answer.status_code == 413


async def test_a_bad_content_length_is_a_400(api: httpx.AsyncClient) -> None:
    request = api.build_request("POST", "/spare/prepare", content=b"{}")
    request.headers["content-length"] = "12abc"
    answer = await api.send(request)
    assert answer.status_code == 400
    assert (answer.json()["code"], answer.json()["detail"]) == (
        "bad_request",
        "invalid content-length",
    )


@pytest.mark.parametrize(
    "request_fields",
    [{"cpu": -4, "memory_mb": 1024}, {"cpu": 10**30, "memory_mb": 1024}, {"cpu": "many"}],
)
async def test_explain_refuses_impossible_resources(
    api: httpx.AsyncClient, request_fields: dict[str, Any]
) -> None:
    answer = await api.post(
        "/placement/explain", json={"request": {"name": "vm-1", **request_fields}}
    )
    assert 400 <= answer.status_code < 500, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
