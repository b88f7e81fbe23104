"""Operators start spares from the Temporal CLI with JSON input."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from contracts.spare import Phase
from runtime.temporal_binaries import temporal_cli
from tests.helpers import assert_eventually
from tests.stack import Provisioner, Stack, wait_phase


@pytest.fixture
def provisioner() -> Provisioner:
    """The lab hypervisor's API: making the VM is not the point here (the playbook's own
    tests cover it)."""
    return "http"


async def temporal(stack: Stack, *args: str) -> str:
    """One `temporal workflow ...` line, as an operator types it, against the test server."""
    address = stack.client.service_client.config.target_host
    proc = await asyncio.create_subprocess_exec(
        str(temporal_cli()),
        "workflow",
        *args,
        "--address",
        address,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0, out.decode()
    return out.decode()


async def start_from_cli(stack: Stack, workflow_id: str, body: dict[str, Any]) -> str:
    """`temporal workflow start --type PrepareSpare ...`, as in the README and docs/WORKFLOWS.md."""
    return await temporal(
        stack,
        "start",
        "--type",
        "PrepareSpare",
        "--task-queue",
        stack.task_queue,
        "--workflow-id",
        workflow_id,
        "--input",
        json.dumps(body),
    )


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


async def test_the_readme_lines_list_query_update_and_signal(stack: Stack) -> None:
    """docs/WORKFLOWS.md, "From the Temporal CLI and web UI": list by phase, query the status,
    release two ways."""
    cluster, batch = "lab", f"cli-{uuid.uuid4().hex[:8]}"
    ids = []
    for i in range(2):
        request_id = f"{batch}-{i}"
        body = {"request_id": request_id, "cluster": cluster, "inventory": stack.inventory}
        ids.append(f"spare-{cluster}-{request_id}")
        await start_from_cli(stack, ids[-1], {**body, "cpu": 2, "memory_mb": 2048})
    for spare_id in ids:
        await wait_phase(stack.client.get_workflow_handle(spare_id), Phase.READY)

    async def listed() -> None:
        query = f"VirtflowPhase='ready' AND WorkflowId STARTS_WITH 'spare-{cluster}-{batch}-'"
        out = await temporal(stack, "list", "--query", query, "-o", "json")
        assert sorted(w["execution"]["workflowId"] for w in json.loads(out)) == sorted(ids)

    await assert_eventually(listed, timeout=30)

    status = json.loads(
        await temporal(stack, "query", "--workflow-id", ids[0], "--name", "status", "-o", "json")
    )
    assert status["queryResult"][0]["phase"] == "ready"

    update = await temporal(
        stack, "update", "execute", "--workflow-id", ids[0], "--name", "release",
        "--input", '{"reason": "upgrade done"}', "-o", "json",
    )  # fmt: skip
    assert json.loads(update)["result"]["phase"] == "ready"
    await temporal(
        stack, "signal", "--workflow-id", ids[1], "--name", "request_release",
        "--input", '{"reason": "upgrade done"}',
    )  # fmt: skip
    for spare_id in ids:
        result = await stack.client.get_workflow_handle(spare_id).result()
        assert result["phase"] == Phase.RELEASED.value
        assert result["reason"] == "upgrade done"


@pytest.mark.parametrize(
    ("inputs", "given"),
    [([], "with no input"), (['{"request_id": "a"}', '{"request_id": "b"}'], "with 2 inputs")],
    ids=["no-input", "two-inputs"],
)
async def test_a_start_with_the_wrong_number_of_inputs_fails_at_once(
    stack: Stack, inputs: list[str], given: str
) -> None:
    workflow_id = f"spare-lab-arity-{uuid.uuid4().hex[:8]}"
    await temporal(
        stack, "start", "--type", "PrepareSpare", "--task-queue", stack.task_queue,
        "--workflow-id", workflow_id, *(arg for i in inputs for arg in ("--input", i)),
    )  # fmt: skip
    handle = stack.client.get_workflow_handle(workflow_id)
    with pytest.raises(WorkflowFailureError) as caught:
        await handle.result()
    cause = caught.value.cause
    assert isinstance(cause, ApplicationError) and cause.non_retryable
    assert cause.type == "InvalidInput"
    assert cause.message == (
        "PrepareSpare takes one input (req, each one JSON document: temporal workflow start "
        f"--input '{{...}}'); it was started {given}"
    )
    # Failed by the first workflow task, not retried: no task failure in its history.
    history = await handle.fetch_history()
    assert not [e for e in history.events if e.HasField("workflow_task_failed_event_attributes")]
    # The API then answers for it like any ended spare instead of 502.
    status = (await stack.client.get_workflow_handle(workflow_id).describe()).status
    assert status is not None and status.name == "FAILED"
