"""Operators start spares from the Temporal CLI with JSON input."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from tests.stack import Stack
from worker.temporal_binaries import temporal_cli
from workflows.spare_models import Phase


async def start_from_cli(stack: Stack, workflow_id: str, body: dict[str, Any]) -> str:
    """`temporal workflow start --type PrepareSpare ...`, exactly as an operator types it."""
    address = stack.client.service_client.config.target_host
    proc = await asyncio.create_subprocess_exec(
        str(temporal_cli()),
        "workflow",
        "start",
        "--type",
        "PrepareSpare",
        "--task-queue",
        stack.task_queue,
        "--workflow-id",
        workflow_id,
        "--input",
        json.dumps(body),
        "--address",
        address,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0, out.decode()
    return out.decode()


async def test_a_spare_started_from_the_temporal_cli_completes(stack: Stack) -> None:
    request_id = f"cli-{uuid.uuid4().hex[:8]}"
    body = {
        "request_id": request_id,
        "cluster": "lab",
        "inventory": stack.inventory,
        "cpu": 2,
        "memory_mb": 2048,
        "ttl_seconds": 1,
    }
    workflow_id = f"spare-lab-{request_id}"
    await start_from_cli(stack, workflow_id, body)
    result = await stack.client.get_workflow_handle(workflow_id).result()
    assert result["phase"] == Phase.RELEASED.value


async def test_invalid_cli_input_fails_the_workflow_with_the_validation_message(
    stack: Stack,
) -> None:
    body = {"request_id": "Not_A_DNS_Label", "cluster": "lab", "cpu": -1, "memory_mb": 1}
    workflow_id = f"spare-lab-bad-{uuid.uuid4().hex[:8]}"
    await start_from_cli(stack, workflow_id, body)
    with pytest.raises(WorkflowFailureError) as caught:
        await asyncio.wait_for(stack.client.get_workflow_handle(workflow_id).result(), 30)
    cause = caught.value.cause
    assert isinstance(cause, ApplicationError)
    assert "request_id" in cause.message and "cpu" in cause.message
