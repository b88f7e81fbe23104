"""On the whole stack: the ledger looks at its bookings' hosts in the inventory, and a booked
host cordoned there is left for another through the ledger, which then holds the booking's
room on the new host only."""

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
    req = stack.request(cpu=4, window=Window(start=start, end=start + timedelta(hours=1)))
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
