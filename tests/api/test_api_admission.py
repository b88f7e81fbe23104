"""A burst of POSTs for one request is admitted once: one start, the same spare for the same
body, 409 for another; a recent inventory snapshot never refuses what the inventory now has."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import yaml
from temporalio.client import Client

from contracts.spare import MEMO_REQUEST_HASH
from runtime.settings import Settings
from tests.api.api_helpers import LAB_INVENTORY, asgi_client, spare_body


async def test_concurrent_posts_of_one_request_id_start_one_spare(
    api: httpx.AsyncClient, client: Client
) -> None:
    a = spare_body()
    b = {**a, "cpu": 4}
    answers = await asyncio.gather(*(api.post("/v1/spares", json=(a, b)[i % 2]) for i in range(60)))
    spare_id = f"spare-lab-{a['request_id']}"
    runs = [w async for w in client.list_workflows(f"WorkflowId = '{spare_id}'")]
    assert len(runs) == 1
    handle = client.get_workflow_handle(spare_id)
    memo = await (await handle.describe()).memo()
    winner, loser = (a, b) if (await _started_input(client, spare_id))["cpu"] == 2 else (b, a)
    for body, answer in zip((a, b) * 30, answers, strict=True):
        if body is winner:
            assert (answer.status_code, answer.json()["spare_id"]) == (202, spare_id), answer.text
        else:
            assert (answer.status_code, answer.json()["code"]) == (409, "request_conflict")
    assert MEMO_REQUEST_HASH in memo
    # Known now: the answers come without asking Temporal, and are the same.
    again = await api.post("/v1/spares", json=winner)
    other = await api.post("/v1/spares", json=loser)
    assert (again.status_code, other.status_code) == (202, 409)
    await handle.terminate("test over")


async def _started_input(client: Client, spare_id: str) -> dict[str, object]:
    history = await client.get_workflow_handle(spare_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    started_with: dict[str, object] = json.loads(started.input.payloads[0].data)
    return started_with


async def test_a_pool_added_since_the_last_read_is_not_refused(
    api_settings: Settings, client: Client, tmp_path: Path
) -> None:
    inventory = tmp_path / "inventory.yaml"
    doc = yaml.safe_load(LAB_INVENTORY.read_text())
    inventory.write_text(yaml.safe_dump(doc))
    settings = api_settings.model_copy(update={"inventories": {"default": str(inventory)}})
    async with asgi_client(settings, client) as api:
        first = spare_body(pool="general")
        assert (await api.post("/v1/spares", json=first)).status_code == 202
        unknown = await api.post("/v1/spares", json=spare_body(pool="gpu-new"))
        assert (unknown.status_code, unknown.json()["code"]) == (422, "unknown_pool")

        doc["hosts"][0]["pool"] = "gpu-new"
        inventory.write_text(yaml.safe_dump(doc))
        # Within the snapshot's lifetime: the refusal is checked on a fresh read.
        added = spare_body(pool="gpu-new")
        answer = await api.post("/v1/spares", json=added)
        assert answer.status_code == 202, answer.text
    for body in (first, added):
        await client.get_workflow_handle(f"spare-lab-{body['request_id']}").terminate("test over")
