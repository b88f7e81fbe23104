"""The cluster registry at the API's door: an unregistered cluster, or what a cluster may not
use, is refused before any workflow exists."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from lab.kube_testing import kube_lab
from runtime.clusters import ClusterConfig
from runtime.receivers import ReceiverConfig
from runtime.settings import Settings
from tests.api.api_helpers import asgi_client, live_stack, spare_body
from tests.helpers import assert_eventually
from tests.known_secrets import WEBHOOK_SECRET


def two_clusters(settings: Settings) -> Settings:
    receiver = ReceiverConfig(url="http://127.0.0.1:9/b", secrets=[SecretStr(WEBHOOK_SECRET)])
    return Settings.model_validate(
        {
            **settings.model_dump(exclude={"clusters"}, exclude_unset=True),
            "receivers": {**settings.receivers, "ctrl-b": receiver},
            "clusters": {
                "prod-a": ClusterConfig(
                    kubeconfig=Path("/nonexistent/a"), receivers=["upgradectrl"]
                ),
                "prod-b": ClusterConfig(
                    kubeconfig=Path("/nonexistent/b"),
                    receivers=["ctrl-b"],
                    inventories=["default"],
                    pools=["gpu"],
                ),
            },
        }
    )


async def no_workflow(client: Client, workflow_id: str) -> None:
    with pytest.raises(RPCError) as err:
        await client.get_workflow_handle(workflow_id).describe()
    assert err.value.status == RPCStatusCode.NOT_FOUND


async def test_an_unregistered_cluster_is_422_naming_the_registered_ones(
    api_settings: Settings, client: Client
) -> None:
    async with asgi_client(two_clusters(api_settings), client) as api:
        body = spare_body(cluster="prod-c")
        answer = await api.post("/v1/spares", json=body)
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert problem["code"] == "unknown_cluster"
        assert problem["detail"] == (
            "cluster: unknown cluster 'prod-c' (registered: prod-a, prod-b)"
        )
        assert problem["errors"][0]["field"] == "cluster"
        await no_workflow(client, f"spare-prod-c-{body['request_id']}")


async def test_a_site_without_clusters_has_its_one_cluster(
    api_settings: Settings, client: Client
) -> None:
    async with asgi_client(api_settings, client) as api:
        answer = await api.post("/v1/spares", json=spare_body(cluster="prod-b"))
        assert answer.status_code == 422
        assert answer.json()["detail"] == "cluster: unknown cluster 'prod-b' (registered: lab)"


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        (
            {"receivers": ["upgradectrl"]},
            "receivers",
            "receiver 'upgradectrl' is not one of cluster 'prod-b''s (its: ctrl-b)",
        ),
        (
            {"pool": "batch"},
            "pool",
            "cluster 'prod-b' may not use pool 'batch' (allowed: gpu)",
        ),
    ],
)
async def test_what_a_cluster_may_not_use_is_422(
    api_settings: Settings, client: Client, fields: dict[str, object], field: str, reason: str
) -> None:
    async with asgi_client(two_clusters(api_settings), client) as api:
        body = spare_body(cluster="prod-b", **fields)
        answer = await api.post("/v1/spares", json=body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["code"] == "not_allowed_for_cluster"
        assert answer.json()["errors"][0]["field"] == field
        assert answer.json()["errors"][0]["message"] == reason
        await no_workflow(client, f"spare-prod-b-{body['request_id']}")


async def test_clusters_show_their_api_server_reachability_spares_and_budget(
    api_settings: Settings, client: Client, tmp_path: Path
) -> None:
    async with kube_lab(tmp_path / "a") as up, kube_lab(tmp_path / "b") as down:
        down_server = down.api.url
        await down.api.stop()
        settings = Settings.model_validate(
            {
                **api_settings.model_dump(exclude_unset=True),
                "clusters": {
                    "prod-a": ClusterConfig(kubeconfig=up.kubeconfig, max_spares=4),
                    "prod-b": ClusterConfig(kubeconfig=down.kubeconfig),
                },
            }
        )
        async with asgi_client(settings, client) as api:
            answer = await api.get("/v1/clusters")
            assert answer.status_code == 200, answer.text
            a, b = answer.json()["clusters"]
        assert (a["name"], a["api_server"], a["reachable"]) == ("prod-a", up.api.url, True)
        assert (a["spares_in_use"], a["max_spares"], a["last_error"]) == (0, 4, None)
        assert (b["name"], b["api_server"], b["reachable"]) == ("prod-b", down_server, False)
        assert b["since"] is not None and "ConnectError" in b["last_error"]
        assert b["max_spares"] is None


# The count the clusters list shows comes from visibility, which other tests' spares share:
# a name of this test's own keeps them out of it.
BUDGETED = f"budgeted-{uuid.uuid4().hex[:8]}"


def budget_of_two(settings: Settings) -> Settings:
    budgeted = ClusterConfig(kubeconfig=settings.kubeconfig, max_spares=2)
    return settings.model_copy(update={"kubeconfig": None, "clusters": {BUDGETED: budgeted}})


async def test_count_past_the_budget_is_409_naming_it_and_its_use(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with live_stack(client, task_queue, tmp_path, configure=budget_of_two) as live:
        api = live.api

        def body(count: int) -> dict[str, object]:
            return spare_body(inventory=live.stack.inventory, cluster=BUDGETED, count=count)

        three = body(3)
        refused = await api.post("/v1/spares", json=three)
        assert refused.status_code == 409, refused.text
        problem = refused.json()
        assert (problem["code"], problem["budget"], problem["in_use"]) == (
            "cluster_budget_exceeded",
            2,
            0,
        )
        assert problem["detail"].startswith(
            f"cluster '{BUDGETED}' is at its surge budget: 0 of max_spares 2 spares in use, "
            "3 more asked for. Nothing was reserved"
        )
        started = await live.stack.client.count_workflows(
            f"WorkflowId STARTS_WITH 'spare-{BUDGETED}-{three['request_id']}'"
        )
        assert started.count == 0

        answer = await api.post("/v1/spares", json=body(2))
        assert answer.status_code == 202, answer.text
        for spare_id in answer.json()["spares"]:
            await live.phase_becomes(spare_id, "ready")
        one_more = await api.post("/v1/spares", json=body(2))
        assert one_more.status_code == 409, one_more.text
        assert (one_more.json()["budget"], one_more.json()["in_use"]) == (2, 2)

        async def both_in_use() -> None:
            (budgeted,) = (await api.get("/v1/clusters")).json()["clusters"]
            assert (budgeted["spares_in_use"], budgeted["max_spares"]) == (2, 2)

        await assert_eventually(both_in_use)
        for spare_id in answer.json()["spares"]:
            await live.stack.client.get_workflow_handle(spare_id).terminate("test over")
