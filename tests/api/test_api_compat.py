"""The original scheduler's API: POST /schedule, GET /result/{task_id}, on a live worker."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from contracts.schedule_host import schedule_workflow_id
from lab.hypervisor import load_inventory_file
from tests.api.api_helpers import LAB_INVENTORY, asgi_client
from tests.helpers import assert_eventually
from tests.stack import Stack, ledger_reservations, running_stack


def host_ip(name: str) -> str:
    return f"192.0.2.{sum(name.encode()) % 250 + 1}"


@pytest.fixture
async def compat(
    client: Client, task_queue: str, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, Stack]]:
    """The lab site, every host but one carrying its address (`ip`), as real inventories do."""
    doc = load_inventory_file(LAB_INVENTORY)
    for host in doc["hosts"]:
        if host["name"] == "bm-gen-02":
            del host["ip"]
        else:
            host["ip"] = host_ip(host["name"])
    async with running_stack(client, task_queue, tmp_path, doc, provisioner="http") as stack:
        settings = stack.settings.model_copy(update={"task_queue": task_queue})
        async with asgi_client(settings, client) as api:
            yield api, stack


def schedule_body(stack: Stack, **fields: Any) -> dict[str, Any]:
    body = {
        "requested_cpu": 2,
        "requested_memory": 2048,
        "requested_pool": "general",
        "dedicated": False,
        "inventory": stack.inventory,
    }
    return {**body, **fields}


async def finished(api: httpx.AsyncClient, task_id: str) -> dict[str, Any]:
    async def check() -> dict[str, Any]:
        answer = await api.get(f"/result/{task_id}")
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        assert body["status"] != "processing"
        return body

    return await assert_eventually(check, timeout=30)


async def held(stack: Stack) -> set[str]:
    return {r.spare_id for r in await ledger_reservations(stack)}


async def test_a_task_reserves_a_host_answers_name_and_ip_and_frees_it_on_delete(
    compat: tuple[httpx.AsyncClient, Stack],
) -> None:
    api, stack = compat
    accepted = await api.post("/schedule", json=schedule_body(stack))
    assert accepted.status_code == 200, accepted.text
    assert set(accepted.json()) == {"task_id"}
    task_id = accepted.json()["task_id"]
    first = (await api.get(f"/result/{task_id}")).json()
    assert first["status"] in {"processing", "completed"}

    done = await finished(api, task_id)
    assert set(done) == {"status", "result"}
    host = done["result"]["name"]
    assert host.startswith("bm-gen-")
    expected_ip = None if host == "bm-gen-02" else host_ip(host)
    assert done["result"] == {"name": host, "ip": expected_ip}
    workflow_id = schedule_workflow_id(task_id)
    assert workflow_id in await held(stack)

    assert (await api.delete(f"/schedule/{task_id}")).status_code == 202
    result = await stack.client.get_workflow_handle(workflow_id).result()
    assert result["freed_because"] == "released by request"
    assert workflow_id not in await held(stack)
    # The answer outlives the hold: a late poll still finds the host it was given.
    assert (await api.get(f"/result/{task_id}")).json() == done
    assert (await api.delete(f"/schedule/{task_id}")).status_code == 409


async def test_concurrent_dedicated_tasks_never_share_a_host(
    compat: tuple[httpx.AsyncClient, Stack],
) -> None:
    """The lab has one dedicated host: the second task fails instead of doubling up on it."""
    api, stack = compat
    body = schedule_body(stack, requested_pool=None, dedicated=True)
    ids = [(await api.post("/schedule", json=body)).json()["task_id"] for _ in range(2)]
    answers = sorted([await finished(api, t) for t in ids], key=lambda a: a["status"])
    assert [a["status"] for a in answers] == ["completed", "failed"]
    assert answers[0]["result"]["name"] == "bm-ded-01"
    assert answers[1]["error"].startswith("no_capacity:")


async def test_the_hold_ends_by_itself(compat: tuple[httpx.AsyncClient, Stack]) -> None:
    api, stack = compat
    task_id = (await api.post("/schedule", json=schedule_body(stack, hold_seconds=1))).json()[
        "task_id"
    ]
    result = await stack.client.get_workflow_handle(schedule_workflow_id(task_id)).result()
    assert result["freed_because"] == "hold of 1 s expired"
    assert schedule_workflow_id(task_id) not in await held(stack)
    assert (await api.get(f"/result/{task_id}")).json()["status"] == "completed"


async def test_a_request_larger_than_any_host_fails_with_the_reason(
    compat: tuple[httpx.AsyncClient, Stack],
) -> None:
    api, stack = compat
    task_id = (await api.post("/schedule", json=schedule_body(stack, requested_cpu=4000))).json()[
        "task_id"
    ]
    done = await finished(api, task_id)
    assert done["status"] == "failed"
    assert set(done) == {"status", "error"}
    assert done["error"].startswith("never_fits:")


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"requested_cpu": 0}, "requested_cpu", "greater than 0"),
        ({"requested_memory": "lots"}, "requested_memory", "valid integer"),
        ({"inventory": "nowhere"}, "inventory", "unknown inventory 'nowhere'"),
    ],
)
async def test_bad_input_is_422_naming_the_field(
    api: httpx.AsyncClient, fields: dict[str, Any], field: str, reason: str
) -> None:
    answer = await api.post("/schedule", json={"requested_cpu": 1, "requested_memory": 1, **fields})
    assert answer.status_code == 422
    [error] = answer.json()["errors"]
    assert error["loc"] == ["body", field]
    assert reason in error["message"]


async def test_an_unknown_task_is_404(api: httpx.AsyncClient) -> None:
    missing = uuid.uuid4().hex
    answer = await api.get(f"/result/{missing}")
    assert answer.status_code == 404
    assert (answer.json()["code"], answer.json()["detail"]) == (
        "task_not_found",
        f"no task '{missing}'",
    )
    assert (await api.delete(f"/schedule/{missing}")).status_code == 404


async def test_an_unknown_pool_is_422_naming_requested_pool(api: httpx.AsyncClient) -> None:
    body = {"requested_cpu": 1, "requested_memory": 1, "requested_pool": "nowhere"}
    answer = await api.post("/schedule", json=body)
    assert (answer.status_code, answer.json()["code"]) == (422, "unknown_pool")
    assert answer.json()["errors"][0]["loc"] == ["body", "requested_pool"]
