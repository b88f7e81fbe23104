"""What the benchmark reads from workflow histories: activity counts and when create-VM began."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

CREATE_VM_ACTIVITY = "create_vm"
FETCH_CONCURRENCY = 20


# The marker a local activity's result is recorded under (Temporal's core SDK names it so).
LOCAL_ACTIVITY_MARKER = "core_local_activity"


def activity_count(events: Iterable[HistoryEvent]) -> tuple[int, int]:
    """(regular, local) activities in a history."""
    regular = local = 0
    for e in events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            regular += 1
        elif (
            e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
            and e.marker_recorded_event_attributes.marker_name == LOCAL_ACTIVITY_MARKER
        ):
            local += 1
    return regular, local


def child_ids(events: Iterable[HistoryEvent]) -> list[str]:
    initiated = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    return [
        e.start_child_workflow_execution_initiated_event_attributes.workflow_id
        for e in events
        if e.event_type == initiated
    ]


def activity_started_at(events: Sequence[HistoryEvent], activity_type: str) -> float | None:
    """Unix time the first attempt of that activity started on a worker."""
    scheduled = {
        e.event_id
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == activity_type
    }
    for e in events:
        if (
            e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
            and e.activity_task_started_event_attributes.scheduled_event_id in scheduled
        ):
            return e.event_time.ToMicroseconds() / 1e6
    return None


@dataclass
class Footprint:
    """What one spare and its release child write: activities by kind, and history events."""

    regular: int = 0
    local: int = 0
    events: int = 0

    @property
    def activities(self) -> int:
        return self.regular + self.local

    def add(self, events: Sequence[HistoryEvent]) -> None:
        regular, local = activity_count(events)
        self.regular += regular
        self.local += local
        self.events += len(events)


async def spare_footprint(client: Client, spare_id: str) -> Footprint:
    """Activities and history events of one spare: its own and its release child's."""
    footprint = Footprint()
    events = list((await client.get_workflow_handle(spare_id).fetch_history()).events)
    footprint.add(events)
    for child in child_ids(events):
        footprint.add(list((await client.get_workflow_handle(child).fetch_history()).events))
    return footprint


async def create_vm_latencies(client: Client, sent_at: dict[str, float]) -> list[float]:
    """Seconds from the request leaving the client to the create-VM activity starting."""
    gate = asyncio.Semaphore(FETCH_CONCURRENCY)

    async def one(spare_id: str, sent: float) -> float | None:
        async with gate:
            history = await client.get_workflow_handle(spare_id).fetch_history()
        started = activity_started_at(list(history.events), CREATE_VM_ACTIVITY)
        return None if started is None else started - sent

    found = await asyncio.gather(*(one(s, t) for s, t in sent_at.items()))
    return [x for x in found if x is not None]


def percentile(values: Sequence[float], pct: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1]
