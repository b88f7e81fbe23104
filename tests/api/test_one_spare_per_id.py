"""One spare per id, whatever the door: the HTTP API, the `virtflow` command line and
`temporal workflow start` (the real Temporal CLI) meet the same rules."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from tests.api.api_helpers import LiveStack, spare_body
from tests.cli.test_cli_runner import virtflow
from tests.known_secrets import WEBHOOK_SECRET
from tests.workflows.test_cli_start import temporal


@pytest.fixture
def env(live: LiveStack) -> dict[str, str]:
    stack = live.stack
    return {
        "VIRTFLOW_TEMPORAL_ADDRESS": stack.client.service_client.config.target_host,
        "VIRTFLOW_TASK_QUEUE": stack.task_queue,
        "VIRTFLOW_INVENTORIES": json.dumps(stack.settings.inventories),
        "VIRTFLOW_STATE_DIR": str(stack.settings.state_dir),
        "VIRTFLOW_API_URL": live.url,
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


async def test_an_ended_spares_id_is_never_used_again_at_any_door(
    live: LiveStack, env: dict[str, str], tmp_path: Path
) -> None:
    body = spare_body(inventory=live.stack.inventory, receivers=["upgradectrl"], ttl_seconds=1)
    accepted = await live.api.post("/v1/spares", json=body)
    assert accepted.status_code == 202, accepted.text
    spare_id = accepted.json()["spare_id"]
    client = live.stack.client
    await client.get_workflow_handle(spare_id).result()
    first_run = (await client.get_workflow_handle(spare_id).describe()).run_id

    # The Temporal CLI allows a duplicate id by default: the new run refuses to be a spare.
    shown = await temporal(
        live.stack, "start", "--type", "PrepareSpare", "--task-queue", live.stack.task_queue,
        "--workflow-id", spare_id, "--input", json.dumps(body),
    )  # fmt: skip
    second_run = _run_id(shown)
    assert second_run != first_run
    with pytest.raises(WorkflowFailureError) as caught:
        await client.get_workflow_handle(spare_id, run_id=second_run).result()
    cause = caught.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "SpareIdUsed"
    assert cause.message.startswith(
        f"spare id {spare_id} was already used by run {first_run} (completed)"
    )
    # It reserved, created and announced nothing: one spare's events, once each.
    history = await client.get_workflow_handle(spare_id, run_id=second_run).fetch_history()
    assert not [e for e in history.events if e.HasField("activity_task_scheduled_event_attributes")]
    assert (await live.stack.event_types(spare_id)).count("spare.reserved") == 1

    # The API still answers for the spare itself, which was released.
    shown_by_api = await live.api.get(f"/v1/spares/{spare_id}")
    assert shown_by_api.json()["phase"] == "released", shown_by_api.text
    again = await live.api.post("/v1/spares", json=body)
    assert (again.status_code, again.json()["spare_id"]) == (202, spare_id), again.text
    late = await live.api.post(f"/v1/spares/{spare_id}/release", json={})
    assert (late.status_code, late.json()["code"]) == (409, "already_released")
    # So does the command line: the same request finds the same, ended spare.
    request_file = tmp_path / "request.json"
    request_file.write_text(json.dumps(body))
    receivers = {"upgradectrl": {"url": live.stack.receiver_url, "secrets": [WEBHOOK_SECRET]}}
    cli = await virtflow(
        ["prepare", "--file", str(request_file), "--no-wait"],
        {**env, "VIRTFLOW_RECEIVERS": json.dumps(receivers)},
    )
    assert cli.exit_code == 0, cli.output
    assert f"spare {spare_id} started" in cli.output
    runs = [w async for w in client.list_workflows(f"WorkflowId = '{spare_id}'")]
    assert len(runs) == 2
