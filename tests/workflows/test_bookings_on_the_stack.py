"""Bookings on the whole stack (the lab hypervisor's API, the lab cluster, the real ledger): a
booked host cordoned in the inventory is left for another through the ledger, which then holds
the booking's room on the new host only; a rehearsal makes a real VM on the booked host, sees
its Node Ready, and gives everything back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError

from contracts.booking import Window
from contracts.spare import Phase, SpareStatus
from tests.helpers import assert_eventually
from tests.stack import Stack, ledger_reservations, running_stack, uniform_site, wait_phase
from workflows.prepare_spare import PrepareSpare

CHECK_SECONDS = 10


@pytest.fixture
async def stack(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(
        client,
        task_queue,
        tmp_path,
        uniform_site(hosts=2, cpu_each=8),
        configure=lambda s: s.model_copy(update={"booking_check_seconds": CHECK_SECONDS}),
        provisioner="http",
    ) as running:
        yield running


async def test_a_cordoned_booked_host_is_left_for_another_and_the_ledger_holds_the_new_one(
    stack: Stack,
) -> None:
    start = datetime.now(UTC) + timedelta(hours=2)
    window = Window(start=start, end=start + timedelta(hours=1), rehearsal=False)
    req = stack.request(cpu=4, window=window)
    handle = await stack.start(req)
    await wait_phase(handle, Phase.BOOKED)
    booked: SpareStatus = await handle.query(PrepareSpare.status)
    old = booked.host
    assert old is not None
    stack.lab.hypervisor.hosts[old]["unschedulable"] = True

    async def moved() -> SpareStatus:
        status: SpareStatus = await handle.query(PrepareSpare.status)
        assert status.host not in (None, old), status.host
        return status

    status = await assert_eventually(moved, timeout=6 * CHECK_SECONDS)
    assert status.phase == Phase.BOOKED
    assert status.booking is not None and status.booking.moved_from == [old]
    held = [(r.spare_id, r.host) for r in await ledger_reservations(stack)]
    assert held == [(req.spare_id, status.host)]

    async def told() -> list[dict[str, Any]]:
        events = [e for e in await stack.events(req.spare_id) if e["type"] == "booking.moved"]
        assert events
        return events

    [event] = await assert_eventually(told)
    assert event["event"]["data"]["move"] == {"from_host": old, "to_host": status.host}
    assert event["event"]["data"]["reason"] == f"host {old} is cordoned"
    assert stack.lab.hypervisor.created == []

    await handle.cancel()
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    assert await ledger_reservations(stack) == []


async def test_a_rehearsal_makes_a_vm_on_the_booked_host_and_gives_it_all_back(
    stack: Stack,
) -> None:
    start = datetime.now(UTC) + timedelta(hours=2)
    req = stack.request(cpu=4, window=Window(start=start, end=start + timedelta(hours=1)))
    handle = await stack.start(req)
    await wait_phase(handle, Phase.BOOKED)

    async def rehearsed() -> SpareStatus:
        status: SpareStatus = await handle.query(PrepareSpare.status)
        assert status.booking is not None and status.booking.rehearsal is not None
        assert status.booking.rehearsal.outcome == "passed", status.booking.rehearsal
        return status

    status = await assert_eventually(rehearsed, timeout=60)
    assert status.phase == Phase.BOOKED and status.booking is not None
    rehearsal = status.booking.rehearsal
    assert rehearsal is not None and rehearsal.host == status.host
    assert stack.lab.hypervisor.created == [rehearsal.spare_id]
    assert stack.lab.hypervisor.vms == {}  # destroyed
    held = [(r.spare_id, r.host) for r in await ledger_reservations(stack)]
    assert held == [(req.spare_id, status.host)]
    # The upgrade controller hears of the booking only.
    assert await stack.events(rehearsal.spare_id) == []

    await handle.cancel()
    with pytest.raises(WorkflowFailureError):
        await handle.result()
