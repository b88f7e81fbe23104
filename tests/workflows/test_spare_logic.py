"""The spare's own logic on stand-in activities: timers, compensation and messages, in
milliseconds of skipped time rather than minutes of real time. What needs the real parts
(placement, the VM, the Node, the webhooks) is in the full-stack tests beside this one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio.client import (
    Client,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.testing import WorkflowEnvironment

from contracts.spare import Phase, ReleaseRequest, SpareRequest, SpareResult
from tests.helpers import assert_eventually, new_worker
from tests.workflows.standins import NOT_READY, StandIns
from workflows.prepare_spare import PrepareSpare
from workflows.release_spare import ReleaseSpare

RELEASE_STEPS = ["cordon_node", "drain_node", "delete_node", "destroy_vm", "free_capacity"]


def request(**fields: Any) -> SpareRequest:
    base = {"request_id": f"r{uuid.uuid4().hex[:10]}", "cluster": "lab", "cpu": 2}
    return SpareRequest.model_validate({"memory_mb": 2048, **base, **fields})


async def start(
    client: Client, task_queue: str, req: SpareRequest
) -> WorkflowHandle[PrepareSpare, SpareResult]:
    return await client.start_workflow(
        PrepareSpare.run, req, id=req.spare_id, task_queue=task_queue
    )


def failure_of(err: WorkflowFailureError) -> ApplicationError:
    assert isinstance(err.cause, ApplicationError), err.cause
    return err.cause


def release_calls(standins: StandIns) -> list[str]:
    return [name for name, _ in standins.calls if name in RELEASE_STEPS]


async def test_a_ready_spare_is_released_when_its_six_hour_ttl_expires(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    standins = StandIns()
    req = request()  # the default TTL: six hours, skipped
    client = time_skipping_env.client
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        result = await (await start(client, w.task_queue, req)).result()

    assert result.phase == Phase.RELEASED
    assert result.reason == f"TTL of {req.ttl_seconds} s expired"
    assert result.vm is not None and result.vm.name == req.spare_id
    assert release_calls(standins) == RELEASE_STEPS
    assert standins.asked("destroy_vm") == [req.spare_id]


async def test_a_spare_waiting_for_room_gives_up_at_its_capacity_deadline(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    standins = StandIns(reserve="queued")
    req = request(wait_for_capacity=True)  # the default deadline: 30 minutes, skipped
    client = time_skipping_env.client
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        with pytest.raises(WorkflowFailureError) as caught:
            await (await start(client, w.task_queue, req)).result()

    failure = failure_of(caught.value)
    assert failure.type == "NoCapacity"
    assert failure.message == f"no_capacity: no room within {req.capacity_deadline_seconds} s"
    # The waiter is withdrawn from the ledger (compensation frees again: freeing is
    # idempotent), and nothing was created.
    assert set(standins.asked("free_capacity")) == {req.spare_id}
    assert standins.asked("create_vm") == []


async def test_a_vm_that_never_becomes_ready_is_released_and_the_spare_fails(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    # The readiness probe is an activity that watches the Node for its round, and the test
    # server skips no time while an activity runs: a short timeout keeps this test short.
    standins = StandIns(node_ready=False)
    req = request(ready_timeout_seconds=2)
    client = time_skipping_env.client
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        with pytest.raises(WorkflowFailureError) as caught:
            await (await start(client, w.task_queue, req)).result()

    failure = failure_of(caught.value)
    assert failure.type == "NotReady"
    assert f"did not become Ready within {req.ready_timeout_seconds} s" in failure.message
    assert NOT_READY[0] in failure.message  # says what was still missing
    assert release_calls(standins) == RELEASE_STEPS


async def test_release_before_ready_is_refused_with_a_reason(client: Client) -> None:
    standins = StandIns(node_ready=False)
    req = request()
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(client, w.task_queue, req)

        async def waiting_ready() -> None:
            status = await handle.query(PrepareSpare.status)
            assert status.phase == Phase.WAITING_READY, status.phase

        await assert_eventually(waiting_ready)
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await handle.execute_update(PrepareSpare.release, ReleaseRequest())
        assert "can be released once ready (it is waiting_ready)" in str(caught.value.cause)
        await handle.terminate("test over")


@pytest.mark.parametrize(
    "finishes_anyway", [False, True], ids=["the create stops", "the create finishes anyway"]
)
async def test_a_cancel_during_the_create_is_compensated_only_once_the_create_has_stopped(
    client: Client, finishes_anyway: bool
) -> None:
    standins = StandIns(create_runs_until_cancelled=True, create_finishes_anyway=finishes_anyway)
    # A cancel reaches the activity with a heartbeat's answer: beats every second or so.
    req = request(timeouts={"heartbeat_seconds": 1})
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(client, w.task_queue, req)

        async def asked(name: str) -> None:
            assert standins.asked(name) == [req.spare_id], standins.calls

        try:
            await assert_eventually(lambda: asked("create_vm"))
            await handle.cancel()
            await assert_eventually(lambda: asked("create_vm cancelled"))
            # The create has the cancel but has not stopped: nothing is undone yet.
            status = await handle.query(PrepareSpare.status)
            assert status.phase == Phase.CREATING_VM
            assert release_calls(standins) == []
        finally:
            standins.create_may_stop.set()  # else the worker's shutdown waits for it
        with pytest.raises(WorkflowFailureError) as caught:
            await handle.result()
        assert isinstance(caught.value.cause, CancelledError)
        final = await handle.query(PrepareSpare.status)
        assert final.phase == Phase.CANCELLED

    names = [name for name, _ in standins.calls]
    assert names.index("create_vm stopped") < names.index("cordon_node")
    # Whatever the create made is removed, and the room given back.
    assert release_calls(standins) == RELEASE_STEPS
