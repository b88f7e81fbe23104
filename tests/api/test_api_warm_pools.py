"""Warm pools through the API: a matching POST answers with the warm spare it took and is
Ready at once, its `spare.ready` reaches the receiver; the pools are listed and shown."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from api.app import create_app
from tests.api.api_helpers import asgi_client, spare_body
from tests.cli.test_cli import virtflow
from tests.helpers import assert_eventually
from tests.stack import Stack
from tests.warm_stack import SHAPE, new_pool_name, wait_pool, warm_stack
from webhooks.serve import serve_app
from worker.schedules import apply_warm_pools


@pytest.fixture
def pool_name() -> str:
    return new_pool_name()


@pytest.fixture
async def stack(
    client: Client, task_queue: str, tmp_path: Path, pool_name: str
) -> AsyncIterator[Stack]:
    async with warm_stack(client, task_queue, tmp_path, pool_name, size=2) as running:
        yield running


@pytest.fixture
async def api(stack: Stack, client: Client, task_queue: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = stack.settings.model_copy(update={"task_queue": task_queue})
    async with asgi_client(settings, client) as http:
        yield http


async def test_a_matching_post_takes_a_warm_spare_and_is_ready_at_once(
    stack: Stack, api: httpx.AsyncClient, pool_name: str
) -> None:
    listed = await api.get("/v1/warm-pools")
    assert listed.status_code == 200, listed.text
    [before] = listed.json()["warm_pools"]
    assert before["name"] == pool_name and before["ready"] == 0
    assert before["short_reason"].startswith("not started")

    await apply_warm_pools(stack.client, stack.settings, stack.task_queue)
    await wait_pool(stack, pool_name, ready=2)

    body = spare_body(inventory=stack.inventory, **SHAPE)
    answer = await api.post("/v1/spares", json=body)
    assert answer.status_code == 202, answer.text
    accepted = answer.json()
    assert accepted["warm"]["pool"] == pool_name
    spare_id = accepted["spare_id"]
    view = (await api.get(f"/v1/spares/{spare_id}")).json()
    assert view["phase"] == "ready" and view["warm"] == accepted["warm"]
    assert view["vm"]["name"] == accepted["warm"]["warm_spare_id"]

    async def ready_arrived() -> None:
        assert "spare.ready" in await stack.event_types(spare_id)

    await assert_eventually(ready_arrived)

    shown = await api.get(f"/v1/warm-pools/{pool_name}")
    assert shown.status_code == 200 and shown.json()["claimed"] == 1
    assert shown.json()["hits"] == 1

    # A request of another shape is not told anything about warm pools.
    cold = await api.post("/v1/spares", json=spare_body(inventory=stack.inventory))
    assert cold.status_code == 202 and cold.json()["warm"] is None


async def test_the_spare_decides_whether_a_warm_pool_serves_it_not_the_api(
    stack: Stack, client: Client, task_queue: str, pool_name: str
) -> None:
    # An API whose own settings name no warm pool: only the worker's pools can say.
    blind = stack.settings.model_copy(update={"task_queue": task_queue, "warm_pools": []})
    await apply_warm_pools(stack.client, stack.settings, stack.task_queue)
    await wait_pool(stack, pool_name, ready=2)
    body = spare_body(inventory=stack.inventory, **SHAPE)
    async with asgi_client(blind, client) as api:
        answer = await api.post("/v1/spares", json=body)
        assert answer.status_code == 202, answer.text
        accepted = answer.json()
        assert accepted["warm"]["pool"] == pool_name
        # A repeat of the POST is the same answer, warm spare and all.
        again = await api.post("/v1/spares", json=body)
        assert again.status_code == 202 and again.json() == accepted


async def test_unknown_pools_and_requests_posing_as_warm_spares_are_refused(
    stack: Stack, api: httpx.AsyncClient
) -> None:
    missing = await api.get("/v1/warm-pools/nope")
    assert missing.status_code == 404 and missing.json()["code"] == "warm_pool_not_found"
    posing = await api.post(
        "/v1/spares", json=spare_body(inventory=stack.inventory, warm_pool="x", **SHAPE)
    )
    assert posing.status_code == 422
    assert posing.json()["errors"][0]["field"] == "warm_pool"


async def test_the_command_line_lists_pools_and_prepare_takes_a_warm_spare(
    stack: Stack, client: Client, task_queue: str, pool_name: str
) -> None:
    await apply_warm_pools(stack.client, stack.settings, stack.task_queue)
    await wait_pool(stack, pool_name, ready=2)
    settings = stack.settings.model_copy(update={"task_queue": task_queue})

    async def same_client() -> Client:
        return client

    async with serve_app(create_app(settings, client_factory=same_client)) as url:
        env = {"VIRTFLOW_API_URL": url}
        args = ["--cluster", "lab", "--request-id", "rwarm1", "--inventory", stack.inventory]
        shape = ["--cpu", str(SHAPE["cpu"]), "--memory-mb", str(SHAPE["memory_mb"])]
        prepared = await virtflow("prepare", *args, *shape, env=env)
        assert prepared.code == 0, prepared.err
        assert prepared.out.splitlines()[-1].split()[0] == "ready"
        listed = await virtflow("warm", "list", "--json", env=env)
    assert listed.code == 0, listed.err
    [pool] = json.loads(listed.out)["warm_pools"]
    assert pool["name"] == pool_name and pool["size"] == 2 and pool["claimed"] == 1


def test_the_warm_pool_routes_are_in_the_published_schema(stack: Stack) -> None:
    paths = create_app(stack.settings).openapi()["paths"]
    assert paths["/v1/warm-pools"]["get"]["operationId"] == "listWarmPools"
    assert paths["/v1/warm-pools/{name}"]["get"]["operationId"] == "getWarmPool"
