"""A warm claim across a crash of its worker: the request gets one warm spare, the one it was
handed, never a second; a spare handed to a request that ended is released with its room;
and a pool whose definition changed while its worker restarted hands out no spare of the old
definition.

The crash comes at the worst moment for a claim: the warm spare has been handed over (its
`hand_over` Update completed) and the pool has not heard the answer. A worker entry point of
the tests (`tests/chaos/stalled_hand_over.py`) hangs right there until it is SIGKILLed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from contracts.reconcile import RECONCILE_SPARES, ReconcileInput, compensation_id
from contracts.spare import Phase
from tests.chaos.conftest import FAST, Chaos
from tests.chaos.stalled_hand_over import HANDED_OVER_FILE_ENV
from tests.helpers import assert_eventually
from tests.stack import ledger_reservations, wait_phase
from tests.warm_stack import SHAPE, new_pool_name, pool_view, wait_pool, warm_site
from workflows.prepare_spare import PrepareSpare

STALLED_WORKER = "tests.chaos.stalled_hand_over"
POOL_SIZE = 2


@pytest.fixture
def inventory_doc() -> dict[str, Any]:
    return warm_site()


def pool_settings(chaos: Chaos, name: str, **fields: Any) -> str:
    pool = {
        "name": name,
        "cluster": "lab",
        "inventory": chaos.stack.inventory,
        "pool": "general",
        "size": POOL_SIZE,
        "timeouts": FAST.model_dump(),
        **SHAPE,
        **fields,
    }
    return json.dumps([pool])


async def handed_over(record: Path) -> tuple[str, str]:
    """The hand-over the stalled worker made: (warm spare, the request's spare)."""

    async def written() -> None:
        assert record.exists() and record.read_text().strip(), "no hand-over yet"

    await assert_eventually(written, timeout=60, interval=0.1)
    warm_id, to, accepted = record.read_text().split()
    assert accepted == "True"
    return warm_id, to


async def claimed_by_a_stalled_worker(chaos: Chaos) -> tuple[str, str, set[str], Any]:
    """A full pool, one request claiming from it, and the worker hung right after the
    hand-over: (warm spare handed over, the pool's name, all its warm spares, the request)."""
    name = new_pool_name()
    chaos.use_http_provisioner()
    chaos.env["VIRTFLOW_WARM_POOLS"] = pool_settings(chaos, name)
    record = chaos.tmp_path / "handed-over"
    chaos.env[HANDED_OVER_FILE_ENV] = str(record)
    await chaos.start_worker(module=STALLED_WORKER)
    del chaos.env[HANDED_OVER_FILE_ENV]
    warm_ids = {s.spare_id for s in (await wait_pool(chaos.stack, name, POOL_SIZE)).spares}

    request = await chaos.stack.start(chaos.request(**SHAPE))
    warm_id, to = await handed_over(record)
    assert (warm_id, to) in {(w, request.id) for w in warm_ids}
    # The warm spare ends, handed over, and tells its pool so, while the pool still waits
    # for the hand-over's answer.
    ended = await chaos.stack.client.get_workflow_handle(warm_id).result()
    assert (ended["phase"], ended["handed_to"]) == (Phase.HANDED_OVER, request.id)
    return warm_id, name, warm_ids, request


async def test_a_claim_retried_after_a_crash_gives_the_request_the_spare_it_was_handed(
    chaos: Chaos,
) -> None:
    stack = chaos.stack
    warm_id, name, warm_ids, request = await claimed_by_a_stalled_worker(chaos)
    await chaos.workers[0].kill()
    await chaos.start_worker()

    await wait_phase(request, Phase.READY, timeout=120)
    status = await request.query(PrepareSpare.status)
    assert status.warm is not None and status.warm.warm_spare_id == warm_id
    assert status.vm is not None and status.vm.name == warm_id
    # No other warm spare went to it: the rest of the pool is still its pool's.
    view = await pool_view(stack, name)
    others = warm_ids - {warm_id}
    assert others <= {s.spare_id for s in view.spares if s.phase == "warm"}, view
    for other in others:
        described = await stack.client.get_workflow_handle(other).describe()
        assert described.status == WorkflowExecutionStatus.RUNNING, other
    # One VM, one reservation: the request's, on the warm spare's VM.
    reservations = {r.spare_id: r for r in await ledger_reservations(stack)}
    assert warm_id not in reservations
    assert reservations[request.id].vm_name == warm_id
    await request.terminate("test over")


async def test_a_spare_handed_to_a_claimant_that_ended_is_released_with_its_room(
    chaos: Chaos,
) -> None:
    stack = chaos.stack
    warm_id, _, _, request = await claimed_by_a_stalled_worker(chaos)
    # The claimant is terminated mid-claim, and the sweep compensates it (once) before the
    # pool moves any room.
    await request.terminate("terminated mid-claim")
    described = await request.describe()
    sweep = await stack.client.start_workflow(
        RECONCILE_SPARES,
        ReconcileInput(grace_seconds=3600),
        id=f"reconcile-{request.id}",
        task_queue=stack.task_queue,
    )
    compensation = stack.client.get_workflow_handle(compensation_id(request.id, described.run_id))

    async def compensated() -> None:
        try:
            status = (await compensation.describe()).status
        except RPCError as err:
            assert err.status != RPCStatusCode.NOT_FOUND, "not started yet"
            raise
        assert status == WorkflowExecutionStatus.COMPLETED, status

    await assert_eventually(compensated, timeout=60, interval=0.5)
    await sweep.terminate("its compensation is all this test needs")

    await chaos.workers[0].kill()
    await chaos.start_worker()

    async def released() -> None:
        held = {r.spare_id for r in await ledger_reservations(stack)}
        assert not held & {warm_id, request.id}, held
        assert warm_id not in stack.lab.hypervisor.vms
        assert stack.lab.kube.store.get("nodes", "", warm_id) is None

    await assert_eventually(released, timeout=90, interval=0.5)


async def test_a_definition_changed_across_a_restart_hands_out_no_spare_of_the_old_one(
    chaos: Chaos,
) -> None:
    stack = chaos.stack
    name = new_pool_name()
    chaos.use_http_provisioner()
    chaos.env["VIRTFLOW_WARM_POOLS"] = pool_settings(chaos, name)
    worker = await chaos.start_worker()
    old = {s.spare_id for s in (await wait_pool(stack, name, POOL_SIZE)).spares}
    await worker.kill()

    # The pool now keeps 2-CPU spares; requests for 2 CPUs come while no worker runs, and
    # the new worker's claims reach the pool before it converges on its new definition.
    bigger = {**SHAPE, "cpu": 2}
    chaos.env["VIRTFLOW_WARM_POOLS"] = pool_settings(chaos, name, **bigger)
    requests = [await stack.start(chaos.request(**bigger)) for _ in range(POOL_SIZE)]
    await chaos.start_worker()

    for handle in requests:
        await wait_phase(handle, Phase.READY, timeout=120)
        status = await handle.query(PrepareSpare.status)
        assert status.vm is not None
        taken = status.warm.warm_spare_id if status.warm else None
        assert taken not in old, f"{handle.id} was handed {taken}, a 1-CPU spare"
        assert stack.lab.hypervisor.vms[status.vm.name].cpu == 2
    for handle in requests:
        await handle.terminate("test over")
