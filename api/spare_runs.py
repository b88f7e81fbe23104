"""Which run of a spare's id is the spare, and what its status query says.

An id names one spare ever, but a Temporal CLI start after the spare ended leaves a second run
that fails at once naming the owner: the owner is the spare. A spare of a cluster outside the
caller's scope is not found, so its existence is not revealed.
"""

from __future__ import annotations

import asyncio

from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowQueryRejectedError,
)
from temporalio.exceptions import ApplicationError

from contracts.common import CLUSTER
from contracts.failures import Failure
from contracts.spare import PREPARE_SPARE, STATUS_QUERY, SpareStatus

from . import temporal_calls
from .errors import SpareNotFound, TemporalUnavailable
from .temporal_calls import temporal_errors

STATUS_ATTEMPTS = 30


STATUS_RETRY_SECONDS = 0.1


# The clusters a caller acts for (api/auth.py Caller.clusters); None: every cluster.
Scope = frozenset[str] | None


async def describe_owner(
    client: Client, spare_id: str
) -> tuple[WorkflowHandle[object, object], WorkflowExecutionDescription]:
    """The run that is the spare: the latest run of its id, unless that one is a refused reuse
    of the id, then the run it names."""
    handle = client.get_workflow_handle(spare_id)
    description = await handle.describe()
    if description.status == WorkflowExecutionStatus.FAILED:
        owner = await run_owning_the_id(handle, spare_id)
        if owner is not None:
            handle = client.get_workflow_handle(spare_id, run_id=owner)
            description = await handle.describe()
    return handle, description


async def describe_spare(
    client: Client, spare_id: str, scope: Scope = None
) -> tuple[WorkflowHandle[object, object], WorkflowExecutionStatus, str]:
    """The spare's run, its status, and the task queue whose worker answers for it. A spare
    of a cluster outside `scope` is not found: whether it exists is not revealed."""
    with temporal_errors(spare_id):
        handle, description = await describe_owner(client, spare_id)
    if description.workflow_type != PREPARE_SPARE:
        raise SpareNotFound(spare_id)
    if scope is not None and description.typed_search_attributes.get(CLUSTER) not in scope:
        raise SpareNotFound(spare_id)
    status = description.status or WorkflowExecutionStatus.RUNNING
    return handle, status, description.task_queue


async def run_owning_the_id(handle: WorkflowHandle[object, object], spare_id: str) -> str | None:
    """The spare's own run when the latest run is a refused reuse of its id (a Temporal CLI
    start after the spare ended): that run failed at once, naming the run that owns the id."""
    try:
        await handle.result(follow_runs=False)
    except WorkflowFailureError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.type == Failure.SPARE_ID_USED:
            return str(cause.details[0]) if cause.details else None
    return None


async def query_status(handle: WorkflowHandle[object, object], spare_id: str) -> SpareStatus:
    attempts = STATUS_ATTEMPTS
    while True:
        attempts -= 1
        with temporal_errors(spare_id):
            try:
                return await handle.query(
                    STATUS_QUERY, result_type=SpareStatus, rpc_timeout=temporal_calls.QUERY_TIMEOUT
                )
            except (WorkflowQueryFailedError, WorkflowQueryRejectedError) as err:
                # Right after the start the workflow has no status yet: give it a moment.
                if attempts <= 0:
                    raise TemporalUnavailable(f"status of {spare_id} not available: {err}") from err
        await asyncio.sleep(STATUS_RETRY_SECONDS)
