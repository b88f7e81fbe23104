"""A whole PrepareSpare on the lab with the NATS event bus on: JetStream holds each event once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nats
from pydantic import SecretStr
from temporalio.client import Client

from contracts.release import release_workflow_id
from contracts.spare import Phase, ReleaseRequest
from runtime.event_bus import EventBusConfig
from runtime.settings import Settings
from tests.stack import running_stack, wait_phase
from tests.webhooks.nats_server import nats_server
from workflows.prepare_spare import PrepareSpare

PASSWORD = "nats-workflow-password-8d2e4a"
ALL_EVENTS = [
    "spare.reserved",
    "spare.vm_created",
    "spare.ready",
    "spare.release_started",
    "spare.released",
]


async def test_every_event_reaches_jetstream_once_with_its_webhook_id(
    client: Client, task_queue: str, tmp_path: Path, inventory_doc: dict[str, Any]
) -> None:
    async with nats_server(tmp_path / "nats", "--user", "virtflow", "--pass", PASSWORD) as url:
        bus = EventBusConfig(url=url, user="virtflow", password=SecretStr(PASSWORD))

        def with_bus(settings: Settings) -> Settings:
            return settings.model_copy(update={"event_bus": bus})

        async with running_stack(
            client, task_queue, tmp_path, inventory_doc, with_bus, "http"
        ) as stack:
            req = stack.request()
            handle = await stack.start(req)
            await wait_phase(handle, Phase.READY)
            await handle.execute_update(PrepareSpare.release, ReleaseRequest())
            await handle.result()
            status = await handle.query(PrepareSpare.status)
            webhooks = await stack.events(req.spare_id)
            run_id = (await handle.describe()).run_id
            child = client.get_workflow_handle(f"{release_workflow_id(req.spare_id)}-{run_id[:8]}")
            histories = [await handle.fetch_history(), await child.fetch_history()]

        nc = await nats.connect(url, user="virtflow", password=PASSWORD)
        try:
            js = nc.jetstream()
            sub = await js.subscribe("virtflow.lab.>", ordered_consumer=True)
            received = []
            pending = (await js.stream_info("VIRTFLOW")).state.messages
            for _ in range(pending):
                received.append(await sub.next_msg(timeout=5))
        finally:
            await nc.close()

    assert status.undelivered == []
    mine = [m for m in received if m.headers and m.data and req.spare_id.encode() in m.data]
    assert sorted(m.subject for m in mine) == sorted(f"virtflow.lab.{e}" for e in ALL_EVENTS)
    # The bus and the webhooks carry the same ids, so a consumer of both can de-duplicate.
    by_type = {w["type"]: w["webhook_id"] for w in webhooks}
    for msg in mine:
        assert msg.headers is not None
        event_type = msg.subject.removeprefix("virtflow.lab.")
        assert msg.headers["Nats-Msg-Id"] == by_type[event_type] == msg.headers["webhook-id"]
    for history in histories:
        assert PASSWORD not in history.to_json()
