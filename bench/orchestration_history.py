"""What the benchmark reads from workflow histories: activity counts and when create-VM began."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Iterable, Sequence

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

CREATE_VM_ACTIVITY = "create_vm"
FETCH_CONCURRENCY = 20


def activity_count(events: Iterable[HistoryEvent]) -> int:
    return sum(e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED for e in events)


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


async def spare_footprint(client: Client, spare_id: str) -> tuple[int, int]:
    """Activities and history events of one spare: its own and its release child's."""
    events = list((await client.get_workflow_handle(spare_id).fetch_history()).events)
    activities, total = activity_count(events), len(events)
    for child in child_ids(events):
        child_events = (await client.get_workflow_handle(child).fetch_history()).events
        activities += activity_count(child_events)
        total += len(child_events)
    return activities, total


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
