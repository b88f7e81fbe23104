"""Small test helpers shared by the suites."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import psutil
import pytest
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest, DescribeTaskQueueResponse
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

from api.workers import why_no_worker
from provisioners.stopping import UNINTERRUPTIBLE_ENV
from worker.worker import workflow_runner

T = TypeVar("T")


async def assert_eventually(
    check: Callable[[], Awaitable[T]],
    timeout: float = 20.0,
    interval: float = 0.1,
) -> T:
    """Retry `check` until it stops raising AssertionError, or fail with its last error."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        await asyncio.sleep(interval)


async def describe_queue(
    client: Client,
    task_queue: str,
    kind: TaskQueueType.ValueType = TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
) -> DescribeTaskQueueResponse:
    """DescribeTaskQueue, for use inside `assert_eventually` (see `answered`)."""
    return await answered(
        client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=task_queue),
                task_queue_type=kind,
            )
        )
    )


async def answered(call: Awaitable[T]) -> T:
    """A describe call, for use inside `assert_eventually`: a busy dev server cancels a
    describe while it asks its matching service or a deployment's workflow, which is an
    answer not given yet, so it is raised as an AssertionError to ask again."""
    try:
        return await call
    except RPCError as err:
        assert err.status != RPCStatusCode.CANCELLED, err
        raise


def new_worker(
    client: Client,
    *workflows: type,
    activities: Sequence[Callable[..., Any]] = (),
    task_queue: str | None = None,
    **options: Any,
) -> Worker:
    """A worker on its own random task queue (the SDK's test habit), with the sandbox of the
    real worker; use it as `async with new_worker(...) as worker:`."""
    return Worker(
        client,
        task_queue=task_queue or f"tq-{uuid.uuid4()}",
        workflows=list(workflows),
        activities=list(activities),
        workflow_runner=workflow_runner(),
        **options,
    )


ACTIVITY_ENDS = (
    "activity_task_completed_event_attributes",
    "activity_task_canceled_event_attributes",
    "activity_task_failed_event_attributes",
    "activity_task_timed_out_event_attributes",
)


async def assert_ended_quietly(
    handle: WorkflowHandle[Any, Any],
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """The closed workflow's every activity ended in its history, none is pending, and the
    test logged no traceback and no warning of the SDK or its core (on stdout or stderr)."""
    history = await handle.fetch_history()
    kinds: list[str | None] = [e.WhichOneof("attributes") for e in history.events]
    scheduled = kinds.count("activity_task_scheduled_event_attributes")
    ended = sum(kinds.count(end) for end in ACTIVITY_ENDS)
    assert ended == scheduled, "an activity of the workflow never ended"
    assert not (await handle.describe()).raw_description.pending_activities
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert not loud, [r.getMessage() for r in loud]
    out, err = capfd.readouterr()
    assert "not found" not in (out + err).lower()


async def until_polled(client: Client, task_queue: str) -> None:
    """Wait until the server has seen the worker poll `task_queue`: the API refuses calls that
    need a worker (503) until then, which a test that has just started one must not meet."""

    async def polled() -> None:
        assert await why_no_worker(client, task_queue) is None

    await assert_eventually(polled)


def load_module(path: Path) -> ModuleType:
    """A Python file that is not on the import path (a job script, an Ansible plugin), loaded
    as a module under its file name."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_processes(artifacts: Path) -> dict[str, set[int]]:
    """The live processes of playbook runs under `artifacts` (an `AnsibleProvisioner`'s
    artifacts root), by run, wherever they were reparented: each carries its run's marker,
    under the run's directory, in its environment."""
    runs: dict[str, set[int]] = {}
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            run = proc.environ().get(UNINTERRUPTIBLE_ENV, "")
            if run.startswith(f"{artifacts}/") and proc.status() != psutil.STATUS_ZOMBIE:
                runs.setdefault(run, set()).add(proc.pid)
    return runs
