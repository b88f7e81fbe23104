"""GET /spares: Temporal visibility by cluster, pool, host and phase, one page at a time."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client

from runtime.settings import Settings
from tests.api.api_helpers import LiveStack, asgi_client, live_stack, spare_body
from tests.helpers import assert_eventually


async def listed(api: httpx.AsyncClient, count: int, **params: Any) -> dict[str, Any]:
    """The first page once visibility shows `count` spares (it is eventually consistent)."""

    async def check() -> dict[str, Any]:
        answer = await api.get("/spares", params=params)
        assert answer.status_code == 200, answer.text
        page: dict[str, Any] = answer.json()
        assert len(page["spares"]) == count, page
        return page

    return await assert_eventually(check, timeout=30)


@pytest.fixture
def cluster() -> str:
    """A cluster of this test's own, so visibility shows only its spares."""
    return f"c{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def own_cluster(
    client: Client, task_queue: str, tmp_path: Path, cluster: str
) -> AsyncIterator[LiveStack]:
    def register(settings: Settings) -> Settings:
        return settings.model_copy(update={"cluster_name": cluster})

    async with live_stack(client, task_queue, tmp_path, register) as stack:
        yield stack


async def test_spares_are_listed_by_cluster_pool_phase_and_host(
    own_cluster: LiveStack, cluster: str
) -> None:
    live = own_cluster
    api = live.api
    # One group: the two spares land on two different hosts.
    common = {"cluster": cluster, "inventory": live.stack.inventory, "anti_affinity_group": "g"}
    bodies = [spare_body(**common, pool="general"), spare_body(**common)]
    ids = [(await api.post("/spare/prepare", json=b)).json()["spare_id"] for b in bodies]
    for spare_id in ids:
        await live.phase_becomes(spare_id, "ready")

    page = await listed(api, 2, cluster=cluster, phase="ready")
    assert {s["spare_id"] for s in page["spares"]} == set(ids)
    assert page["next_page_token"] is None
    general = (await listed(api, 1, cluster=cluster, pool="general"))["spares"][0]
    assert general["spare_id"] == ids[0]
    assert general["cluster"] == cluster
    assert general["phase"] == "ready"
    assert general["workflow_status"] == "running"
    assert general["ui_url"].endswith(f"/workflows/{ids[0]}")
    assert (await listed(api, 1, cluster=cluster, pool="any"))["spares"][0]["spare_id"] == ids[1]
    on_host = await listed(api, 1, cluster=cluster, host=general["host"])
    assert on_host["spares"][0] == general
    await listed(api, 0, cluster=cluster, phase="released")

    first = await api.get("/spares", params={"cluster": cluster, "page_size": 1})
    token = first.json()["next_page_token"]
    assert token
    second = await api.get(
        "/spares", params={"cluster": cluster, "page_size": 1, "page_token": token}
    )
    assert second.status_code == 200
    paged = first.json()["spares"] + second.json()["spares"]
    assert sorted(s["spare_id"] for s in paged) == sorted(ids)
    for spare_id in ids:
        await live.stack.client.get_workflow_handle(spare_id).terminate("test over")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"phase": "sleeping"}, "phase"),
        ({"cluster": "lab' OR WorkflowType != 'x"}, "cluster"),
        ({"pool": ""}, "pool"),
        ({"page_size": 0}, "page_size"),
        ({"page_token": "!!!"}, "page_token"),
        ({"page_token": "bm90IGEgdG9rZW4="}, "page_token"),
    ],
)
async def test_bad_filters_are_422_naming_the_parameter(
    api: httpx.AsyncClient, params: dict[str, Any], field: str
) -> None:
    answer = await api.get("/spares", params=params)
    assert answer.status_code == 422, answer.text
    assert answer.json()["errors"][0]["loc"][-1] == field


async def test_listing_is_for_operators(api_settings: Settings, client: Client) -> None:
    tokens = {SecretStr("op-2b9c4d1e"): "operator", SecretStr("uc-8e7f6a5b"): "upgrade-controller"}
    secured = api_settings.model_copy(update={"api_tokens": tokens})
    async with asgi_client(secured, client) as api:
        assert (await api.get("/spares")).status_code == 401
        refused = await api.get("/spares", headers={"authorization": "Bearer uc-8e7f6a5b"})
        assert refused.status_code == 403
        allowed = await api.get(
            "/spares", params={"cluster": "nobody"}, headers={"authorization": "Bearer op-2b9c4d1e"}
        )
        assert allowed.status_code == 200
        assert allowed.json() == {"spares": [], "next_page_token": None}
