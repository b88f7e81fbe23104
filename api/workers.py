"""Is a virtflow worker there to answer? Asked before a query or an update, which only a worker
can answer.

Without a worker, Temporal holds a query or an update until the call's own deadline (a query
whose task queue had no poller for a while fails with FAILED_PRECONDITION "no poller seen for
task queue recently"); passed on as such, the caller would wait many seconds for a 502. So the
API asks DescribeTaskQueue first: it lists the pollers the server saw lately with the time of
each one's last poll, and a live worker always has a poll open (each lasts up to a minute), so
a queue whose newest poll is older than `POLLED_WITHIN` has no worker: 503
`temporal_unavailable` at once. The answer is kept `CACHE_SECONDS` per task queue, so a burst
of reads costs one call. A worker that died within the last minute still looks present: the
bounded RPC timeouts of the calls themselves (`temporal_calls.py`) answer 503 for it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from .errors import TemporalUnavailable
from .temporal_client import is_unavailable

# A worker's long poll lasts up to a minute (the server's default), plus some slack.
POLLED_WITHIN = timedelta(seconds=75)
CACHE_SECONDS = 2.0
DESCRIBE_TIMEOUT = timedelta(seconds=3)

# (server, namespace, task queue) -> (when asked, monotonic; why no worker, or None)
_answers: dict[tuple[str, str, str], tuple[float, str | None]] = {}


def no_worker_message(task_queue: str, why: str) -> str:
    return (
        f"no virtflow worker is polling task queue '{task_queue}' ({why}); "
        "start one, or retry once it runs"
    )


async def require_worker(client: Client, task_queue: str) -> None:
    """Raise TemporalUnavailable (503) unless a worker polled `task_queue` lately."""
    key = (client.service_client.config.target_host, client.namespace, task_queue)
    now = time.monotonic()
    cached = _answers.get(key)
    if cached is None or now - cached[0] > CACHE_SECONDS:
        cached = (now, await why_no_worker(client, task_queue))
        _answers[key] = cached
    if cached[1] is not None:
        raise TemporalUnavailable(no_worker_message(task_queue, cached[1]))


async def why_no_worker(client: Client, task_queue: str) -> str | None:
    """Why no worker answers on `task_queue` (None when one polled lately), uncached."""
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )
    try:
        described = await client.workflow_service.describe_task_queue(
            request, timeout=DESCRIBE_TIMEOUT
        )
    except RPCError as err:
        # CANCELLED: the describe's own deadline passed, or a busy server gave up on asking its
        # matching service; either way the engine did not answer, which is no request's fault.
        if is_unavailable(err) or err.status == RPCStatusCode.CANCELLED:
            raise TemporalUnavailable(str(err)) from err
        raise
    polls = [p.last_access_time.ToDatetime(UTC) for p in described.pollers]
    if not polls:
        return "none seen"
    last = max(polls)
    if datetime.now(UTC) - last > POLLED_WITHIN:
        return f"last poll {last.isoformat(timespec='seconds')}"
    return None
