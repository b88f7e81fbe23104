"""The original scheduler's API, so its callers can switch without changing a line.

`POST /schedule` starts a placement-only `ScheduleHost` workflow and answers `{task_id}`;
`GET /result/{task_id}` answers `processing`, `completed` with the host's name and IP, or
`failed` with the reason. The host stays reserved for `hold_seconds` (default 15 min) or
until `DELETE /schedule/{task_id}`, long enough for the caller to build its VM there.

A task belongs to a cluster (`cluster` in the body, else the one cluster a scoped token acts
for) so tenants stay apart here as on `/v1`: a task of another cluster is `task_not_found` to
a scoped token, whether it exists or not, and a task for another cluster is 403.
"""

from __future__ import annotations

import uuid
from typing import Literal, cast

from fastapi import APIRouter, Depends, status
from pydantic import BaseModel, Field
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.exceptions import FailureError

from contracts.common import ANY_POOL, CLUSTER, POOL
from contracts.schedule_host import (
    DEFAULT_HOLD_SECONDS,
    HOST_QUERY,
    RELEASE_SIGNAL,
    SCHEDULE_HOST,
    ReleaseTask,
    ScheduledHost,
    ScheduleHostInput,
    ScheduleHostResult,
    schedule_workflow_id,
)
from placement.models import MAX_VM_CPU, MAX_VM_MEMORY_MB

from .auth import ANY_ROLE, UPGRADE_CONTROLLER, Caller, CurrentCaller
from .errors import ApiError, Code, InvalidInput, SpareNotFound
from .explain import check_inventory_scope
from .inventory_check import check_hosts_exist, inventory_hosts, inventory_spec
from .problems import TEMPORAL_ROUTE_WITH_INPUT, responses
from .spare import AppSettings, TemporalClient
from .spare_runs import Scope
from .spare_start import check_cluster_use
from .temporal_calls import QUERY_TIMEOUT, temporal_errors
from .workers import require_worker

router = APIRouter(tags=["original scheduler API"])


class ScheduleBody(BaseModel):
    """The original request; `inventory` and `hold_seconds` are optional extras."""

    # The task's own names (ScheduleHostInput's), the original API's on the wire, same bounds.
    cpu: int = Field(alias="requested_cpu", gt=0, le=MAX_VM_CPU)
    memory_mb: int = Field(alias="requested_memory", gt=0, le=MAX_VM_MEMORY_MB, description="MiB")
    pool: str | None = Field(alias="requested_pool", default=None, max_length=63)
    dedicated: bool = False
    inventory: str = Field(default="default", min_length=1, max_length=63)
    hold_seconds: int = Field(default=DEFAULT_HOLD_SECONDS, ge=1, le=7 * 24 * 3600)
    cluster: str | None = Field(
        default=None,
        min_length=1,
        max_length=63,
        description="The registered cluster the task is for; default: the one cluster the "
        "token acts for (an unscoped token's task belongs to no cluster)",
    )

    def task_input(self, cluster: str | None) -> ScheduleHostInput:
        """The ScheduleHost task this request asks for, for `cluster` (see task_cluster)."""
        return ScheduleHostInput(**{**dict(self), "cluster": cluster})


class ScheduleAccepted(BaseModel):
    task_id: str


class TaskResult(BaseModel):
    status: Literal["processing", "completed", "failed"]
    result: ScheduledHost | None = None
    error: str | None = None


class TaskReleased(BaseModel):
    task_id: str
    release_requested: bool = True


@router.post(
    "/schedule",
    operation_id="scheduleHost",
    response_model=ScheduleAccepted,
    responses=responses(
        *TEMPORAL_ROUTE_WITH_INPUT,
        Code.UNKNOWN_INVENTORY,
        Code.CLUSTER_FORBIDDEN,
        Code.UNKNOWN_CLUSTER,
        Code.NOT_ALLOWED_FOR_CLUSTER,
        Code.UNKNOWN_POOL,
        Code.BODY_TOO_LARGE,
    ),
    summary="Reserve a host (original scheduler API); poll /result/{task_id}",
    dependencies=[Depends(UPGRADE_CONTROLLER)],
)
async def schedule(
    body: ScheduleBody, settings: AppSettings, client: TemporalClient, caller: CurrentCaller
) -> ScheduleAccepted:
    cluster = task_cluster(body, caller)
    if cluster is not None:
        caller.require_cluster(cluster)
        check_cluster_use(settings, cluster, body.inventory, body.pool)
    check_inventory_scope(settings, caller.clusters, body.inventory)
    inventory_spec(settings, body.inventory)
    hosts = await inventory_hosts(settings, body.inventory)
    check_hosts_exist(hosts, body.inventory, body.pool, {}, "requested_pool")
    task_id = uuid.uuid4().hex
    workflow_id = schedule_workflow_id(task_id)
    with temporal_errors(workflow_id):
        await client.start_workflow(
            SCHEDULE_HOST,
            body.task_input(cluster),
            id=workflow_id,
            task_queue=settings.task_queue,
            search_attributes=TypedSearchAttributes(
                [
                    SearchAttributePair(POOL, body.pool or ANY_POOL),
                    *([SearchAttributePair(CLUSTER, cluster)] if cluster else []),
                ]
            ),
            static_summary=(
                f"schedule: {body.cpu} CPU, {body.memory_mb} MiB"
                + (f" in pool {body.pool}" if body.pool else "")
            ),
        )
    return ScheduleAccepted(task_id=task_id)


