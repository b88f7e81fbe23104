"""Saved histories must replay on the current code: a change that breaks determinism fails here.

Running workflows are protected by Worker Versioning (pinned to their build) and the
`virtflow replay` gate; workflow code is changed directly and the saved histories re-recorded
(docs/DEVELOPING.md, Contributing): delete
tests/histories/*.json and run `VIRTFLOW_RECORD_HISTORIES=1 pytest tests/workflows/test_replay.py
tests/workflows/test_warm_pools.py` (the warm pool's histories are recorded there).
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Replayer

from activities.ledger import LedgerActivities
from contracts.booking import CHANGE_WINDOW_UPDATE, Window, WindowChange, WindowChangeResult
from contracts.ledger import FreeInput, ReserveInput, ledger_workflow_id
from contracts.reconcile import ReconcileInput
from contracts.release import release_workflow_id
from contracts.spare import SPARE_LABEL, Phase, ReleaseRequest, SpareRequest
from placement.models import VmRequest
from tests.stack import Stack, wait_phase
from worker.worker import WORKFLOWS, workflow_runner
from workflows.ledger import InventoryLedger
from workflows.prepare_spare import PrepareSpare
from workflows.reconcile_spares import ReconcileSpares

HISTORIES = Path(__file__).resolve().parents[1] / "histories"
RECORD = os.environ.get("VIRTFLOW_RECORD_HISTORIES") == "1"


def replayer() -> Replayer:
    return Replayer(
        workflows=WORKFLOWS,
        data_converter=pydantic_data_converter,
        workflow_runner=workflow_runner(),
    )


@pytest.mark.parametrize("path", sorted(HISTORIES.glob("*.json")), ids=lambda p: p.stem)
async def test_a_saved_history_replays_on_the_current_code(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    result = await replayer().replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None


async def test_fresh_histories_of_every_workflow_replay(stack: Stack) -> None:
    req = stack.request()
    handle = await stack.start(req)
    await wait_phase(handle, Phase.READY)
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="replay test"))
    result = await handle.result()
    assert result.phase == Phase.RELEASED

    run_id = (await handle.describe()).run_id
    child = stack.client.get_workflow_handle(f"{release_workflow_id(req.spare_id)}-{run_id[:8]}")
    ledger = stack.client.get_workflow_handle(ledger_workflow_id(stack.inventory))
    histories = {
        "prepare_spare": await handle.fetch_history(),
        "release_spare": await child.fetch_history(),
        "inventory_ledger": await ledger.fetch_history(),
    }
    for history in histories.values():
        replayed = await replayer().replay_workflow(history, raise_on_replay_failure=True)
        assert replayed.replay_failure is None
        if RECORD:
            HISTORIES.mkdir(exist_ok=True)
            # The file is named by the workflow id: replay needs it (child ids derive from it).
            (HISTORIES / f"{history.workflow_id}.json").write_text(history.to_json())


async def replay_and_keep(*histories: WorkflowHistory) -> None:
    for history in histories:
        replayed = await replayer().replay_workflow(history, raise_on_replay_failure=True)
        assert replayed.replay_failure is None
        if RECORD:
            HISTORIES.mkdir(exist_ok=True)
            (HISTORIES / f"{history.workflow_id}.json").write_text(history.to_json())


# The other paths run only when recording: the lifecycle tests already run them on every
# test run, and their saved histories replay above.
recording_only = pytest.mark.skipif(not RECORD, reason="set VIRTFLOW_RECORD_HISTORIES=1")


@recording_only
async def test_record_the_ready_timeout_path(stack: Stack) -> None:
    req = stack.request(ready_timeout_seconds=2)
    stack.lab.kubelet.set_behaviour(req.spare_id, never_ready=True)
    handle = await stack.start(req)
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    await replay_and_keep(await handle.fetch_history(), *await release_children(stack, req))


@recording_only
async def test_record_the_compensation_path(stack: Stack) -> None:
    stack.lab.hypervisor.fail_next_create("image not found on host")
    req = stack.request()
    handle = await stack.start(req)
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    await replay_and_keep(await handle.fetch_history())


@recording_only
async def test_record_the_orphan_sweep(stack: Stack) -> None:
    host = next(iter(stack.lab.hypervisor.hosts))
    orphan = f"spare-lab-orphan-{uuid.uuid4().hex[:6]}"
    await stack.lab.hypervisor.create_vm(
        {"name": orphan, "host": host, "cpu": 1, "memory_mb": 512, "labels": {SPARE_LABEL: "true"}}
    )
    handle = await stack.client.start_workflow(
        ReconcileSpares.run,
        ReconcileInput(grace_seconds=1, drain_timeout_seconds=5),
        id=f"reconcile-{uuid.uuid4().hex[:8]}",
        task_queue=stack.task_queue,
    )
    result = await handle.result()
    assert [r.name for r in result.released if r.released] == [orphan]
    release = stack.client.get_workflow_handle(release_workflow_id(orphan))
    await replay_and_keep(await handle.fetch_history(), await release.fetch_history())


@recording_only
async def test_record_a_booking_whose_window_is_extended(stack: Stack) -> None:
    """Booked, made at once (its lead start has passed), `spare.window_ending` when Ready
    (the window is shorter than the notice), extended through the ledger, released at its
    new end: the booking's paths and the ledger's `change_hold` in saved histories."""
    start = datetime.now(UTC) + timedelta(seconds=5)
    window = Window(start=start, end=start + timedelta(seconds=15))
    req = stack.request(window=window)
    handle = await stack.start(req)
    await wait_phase(handle, Phase.READY)
    changed = await handle.execute_update(
        CHANGE_WINDOW_UPDATE,
        WindowChange(end=window.end + timedelta(seconds=5)),
        result_type=WindowChangeResult,
    )
    assert changed.status == "changed"
    result = await handle.result()
    assert result.phase == Phase.RELEASED
    ledger = stack.client.get_workflow_handle(ledger_workflow_id(stack.inventory))
    await replay_and_keep(
        await handle.fetch_history(),
        *await release_children(stack, req),
        await ledger.fetch_history(),
    )


async def release_children(stack: Stack, req: SpareRequest) -> list[WorkflowHistory]:
    run_id = (await stack.client.get_workflow_handle(req.spare_id).describe()).run_id
    child = stack.client.get_workflow_handle(f"{release_workflow_id(req.spare_id)}-{run_id[:8]}")
    return [await child.fetch_history()]


async def test_the_ledger_continues_as_new_with_its_reservations_and_replays(
    stack: Stack,
) -> None:
    """The session server suggests continue-as-new at 200 events; enough reserve/free pairs
    get there. The reservation held from the start must survive into the new run."""
    ledger = LedgerActivities(stack.client)
    env = ActivityEnvironment()

    def reserve_input(spare_id: str) -> ReserveInput:
        return ReserveInput(
            inventory=stack.inventory,
            task_queue=stack.task_queue,
            request=VmRequest(name=spare_id, cpu=1, memory_mb=512),
        )

    held = await env.run(ledger.reserve_capacity, reserve_input("spare-held"))
    assert held.status == "reserved"
    handle = stack.client.get_workflow_handle(ledger_workflow_id(stack.inventory))
    first_run = (await handle.describe()).run_id
    for n in range(60):
        inp = reserve_input(f"spare-churn-{n}")
        assert (await env.run(ledger.reserve_capacity, inp)).status == "reserved"
        free = FreeInput(inventory=inp.inventory, task_queue=inp.task_queue, spare_id=inp.spare_id)
        await env.run(ledger.free_capacity, free)
        if (await handle.describe()).run_id != first_run:
            break
    else:
        pytest.fail("the ledger never continued as new")
    reservations = await handle.query(InventoryLedger.reservations)
    assert [r.spare_id for r in reservations] == ["spare-held"]
    first = stack.client.get_workflow_handle(handle.id, run_id=first_run)
    await replay_and_keep(await first.fetch_history())
