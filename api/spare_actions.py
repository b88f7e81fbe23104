"""A started spare's status, release and cancel, for the `/v1/spares/{id}` routes.

Each looks the spare's run up first (`spare_runs.py`): an ended spare answers 409 naming how it
ended, a spare outside the caller's clusters 404, and without a worker to answer, 503 at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)
from temporalio.exceptions import FailureError

from contracts.common import CLUSTER
from contracts.spare import RELEASE_UPDATE, STATUS_QUERY, Phase, ReleaseRequest, SpareStatus
from runtime.settings import Settings

from . import temporal_calls
from .errors import Code, SpareConflict, SpareNotFound, TemporalUnavailable
from .spare_runs import Scope, describe_spare, query_status
from .temporal_calls import temporal_errors
from .workers import require_worker

# How long `release` waits for the update's answer before reporting the status as it stands.
RELEASE_ANSWER_WAIT_SECONDS = 20.0


class SpareView(SpareStatus):
    """The status query's answer, plus where to look and what the engine says of the run."""

    ui_url: str
    workflow_status: str


async def _status_of_a_spare_that_never_began(
    handle: WorkflowHandle[object, object], spare_id: str
) -> SpareStatus | None:
    """A closed run that failed before it kept a status (a start with the wrong inputs):
    its failure is its status. None when the run has a status to ask for."""
    with temporal_errors(spare_id):
        try:
            await handle.query(
                STATUS_QUERY, result_type=SpareStatus, rpc_timeout=temporal_calls.QUERY_TIMEOUT
            )
            return None
        except WorkflowQueryFailedError:
            pass
        try:
            await handle.result()
        except WorkflowFailureError as err:
            cause = err.cause
            reason = cause.message if isinstance(cause, FailureError) else str(err)
            description = await handle.describe()
            cluster = description.typed_search_attributes.get(CLUSTER) or ""
            return SpareStatus(spare_id=spare_id, cluster=cluster, phase=Phase.FAILED, error=reason)
    return None


async def spare_status(
    client: Client, settings: Settings, spare_id: str, scope: Scope = None
) -> SpareView:
    handle, run_status, task_queue = await describe_spare(client, spare_id, scope)
    await require_worker(client, task_queue)  # even a closed run's status is a query
    status = None
    if run_status != WorkflowExecutionStatus.RUNNING:
        status = await _status_of_a_spare_that_never_began(handle, spare_id)
    status = status or await query_status(handle, spare_id)
    return SpareView(
        **status.model_dump(),
        ui_url=settings.workflow_ui_url(spare_id),
        workflow_status=run_status.name.lower(),
    )


def ended_spare(spare_id: str, run_status: WorkflowExecutionStatus, what: str) -> SpareConflict:
    """A closed spare: a completed one was released, any other ended some other way."""
    ended = run_status.name.lower()
    if run_status == WorkflowExecutionStatus.COMPLETED:
        return SpareConflict(
            f"spare {spare_id} is already released, nothing to {what}", Code.ALREADY_RELEASED
        )
    return SpareConflict(
        f"spare {spare_id} has ended ({ended}), nothing to {what}", Code.SPARE_ENDED
    )


async def release_spare(
    client: Client, spare_id: str, request: ReleaseRequest, scope: Scope = None
) -> SpareStatus:
    """Run the `release` update; answer with the status once accepted (release takes a while)."""
    handle, run_status, task_queue = await describe_spare(client, spare_id, scope)
    if run_status != WorkflowExecutionStatus.RUNNING:
        raise ended_spare(spare_id, run_status, "release")
    await require_worker(client, task_queue)
    async with ending_meanwhile(client, spare_id, "release"):
        try:
            update = await handle.start_update(
                RELEASE_UPDATE,
                request,
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=SpareStatus,
                rpc_timeout=temporal_calls.UPDATE_ACCEPT_TIMEOUT,
            )
            return await asyncio.wait_for(update.result(), RELEASE_ANSWER_WAIT_SECONDS)
        except WorkflowUpdateFailedError as err:
            raise await _release_refused(handle, spare_id) from err
        except WorkflowUpdateRPCTimeoutOrCancelledError as err:
            # The worker vanished after it was seen: the release may still be taken up when
            # one polls again, so a caller reads the spare before it asks again.
            raise TemporalUnavailable(
                f"no virtflow worker accepted the release of {spare_id} within "
                f"{temporal_calls.UPDATE_ACCEPT_TIMEOUT.total_seconds():g} s; "
                "read the spare before retrying"
            ) from err
        except TimeoutError:
            pass
    return await query_status(handle, spare_id)


@contextlib.asynccontextmanager
async def ending_meanwhile(client: Client, spare_id: str, what: str) -> AsyncIterator[None]:
    """Temporal's errors, where a spare that ended between our look and our call (the server
    answers NOT_FOUND) is the ended spare it now is, not a missing one."""
    try:
        with temporal_errors(spare_id):
            yield
    except SpareNotFound:
        _, run_status, _ = await describe_spare(client, spare_id)
        if run_status == WorkflowExecutionStatus.RUNNING:
            raise
        raise ended_spare(spare_id, run_status, what) from None


async def _release_refused(handle: WorkflowHandle[object, object], spare_id: str) -> SpareConflict:
    """Why the update refused, from the phase (never from the refusal's wording)."""
    phase = (await query_status(handle, spare_id)).phase
    # A Ready spare refuses a release only when one was asked for already.
    if phase in (Phase.READY, Phase.RELEASING, Phase.RELEASED):
        return SpareConflict(
            f"spare {spare_id} is already {phase.value}: its release was asked for before",
            Code.ALREADY_RELEASED,
        )
    return SpareConflict(
        f"spare {spare_id} is {phase.value}; it can be released once ready (cancel it to "
        "stop it before then)",
        Code.SPARE_NOT_READY,
    )


async def cancel_spare(client: Client, spare_id: str, scope: Scope = None) -> None:
    """Cancel the workflow: it compensates (destroys what it created) before it ends."""
    handle, run_status, task_queue = await describe_spare(client, spare_id, scope)
    if run_status != WorkflowExecutionStatus.RUNNING:
        raise ended_spare(spare_id, run_status, "cancel")
    await require_worker(client, task_queue)
    if (await query_status(handle, spare_id)).phase == Phase.RELEASED:
        # Only its last webhooks are still going out: a cancel would cut them short.
        raise SpareConflict(
            f"spare {spare_id} is already released, nothing to cancel", Code.ALREADY_RELEASED
        )
    async with ending_meanwhile(client, spare_id, "cancel"):
        await handle.cancel()
