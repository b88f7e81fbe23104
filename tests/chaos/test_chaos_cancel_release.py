"""A spare cancelled while it is being released: the release still completes, exactly once.

Cancelling means "stop and clean up"; a release under way is the clean-up, so it must not be
cut short (that would leave a VM and its reservation behind) nor started a second time. The
spare ends released, for the reason its release was asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus

from contracts.release import RELEASE_SPARE, release_workflow_id
from contracts.spare import Phase, ReleaseRequest
from lab.hypervisor import load_inventory_file
from tests.chaos.conftest import FAST
from tests.chaos.evidence import running_activities, summary
from tests.helpers import assert_eventually
from tests.stack import LAB_INVENTORY, ledger_reservations, running_stack, wait_phase
from workflows.prepare_spare import PrepareSpare


async def release_runs(client: Client, spare_id: str) -> list[Any]:
    prefix = release_workflow_id(spare_id)
    query = f'WorkflowType = "{RELEASE_SPARE}" AND WorkflowId STARTS_WITH "{prefix}"'
    return [w async for w in client.list_workflows(query)]


async def test_cancel_during_release_finishes_the_release_once(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    doc = load_inventory_file(LAB_INVENTORY)
    async with running_stack(client, task_queue, tmp_path, doc, provisioner="http") as stack:
        lab = stack.lab
        req = stack.request(timeouts=FAST, drain_timeout_seconds=60)
        lab.kube.block_eviction("default", f"workload-{req.spare_id}")
        handle = await stack.start(req)
        await wait_phase(handle, Phase.READY)
        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="upgrade done"))
        run_id = (await handle.describe()).run_id
        child = client.get_workflow_handle(f"{release_workflow_id(req.spare_id)}-{run_id[:8]}")

        async def draining() -> None:
            assert "drain_node" in await running_activities(child)

        await assert_eventually(draining, timeout=60)
        await handle.cancel()
        lab.kube.unblock_eviction("default", f"workload-{req.spare_id}")

        result = await handle.result()
        assert result.phase == Phase.RELEASED
        assert result.reason == "upgrade done"
        assert (await child.describe()).status == WorkflowExecutionStatus.COMPLETED
        assert lab.hypervisor.vms == {}
        assert lab.kube.store.get("nodes", "", req.spare_id) is None
        assert await ledger_reservations(stack) == []

        async def listed() -> list[Any]:
            runs = await release_runs(client, req.spare_id)
            assert runs
            return runs

        runs = await assert_eventually(listed)
        assert len(runs) == 1, [r.id for r in runs]
        events = await stack.event_types(req.spare_id)
        assert events.count("spare.released") + events.count("spare.failed") == 1
        summary(
            "cancel-during-release",
            faults=1,
            spares_in_flight=1,
            release_runs=len(runs),
            lost=len(lab.hypervisor.vms),
            duplicated=len(runs) - 1,
            over_committed=len(lab.hypervisor.overcommit_refusals),
        )
