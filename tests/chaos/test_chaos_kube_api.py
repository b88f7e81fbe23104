"""The Kubernetes API fails during the Ready wait: error answers and watches cut mid-stream.

The Node stays NotReady through the faults and becomes Ready only when the test says so.
The wait must ride the faults out (re-list, re-watch) and must not report Ready one moment
before the Node really is: the spare's Ready step is later than the moment it was made Ready.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client

from contracts.spare import Phase, ReleaseRequest
from lab.hypervisor import load_inventory_file
from tests.chaos.conftest import FAST
from tests.chaos.evidence import summary
from tests.helpers import assert_eventually
from tests.stack import LAB_INVENTORY, running_stack, wait_phase
from workflows.prepare_spare import PrepareSpare

# Each round: cut the open watch, then answer the next requests with this status.
ROUNDS = [(500, 4), (503, 4), (429, 4)]


async def test_the_ready_wait_rides_out_api_faults_without_a_false_ready(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    doc = load_inventory_file(LAB_INVENTORY)
    async with running_stack(client, task_queue, tmp_path, doc, provisioner="http") as stack:
        kube, kubelet = stack.lab.kube, stack.lab.kubelet
        req = stack.request(timeouts=FAST)
        kubelet.set_behaviour(req.spare_id, never_ready=True)
        handle = await stack.start(req)
        await wait_phase(handle, Phase.WAITING_READY)

        async def watching() -> None:
            assert kube.store.watch_count >= 1

        async def errors_served() -> None:
            assert kube.failures_left == 0

        faults = 0
        for code, count in ROUNDS:
            await assert_eventually(watching, timeout=30)
            kube.drop_watches(abrupt=True)
            kube.fail_next(count, code)
            faults += 1 + count
            await assert_eventually(errors_served, timeout=30)
        await assert_eventually(watching, timeout=30)  # the wait is back on its watch

        during = await handle.query(PrepareSpare.status)
        assert during.phase == Phase.WAITING_READY
        assert "spare.ready" not in await stack.event_types(req.spare_id)

        made_ready_at = datetime.now(UTC)
        await kubelet.mark_ready(req.spare_id)
        await wait_phase(handle, Phase.READY)
        status = await handle.query(PrepareSpare.status)
        ready_step = next(s for s in status.steps if s.phase == Phase.READY)
        assert ready_step.at > made_ready_at

        await handle.execute_update(PrepareSpare.release, ReleaseRequest())
        result = await handle.result()
        assert result.phase == Phase.RELEASED
        assert stack.lab.hypervisor.vms == {}
        summary(
            "kube-api",
            faults=faults,
            spares_in_flight=1,
            false_ready=int(ready_step.at <= made_ready_at),
            lost=int(result.phase != Phase.RELEASED),
            duplicated=len(stack.lab.hypervisor.created) - 1,
            over_committed=len(stack.lab.hypervisor.overcommit_refusals),
        )
