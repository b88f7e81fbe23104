"""What a chaos test looks at: capacity at every moment, retries in histories, duplicates."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from temporalio.api.enums.v1 import EventType, PendingActivityState
from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from contracts.ledger import Reservation
from lab.hypervisor import RESOURCES, effective_capacity
from tests.stack import Stack, ledger_reservations

SAMPLE_EVERY_SECONDS = 0.05


class CapacityCensus:
    """Samples the ledger and the lab hypervisor while faults happen.

    A host's committed amount at an instant is its base allocation, plus the VMs the
    hypervisor holds on it (less those whose reservation no longer holds then), plus the
    reservations holding then whose VM does not exist yet (the ledger's own rule). Every sample
    looks at now and at every later instant a reservation starts holding (bookings): any of
    them above the effective capacity is an over-commit.
    """

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.samples = 0
        self.ledger_unanswered = 0
        self.max_reserved = 0
        self.over_commits: list[str] = []

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[CapacityCensus]:
        task = asyncio.create_task(self._loop())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await self.sample()

    async def _loop(self) -> None:
        while True:
            await self.sample()
            await asyncio.sleep(SAMPLE_EVERY_SECONDS)

    async def sample(self) -> None:
        reservations: list[Reservation] = []
        try:
            async with asyncio.timeout(2):
                reservations = await ledger_reservations(self.stack)
        except Exception:
            # No ledger yet, or no worker to answer the query (killed): the hypervisor's
            # side is still checked.
            self.ledger_unanswered += 1
        self.samples += 1
        self.max_reserved = max(self.max_reserved, len(reservations))
        hypervisor = self.stack.lab.hypervisor
        vms = hypervisor.vms
        now = datetime.now(UTC)
        for name, host in hypervisor.hosts.items():
            mine = [r for r in reservations if r.host == name]
            later = {r.hold.start for r in mine if r.hold.start is not None and r.hold.start > now}
            for instant in sorted({now, *later}):
                holding = [r for r in mine if _holds_at(r, instant, now)]
                gone = {r.vm_name for r in mine if r not in holding}
                for resource, field in RESOURCES:
                    on_host = sum(
                        getattr(vm, field)
                        for vm_name, vm in vms.items()
                        if vm.host == name and vm_name not in gone
                    )
                    pending = sum(getattr(r, field) for r in holding if r.vm_name not in vms)
                    committed = int(host.get(f"{resource}_allocated", 0)) + on_host + pending
                    capacity = effective_capacity(host, resource)
                    if committed > capacity:
                        self.over_commits.append(
                            f"{name} at {instant.isoformat()}: {resource} {committed} > {capacity}"
                        )


def _holds_at(r: Reservation, instant: datetime, now: datetime) -> bool:
    """Whether `r` holds its room at `instant` (not freed yet: at least until now)."""
    hold = r.hold.at_least_until(now)
    return (hold.start is None or hold.start <= instant) and (
        hold.end is None or instant < hold.end
    )


async def activity_attempts(handle: WorkflowHandle[Any, Any]) -> dict[str, int]:
    """The highest attempt of each activity type that ran in this workflow's history."""
    types: dict[int, str] = {}
    attempts: dict[str, int] = {}
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            types[event.event_id] = attrs.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            name = types[started.scheduled_event_id]
            attempts[name] = max(attempts.get(name, 0), started.attempt)
    return attempts


async def running_activities(handle: WorkflowHandle[Any, Any]) -> list[str]:
    """Activity types a worker is executing right now for this workflow (none while the
    workflow has not been started yet: a child appears a workflow task after its parent asks)."""
    try:
        description = await handle.describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return []
        raise
    return [
        p.activity_type.name
        for p in description.raw_description.pending_activities
        if p.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
    ]


def duplicates(names: list[str]) -> list[str]:
    return sorted(name for name, count in Counter(names).items() if count > 1)


def summary(fault: str, **figures: int) -> str:
    """One line per test, copied into docs/RELIABILITY.md."""
    line = f"CHAOS {fault}: " + " ".join(f"{k.replace('_', '-')}={v}" for k, v in figures.items())
    print(line)
    return line
