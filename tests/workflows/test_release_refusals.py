"""A release while the hypervisor refuses to destroy the VM (a backup's lock, lost quorum): the
spare is `released` only once the destroy went through; meanwhile each refusal, in the
hypervisor's words, is the releasing phase's detail; the tries are bounded, and a spare whose
VM could not be destroyed ends `failed` with the reason, never stays `releasing`. Stand-in
activities, skipped time."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.testing import WorkflowEnvironment

from contracts.failures import Failure
from contracts.spare import Phase
from tests.helpers import new_worker
from tests.workflows.standins import StandIns
from tests.workflows.test_spare_logic import failure_of, release_calls, request, start
from workflows.prepare_spare import PrepareSpare
from workflows.release_spare import DESTROY_TRIES, ReleaseSpare

LOCKED = "proxmox at pve:8006: DELETE /nodes/pve1/qemu/101: task ended in error: VM is locked"


async def test_a_refused_destroy_is_tried_again_with_the_reason_in_the_phase_detail(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    standins = StandIns(destroy_refusals=[LOCKED, LOCKED])
    req = request(ttl_seconds=60)
    client = time_skipping_env.client
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(client, w.task_queue, req)
        result = await handle.result()
        status = await handle.query(PrepareSpare.status)

    assert result.phase == Phase.RELEASED
    assert standins.asked("destroy_vm") == [req.spare_id] * 3
    releasing = [step for step in status.steps if step.phase == Phase.RELEASING]
    assert len(releasing) == 1
    assert releasing[0].detail.startswith(f"TTL of {req.ttl_seconds} s expired: ")
    assert f"refused ({LOCKED}); trying again in 10 s (try 2 of {DESTROY_TRIES})" in (
        releasing[0].detail
    )
    assert "ProvisioningTransient" not in releasing[0].detail


async def test_a_vm_the_hypervisor_keeps_refusing_to_destroy_fails_the_spare_with_the_reason(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    standins = StandIns(destroy_refusals=[LOCKED] * DESTROY_TRIES)
    req = request(ttl_seconds=60)
    client = time_skipping_env.client
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(client, w.task_queue, req)
        with pytest.raises(WorkflowFailureError) as caught:
            await handle.result()
        status = await handle.query(PrepareSpare.status)

    failure = failure_of(caught.value)
    assert failure.type == Failure.DESTROY_REFUSED
    assert failure.message.startswith(f"VM {req.spare_id} was not destroyed in {DESTROY_TRIES}")
    assert failure.message.endswith(LOCKED)
    assert status.phase == Phase.FAILED and status.error == failure.message
    assert standins.asked("destroy_vm") == [req.spare_id] * DESTROY_TRIES
    # The VM stays, and so does its room: the release never got to free it.
    assert "free_capacity" not in release_calls(standins)


async def test_a_destroy_refused_for_good_fails_the_spare_in_the_hypervisors_words(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    refused = "proxmox at pve:8006: DELETE /nodes/pve1/qemu/101: 403 Permission check failed"
    standins = StandIns(destroy_refusals=[LOCKED, "!" + refused])
    req = request(ttl_seconds=60)
    client = time_skipping_env.client
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(client, w.task_queue, req)
        with pytest.raises(WorkflowFailureError) as caught:
            await handle.result()
        status = await handle.query(PrepareSpare.status)

    failure = failure_of(caught.value)
    assert (failure.type, failure.message) == ("ProvisioningFailed", refused)
    assert status.phase == Phase.FAILED and status.error == refused
    assert standins.asked("destroy_vm") == [req.spare_id] * 2


async def test_a_compensation_whose_destroy_keeps_being_refused_still_ends_the_spare(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    # The VM never becomes Ready; the compensation's release meets a VM the hypervisor will
    # not destroy: the spare ends failed with both reasons, never stays `compensating`.
    standins = StandIns(node_ready=False, destroy_refusals=[LOCKED] * DESTROY_TRIES)
    req = request(ready_timeout_seconds=2)
    client = time_skipping_env.client
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(client, w.task_queue, req)
        with pytest.raises(WorkflowFailureError) as caught:
            await handle.result()
        status = await handle.query(PrepareSpare.status)

    assert failure_of(caught.value).type == "NotReady"
    assert status.phase == Phase.FAILED
    assert status.error is not None and status.error.endswith(LOCKED), status.error
    assert "did not become Ready" in status.error
    compensating = [step for step in status.steps if step.phase == Phase.COMPENSATING]
    assert len(compensating) == 1 and LOCKED in compensating[0].detail
