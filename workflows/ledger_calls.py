"""Workflow-side calls to an inventory's ledger that more than one workflow makes.

Plain deterministic code with no state of its own: the worker passes this module through the
sandbox (worker/worker.py), so it is imported once, not once per workflow.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.ledger import LedgerActivities
    from contracts.ledger import FreeInput, FreeResult
    from contracts.timeouts import ActivityTimeouts


# What must eventually succeed (giving room back, a release's steps): retried without limit,
# at most a minute apart.
UNTIL_DONE = RetryPolicy(maximum_interval=timedelta(minutes=1))


async def free_reservation(
    spare_id: str, inventory: str, timeouts: ActivityTimeouts | None = None
) -> FreeResult:
    """Give the spare's room back to its inventory's ledger (also withdraws a waiter)."""
    timeouts = timeouts or ActivityTimeouts()
    return await workflow.execute_activity_method(
        LedgerActivities.free_capacity,
        FreeInput(
            inventory=inventory,
            task_queue=workflow.info().task_queue,
            spare_id=spare_id,
            timeouts=timeouts,
        ),
        start_to_close_timeout=timeouts.ledger,
        heartbeat_timeout=timeouts.heartbeat,
        retry_policy=UNTIL_DONE,
    )
