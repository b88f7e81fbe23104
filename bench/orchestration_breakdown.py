"""Where an idle spare's first 100-odd milliseconds go: POST to the create-VM activity starting,
step by step, read from the spare's history and its ledger's (the server and the benchmark
share the clock).

Each step is the time between two events; the steps add up to the whole. Engine steps
(a workflow task, an activity task's dispatch) and virtflow's own (the API's checks, the
placement's inventory read) are told apart, so a change knows which it shortens.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from contracts.ledger import ledger_workflow_id

E = EventType


@dataclass
class Timeline:
    """Named moments (unix seconds) of one spare's path to create-VM, in the path's order."""

    points: dict[str, float] = field(default_factory=dict)
    answered: float | None = None  # when the 202 came back (it overlaps the first steps)

    def steps(self) -> list[tuple[str, float]]:
        """(step, ms) between consecutive moments of the path; then the API's own answer."""
        ordered = list(self.points.items())
        steps = [(f"{a} -> {b}", (tb - ta) * 1000) for (a, ta), (b, tb) in pairwise(ordered)]
        if self.answered is not None and ordered:
            steps.append(("POST sent -> 202 received", (self.answered - ordered[0][1]) * 1000))
        return steps


def _t(event: HistoryEvent) -> float:
    return event.event_time.ToMicroseconds() / 1e6


def _activity(events: Sequence[HistoryEvent], name: str) -> dict[str, float]:
    """Scheduled, started and closed times of the first activity of that type."""
    scheduled = next(
        (
            e
            for e in events
            if e.event_type == E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            and e.activity_task_scheduled_event_attributes.activity_type.name == name
        ),
        None,
    )
    if scheduled is None:
        return {}
    found = {"scheduled": _t(scheduled)}
    for e in events:
        if (
            e.event_type == E.EVENT_TYPE_ACTIVITY_TASK_STARTED
            and e.activity_task_started_event_attributes.scheduled_event_id == scheduled.event_id
        ):
            found["started"] = _t(e)
        if (
            e.event_type == E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
            and e.activity_task_completed_event_attributes.scheduled_event_id == scheduled.event_id
        ):
            found["completed"] = _t(e)
    return found


def _names(accepted: object, spare_id: str) -> bool:
    """Whether an accepted update's input is this spare's reservation."""
    payloads = accepted.accepted_request.input.args.payloads  # type: ignore[attr-defined]
    return any(spare_id.encode() in p.data for p in payloads)


async def spare_timeline(
    client: Client, spare_id: str, inventory: str, sent: float, answered: float
) -> Timeline:
    spare = list((await client.get_workflow_handle(spare_id).fetch_history()).events)
    ledger = list(
        (await client.get_workflow_handle(ledger_workflow_id(inventory)).fetch_history()).events
    )
    line = Timeline({"POST sent": sent}, answered)
    line.points["workflow started"] = _t(spare[0])
    tasks = [e for e in spare if e.event_type == E.EVENT_TYPE_WORKFLOW_TASK_STARTED]
    done = [e for e in spare if e.event_type == E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]
    if tasks and done:
        line.points["1st workflow task started"] = _t(tasks[0])
        line.points["1st workflow task completed"] = _t(done[0])
    reserve = _activity(spare, "reserve_capacity")
    for key, value in reserve.items():
        line.points[f"reserve {key}"] = value
    accepted = [
        e
        for e in ledger
        if e.event_type == E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
        and _names(e.workflow_execution_update_accepted_event_attributes, spare_id)
    ]
    if accepted:
        line.points["ledger update accepted"] = _t(accepted[0])
        after = [e for e in ledger if _t(e) >= _t(accepted[0])]
        place = _activity(after, "place_vms")
        for key, value in place.items():
            line.points[f"place_vms {key}"] = value
        completed = [
            e for e in after if e.event_type == E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
        ]
        if completed:
            line.points["ledger update completed"] = _t(completed[0])
    create = _activity(spare, "create_vm")
    for key in ("scheduled", "started"):
        if key in create:
            line.points[f"create_vm {key}"] = create[key]
    return line


def median_steps(lines: list[Timeline]) -> list[tuple[str, float]]:
    """The median of each step over several spares, in the order of the first spare."""
    by_step: dict[str, list[float]] = {}
    for line in lines:
        for step, ms in line.steps():
            by_step.setdefault(step, []).append(ms)
    return [(step, round(statistics.median(v), 1)) for step, v in by_step.items()]
