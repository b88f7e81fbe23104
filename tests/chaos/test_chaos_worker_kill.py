"""SIGKILL the worker while four spares are each at a different step; a new worker finishes them.

At the moment of the kill:
- `playbook`: the create playbook runs and the hypervisor has recorded the VM, but its answer
  is still on the way (so the create result is lost with the worker);
- `ready`: the VM's Node is registered but not Ready; the Ready wait is in flight;
- `notify`: the receiver hangs on the spare's webhooks; deliveries are in flight;
- `release`: the drain is in flight, held by a disruption budget.
Nothing may be lost (every spare ends released), duplicated (one VM per spare, one stored
event per webhook) or over-committed, and no reservation may leak.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.client import Client, WorkflowHandle

from contracts.release import release_workflow_id
from contracts.spare import Phase, ReleaseRequest, SpareResult
from tests.chaos.conftest import Chaos
from tests.chaos.evidence import (
    CapacityCensus,
    activity_attempts,
    duplicates,
    running_activities,
    summary,
)
from tests.helpers import assert_eventually
from tests.stack import ledger_reservations, wait_phase
from workflows.prepare_spare import PrepareSpare

LIFECYCLE = [
    "spare.reserved",
    "spare.vm_created",
    "spare.ready",
    "spare.release_started",
    "spare.released",
]
# The hypervisor holds its answer this long after recording the VM: the kill lands inside.
HELD_ANSWER_SECONDS = 8.0


async def running(handle: WorkflowHandle[Any, Any], activity: str) -> None:
    assert activity in await running_activities(handle)


def until(check: Callable[[], Awaitable[None]], timeout: float = 60) -> Awaitable[None]:
    return assert_eventually(check, timeout=timeout, interval=0.2)


async def release_child(
    client: Client, handle: WorkflowHandle[Any, Any], spare_id: str
) -> WorkflowHandle[Any, Any]:
    run_id = (await handle.describe()).run_id
    return client.get_workflow_handle(f"{release_workflow_id(spare_id)}-{run_id[:8]}")


async def test_a_killed_worker_loses_and_duplicates_nothing(chaos: Chaos) -> None:
    stack, lab = chaos.stack, chaos.stack.lab
    await chaos.start_worker()
    census = CapacityCensus(stack)
    reqs = {
        stage: chaos.request(drain_timeout_seconds=60)
        for stage in ("release", "ready", "notify", "playbook")
    }
    ids = {stage: req.spare_id for stage, req in reqs.items()}
    lab.kube.block_eviction("default", f"workload-{ids['release']}")
    lab.kubelet.set_behaviour(ids["ready"], never_ready=True)
    chaos.gate.hold(ids["notify"])

    async with census.running():
        handles = {s: await stack.start(r) for s, r in reqs.items() if s != "playbook"}
        await wait_phase(handles["release"], Phase.READY)
        await handles["release"].execute_update(PrepareSpare.release, ReleaseRequest())
        child = await release_child(stack.client, handles["release"], ids["release"])
        await until(lambda: running(child, "drain_node"))
        await until(lambda: running(handles["ready"], "wait_node_ready"))
        await wait_phase(handles["notify"], Phase.READY)
        await until(lambda: running(handles["notify"], "deliver_webhook"))

        lab.hypervisor.create_delay = HELD_ANSWER_SECONDS
        handles["playbook"] = await stack.start(reqs["playbook"])

        async def recorded() -> None:
            assert ids["playbook"] in lab.hypervisor.vms

        await until(recorded)
        await chaos.workers[0].kill()

        lab.hypervisor.create_delay = 0
        await chaos.start_worker()
        chaos.gate.open()
        await lab.kubelet.mark_ready(ids["ready"])
        lab.kube.unblock_eviction("default", f"workload-{ids['release']}")

        for stage in ("playbook", "ready", "notify"):
            await wait_phase(handles[stage], Phase.READY, timeout=90)
            await handles[stage].execute_update(PrepareSpare.release, ReleaseRequest())
        results: list[SpareResult] = await asyncio.gather(*(h.result() for h in handles.values()))

    assert [r.phase for r in results] == [Phase.RELEASED] * 4
    # The kill hit each step in flight: each was tried again by the new worker.
    assert (await activity_attempts(handles["playbook"]))["create_vm"] >= 2
    assert (await activity_attempts(handles["ready"]))["wait_node_ready"] >= 2
    assert (await activity_attempts(child))["drain_node"] >= 2
    assert chaos.gate.held_requests >= 1

    # Not duplicated: one VM per spare although the lost create ran again; each webhook
    # stored once, however many times it was delivered.
    assert sorted(lab.hypervisor.created) == sorted(ids.values())
    stored = []
    for spare_id in ids.values():
        events = await stack.events(spare_id)
        # Deliveries run beside the spare and held ones arrive together: order is not promised.
        assert sorted(e["type"] for e in events) == sorted(LIFECYCLE)
        stored += [e["webhook_id"] for e in events]
    redelivered = sum(e["deliveries"] > 1 for e in await stack.events(ids["notify"]))
    assert redelivered >= 1

    # Nothing left behind: no VM, no Node, no reservation; nothing ever over-committed.
    assert lab.hypervisor.vms == {}
    assert lab.kube.store.list("nodes") == []
    assert await ledger_reservations(stack) == []
    assert census.over_commits == [] and lab.hypervisor.overcommit_refusals == []
    summary(
        "worker-kill",
        faults=4,
        spares_in_flight=len(handles),
        lost=sum(r.phase != Phase.RELEASED for r in results),
        duplicated=len(duplicates(lab.hypervisor.created)) + len(duplicates(stored)),
        over_committed=len(census.over_commits) + len(lab.hypervisor.overcommit_refusals),
        samples=census.samples,
    )
