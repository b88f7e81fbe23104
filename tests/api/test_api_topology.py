"""Spares across failure domains through the API: a spread over zones, and `near` a Node.

The site has three zones of three hosts; zone z-a is empty and the others are busy, so
placement without topology would put every spare in z-a (LeastAllocated).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client

from tests.api.api_helpers import LiveStack, asgi_client, spare_body
from tests.helpers import assert_eventually
from tests.stack import running_stack

ZONE = "topology.kubernetes.io/zone"
ZONES = {"z-a": 0, "z-b": 40, "z-c": 48}  # CPUs already allocated on each host of the zone


def zoned_site() -> dict[str, Any]:
    hosts = [
        {
            "name": f"bm-{zone}-{i}",
            "pool": "general",
            "rack": f"r-{zone}",
            "cpu_capacity": 64,
            "cpu_allocated": used,
            "memory_mb_capacity": 262144,
            "memory_mb_allocated": used * 2048,
            "labels": {ZONE: zone},
        }
        for zone, used in ZONES.items()
        for i in range(3)
    ]
    return {"hosts": hosts, "existing_vms": [], "used_vmids": [], "next_vmid": 100}


@pytest.fixture
async def zoned(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[LiveStack]:
    async with running_stack(
        client, task_queue, tmp_path, zoned_site(), provisioner="http"
    ) as stack:
        settings = stack.settings.model_copy(update={"task_queue": task_queue})
        # The command line is not used here: the API in-process is enough, no served URL.
        async with asgi_client(settings, client) as api:
            yield LiveStack(api, stack, url="")


def zone_of(host: str) -> str:
    return host.split("-", 1)[1].rsplit("-", 1)[0]


async def terminate(live: LiveStack, *spare_ids: str) -> None:
    for spare_id in spare_ids:
        await live.stack.client.get_workflow_handle(spare_id).terminate("test over")


async def test_six_spares_over_three_zones_with_max_skew_1_are_two_per_zone(
    zoned: LiveStack,
) -> None:
    spread = {"topology_key": ZONE, "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}
    body = spare_body(inventory=zoned.stack.inventory, count=6, topology_spread=[spread])
    answer = await zoned.api.post("/spare/prepare", json=body)
    assert answer.status_code == 202, answer.text
    ids = answer.json()["spares"]
    statuses = [await zoned.phase_becomes(spare_id, "ready", timeout=120) for spare_id in ids]

    assert Counter(zone_of(s["host"]) for s in statuses) == {"z-a": 2, "z-b": 2, "z-c": 2}
    for status in statuses:
        assert status["topology"]["domains"] == {ZONE: zone_of(status["host"])}
        assert status["topology"]["near"] is None
    reserved = [e for e in await zoned.stack.events(ids[0]) if e["type"] == "spare.reserved"]
    topology = reserved[0]["event"]["data"]["topology"]
    assert topology == {"domains": {ZONE: zone_of(statuses[0]["host"])}, "near": None}
    await terminate(zoned, *ids)


async def test_a_spare_near_a_node_lands_in_that_nodes_zone(zoned: LiveStack) -> None:
    api, stack = zoned.api, zoned.stack
    # The node being replaced: a spare that the site put in z-c, now a Node of the cluster.
    first = spare_body(inventory=stack.inventory, node_selector={ZONE: "z-c"})
    node = (await api.post("/spare/prepare", json=first)).json()["spare_id"]
    await zoned.phase_becomes(node, "ready")
    assert stack.lab.kube.store.get("nodes", "", node) is not None

    near = {"node": node, "topology_key": ZONE, "required": True}
    answer = await api.post("/spare/prepare", json=spare_body(inventory=stack.inventory, near=near))
    assert answer.status_code == 202, answer.text
    replacement = answer.json()["spare_id"]
    status = await zoned.phase_becomes(replacement, "ready")

    assert zone_of(status["host"]) == "z-c"  # without near: the empty z-a
    assert status["topology"]["near"] == {
        "vm": node,
        "node": node,
        "topology_key": ZONE,
        "required": True,
        "host": (await api.get(f"/spare/{node}")).json()["host"],
        "domain": "z-c",
    }
    handle = stack.client.get_workflow_handle(replacement)
    metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    assert f"near node {node} wanted {ZONE}=z-c (met)" in metadata.current_details
    await terminate(zoned, node, replacement)


async def test_near_a_node_the_inventory_does_not_have_is_422(zoned: LiveStack) -> None:
    near = {"node": "worker-404", "topology_key": ZONE}
    body = spare_body(inventory=zoned.stack.inventory, near=near)
    answer = await zoned.api.post("/spare/prepare", json=body)
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert problem["code"] == "near_unknown"
    assert problem["errors"][0]["field"] == "near.node"
    assert "node 'worker-404' is not among the existing VMs" in problem["detail"]


async def test_a_spread_over_another_group_than_the_members_is_422(zoned: LiveStack) -> None:
    spread = {"topology_key": ZONE, "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}
    body = spare_body(
        inventory=zoned.stack.inventory, count=2, topology_spread=[{**spread, "group": "web"}]
    )
    answer = await zoned.api.post("/spare/prepare", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["errors"][0]["field"] == "count"
    assert "counts group 'web' and would not spread them" in answer.json()["detail"]


async def test_a_temporal_start_near_an_unknown_node_fails_and_says_why(zoned: LiveStack) -> None:
    """The Temporal input skips the API's check: the placement itself refuses, never ignoring
    `near`."""
    stack = zoned.stack
    req = stack.request(near={"node": "worker-404", "topology_key": ZONE, "required": False})
    handle = await stack.start(req)

    async def failed() -> dict[str, Any]:
        status: dict[str, Any] = (await zoned.api.get(f"/spare/{handle.id}")).json()
        assert status["phase"] == "failed", status
        return status

    status = await assert_eventually(failed, timeout=60)
    assert status["error"] == (
        "never_fits: near_unknown: node 'worker-404' is not among the existing VMs"
    )
    assert status["host"] is None
