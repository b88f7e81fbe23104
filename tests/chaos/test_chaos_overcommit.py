"""Fifty spares at once on room for twenty, and the worker killed in the middle.

A sampler reads the ledger and the lab hypervisor every 50 ms for the whole run: no host may
ever hold or be promised more than its effective capacity. Exactly twenty spares get a host,
the thirty others fail with no_capacity (they do not wait: wait_for_capacity is off), and once
the twenty are released nothing is left reserved. The worker creates VMs through the lab
hypervisor's HTTP API rather than fifty Ansible runs: the ledger is what is under test here.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from contracts.spare import Phase, ReleaseRequest
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
