"""Small test helpers shared by the suites."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from worker.worker import SANDBOX_PASSTHROUGH

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


def new_worker(
    client: Client,
    *workflows: type,
    activities: Sequence[Callable[..., Any]] = (),
    task_queue: str | None = None,
    **options: Any,
) -> Worker:
    """A worker on its own random task queue (the SDK's test habit), with the sandbox of the
    real worker; use it as `async with new_worker(...) as worker:`."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*SANDBOX_PASSTHROUGH)
    return Worker(
        client,
        task_queue=task_queue or f"tq-{uuid.uuid4()}",
        workflows=list(workflows),
        activities=list(activities),
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
        **options,
    )
