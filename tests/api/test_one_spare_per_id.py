"""One spare per id, whatever the door: the HTTP API, the `virtflow` command line and
`temporal workflow start` (the real Temporal CLI) meet the same rules."""

from __future__ import annotations

import json
import uuid

import pytest
from temporalio.client import WorkflowFailureError

from tests.api.api_helpers import LiveStack, spare_body
from tests.cli.test_cli_runner import virtflow
from tests.workflows.test_cli_start import temporal


@pytest.fixture
def env(live: LiveStack) -> dict[str, str]:
    stack = live.stack
    return {
        "VIRTFLOW_TEMPORAL_ADDRESS": stack.client.service_client.config.target_host,
        "VIRTFLOW_TASK_QUEUE": stack.task_queue,
        "VIRTFLOW_INVENTORIES": json.dumps(stack.settings.inventories),
        "VIRTFLOW_STATE_DIR": str(stack.settings.state_dir),
    }


def _run_id(cli_output: str) -> str:
    [line] = [line for line in cli_output.splitlines() if line.strip().startswith("RunId")]
    return line.split()[-1]


async def test_a_cli_start_without_input_is_a_failed_spare_to_the_api(live: LiveStack) -> None:
    spare_id = f"spare-lab-noinput-{uuid.uuid4().hex[:8]}"
    await temporal(
        live.stack, "start", "--type", "PrepareSpare", "--task-queue", live.stack.task_queue,
        "--workflow-id", spare_id,
    )  # fmt: skip
    with pytest.raises(WorkflowFailureError):
        await live.stack.client.get_workflow_handle(spare_id).result()
    shown = await live.api.get(f"/v1/spares/{spare_id}")
    assert shown.status_code == 200, shown.text
    assert (shown.json()["phase"], shown.json()["workflow_status"]) == ("failed", "failed")
    assert "PrepareSpare takes one input" in shown.json()["error"]
    for answer in (
        await live.api.post(f"/v1/spares/{spare_id}/release", json={}),
        await live.api.delete(f"/v1/spares/{spare_id}"),
    ):
        assert (answer.status_code, answer.json()["code"]) == (409, "spare_ended"), answer.text


async def test_a_different_input_for_a_running_spare_changes_nothing_at_any_door(
    live: LiveStack, env: dict[str, str]
) -> None:
    body = spare_body(inventory=live.stack.inventory, receivers=[])
    accepted = await live.api.post("/v1/spares", json=body)
    assert accepted.status_code == 202, accepted.text
    spare_id = accepted.json()["spare_id"]
    handle = live.stack.client.get_workflow_handle(spare_id)
    run_id = (await handle.describe()).run_id
    different = {**body, "cpu": body["cpu"] + 1}

    # The API refuses, with a code a program can branch on.
    refused = await live.api.post("/v1/spares", json=different)
    assert (refused.status_code, refused.json()["code"]) == (409, "request_conflict")
    message = refused.json()["detail"]

    # The command line refuses with the same words (exit 2: bad input).
    cli = await virtflow(
        ["prepare", "--cluster", "lab", "--request-id", body["request_id"],
         "--inventory", live.stack.inventory, "--cpu", str(different["cpu"]),
         "--memory-mb", str(body["memory_mb"]), "--no-wait"],
        env,
    )  # fmt: skip
    assert cli.exit_code == 2, cli.output
    assert message in cli.output

    # The Temporal CLI cannot be refused by virtflow: it answers with the running spare's
    # run, visibly the existing one, and the spare keeps its first input.
    shown = await temporal(
        live.stack, "start", "--type", "PrepareSpare", "--task-queue", live.stack.task_queue,
        "--workflow-id", spare_id, "--input", json.dumps(different),
    )  # fmt: skip
    assert _run_id(shown) == run_id
    runs = [w async for w in live.stack.client.list_workflows(f"WorkflowId = '{spare_id}'")]
    assert [r.run_id for r in runs] == [run_id]
    history = await handle.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    assert json.loads(started.input.payloads[0].data)["cpu"] == body["cpu"]
    await handle.terminate("test over")
