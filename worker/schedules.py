"""The long-lived things virtflow owns in Temporal, created or brought up to date idempotently:
the orphan sweep's Schedule and the warm pools' workflows.

`run_worker` applies them at start, so every worker start converges them on its settings
(several workers agree: same ids, same specs).
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
from contracts.warm import (
    CONFIGURE_SIGNAL,
    WARM_POOL,
    WarmPoolState,
    warm_pool_workflow_id,
)
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


async def apply_warm_pools(
    client: Client, settings: Settings, task_queue: str | None = None
) -> None:
    """Start each configured warm pool's workflow, or hand the running one its definition
    (a changed size or template takes effect at once; `size: 0` drains it). Signal-with-start:
    it needs no worker to answer, so a worker sends it before it polls."""
    for spec in settings.warm_pools:
        await client.start_workflow(
            WARM_POOL,
            WarmPoolState(spec=spec),
            id=warm_pool_workflow_id(spec.name),
            task_queue=task_queue or settings.task_queue,
            # Started if not running, signalled either way.
            start_signal=CONFIGURE_SIGNAL,
            start_signal_args=[spec],
            static_summary=f"Warm pool {spec.name}: {spec.size} spares of cluster {spec.cluster}",
        )
