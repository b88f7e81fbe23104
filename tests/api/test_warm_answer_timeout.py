"""A POST whose spare says nothing in time about warm pools (a busy worker) is started all
the same, and the error the SDK also keeps in the update-with-start's start operation is read:
unread, asyncio logs it with a stack trace ("Future exception was never retrieved") once the
operation is collected, one per such POST under load. On the session's Temporal server, with
no worker on the task queue, so that the spare never answers."""

from __future__ import annotations

import asyncio
import gc
import uuid
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

from api import spare_start
from contracts.spare import SpareRequest


async def test_a_warm_answer_that_times_out_starts_the_spare_and_logs_no_unread_error(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spare_start, "WARM_ANSWER_WAIT_SECONDS", 0.3)
    request = SpareRequest(
        request_id=f"r{uuid.uuid4().hex[:10]}", cluster="lab", cpu=2, memory_mb=2048
    )
    options: dict[str, Any] = {
        "id": request.spare_id,
        "task_queue": task_queue,
        "id_conflict_policy": WorkflowIDConflictPolicy.USE_EXISTING,
    }
    loop = asyncio.get_running_loop()
    unhandled: list[str] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: unhandled.append(str(context.get("message"))))
    try:
        assert await spare_start._start_asking_warm(client, request, options) is None
        gc.collect()
        await asyncio.sleep(0)  # a collected future reports through the loop
    finally:
        loop.set_exception_handler(previous)
    assert unhandled == []
    handle = client.get_workflow_handle(request.spare_id)
    assert (await handle.describe()).status is not None  # started all the same
    await handle.terminate("test over")