def task_cluster(body: ScheduleBody, caller: Caller) -> str | None:
    """The cluster a task is for: the body's, else the scoped token's only one."""
    if body.cluster is not None or caller.clusters is None:
        return body.cluster
    if len(caller.clusters) == 1:
        return next(iter(caller.clusters))
    own = ", ".join(sorted(caller.clusters))
    raise InvalidInput("cluster", f"this token acts for several clusters ({own}): name one")


async def _task(
    client: Client, task_id: str, scope: Scope
) -> tuple[WorkflowHandle[object, ScheduleHostResult], str, str]:
    """The task's run, its status in lower case, and the task queue whose worker answers it.
    A task of a cluster outside `scope` is not found, as one that never was."""
    workflow_id = schedule_workflow_id(task_id)
    handle: WorkflowHandle[object, ScheduleHostResult] = client.get_workflow_handle(
        workflow_id, result_type=ScheduleHostResult
    )
    try:
        with temporal_errors(workflow_id):
            description = await handle.describe()
    except SpareNotFound:
        raise ApiError(f"no task '{task_id}'", Code.TASK_NOT_FOUND) from None
    if description.workflow_type != SCHEDULE_HOST:
        raise ApiError(f"no task '{task_id}'", Code.TASK_NOT_FOUND)
    if scope is not None and description.typed_search_attributes.get(CLUSTER) not in scope:
        raise ApiError(f"no task '{task_id}'", Code.TASK_NOT_FOUND)
    run_status = description.status or WorkflowExecutionStatus.RUNNING
    return handle, run_status.name.lower(), description.task_queue


@router.get(
    "/result/{task_id}",
    operation_id="getScheduleResult",
    response_model=TaskResult,
    responses=responses(*TEMPORAL_ROUTE_WITH_INPUT, Code.TASK_NOT_FOUND),
    response_model_exclude_unset=True,
    summary="The host a /schedule task reserved, once it is decided",
    dependencies=[Depends(ANY_ROLE)],
)
async def result(task_id: str, client: TemporalClient, caller: CurrentCaller) -> TaskResult:
    handle, run_status, task_queue = await _task(client, task_id, caller.clusters)
    if run_status == "running":
        await require_worker(client, task_queue)
    with temporal_errors(handle.id):
        if run_status == "running":
            # The SDK types result_type as a class; the converter takes the union as well.
            host = await handle.query(
                HOST_QUERY, result_type=cast(type, ScheduledHost | None), rpc_timeout=QUERY_TIMEOUT
            )
            if host is None:
                return TaskResult(status="processing")
            return TaskResult(status="completed", result=host)
        try:
            done = await handle.result()
        except WorkflowFailureError as err:
            cause = err.cause
            reason = cause.message if isinstance(cause, FailureError) else str(err)
            return TaskResult(status="failed", error=reason)
    # A finished task freed its host; the answer it gave stays the answer.
    return TaskResult(status="completed", result=done.host)


@router.delete(
    "/schedule/{task_id}",
    operation_id="releaseScheduledHost",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=TaskReleased,
    responses=responses(*TEMPORAL_ROUTE_WITH_INPUT, Code.TASK_NOT_FOUND, Code.TASK_ENDED),
    summary="Free the host a /schedule task holds (the caller's VM now counts itself)",
    dependencies=[Depends(UPGRADE_CONTROLLER)],
)
async def release(task_id: str, client: TemporalClient, caller: CurrentCaller) -> TaskReleased:
    handle, run_status, _ = await _task(client, task_id, caller.clusters)
    if run_status != "running":
        raise ApiError(f"task {task_id} is {run_status}", Code.TASK_ENDED)
    with temporal_errors(handle.id):
        await handle.signal(RELEASE_SIGNAL, ReleaseTask())
    return TaskReleased(task_id=task_id)
