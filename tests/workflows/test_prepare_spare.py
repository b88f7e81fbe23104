"""The spare lifecycle end to end: real Temporal, real ansible-runner, real HTTP to the lab.

The logic alone (the TTL, the capacity deadline, refusing an early release) runs on stand-in
activities in test_spare_logic.py."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError, CancelledError

from contracts.spare import Phase, ReleaseRequest
from tests.stack import Stack, ledger_reservations, wait_phase
from workflows.prepare_spare import PrepareSpare


def failure_of(err: WorkflowFailureError) -> ApplicationError:
    assert isinstance(err.cause, ApplicationError), err.cause
    return err.cause


async def test_a_spare_becomes_ready_and_is_released_on_request(stack: Stack) -> None:
    req = stack.request()
    handle = await stack.start(req)
    await wait_phase(handle, Phase.READY)

    status = await handle.query(PrepareSpare.status)
    assert status.host is not None and status.vm is not None and status.vm.ip
    assert req.spare_id in stack.lab.hypervisor.vms
    node = stack.lab.kube.store.get("nodes", "", req.spare_id)
    assert node is not None

    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="upgrade done"))
    result = await handle.result()

    assert result.phase == Phase.RELEASED and result.reason == "upgrade done"
    assert req.spare_id not in stack.lab.hypervisor.vms
    assert stack.lab.kube.store.get("nodes", "", req.spare_id) is None
    assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]
    # Each event once; deliveries run concurrently, so arrival order is not promised.
    assert sorted(await stack.event_types(req.spare_id)) == [
        "spare.ready",
        "spare.release_started",
        "spare.released",
        "spare.reserved",
        "spare.vm_created",
    ]


async def test_a_vm_that_never_becomes_ready_is_destroyed_and_reported(stack: Stack) -> None:
    req = stack.request(ready_timeout_seconds=3)
    stack.lab.kubelet.set_behaviour(req.spare_id, never_ready=True)
    handle = await stack.start(req)
    with pytest.raises(WorkflowFailureError) as caught:
        await handle.result()

    failure = failure_of(caught.value)
    assert failure.type == "NotReady"
    assert "did not become Ready within 3 s" in failure.message
    assert "Ready" in failure.message  # says what was still missing
    assert req.spare_id not in stack.lab.hypervisor.vms
    assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]
    events = await stack.events(req.spare_id)
    assert events[-1]["type"] == "spare.failed"
    assert "did not become Ready" in events[-1]["event"]["data"]["reason"]


async def test_a_create_that_fails_for_good_is_compensated(stack: Stack) -> None:
    stack.lab.hypervisor.fail_next_create("image ubuntu-24.04 not found on host")
    req = stack.request()
    handle = await stack.start(req)
    with pytest.raises(WorkflowFailureError) as caught:
        await handle.result()

    failure = failure_of(caught.value)
    assert failure.type == "ProvisioningFailed"
    assert "image ubuntu-24.04 not found" in failure.message
    assert req.spare_id not in stack.lab.hypervisor.vms
    assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]
    assert (await stack.event_types(req.spare_id))[-1] == "spare.failed"
    status = await handle.query(PrepareSpare.status)
    assert status.phase == Phase.FAILED


async def test_cancelling_mid_way_undoes_everything(stack: Stack) -> None:
    req = stack.request()
    stack.lab.kubelet.set_behaviour(req.spare_id, never_ready=True)
    handle = await stack.start(req)
    await wait_phase(handle, Phase.WAITING_READY)
    assert req.spare_id in stack.lab.hypervisor.vms

    await handle.cancel()
    with pytest.raises(WorkflowFailureError) as caught:
        await handle.result()

    assert isinstance(caught.value.cause, CancelledError)
    assert req.spare_id not in stack.lab.hypervisor.vms
    assert stack.lab.kube.store.get("nodes", "", req.spare_id) is None
    assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]
    status = await handle.query(PrepareSpare.status)
    assert status.phase == Phase.CANCELLED
    assert (await stack.event_types(req.spare_id))[-1] == "spare.failed"
