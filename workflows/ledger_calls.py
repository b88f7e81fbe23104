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
    from contracts.failures import Failure
    from contracts.ledger import (
        LEDGER_RETRY,
        FreeInput,
        FreeResult,
        ReserveInput,
        ReserveResult,
    )
    from contracts.timeouts import ActivityTimeouts

from .side_effects import STOP_FIRST, until_stopped
from .step_failure import StepFailed

# The ledger's answers that mean "no host", with the failure type the caller sees.
REFUSALS = {"no_capacity": Failure.NO_CAPACITY, "never_fits": Failure.NEVER_FITS}

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


async def reserve(inp: ReserveInput) -> ReserveResult:
    """Ask the inventory's ledger for room: "reserved" with the reservation, or "queued" (with
    `wait_for_capacity`: the ledger signals the grant later). A refusal raises StepFailed with
    the ledger's reason: no room is an answer, not a fault, and asking again would meet it."""
    # Stopped before the free that follows a cancel: a reserve in flight could land after.
    reserving = workflow.start_activity_method(
        LedgerActivities.reserve_capacity,
        inp,
        start_to_close_timeout=inp.timeouts.ledger,
        heartbeat_timeout=inp.timeouts.heartbeat,
        retry_policy=LEDGER_RETRY,
        cancellation_type=STOP_FIRST,
    )
    result: ReserveResult = await until_stopped(reserving)
    if result.status in REFUSALS:
        raise StepFailed(
            f"{result.status}: {result.reason}", REFUSALS[result.status], result.held_by
        )
    return result
