"""Fifty spares at once on room for twenty, and the worker killed in the middle.

A sampler reads the ledger and the lab hypervisor every 50 ms for the whole run: no host may
ever hold or be promised more than its effective capacity. Exactly twenty spares get a host,
the thirty others fail with no_capacity (they do not wait: wait_for_capacity is off), and once
the twenty are released nothing is left reserved. The worker creates VMs through the lab
hypervisor's HTTP API rather than fifty Ansible runs: the ledger is what is under test here.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from activities.ledger import reserve_group
from contracts.ledger import GroupMember, Hold, ReserveGroupInput
from contracts.spare import Phase, ReleaseRequest
from placement.models import VmRequest
from tests.chaos.conftest import Chaos
from tests.chaos.evidence import CapacityCensus, duplicates, summary
from tests.helpers import assert_eventually
from tests.stack import ledger_reservations, wait_phase
from workflows.prepare_spare import PrepareSpare

SPARES = 50
ROOM = 20


@pytest.fixture
def inventory_doc() -> dict[str, Any]:
    """Five hosts of 8 CPUs: room for exactly twenty spares of 2 CPUs."""
    return {
        "hosts": [
            {
                "name": f"bm-{i:02d}",
                "pool": "general",
                "cpu_capacity": 8,
                "cpu_allocated": 0,
                "cpu_allocation_ratio": 1.0,
                "memory_mb_capacity": 65536,
                "memory_mb_allocated": 0,
                "memory_allocation_ratio": 1.0,
            }
            for i in range(5)
        ]
    }


async def test_fifty_spares_on_room_for_twenty_never_over_commit(chaos: Chaos) -> None:
    stack, lab = chaos.stack, chaos.stack.lab
    chaos.use_http_provisioner()
    await chaos.start_worker()
    census = CapacityCensus(stack)
    reqs = [chaos.request(cpu=2, memory_mb=2048) for _ in range(SPARES)]
    handles = {}
    async with census.running():
        started = await asyncio.gather(*(stack.start(r) for r in reqs))
        handles = {r.spare_id: h for r, h in zip(reqs, started, strict=True)}

        async def reservations_under_way() -> None:
            assert census.max_reserved >= 1

        await assert_eventually(reservations_under_way, timeout=60, interval=0.05)
        await chaos.workers[0].kill()
        await chaos.start_worker()

        async def all_placed_or_refused() -> None:
            assert len(lab.hypervisor.vms) == ROOM
            assert len(await ledger_reservations(stack)) == ROOM

        await assert_eventually(all_placed_or_refused, timeout=120, interval=0.5)
        reserved = {r.spare_id for r in await ledger_reservations(stack)}
        refused = [h for spare_id, h in handles.items() if spare_id not in reserved]
        failures = await asyncio.gather(*(h.result() for h in refused), return_exceptions=True)
        for handle in (handles[spare_id] for spare_id in reserved):
            await wait_phase(handle, Phase.READY, timeout=120)
        assert set(lab.hypervisor.vms) == reserved
        for spare_id in reserved:
            await handles[spare_id].execute_update(PrepareSpare.release, ReleaseRequest())
        released = await asyncio.gather(*(handles[spare_id].result() for spare_id in reserved))

    assert len(failures) == SPARES - ROOM
    for failure in failures:
        assert isinstance(failure, WorkflowFailureError), failure
        assert isinstance(failure.cause, ApplicationError)
        assert failure.cause.type == "NoCapacity"
    assert [r.phase for r in released] == [Phase.RELEASED] * ROOM
    assert census.max_reserved == ROOM
    assert census.over_commits == [] and lab.hypervisor.overcommit_refusals == []
    assert sorted(lab.hypervisor.created) == sorted(reserved)
    assert lab.hypervisor.vms == {}
    assert await ledger_reservations(stack) == []
    summary(
        "over-commit",
        faults=1,
        spares_in_flight=SPARES,
        reserved=len(reserved),
        refused=len(failures),
        lost=SPARES - len(released) - len(failures),
        duplicated=len(duplicates(lab.hypervisor.created)),
        over_committed=len(census.over_commits) + len(lab.hypervisor.overcommit_refusals),
        samples=census.samples,
    )


async def test_bookings_and_spares_over_time_never_over_commit_at_any_instant(
    chaos: Chaos,
) -> None:
    """Three time slots of the same room asked for at once, thirty requests each: ordinary
    spares gone within a day, bookings for the day after and the day after that. Each slot
    takes exactly its twenty, whatever the others hold; the census checks every instant a
    reservation starts holding. (No kill here: a worker killed inside the ledger's task costs
    the task's timeout, which the test above pays once already.)"""
    stack = chaos.stack
    await chaos.start_worker()
    census = CapacityCensus(stack)
    now = datetime.now(UTC)
    slots = {
        "ordinary": Hold(end=now + timedelta(days=1)),
        "first": Hold(start=now + timedelta(days=2), end=now + timedelta(days=3)),
        "second": Hold(start=now + timedelta(days=3), end=now + timedelta(days=4)),
    }

    def ask(slot: str, i: int) -> ReserveGroupInput:
        name = f"spare-{slot}-{i}"
        member = GroupMember(
            spare_id=name, request=VmRequest(name=name, cpu=2, memory_mb=2048), hold=slots[slot]
        )
        return ReserveGroupInput(
            task_queue=stack.task_queue, inventory=stack.inventory, members=[member]
        )

    asks = [ask(slot, i) for i in range(SPARES * 3 // 5) for slot in slots]
    async with census.running():
        answers = await asyncio.gather(*(reserve_group(stack.client, a) for a in asks))
        held = await ledger_reservations(stack)

    granted = Counter(
        a.members[0].spare_id.split("-")[1]
        for a, r in zip(asks, answers, strict=True)
        if r.status == "reserved"
    )
    assert granted == {slot: ROOM for slot in slots}
    assert {r.status for r in answers} == {"reserved", "no_capacity"}
    assert len(held) == 3 * ROOM
    assert census.over_commits == []
    summary(
        "over-commit over time",
        faults=0,
        asked=len(asks),
        reserved=len(held),
        over_committed=len(census.over_commits),
        samples=census.samples,
    )
