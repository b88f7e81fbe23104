"""One worker, two lab clusters: every Kubernetes call of a spare goes to its own cluster.

The lab's two APIs (`lab`, `lab-b`, each with its own CA and token) record every request
they are sent: a spare of lab-b has its bootstrap token, Node, labels, drain and deletion in
lab-b's API, and lab's API is sent nothing at all.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from contracts.spare import CLUSTER_LABEL, Phase, ReleaseRequest, SpareResult
from lab.hypervisor import load_inventory_file
from runtime.settings import Settings
from runtime.vm_templates import VmTemplate
from tests.helpers import assert_eventually
from tests.stack import LAB_INVENTORY, Stack, running_stack, wait_phase
from tests.workflows.test_cli_start import start_from_cli
from workflows.prepare_spare import PrepareSpare

SINCE = "%Y-%m-%dT%H:%M:%SZ"
USER_DATA = "#cloud-config\nserver: {{ api_server }}\ntoken: {{ join_token }}\n"


def with_a_join(settings: Settings) -> Settings:
    # A template with user data: each spare gets a bootstrap token in its cluster.
    return settings.model_copy(
        update={"vm_templates": {"default": VmTemplate(user_data=USER_DATA)}}
    )


@pytest.fixture
async def two_clusters(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(
        client,
        task_queue,
        tmp_path,
        load_inventory_file(LAB_INVENTORY),
        configure=with_a_join,
        provisioner="http",
        extra_clusters=("lab-b",),
    ) as stack:
        yield stack


def calls_about(calls: list[tuple[str, str]], name: str) -> list[tuple[str, str]]:
    return [(method, path) for method, path in calls if name in path]


async def test_a_spare_of_lab_b_lives_in_lab_b_alone(two_clusters: Stack) -> None:
    stack = two_clusters
    lab, lab_b = stack.lab.clusters["lab"].kube, stack.lab.clusters["lab-b"].kube
    lab.calls.clear()
    req = stack.request(cluster="lab-b")
    handle = await stack.start(req)
    await wait_phase(handle, Phase.READY)

    node = lab_b.store.get("nodes", "", req.spare_id)
    assert node is not None and node["metadata"]["labels"][CLUSTER_LABEL] == "lab-b"
    assert lab.store.get("nodes", "", req.spare_id) is None
    seen = list(lab_b.calls)
    secrets = [c for c in seen if c[1].startswith("/api/v1/namespaces/kube-system/secrets")]
    assert ("POST", "/api/v1/namespaces/kube-system/secrets") in secrets  # its join token
    assert any(method == "DELETE" for method, _ in secrets)  # gone once Ready
    assert ("GET", f"/api/v1/nodes/{req.spare_id}") in seen  # adopted: its labels checked

    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
    result: SpareResult = await handle.result()
    assert result.phase == Phase.RELEASED
    about = calls_about(list(lab_b.calls), req.spare_id)
    assert ("PATCH", f"/api/v1/nodes/{req.spare_id}") in about  # cordoned
    assert ("DELETE", f"/api/v1/nodes/{req.spare_id}") in about
    assert any("fieldSelector" in p or "/pods" in p for _, p in lab_b.calls)  # drained
    assert lab_b.store.get("nodes", "", req.spare_id) is None
    assert list(lab.calls) == []


async def test_a_temporal_cli_start_for_an_unregistered_cluster_fails_having_done_nothing(
    two_clusters: Stack,
) -> None:
    stack = two_clusters
    kubes = [c.kube for c in stack.lab.clusters.values()]
    for kube in kubes:
        kube.calls.clear()
    vms_before = dict(stack.lab.hypervisor.vms)
    request_id = f"r{uuid.uuid4().hex[:8]}"
    workflow_id = f"spare-prod-x-{request_id}"
    body = {"request_id": request_id, "cluster": "prod-x", "inventory": stack.inventory}
    await start_from_cli(stack, workflow_id, {**body, "cpu": 1, "memory_mb": 512})
    handle = stack.client.get_workflow_handle(workflow_id)
    with pytest.raises(WorkflowFailureError) as failed:
        # Bounded: a spare that never ends fails this test instead of holding up the suite.
        await asyncio.wait_for(handle.result(), timeout=120)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.non_retryable
    assert cause.type == "UnknownCluster"
    assert cause.message == "cluster: unknown cluster 'prod-x' (registered: lab, lab-b)"
    status = await handle.query(PrepareSpare.status)
    assert status.phase == Phase.FAILED and status.host is None
    # No activity ran through the task queue (only the configuration lookups, local), no
    # ledger was asked, no VM made, no call reached either cluster (no token, no Node).
    events = [e async for e in handle.fetch_history_events()]
    scheduled = [e for e in events if e.HasField("activity_task_scheduled_event_attributes")]
    assert scheduled == []
    assert not [
        e for e in events if e.HasField("start_child_workflow_execution_initiated_event_attributes")
    ]
    assert dict(stack.lab.hypervisor.vms) == vms_before
    assert [list(k.calls) for k in kubes] == [[], []]


UNREACHABLE = re.compile(
    r"cluster lab-b's Kubernetes API unreachable since "
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ): \w+"
)


async def test_lab_b_unreachable_holds_up_only_its_own_spare_until_it_answers(
    two_clusters: Stack,
) -> None:
    stack = two_clusters
    lab_b = stack.lab.clusters["lab-b"]
    waiting = stack.request(cluster="lab-b")
    # Its Node registers but is not Ready until the test says so, after the outage.
    lab_b.kubelet.set_behaviour(waiting.spare_id, never_ready=True)
    handle_b = await stack.start(waiting)
    await wait_phase(handle_b, Phase.WAITING_READY)

    port = lab_b.kube.port
    stopped_at = datetime.now(UTC).replace(microsecond=0)
    await lab_b.kube.stop()

    async def says_lab_b_is_unreachable() -> str:
        status = await handle_b.query(PrepareSpare.status)
        assert status.phase == Phase.WAITING_READY
        found = [m for w in status.waiting_for if (m := UNREACHABLE.match(w))]
        assert found, status.waiting_for
        return found[0].group(1)

    since = datetime.strptime(await assert_eventually(says_lab_b_is_unreachable), SINCE)
    assert since.replace(tzinfo=UTC) >= stopped_at

    # lab's spares go on meanwhile.
    elsewhere = await stack.start(stack.request(cluster="lab"))
    await wait_phase(elsewhere, Phase.READY)
    await says_lab_b_is_unreachable()

    # lab-b answers again (same address, same credentials): its spare goes on to Ready.
    await lab_b.kube.start(port=port)
    await lab_b.kubelet.mark_ready(waiting.spare_id)
    await wait_phase(handle_b, Phase.READY)
    status = await handle_b.query(PrepareSpare.status)
    assert not [w for w in status.waiting_for if UNREACHABLE.match(w)]
    node = lab_b.kube.store.get("nodes", "", waiting.spare_id)
    assert node is not None and node["metadata"]["labels"][CLUSTER_LABEL] == "lab-b"
    for handle in (elsewhere, handle_b):
        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
        assert (await handle.result()).phase == Phase.RELEASED
