"""A spare id names one spare, ever: a second run under a used id stops before it starts."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.spare_ids import SpareIdActivities
    from contracts.failures import Failure
    from contracts.spare import MEMO_REQUEST_HASH, Phase
    from contracts.spare_ids import EarlierRunInput, EarlierRunResult

from .progress import Progress


async def refuse_a_used_id(spare_id: str, progress: Progress) -> None:
    """A spare id names one spare, ever: a run for an id that ran before stops here, before
    anything is reserved or announced (the first run's receivers heard all of it)."""
    if workflow.memo_value(MEMO_REQUEST_HASH, None) is not None:
        # Started by virtflow's own door with REJECT_DUPLICATE: the server has refused any
        # second run of this id already, so there is nothing to ask visibility.
        return
    # Answered within this workflow task, like the receivers' plan after it: the search
    # attributes wait for both.
    with progress.answered_within_task():
        earlier: EarlierRunResult = await workflow.execute_local_activity_method(
            SpareIdActivities.earlier_run,
            EarlierRunInput(workflow_id=spare_id, run_id=workflow.info().run_id),
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=10)),
        )
    if earlier.run_id is None:
        return
    reason = (
        f"spare id {spare_id} was already used by run {earlier.run_id} ({earlier.status}); "
        "a request_id names one spare, ever: ask again with a new request_id"
    )
    progress.status.error = reason
    progress.enter(Phase.FAILED, reason)
    # Non-retryable: the id stays used. The details name the run that owns the id.
    raise ApplicationError(reason, earlier.run_id, type=Failure.SPARE_ID_USED, non_retryable=True)
