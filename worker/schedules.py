"""The Temporal Schedules virtflow owns, created or brought up to date idempotently.

`run_worker` applies them at start, so every worker start converges the schedule on its
settings (several workers agree: same id, same spec). Today there is one: the orphan sweep.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleUpdate,
    ScheduleUpdateInput,
)

from contracts.reconcile import RECONCILE_SCHEDULE_ID, RECONCILE_SPARES, ReconcileInput
from runtime.settings import Settings


def reconcile_schedule(settings: Settings, task_queue: str | None = None) -> Schedule:
    return Schedule(
        action=ScheduleActionStartWorkflow(
            RECONCILE_SPARES,
            ReconcileInput(grace_seconds=settings.reconcile_grace_seconds),
            id="reconcile-spares",
            task_queue=task_queue or settings.task_queue,
            static_summary="Release spare VMs and Nodes no spare workflow looks after",
        ),
        spec=ScheduleSpec(
            intervals=[
                ScheduleIntervalSpec(every=timedelta(seconds=settings.reconcile_every_seconds))
            ]
        ),
        # A sweep still releasing (a long drain) is not joined by a second one.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
    )


async def apply_reconcile_schedule(
    client: Client, settings: Settings, task_queue: str | None = None
) -> None:
    """Create the orphan sweep's schedule, or update it to the current settings."""
    schedule = reconcile_schedule(settings, task_queue)
    try:
        await client.create_schedule(RECONCILE_SCHEDULE_ID, schedule)
    except ScheduleAlreadyRunningError:

        def replace(_: ScheduleUpdateInput) -> ScheduleUpdate:
            return ScheduleUpdate(schedule=schedule)

        await client.get_schedule_handle(RECONCILE_SCHEDULE_ID).update(replace)
