"""What a spare shows in the Temporal UI's search, and how little history that costs."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError

from contracts.common import CLUSTER, HOST, PHASE, POOL
from contracts.spare import (
    Phase,
    ReleaseRequest,
    SpareRequest,
    SpareResult,
    start_search_attributes,
)
from tests.stack import Provisioner, Stack, wait_phase
from workflows.prepare_spare import PrepareSpare


@pytest.fixture
def provisioner() -> Provisioner:
    """The lab hypervisor's API: making the VM is not the point here (the playbook's own
    tests cover it)."""
    return "http"


UPSERT = EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
TASK_COMPLETED = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED


def published_phases(events: list[HistoryEvent]) -> list[list[str]]:
    """The phases each workflow task published, in order (one list per task that did)."""
    per_task: list[list[str]] = []
    for event in events:
        if event.event_type == TASK_COMPLETED:
            per_task.append([])
        elif event.event_type == UPSERT:
            fields = event.upsert_workflow_search_attributes_event_attributes.search_attributes
            if PHASE.name in fields.indexed_fields:
                per_task[-1].append(fields.indexed_fields[PHASE.name].data.decode().strip('"'))
    return [phases for phases in per_task if phases]


async def history(handle: WorkflowHandle[PrepareSpare, object]) -> list[HistoryEvent]:
    return list((await handle.fetch_history()).events)


async def start(
    stack: Stack, req: SpareRequest, **options: Any
) -> WorkflowHandle[PrepareSpare, SpareResult]:
    return await stack.client.start_workflow(
        PrepareSpare.run, req, id=req.spare_id, task_queue=stack.task_queue, **options
    )


async def start_released(
    stack: Stack, req: SpareRequest
) -> WorkflowHandle[PrepareSpare, SpareResult]:
    """Started with its release already asked for: it is released as soon as it is Ready."""
    return await start(
        stack,
        req,
        start_signal="request_release",
        start_signal_args=[ReleaseRequest(reason="upgrade done")],
    )


def scheduled_activities(events: list[HistoryEvent]) -> list[str]:
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in events
        if e.event_type == SCHEDULED
    ]


async def test_a_spare_ready_at_once_publishes_each_phase_once_and_skips_the_probe(
    stack: Stack,
) -> None:
    req = stack.request()
    stack.lab.kubelet.set_behaviour(req.spare_id, ready_delay=0)  # Ready as it registers
    # Ready and releasing fall in one workflow task.
    handle = await start_released(stack, req)
    result = await handle.result()

    attributes = (await handle.describe()).typed_search_attributes
    assert attributes.get(CLUSTER) == "lab"
    assert attributes.get(POOL) == "any"
    assert attributes.get(HOST) == result.host
    assert attributes.get(PHASE) == "released"
    events = await history(handle)
    # "validating" is answered within the first task and "ready" is left within its own
    # task, so neither reaches visibility; the one look at the Node found it Ready, so there
    # was no "waiting_ready" either. Every other phase is written once.
    assert published_phases(events) == [
        ["reserving"],
        ["creating_vm"],
        ["releasing"],
        ["released"],
    ]
    assert "wait_node_ready" not in scheduled_activities(events)
    assert [s.phase for s in (await handle.query(PrepareSpare.status)).steps] == [
        Phase.VALIDATING,
        Phase.RESERVING,
        Phase.CREATING_VM,
        Phase.READY,
        Phase.RELEASING,
        Phase.RELEASED,
    ]


async def test_a_failed_look_at_the_node_falls_back_to_the_probe(stack: Stack) -> None:
    req = stack.request()
    stack.lab.kubelet.set_behaviour(req.spare_id, ready_delay=0)
    # The spare's first call to the Kubernetes API is that look (the lab's kubelet registers
    # Nodes without the API): it fails, and the probe finds the Node Ready instead.
    stack.lab.kube.fail_next(1, 503)
    handle = await start_released(stack, req)
    result = await handle.result()

    assert result.phase == Phase.RELEASED
    assert stack.lab.kube.failures_left == 0
    events = await history(handle)
    assert ["waiting_ready"] in published_phases(events)
    assert scheduled_activities(events).count("wait_node_ready") == 1


async def test_a_spare_that_fails_at_once_still_shows_where_it_ended(stack: Stack) -> None:
    req = stack.request(receivers=["no-such-receiver"])
    handle = await stack.start(req)
    with pytest.raises(WorkflowFailureError) as caught:
        await handle.result()
    assert isinstance(caught.value.cause, ApplicationError)
    assert caught.value.cause.type == "UnknownReceiver"
    assert "no-such-receiver" in caught.value.cause.message

    attributes = (await handle.describe()).typed_search_attributes
    assert attributes.get(CLUSTER) == "lab"
    assert attributes.get(PHASE) == "failed"
    # Nothing was reserved, but the ledger is still told to withdraw the request.
    assert published_phases(await history(handle)) == [["compensating"], ["failed"]]


async def test_a_spare_started_as_the_api_starts_it_publishes_nothing_until_it_changes(
    stack: Stack,
) -> None:
    req = stack.request()
    stack.lab.kubelet.set_behaviour(req.spare_id, never_ready=True)
    handle = await start(stack, req, search_attributes=start_search_attributes(req))
    await wait_phase(handle, Phase.WAITING_READY)
    await stack.lab.kubelet.mark_ready(req.spare_id)
    await wait_phase(handle, Phase.READY)
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
    await handle.result()

    # Cluster, pool and "reserving" came with the start; a Node not Ready at once shows
    # "waiting_ready"; a held spare shows "ready".
    assert published_phases(await history(handle)) == [
        ["creating_vm"],
        ["waiting_ready"],
        ["ready"],
        ["releasing"],
        ["released"],
    ]
