"""The orphan sweep releases what no spare workflow looks after, and nothing else."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import (
    Client,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    WorkflowExecutionStatus,
    WorkflowFailureError,
)
from temporalio.common import WorkflowIDConflictPolicy

from activities.ledger import reserve_group
from contracts.ledger import GroupMember, ReserveGroupInput
from contracts.reconcile import (
    RECONCILE_SCHEDULE_ID,
    RECONCILE_SPARES,
    ReconcileInput,
    ReconcileResult,
    TerminatedSpare,
    compensation_id,
)
from contracts.schedule_host import SCHEDULE_HOST, ScheduleHostInput, schedule_workflow_id
from contracts.spare import SPARE_LABEL, Phase
from placement.models import VmRequest
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.stack import Provisioner, Stack, ledger_reservations, running_stack, wait_phase
from tests.webhooks.receivers import receiver_config
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from webhooks.signing import generate_secret
from worker.schedules import apply_reconcile_schedule
from workflows.prepare_spare import PrepareSpare
from workflows.reconcile_spares import ReconcileSpares


@pytest.fixture
def provisioner() -> Provisioner:
    """The lab hypervisor's API: making the VM is not the point here (the playbook's own
    tests cover it)."""
    return "http"


async def test_an_orphan_is_released_and_a_running_spare_is_left_alone(stack: Stack) -> None:
    req = stack.request()
    running = await stack.start(req)
    await wait_phase(running, Phase.READY)

    # An orphan made by hand, as a crash that lost its workflow would leave it: a VM with
    # the spare labels on the lab hypervisor, which boots it as a Node.
    orphan = f"spare-lab-orphan-{uuid.uuid4().hex[:6]}"
    await stack.lab.hypervisor.create_vm(
        {
            "name": orphan,
            "host": stack.lab.hypervisor.vms[req.spare_id].host,
            "cpu": 1,
            "memory_mb": 512,
            "labels": {SPARE_LABEL: "true", "virtflow.io/spare-id": orphan},
        }
    )
    assert stack.lab.kube.store.get("nodes", "", orphan) is not None

    result = await stack.client.execute_workflow(
        ReconcileSpares.run,
        ReconcileInput(grace_seconds=1, drain_timeout_seconds=5),
        id=f"reconcile-{uuid.uuid4().hex[:8]}",
        task_queue=stack.task_queue,
    )

    assert result.suspects == [orphan]
    assert [(r.name, r.released, r.had_vm, r.had_node) for r in result.released] == [
        (orphan, True, True, True)
    ]
    assert orphan not in stack.lab.hypervisor.vms
    assert stack.lab.kube.store.get("nodes", "", orphan) is None
    # The spare whose workflow runs keeps its VM, its Node and its reservation.
    assert req.spare_id in stack.lab.hypervisor.vms
    assert stack.lab.kube.store.get("nodes", "", req.spare_id) is not None
    assert req.spare_id in [r.spare_id for r in await ledger_reservations(stack)]
    assert (await running.query(PrepareSpare.status)).phase == Phase.READY
    await running.terminate("test over")


async def test_with_nothing_orphaned_the_sweep_releases_nothing(stack: Stack) -> None:
    result = await stack.client.execute_workflow(
        ReconcileSpares.run,
        ReconcileInput(grace_seconds=1),
        id=f"reconcile-{uuid.uuid4().hex[:8]}",
        task_queue=stack.task_queue,
    )
    assert result.suspects == [] and result.released == []
    assert result.freed_reservations == []


async def test_a_reservation_whose_workflow_has_ended_is_freed_and_a_running_ones_kept(
    stack: Stack,
) -> None:
    req = stack.request()
    running = await stack.start(req)
    await wait_phase(running, Phase.READY)
    # A host task terminated from outside never frees its host (no compensation looks at
    # it), and a member of a `count` request whose workflow never started holds room too.
    task = await stack.client.start_workflow(
        SCHEDULE_HOST,
        ScheduleHostInput(cpu=1, memory_mb=512, inventory=stack.inventory),
        id=schedule_workflow_id(uuid.uuid4().hex[:8]),
        task_queue=stack.task_queue,
    )

    async def task_reserved() -> None:
        assert task.id in [r.spare_id for r in await ledger_reservations(stack)]

    await assert_eventually(task_reserved)
    await task.terminate("gone without freeing")
    member = f"spare-lab-never-{uuid.uuid4().hex[:6]}"
    await reserve_group(
        stack.client,
        ReserveGroupInput(
            task_queue=stack.task_queue,
            inventory=stack.inventory,
            members=[
                GroupMember(spare_id=member, request=VmRequest(name=member, cpu=1, memory_mb=512))
            ],
        ),
    )

    result = await sweep(stack)

    assert sorted(result.freed_reservations) == sorted([task.id, member])
    held = [r.spare_id for r in await ledger_reservations(stack)]
    assert held == [req.spare_id]
    assert (await running.query(PrepareSpare.status)).phase == Phase.READY
    await running.terminate("test over")


async def test_the_schedule_is_created_then_updated_in_place(stack: Stack) -> None:
    handle = stack.client.get_schedule_handle(RECONCILE_SCHEDULE_ID)
    try:
        await apply_reconcile_schedule(stack.client, stack.settings, stack.task_queue)
        faster = stack.settings.model_copy(update={"reconcile_every_seconds": 120})
        await apply_reconcile_schedule(stack.client, faster, stack.task_queue)

        described = await handle.describe()
        action = described.schedule.action
        assert isinstance(action, ScheduleActionStartWorkflow)
        assert action.workflow == RECONCILE_SPARES
        assert action.task_queue == stack.task_queue
        assert [i.every.total_seconds() for i in described.schedule.spec.intervals] == [120]
        assert isinstance(described.schedule.spec.intervals[0], ScheduleIntervalSpec)
    finally:
        await handle.delete()


async def sweep(stack: Stack) -> ReconcileResult:
    return await stack.client.execute_workflow(
        ReconcileSpares.run,
        ReconcileInput(grace_seconds=1, drain_timeout_seconds=5),
        id=f"reconcile-{uuid.uuid4().hex[:8]}",
        task_queue=stack.task_queue,
    )


async def test_a_spare_terminated_from_outside_is_compensated_once_by_the_next_sweep(
    stack: Stack,
) -> None:
    req = stack.request(vmid_range="200-299")  # as a Proxmox site asks
    first = await stack.start(req)
    await wait_phase(first, Phase.READY)
    terminated_run = first.result_run_id
    assert terminated_run is not None
    # What `temporal workflow start --id-conflict-policy TerminateExisting` does: the running
    # spare is terminated (no compensation, no webhook) and a new run of its id starts.
    second = await stack.client.start_workflow(
        PrepareSpare.run,
        req,
        id=req.spare_id,
        task_queue=stack.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.TERMINATE_EXISTING,
    )
    with pytest.raises(WorkflowFailureError):
        await second.result()  # a spare id names one spare, ever
    old = stack.client.get_workflow_handle(req.spare_id, run_id=terminated_run)
    assert (await old.describe()).status == WorkflowExecutionStatus.TERMINATED
    assert req.spare_id in stack.lab.hypervisor.vms
    # The terminated run never gave its reservation back; it names the VM id (which a Proxmox
    # release needs while a clone has no name yet).
    (held,) = [r for r in await ledger_reservations(stack) if r.spare_id == req.spare_id]
    assert held.vmid is not None

    result = await sweep(stack)
    assert result.compensated == [req.spare_id]
    assert req.spare_id not in result.suspects  # its VM is the compensation's to release
    compensation = stack.client.get_workflow_handle(compensation_id(req.spare_id, terminated_run))
    history = await compensation.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    (terminated,) = await stack.client.data_converter.decode(
        started.input.payloads, [TerminatedSpare]
    )
    assert (terminated.host, terminated.vmid) == (held.host, held.vmid)
    await compensation.result()
    assert req.spare_id not in stack.lab.hypervisor.vms
    assert stack.lab.kube.store.get("nodes", "", req.spare_id) is None
    assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]

    # The next sweep finds nothing more to do: the receivers heard spare.failed once.
    again = await sweep(stack)
    assert again.compensated == [] and again.suspects == []
    failed = [e for e in await stack.events(req.spare_id) if e["type"] == "spare.failed"]
    assert len(failed) == 1, failed
    assert "terminated from outside" in failed[0]["event"]["data"]["reason"]


async def test_a_compensated_spare_of_lab_b_tells_only_lab_bs_receivers(
    client: Client, task_queue: str, tmp_path: Path, inventory_doc: dict[str, Any]
) -> None:
    secret = generate_secret()
    ctrl_b = create_receiver_app([secret], tmp_path / "ctrl-b.db")
    async with serve_app(ctrl_b) as ctrl_b_url:

        def two_tenants(settings: Settings) -> Settings:
            clusters = settings.cluster_registry.items()
            own = {"lab": ["upgradectrl"], "lab-b": ["ctrl-b"]}
            return settings.model_copy(
                update={
                    "receivers": {
                        **settings.receivers,
                        "ctrl-b": receiver_config(ctrl_b_url, [0.2] * 10, secret),
                    },
                    "clusters": {
                        name: config.model_copy(update={"receivers": own[name]})
                        for name, config in clusters
                    },
                }
            )

        async with running_stack(
            client, task_queue, tmp_path, inventory_doc, two_tenants, "http", ("lab-b",)
        ) as stack:
            req = stack.request(cluster="lab-b")
            handle = await stack.start(req)
            await wait_phase(handle, Phase.READY)
            run_id = handle.result_run_id
            assert run_id is not None
            await handle.terminate("from outside, as an operator may")

            assert (await sweep(stack)).compensated == [req.spare_id]
            await stack.client.get_workflow_handle(compensation_id(req.spare_id, run_id)).result()

            async with httpx.AsyncClient() as http:
                heard = await http.get(f"{ctrl_b_url}/events", params={"spare_id": req.spare_id})
            assert "spare.failed" in [e["type"] for e in heard.json()]
            # lab's controller heard nothing of lab-b's spare, its failure included.
            assert await stack.event_types(req.spare_id) == []
