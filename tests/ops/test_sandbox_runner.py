"""The worker's sandbox answers payload-context lookups directly, and the same as the SDK.

A workflow that runs an activity, a local activity and a child runs on a worker with the
product's runner; every lookup the worker makes is answered by the direct path and compared
with the SDK's own answer (its `exec` inside the sandbox) for the same command.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio.api.enums.v1 import CommandType
from temporalio.client import Client
from temporalio.converter import ActivitySerializationContext, WorkflowSerializationContext
from temporalio.worker import Worker

from tests.ops.context_workflows import ECHO, ContextChild, ContextParent, echo
from worker import sandbox
from worker.worker import workflow_runner


def test_the_product_runner_takes_the_direct_path() -> None:
    """Fails when the SDK's sandbox no longer looks as `worker/sandbox.py` expects: the worker
    then runs the SDK's runner unchanged (correct, but paying the per-payload `exec`)."""
    assert sandbox._shortcut_available() is None
    assert isinstance(workflow_runner(), sandbox.DirectContextSandboxRunner)


async def test_lookups_answer_as_the_sdk_does(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int | None, Any, Any, Any, Any]] = []
    direct_context = sandbox._DirectContextInstance.get_serialization_context
    direct_store = sandbox._DirectContextInstance.get_external_store_context

    def spy(self: Any, command_info: Any) -> Any:
        answer = direct_context(self, command_info)
        sdk = sandbox._SdkInstance.get_serialization_context(self, command_info)
        store = direct_store(self, command_info)
        sdk_store = sandbox._SdkInstance.get_external_store_context(self, command_info)
        kind = command_info.command_type if command_info is not None else None
        seen.append((kind, answer, sdk, store, sdk_store))
        return answer

    monkeypatch.setattr(sandbox._DirectContextInstance, "get_serialization_context", spy)
    task_queue = f"sandbox-context-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[ContextParent, ContextChild],
        activities=[echo],
        workflow_runner=workflow_runner(),
    ):
        workflow_id = f"sandbox-context-{uuid.uuid4().hex[:8]}"
        result = await client.execute_workflow(
            ContextParent.run, "hello", id=workflow_id, task_queue=task_queue
        )
    assert result == "hello!"
    assert seen, "the worker never asked the direct path"
    for kind, answer, sdk, store, sdk_store in seen:
        assert answer == sdk, f"command {kind}: {answer} != the SDK's {sdk}"
        assert store == sdk_store, f"command {kind}: {store} != the SDK's {sdk_store}"
    by_kind = {kind: answer for kind, answer, *_ in seen}
    activity_context = by_kind[CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK]
    assert isinstance(activity_context, ActivitySerializationContext)
    assert activity_context.activity_type == ECHO
    child_context = by_kind[CommandType.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION]
    assert child_context == WorkflowSerializationContext(
        namespace=client.namespace, workflow_id=f"{workflow_id}-child"
    )
